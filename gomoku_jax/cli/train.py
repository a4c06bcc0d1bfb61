"""`gomoku-jax train`: train with any registered training algorithm (`--algo`: alphazero,
the default, or gmo) from a preset, with config overrides.

    gomoku-jax train --preset quick --run-dir runs/quick
    gomoku-jax train --preset gomoku15 --run-dir runs/g15 --set selfplay.num_simulations=64
    gomoku-jax train --run-dir runs/quick --resume          # continue a killed run
    gomoku-jax train --run-dir runs/quick --resume --set run.iterations=80   # extend it
    gomoku-jax train --preset test --set game.id=pgx --set game.env_id=connect_four \\
        --set replay.synthetic_fraction=0                   # any game of the platform
    gomoku-jax train --preset quick --list-keys             # every settable key

GMO (seed 002's gradient move optimisation: a value network over (state, move) trained on
the positions of another agent's games, or of an AlphaZero run's replay buffer):

    gomoku-jax train --algo gmo --preset gmo_quick --run-dir runs/gmo_quick
    gomoku-jax train --algo gmo --preset gmo_fauxgo --set data.agent=fauxgo_heuristic
    gomoku-jax train --algo gmo --preset gmo_quick --set data.replay_run=runs/quick
    gomoku-jax train --run-dir runs/gmo_quick --resume     # the run says it is a GMO run

Every run directory gets config.json, metrics.jsonl, orbax checkpoints and summary.json
(the final arena results per opponent and the wall time); the arena table is printed at
the end. Progress goes to stderr: a bar on a terminal, else (a log file, a pipe, CI) a
plain line at the first iteration, then at most one every few seconds, and one at the end;
`--no-progress` turns both off.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
from typing import Optional

from gomoku_jax import distributed, progress
from gomoku_jax.players.run_dir import run_algo
from gomoku_jax.train import algorithms
from gomoku_jax.train.config import PRESETS, RESUMABLE, override, resumable, valid_keys


def presets_text() -> str:
    """The presets of every registered training algorithm, one line each with the note it
    was registered with, for `--help`."""
    lines = ["Presets (--preset NAME):"]
    for algo, cls in sorted(algorithms.ALGORITHMS.items()):
        lines.append(f"  --algo {algo} (default preset {cls.default_preset}):")
        lines += [f"    {name:<14} {PRESETS.note(name)}".rstrip()
                  for name in algorithms.presets_of(algo)]
    return "\n".join(lines)


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.description = f"{(parser.description or '').rstrip()}\n\n{presets_text()}"
    defaults = ", ".join(f"{cls.default_preset} for {name}"
                         for name, cls in sorted(algorithms.ALGORITHMS.items()))
    parser.add_argument("--algo", choices=sorted(algorithms.ALGORITHMS),
                        help=f"the training algorithm (default: {algorithms.DEFAULT_ALGORITHM}; "
                             f"with --resume: the run's own; with a preset: the preset's)")
    parser.add_argument("--preset", choices=sorted(algorithms.presets()),
                        help=f"the starting config (default: the algorithm's default preset, "
                             f"{defaults})")
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
    progress.add_argument(parser)
    distributed.add_arguments(parser)
    parser.add_argument("--list-keys", action="store_true",
                        help="print every settable key with its value in the preset, and exit")
    return parser


def _algo(args: argparse.Namespace) -> str:
    """The algorithm of the run: the run directory's when resuming, else --algo, else the
    preset's, else the default; ValueError when they disagree."""
    algo = args.algo
    saved = run_algo(args.run_dir) if args.run_dir else None
    if args.resume and saved is not None:
        if algo is not None and algo != saved:
            raise ValueError(f"--algo {algo}, but {args.run_dir} holds a run of --algo {saved}")
        return saved
    owner = algorithms.presets().get(args.preset) if args.preset is not None else None
    algo = algo or owner or algorithms.DEFAULT_ALGORITHM
    if args.preset is not None and owner != algo:
        raise ValueError(f"--preset {args.preset} is not a preset of --algo {algo}; its "
                         f"presets: {', '.join(sorted(algorithms.presets_of(algo)))}")
    if saved is not None and saved != algo:
        raise ValueError(f"{args.run_dir} holds a run of --algo {saved}, not {algo}: use "
                         f"another run directory, or --resume to continue that run")
    return algo


def main(args: argparse.Namespace) -> int:
    try:
        cls = algorithms.algorithm(_algo(args))
        name = args.preset or cls.default_preset
        run_dir = pathlib.Path(args.run_dir or f"runs/{name}")
        if args.resume:
            other = sorted(key for key in (a.split("=", 1)[0].strip()
                                           for a in args.assignments) if not resumable(key))
            if other:
                raise ValueError(f"--resume continues the run's own config; --set may change "
                                 f"only {', '.join(RESUMABLE)}, not {', '.join(other)}")
            saved = algorithms.load_config(run_dir, cls.Config.algo)
            config = override(saved, args.assignments)
        else:
            config = override(algorithms.preset(name, cls.Config.algo), args.assignments)
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
    try:
        cluster = distributed.from_args(args)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    import jax

    from gomoku_jax.train.arena import arena_table
    from gomoku_jax.train.checkpoint import CheckpointError
    from gomoku_jax.train.driver import ProcessLost, train
    from gomoku_jax.train.finite import NonFiniteError

    try:
        summary = train(config, run_dir, progress=not args.no_progress,
                        stop_after=args.stop_after)
    except (ValueError, NonFiniteError, CheckpointError) as e:
        raise SystemExit(f"error: {e}")
    except OSError as e:  # a full disk while writing the metrics or the config
        raise SystemExit(f"error: {run_dir}: {e}; the run stopped, its checkpoints are "
                         f"intact: resume it with --resume once the cause is fixed")
    except ProcessLost as e:
        # JAX's shutdown would wait for the lost process (its heartbeat timeout) and then
        # abort: leave at once, the checkpoints are on disk
        print(f"error: {e}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(1)
    if jax.process_index() != 0:  # process 0 reports for all
        return 0
    if cluster is not None:
        print(f"{jax.process_count()} processes ({cluster.source}), {jax.device_count()} "
              f"devices: {jax.devices()[0].device_kind} x {jax.device_count()}")
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
