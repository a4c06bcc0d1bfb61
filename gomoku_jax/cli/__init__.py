"""The `gomoku-jax` command line (also `python -m gomoku_jax`): one module per subcommand,
each with `build_parser(parser)` and `main(args)`."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

# (name, module, one-line help, use the persistent compilation cache). The benchmark and the
# exporter compile on purpose: their compile time is real, their lowering must be fresh.
SUBCOMMANDS = (
    ("bench", "gomoku_jax.benchmarks.env_throughput",
     "env throughput vs OpenSpiel and pgx (a markdown table)", False),
    ("demo", "gomoku_jax.cli.demo", "a batch of vmapped random games with a throughput line",
     True),
    ("pbrain", "gomoku_jax.cli.pbrain", "a Gomocup (piskvork) engine on stdin/stdout", True),
    ("arena", "gomoku_jax.cli.arena",
     "agent A vs agent B, every opening with both sides: W/D/L, score, Elo", True),
    ("tournament", "gomoku_jax.cli.tournament",
     "round robin over agent specs: an Elo table (markdown, JSON)", True),
    ("tactics", "gomoku_jax.cli.tactics",
     "agents' solve rates on Gomoku's tactical suite (a markdown table)", True),
    ("play", "gomoku_jax.cli.play",
     "play Gomoku or Faux Go against an agent in the browser (a local web server)", True),
    ("export", "gomoku_jax.cli.export",
     "a trained network as serialized StableHLO (jax.export) or ONNX + JSON metadata",
     False),
    ("train", "gomoku_jax.cli.train",
     "AlphaZero (or --algo gmo) training from a preset, arena table at the end", True),
    ("launch", "gomoku_jax.cli.launch",
     "run train as N local processes of one multi-process JAX program (jax.distributed)",
     False),
    ("compare", "gomoku_jax.cli.compare",
     "training arms x seeds under one budget, rated on one Elo scale: learning curves",
     True),
)


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = argparse.ArgumentParser(
        prog="gomoku-jax",
        description="gomoku_jax: a JAX-native research platform for Gomoku AI and the board "
                    "games next to it.")
    parser.add_argument("--no-compilation-cache", action="store_true",
                        help="don't use JAX's persistent compilation cache")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name, help_text, cache in SUBCOMMANDS:
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=help_text, description=module.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        module.build_parser(command).set_defaults(run=module.main, cache=cache)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.cache and not args.no_compilation_cache:
        from gomoku_jax import compilation_cache

        compilation_cache.enable()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
