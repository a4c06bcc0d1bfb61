"""What each rule costs a step: `step` alone, and `step` plus the legal-action mask (what
self-play and search read after every move), on a batch of mid-game positions, for every
rule in the same run.

    python experiments/bench_rules.py --board-size 15 --batch 1024 --plies 30

The positions: `--batch` games of `--plies` random legal moves from the empty board (the
same seed for every rule; a game that ends stays ended). One random legal action per
board is then timed: `--repeats` calls of each jitted function, the median reported, with
the compile time and the ratio to freestyle. Under renju the mask runs the forbidden-point
scan (`renju.forbidden_points`) on every board with black to move, and a black step checks
its cell (`renju.forbidden_at`); caro's step reads the whole line through the stone. A
progress bar on stderr counts the rules (not with `--no-progress` or when stderr is not a
terminal).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Optional, Sequence

import jax
import jax.numpy as jnp

import gomoku_jax
from gomoku_jax import progress
from gomoku_jax.benchmarks.timing import describe_machine
from gomoku_jax.games.gomoku.config import RULES
from gomoku_jax.markdown import table as markdown_table


def _random_action(key, mask):
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)


def positions(env, batch: int, plies: int, seed: int):
    """(states after `plies` random legal moves, int32[B] one random legal action each)."""

    @jax.jit
    def play(key):
        states = jax.vmap(env.init)(jax.random.split(key, batch))

        def body(states, key):
            keys = jax.random.split(key, batch)
            actions = jax.vmap(_random_action)(keys, states.legal_action_mask)
            return jax.vmap(env.step)(states, actions), None

        states, _ = jax.lax.scan(body, states, jax.random.split(key, plies))
        keys = jax.random.split(jax.random.fold_in(key, 1), batch)
        return states, jax.vmap(_random_action)(keys, states.legal_action_mask)

    return play(jax.random.key(seed))


def time_call(fn, *args, repeats: int) -> tuple[float, float]:
    """(compile s, median ms of `repeats` calls)."""
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(1000 * (time.perf_counter() - t0))
    return compile_s, statistics.median(times)


def run(board_size: int, batch: int, plies: int, repeats: int, rules: Sequence[str],
        seed: int = 0, show_progress: bool = False) -> list:
    """[(rule, step compile s, step ms, step+mask compile s, step+mask ms, black to move)]."""
    rows = []
    with progress.bar(len(rules), "rules", "rule", enabled=show_progress) as bar:
        for rule in rules:
            env = gomoku_jax.make("gomoku", board_size=board_size, rule=rule)
            states, actions = positions(env, batch, plies, seed)
            step = jax.vmap(env.step)
            c1, t1 = time_call(step, states, actions, repeats=repeats)

            def step_mask(s, a, step=step):
                after = step(s, a)
                return after, after.legal_action_mask

            c2, t2 = time_call(step_mask, states, actions, repeats=repeats)
            black = float(jnp.mean((states.color == 1) & ~states.terminated))
            rows.append((rule, c1, t1, c2, t2, black))
            bar.update(1)
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--plies", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rules", default=",".join(RULES),
                        help=f"comma-separated, from {', '.join(RULES)}")
    parser.add_argument("--seed", type=int, default=0)
    progress.add_argument(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    rules = [r.strip() for r in args.rules.split(",") if r.strip()]
    bad = [r for r in rules if r not in RULES]
    if bad or not rules:
        raise SystemExit(f"error: --rules takes names from {', '.join(RULES)}, got {bad}")
    if args.batch < 1 or args.plies < 0 or args.repeats < 1:
        raise SystemExit("error: --batch and --repeats must be >= 1, --plies >= 0")
    rows = run(args.board_size, args.batch, args.plies, args.repeats, rules, args.seed,
               show_progress=not args.no_progress)
    base = {name: (t1, t2) for name, _, t1, _, t2, _ in rows}.get("freestyle")
    print(f"# step and step + legal mask, {args.board_size}x{args.board_size}, batch "
          f"{args.batch}, after {args.plies} random plies, median of {args.repeats} "
          f"({describe_machine()})\n")

    def ratio(t, i):
        return f"{t / base[i]:.1f}x" if base else "-"

    print(markdown_table(
        ["rule", "black to move", "step compile s", "step ms", "vs freestyle",
         "step+mask compile s", "step+mask ms", "vs freestyle"],
        [[name, f"{black:.2f}", f"{c1:.1f}", f"{t1:.2f}", ratio(t1, 0), f"{c2:.1f}",
          f"{t2:.2f}", ratio(t2, 1)]
         for name, c1, t1, c2, t2, black in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
