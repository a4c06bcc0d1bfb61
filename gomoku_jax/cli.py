"""The `gomoku-jax` command line (also `python -m gomoku_jax`)."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence


def build_parser() -> argparse.ArgumentParser:
    from gomoku_jax import demo
    from gomoku_jax.benchmarks import env_throughput
    from gomoku_jax.io import export, pbrain
    from gomoku_jax.eval import arena, tactics_report, tournament
    from gomoku_jax.train import cli as train_cli

    parser = argparse.ArgumentParser(
        prog="gomoku-jax",
        description="gomoku_jax: a JAX-native research platform for Gomoku AI.")
    parser.add_argument("--no-compilation-cache", action="store_true",
                        help="don't use JAX's persistent compilation cache")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    bench = sub.add_parser(
        "bench", help="env throughput vs OpenSpiel and pgx (a markdown table)",
        description=env_throughput.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # No persistent cache for the benchmark: its compile column must be real compile time.
    env_throughput.build_parser(bench).set_defaults(run=env_throughput.main, cache=False)
    play = sub.add_parser("demo", help="a batch of vmapped random games with a throughput line",
                          description=demo.__doc__)
    demo.build_parser(play).set_defaults(run=demo.main, cache=True)
    engine = sub.add_parser(
        "pbrain", help="a Gomocup (piskvork) engine on stdin/stdout",
        description=pbrain.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pbrain.build_parser(engine).set_defaults(run=pbrain.main, cache=True)
    match = sub.add_parser(
        "arena", help="agent A vs agent B, every opening with both colours: W/D/L, score, Elo",
        description=arena.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    arena.build_parser(match).set_defaults(run=arena.main, cache=True)
    rr = sub.add_parser(
        "tournament", help="round robin over agent specs: an Elo table (markdown, JSON)",
        description=tournament.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    tournament.build_parser(rr).set_defaults(run=tournament.main, cache=True)
    puzzles = sub.add_parser(
        "tactics", help="agents' solve rates on the tactical suite (a markdown table)",
        description=tactics_report.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    tactics_report.build_parser(puzzles).set_defaults(run=tactics_report.main, cache=True)
    exporter = sub.add_parser(
        "export", help="a trained network as serialized StableHLO (jax.export) + JSON metadata",
        description=export.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    export.build_parser(exporter).set_defaults(run=export.main, cache=False)
    trainer = sub.add_parser(
        "train", help="AlphaZero self-play training from a preset (arena table at the end)",
        description=train_cli.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    train_cli.build_parser(trainer).set_defaults(run=train_cli.main, cache=True)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.cache and not args.no_compilation_cache:
        from gomoku_jax import compilation_cache

        compilation_cache.enable()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
