"""Faux Go env throughput: random playouts of gomoku_jax's Faux Go beside pgx's go_9x9,
measured the same way in the same run (vmapped, `auto_reset`, a `lax.scan` of `--steps`
moves per compiled call).

    python experiments/bench_fauxgo.py --batch-sizes 1,256,4096 --out bench_fauxgo.md

Rates are board-steps per second of wall time and per second of process CPU time; the last
column is Faux Go's steps per CPU-second over pgx go_9x9's at the same batch. A progress bar
on stderr counts the configurations (not with `--no-progress` or when stderr is not a
terminal).
"""

from __future__ import annotations

import argparse
import sys

import gomoku_jax
from gomoku_jax import progress
from gomoku_jax.benchmarks.env_throughput import bench_playouts
from gomoku_jax.benchmarks.timing import describe_machine, fmt_rate, parse_int_list
from gomoku_jax.markdown import table, write_report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=9)
    parser.add_argument("--batch-sizes", default=[1, 256, 4096],
                        type=lambda text: parse_int_list(text, "--batch-sizes"))
    parser.add_argument("--steps", type=int, default=64, help="moves per compiled call")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-pgx", action="store_true", help="skip the pgx go_9x9 reference")
    parser.add_argument("--out", help="also write the markdown report here")
    parser.add_argument("--json", help="also write the rows as JSON here")
    progress.add_argument(parser)
    args = parser.parse_args(argv)
    try:
        env = gomoku_jax.make("fauxgo", board_size=args.board_size)
    except ValueError as e:
        parser.error(str(e))
    systems = [(f"gomoku_jax fauxgo {args.board_size}x{args.board_size}", env.init,
                gomoku_jax.auto_reset(env.step, env.init))]
    if not args.no_pgx:
        import pgx
        import pgx.experimental

        go = pgx.make("go_9x9")
        systems.append(("pgx go_9x9", go.init, pgx.experimental.auto_reset(go.step, go.init)))

    results = []
    with progress.bar(len(args.batch_sizes) * len(systems), "bench_fauxgo", "config",
                      enabled=not args.no_progress) as bar:
        # a line per row on stderr, through the bar when one shows
        log = progress.printer(bar, sys.stderr)
        for b in args.batch_sizes:
            for name, init, step in systems:
                m = bench_playouts(name, init, step, b, args.steps, args.repeats)
                log(f"  {name:<26} B={b:<6} compile {m.compile_s:6.2f} s  "
                    f"{fmt_rate(m.per_cpu_s):>9}/CPU-s")
                results.append(m)
                bar.update(1)

    reference = {m.batch: m.per_cpu_s for m in results if m.system == "pgx go_9x9"}
    rows = [[m.system, str(m.batch), f"{m.compile_s:.2f}", fmt_rate(m.per_wall_s),
             fmt_rate(m.per_cpu_s),
             f"{m.per_cpu_s / reference[m.batch]:.1f}x" if m.batch in reference else "-"]
            for m in results]
    text = "\n\n".join([
        f"# Faux Go random playouts ({describe_machine()})",
        table(["system", "batch", "compile s", "steps/s (wall)", "steps/CPU-s",
               "vs pgx go_9x9 (CPU)"], rows)])
    print(text)
    write_report(text, args.out, args.json,
                 [{"system": m.system, "batch": m.batch, "compile_s": m.compile_s,
                   "steps_per_wall_s": m.per_wall_s, "steps_per_cpu_s": m.per_cpu_s}
                  for m in results])
    return 0


if __name__ == "__main__":
    sys.exit(main())
