"""Throughput of the vmapped Gomoku env, side by side with OpenSpiel and pgx in one run.

Two variants, each a `lax.scan` of `--steps` steps per compiled call over a batch of games:
  step     each game's moves drawn up front (a random permutation of the cells), so the
           call is the transition function alone; steps on games already over are no-ops
           but are counted, as they cost the same.
  playout  full random playouts: a mask-aware uniform random move per board, then
           `auto_reset` so finished games restart and the batch stays full.
References measured in the same process:
  OpenSpiel gomoku (15x15), driven move by move from Python (batch 1 by nature);
  pgx connect_four and go_9x9, random playouts vmapped exactly like ours.
Rates are board-steps per second of wall time and per second of process CPU time (the
machines are shared and noisy; CPU time is the steadier number). A progress bar on stderr
counts the configurations measured (not with `--no-progress` or when stderr is not a
terminal).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Callable, Optional, Sequence

import jax
import jax.numpy as jnp

import gomoku_jax
from gomoku_jax import progress
from gomoku_jax.benchmarks.timing import (
    Measurement,
    describe_machine,
    fmt_rate,
    parse_int_list,
    setup_run,
    time_compiled,
    time_python,
)
from gomoku_jax.games.random_play import random_legal_action
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report

DEFAULT_BATCHES = (1, 16, 256, 1024, 4096, 16384)
PGX_GAMES = ("connect_four", "go_9x9")


def playout_fn(step: Callable, steps: int, batch: int) -> Callable:
    """run(states, key) -> (states, games finished): `steps` random moves on every board.

    `step(state, action, key)` must reset finished games (an auto_reset wrapper)."""

    def run(states, key):
        def body(states, k):
            k_act, k_reset = jax.random.split(k)
            actions = random_legal_action(k_act, states.legal_action_mask)
            states = jax.vmap(step)(states, actions, jax.random.split(k_reset, batch))
            return states, jnp.sum(states.terminated)

        states, ended = jax.lax.scan(body, states, jax.random.split(key, steps))
        return states, jnp.sum(ended)

    return run


def step_only_fn(step: Callable) -> Callable:
    """run(states, actions int32[T, B]) -> states: apply pre-drawn moves, nothing else."""

    def run(states, actions):
        def body(states, a):
            return jax.vmap(step)(states, a), None

        return jax.lax.scan(body, states, actions)[0]

    return run


def _next_key(out, args):
    return (out[0], jax.random.fold_in(args[1], 1))


def bench_playouts(name: str, init: Callable, step_reset: Callable, batch: int, steps: int,
                   repeats: int, seed: int = 0) -> Measurement:
    key = jax.random.key(seed)
    states = jax.jit(jax.vmap(init))(jax.random.split(key, batch))
    run = playout_fn(step_reset, steps, batch)
    compile_s, wall, cpu = time_compiled(run, (states, jax.random.fold_in(key, 1)), repeats,
                                         thread=_next_key)
    return Measurement(name, "playout", batch, steps, compile_s, wall, cpu)


def bench_step_only(env: gomoku_jax.Gomoku, batch: int, steps: int, repeats: int,
                    seed: int = 0) -> Measurement:
    key = jax.random.key(seed)
    states = jax.jit(jax.vmap(env.init))(jax.random.split(key, batch))
    draw = jax.jit(lambda k: jax.vmap(lambda kk: jax.random.permutation(kk, env.num_actions))(
        jax.random.split(k, batch))[:, :steps].T.astype(jnp.int32))
    actions = draw(jax.random.fold_in(key, 1))
    compile_s, wall, cpu = time_compiled(step_only_fn(env.step), (states, actions), repeats)
    return Measurement("gomoku_jax", "step", batch, steps, compile_s, wall, cpu)


def bench_openspiel(board_size: int, steps: int, repeats: int, seed: int = 0
                    ) -> list[Measurement]:
    """OpenSpiel gomoku from Python: `steps` moves, restarting finished games."""
    import pyspiel

    game = pyspiel.load_game("gomoku", {"size": board_size})
    rng = random.Random(seed)
    n2 = board_size * board_size

    def playouts() -> int:
        state = game.new_initial_state()
        for _ in range(steps):
            state.apply_action(rng.choice(state.legal_actions()))
            if state.is_terminal():
                state = game.new_initial_state()
        return steps

    orders = [rng.sample(range(n2), n2) for _ in range(64)]

    def step_only() -> int:
        done = 0
        while done < steps:
            state = game.new_initial_state()
            for a in orders[done % len(orders)]:
                state.apply_action(a)
                done += 1
                if state.is_terminal() or done == steps:
                    break
        return done

    out = []
    for variant, fn in (("step", step_only), ("playout", playouts)):
        wall, cpu, work = time_python(fn, repeats)
        out.append(Measurement("OpenSpiel gomoku (Python loop)", variant, 1, work, 0.0,
                               wall, cpu))
    return out


def count_configurations(batches: Sequence[int], variants: Sequence[str],
                         references: Sequence[str],
                         reference_batches: Optional[Sequence[int]] = None) -> int:
    """The rows `run_benchmark` measures with these arguments (a skipped reference's
    included): the progress bar's total."""
    openspiel = len(variants) if "openspiel" in references else 0
    pgx = (len(PGX_GAMES) * len(reference_batches or batches)
           if "pgx" in references and "playout" in variants else 0)
    return len(batches) * len(variants) + openspiel + pgx


def run_benchmark(board_size: int = 15, batches: Sequence[int] = DEFAULT_BATCHES,
                  steps: int = 64, repeats: int = 3, variants: Sequence[str] = ("step", "playout"),
                  references: Sequence[str] = ("openspiel", "pgx"),
                  reference_batches: Optional[Sequence[int]] = None,
                  openspiel_steps: int = 100_000, log=print,
                  tick: Callable[[int], None] = lambda n: None) -> list[Measurement]:
    """The measurements, a line each to `log`; `tick(n)` hears n more rows done (a
    reference that is not installed counts as done), `count_configurations` in all."""
    env = gomoku_jax.make("gomoku", board_size=board_size)
    step_reset = gomoku_jax.auto_reset(env.step, env.init)
    results: list[Measurement] = []

    def add(m: Measurement):
        results.append(m)
        log(f"  {m.system:<32} {m.variant:<8} B={m.batch:<6} compile {m.compile_s:6.2f} s  "
            f"{fmt_rate(m.per_wall_s):>9}/s  {fmt_rate(m.per_cpu_s):>9}/CPU-s")
        tick(1)

    for b in batches:
        if "step" in variants:
            add(bench_step_only(env, b, steps, repeats))
        if "playout" in variants:
            add(bench_playouts("gomoku_jax", env.init, step_reset, b, steps, repeats))

    if "openspiel" in references:
        try:
            for m in bench_openspiel(board_size, openspiel_steps, repeats):
                if m.variant in variants:
                    add(m)
        except ImportError:
            log("  (OpenSpiel not installed: pip install open-spiel; skipped)")
            tick(len(variants))
    if "pgx" in references and "playout" in variants:
        try:
            import pgx
            import pgx.experimental
        except ImportError:
            log("  (pgx not installed: pip install pgx; skipped)")
            tick(len(PGX_GAMES) * len(reference_batches or batches))
        else:
            for game in PGX_GAMES:
                penv = pgx.make(game)
                stepper = pgx.experimental.auto_reset(penv.step, penv.init)
                for b in reference_batches or batches:
                    add(bench_playouts(f"pgx {game}", penv.init, stepper, b, steps, repeats))
    return results


def render_table(results: Sequence[Measurement], board_size: int) -> str:
    base = {m.variant: m.per_cpu_s for m in results if m.system.startswith("OpenSpiel")}
    rows = []
    for m in results:
        ratio = f"{m.per_cpu_s / base[m.variant]:.1f}x" if m.variant in base else "-"
        rows.append([m.system, m.variant, str(m.batch), f"{m.compile_s:.2f}",
                     fmt_rate(m.per_wall_s), fmt_rate(m.per_cpu_s), ratio])
    header = ["system", "variant", "batch", "compile s", "steps/s (wall)",
              "steps/CPU-s", "vs OpenSpiel (CPU)"]
    lines = [markdown_table(header, rows)]
    ours = {(m.variant, m.batch): m for m in results if m.system == "gomoku_jax"}
    c4 = {m.batch: m for m in results if m.system == "pgx connect_four"}
    for b in sorted({m.batch for m in results if m.system == "gomoku_jax"}):
        p = ours.get(("playout", b))
        if p is None:
            continue
        parts = [f"batch {b}: gomoku_jax {board_size}x{board_size} random playouts "
                 f"{fmt_rate(p.per_cpu_s)} steps/CPU-s"]
        if "playout" in base:
            parts.append(f"{p.per_cpu_s / base['playout']:.1f}x OpenSpiel")
        if b in c4:
            parts.append(f"{p.per_cpu_s / c4[b].per_cpu_s:.2f}x pgx connect_four")
        if len(parts) > 1:
            lines.append("- " + ", ".join(parts))
    return "\n".join(lines)


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--batch-sizes", default=",".join(map(str, DEFAULT_BATCHES)),
                        help="comma-separated batch sizes (default: %(default)s)")
    parser.add_argument("--steps", type=int, default=64,
                        help="steps per compiled call, a lax.scan (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls, median reported")
    parser.add_argument("--variants", default="step,playout", help="step, playout or both")
    parser.add_argument("--references", default="openspiel,pgx",
                        help="openspiel, pgx, both, or 'none' (default: %(default)s)")
    parser.add_argument("--reference-batch-sizes", default=None,
                        help="batch sizes for pgx (default: the same as --batch-sizes)")
    parser.add_argument("--openspiel-steps", type=int, default=100_000,
                        help="moves per timed OpenSpiel run (default: %(default)s)")
    parser.add_argument("--cpus", type=int, default=None,
                        help="pin the process to this many CPU cores before JAX starts (all "
                             "systems alike; 1 shows single-thread efficiency per CPU-second)")
    parser.add_argument("--out", default=None, help="also write the markdown table here")
    parser.add_argument("--json", default=None, help="also write raw measurements as JSON")
    progress.add_argument(parser)
    return parser


def main(args: argparse.Namespace) -> int:
    batches = parse_int_list(args.batch_sizes, "--batch-sizes")
    ref_batches = (parse_int_list(args.reference_batch_sizes, "--reference-batch-sizes")
                   if args.reference_batch_sizes else None)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    bad = [v for v in variants if v not in ("step", "playout")]
    if bad or not variants:
        raise SystemExit(f"error: --variants takes step and/or playout, got {args.variants!r}")
    references = [r.strip() for r in args.references.split(",") if r.strip() not in ("", "none")]
    bad = [r for r in references if r not in ("openspiel", "pgx")]
    if bad:
        raise SystemExit(f"error: --references takes openspiel, pgx or none, got {bad}")
    if args.steps < 1 or args.repeats < 1 or args.openspiel_steps < 1:
        raise SystemExit("error: --steps, --repeats and --openspiel-steps must be >= 1")
    setup_run(args.board_size, args.cpus)

    print(f"# Env throughput, {args.board_size}x{args.board_size} Gomoku ({describe_machine()})",
          flush=True)
    t0 = time.perf_counter()
    total = count_configurations(batches, variants, references, ref_batches)
    with progress.bar(total, "bench", "config", enabled=not args.no_progress) as bar:
        # the lines on stdout, through the bar when one shows
        results = run_benchmark(args.board_size, batches, args.steps, args.repeats, variants,
                                references, ref_batches, args.openspiel_steps,
                                log=progress.printer(bar),
                                tick=bar.update)
    table = (f"Env throughput, {args.board_size}x{args.board_size} Gomoku, {args.steps} steps "
             f"per compiled call, median of {args.repeats}; {describe_machine()}\n\n"
             + render_table(results, args.board_size))
    print("\n" + table)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    write_report(table, args.out, args.json,
                 [m.__dict__ | {"per_wall_s": m.per_wall_s, "per_cpu_s": m.per_cpu_s}
                  for m in results])
    return 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
