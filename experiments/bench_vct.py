"""The root threat search with and without a VCT (`Env.forcing_moves`): its cost per board
and what it finds, on mid-game positions, every variant measured in the same run.

    python experiments/bench_vct.py --board-size 15 --batch 16 --plies 40 --vct-nodes 64
    python experiments/bench_vct.py --variants vcf,vct      # without the defence

Variants: the VCF alone (`threat_search` 512 nodes, the default), then the VCF and the side
to move's VCT (`--vct-nodes`), then also the refutation of the opponent's VCT
(`vct_defend`); `--variants` picks some of them (`vcf`, `vct`, `defence`, run in that order;
the first one's wins are the reference for "more wins by VCT"). The positions come from
games the search agent without threat search plays against itself from the game's openings
(sampling its moves), every 4th ply of the first
`--plies`; each batch is the B games at one ply, searched one board at a time (`lax.map`,
the CPU layout). The table gives the compile time, the mean and worst wall time of a board
(a batch's time over B), how many boards got a forced win from the VCF, how many more from
the VCT, and how many roots were narrowed (refutations of the opponent's VCF or VCT).
Progress bars on stderr count the plies played, then the batches searched (not with
`--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Optional, Sequence

import jax
import numpy as np

import gomoku_jax
from gomoku_jax import progress
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.benchmarks.timing import describe_machine
from gomoku_jax.eval.arena import opening_states
from gomoku_jax.markdown import table as markdown_table

VCF_NODES = 512


def positions(board_size: int, batch: int, plies: int, seed: int = 0,
              tick: Callable[[int], None] = lambda n: None) -> list:
    """Batches of `batch` states (one game per opening, cycled), every 4th ply; `tick(1)`
    after each ply."""
    env = gomoku_jax.make("gomoku", board_size=board_size)
    openings = env.default_openings()
    states = opening_states(env, [openings[i % len(openings)] for i in range(batch)])
    agent = make_agent("mcts:threat_search=0,num_simulations=32,greedy=false").bind(env)
    agent_states = jax.vmap(agent.init)(jax.random.split(jax.random.key(seed), batch))
    act, step = jax.jit(agent.act_batch), jax.jit(jax.vmap(env.step))
    out = []
    for ply in range(plies):
        keys = jax.random.split(jax.random.fold_in(jax.random.key(seed), ply), batch)
        actions, agent_states, _ = act(None, agent_states, states, keys)
        states = step(states, actions)
        if ply % 4 == 3:
            out.append(states)
        tick(1)
    return out


VARIANTS = ("vcf", "vct", "defence")


def variants(vct_nodes: int, names: Sequence[str] = VARIANTS) -> list[tuple[str, dict]]:
    every = {"vcf": ("VCF", {}),
             "vct": (f"VCF + VCT {vct_nodes}", {"vct_nodes": vct_nodes}),
             "defence": (f"VCF + VCT {vct_nodes} + defence",
                         {"vct_nodes": vct_nodes, "vct_defend": True})}
    return [every[n] for n in VARIANTS if n in names]


def run(board_size: int, batch: int, plies: int, vct_nodes: int, seed: int = 0,
        show_progress: bool = False, names: Sequence[str] = VARIANTS) -> list:
    """[(variant, compile s, mean ms, worst ms per board, VCF wins, extra VCT wins, narrowed
    roots)] for the variants `names`; `show_progress`: bars over the plies played and the
    batches searched."""
    with progress.bar(plies, "positions", "ply", enabled=show_progress) as bar:
        batches = positions(board_size, batch, plies, seed, tick=bar.update)
    env = gomoku_jax.make("gomoku", board_size=board_size)
    rows, vcf_wins = [], None
    chosen = variants(vct_nodes, names)
    with progress.bar(len(chosen) * len(batches), "forcing_moves", "batch",
                      enabled=show_progress) as bar:
        for name, extra in chosen:
            fn = jax.jit(lambda s, extra=extra: env.forcing_moves(s, VCF_NODES, **extra))
            t0 = time.perf_counter()
            compiled = fn.lower(batches[0]).compile()
            compile_s = time.perf_counter() - t0
            times, wins, narrowed = [], [], 0
            for states in batches:
                t0 = time.perf_counter()
                win, allowed = jax.block_until_ready(compiled(states))
                times.append((time.perf_counter() - t0) / batch)
                legal = np.asarray(states.legal_action_mask & ~states.terminated[:, None])
                wins.append(np.asarray(win) >= 0)
                narrowed += int(np.sum(np.any(np.asarray(allowed) != legal, axis=-1)))
                bar.update(1)
            wins = np.stack(wins)
            if vcf_wins is None:
                vcf_wins = wins
            rows.append((name, compile_s, 1000 * float(np.mean(times)),
                         1000 * float(np.max(times)), int(vcf_wins.sum()),
                         int(np.sum(wins & ~vcf_wins)), narrowed))
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--plies", type=int, default=40)
    parser.add_argument("--vct-nodes", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="some of vcf,vct,defence (default all three)")
    progress.add_argument(parser)
    args = parser.parse_args(argv)
    if args.batch < 1 or args.plies < 4 or args.vct_nodes < 1:
        raise SystemExit("error: --batch and --vct-nodes must be >= 1, --plies >= 4")
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    if not names or any(n not in VARIANTS for n in names):
        raise SystemExit(f"error: --variants takes some of {','.join(VARIANTS)}, "
                         f"got {args.variants!r}")
    rows = run(args.board_size, args.batch, args.plies, args.vct_nodes, args.seed,
               show_progress=not args.no_progress, names=names)
    boards = args.batch * (args.plies // 4)
    print(f"# forcing_moves, {args.board_size}x{args.board_size}, {boards} positions "
          f"(batch {args.batch}), VCF {VCF_NODES} nodes ({describe_machine()})\n")
    print(markdown_table(
        ["root threat search", "compile s", "ms per board", "worst batch, ms per board",
         "VCF wins", "more wins by VCT", "roots narrowed"],
        [[name, f"{c:.1f}", f"{mean:.2f}", f"{worst:.2f}", str(vw), str(extra), str(nar)]
         for name, c, mean, worst, vw, extra, nar in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
