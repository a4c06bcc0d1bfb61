"""`gomoku-jax train`: AlphaZero self-play training from a preset, with config overrides.

    gomoku-jax train --preset quick --run-dir runs/quick
    gomoku-jax train --preset gomoku15 --run-dir runs/g15 --set selfplay.num_simulations=64
    gomoku-jax train --run-dir runs/quick --resume          # continue a killed run
    gomoku-jax train --run-dir runs/quick --resume --set run.iterations=80   # extend it
    gomoku-jax train --preset test --set game.id=pgx --set game.env_id=connect_four \\
        --set replay.synthetic_fraction=0                   # any game of the platform
    gomoku-jax train --preset quick --list-keys             # every settable key

Every run directory gets config.json, metrics.jsonl, orbax checkpoints and summary.json
(the final arena results per opponent and the wall time); the arena table is printed at
the end. Presets: quick (9×9 on a CPU, minutes), gomoku15 (15×15, seed 001's net, GPU),
seed (seed 001's schedule as written), test (tiny, for the test suite).
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import Optional

from gomoku_jax.train.config import RESUMABLE, override, resumable, valid_keys
from gomoku_jax.train.presets import PRESETS, preset


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="quick", choices=sorted(PRESETS),
                        help="the starting config (default: quick)")
    parser.add_argument("--run-dir", metavar="DIR",
                        help="where config, metrics, checkpoints and summary go "
                             "(default: runs/<preset>)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        dest="assignments",
                        help="override a config field (repeatable), e.g. "
                             "selfplay.num_simulations=64; tuples as a;b;c")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --run-dir with its saved config.json; "
                             "--set may then change the run's length, checkpoints, devices "
                             "and arena (e.g. run.iterations=N extends a finished run)")
    parser.add_argument("--stop-after", type=int, metavar="N",
                        help="stop after N iterations in all (the run can be resumed later)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--list-keys", action="store_true",
                        help="print every settable key with its value in the preset, and exit")
    return parser


def main(args: argparse.Namespace) -> int:
    from gomoku_jax.train import checkpoint

    run_dir = pathlib.Path(args.run_dir or f"runs/{args.preset}")
    try:
        if args.resume:
            other = sorted(key for key in (a.split("=", 1)[0].strip()
                                           for a in args.assignments) if not resumable(key))
            if other:
                raise ValueError(f"--resume continues the run's own config; --set may change "
                                 f"only {', '.join(RESUMABLE)}, not {', '.join(other)}")
            config = override(checkpoint.load_config(run_dir), args.assignments)
        else:
            config = override(preset(args.preset), args.assignments)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    if args.list_keys:
        data = config.to_dict()
        for key in valid_keys(config):
            section, field = key.split(".")
            print(f"{key} = {json.dumps(data[section][field])}")
        return 0
    if args.stop_after is not None and args.stop_after < 1:
        raise SystemExit(f"error: --stop-after must be >= 1, got {args.stop_after}")
    from gomoku_jax.train.loop import arena_table, train

    try:
        summary = train(config, run_dir, progress=not args.no_progress,
                        stop_after=args.stop_after)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    if summary.get("already_finished"):
        print(f"{run_dir}: the run is already finished ({summary['iterations']} iterations); "
              f"nothing was changed. Extend it with: gomoku-jax train --run-dir {run_dir} "
              f"--resume --set run.iterations=N")
    else:
        print(f"\n{run_dir}: {summary['iterations']} iterations in "
              f"{summary['wall_seconds']:.0f} s")
    if summary["arena"]:
        print(arena_table(summary["arena"]))
    return 0
