"""The `gomoku-jax` command line (also `python -m gomoku_jax`): one module per subcommand,
each with `build_parser(parser)` and `main(args)`.

`--plugin MODULE` (before the subcommand, repeatable) imports a module of plug-ins first, so
every subcommand (and its `--help`) sees what it registers; the installed packages'
plug-ins (entry points of the group `gomoku_jax.plugins`) are found without it
(docs/plugins.md)."""

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
    ("plugins", "gomoku_jax.cli.plugins",
     "every registered game, search algorithm, agent, ... and where it came from", False),
)


def add_plugin_argument(parser: argparse.ArgumentParser) -> None:
    """The global `--plugin MODULE` flag (repeatable)."""
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="import MODULE first: the plug-ins it registers (games, search "
                             "algorithms, agents, ...) are then usable by name (repeatable)")


def load_plugins(argv: Optional[Sequence[str]]) -> None:
    """Import the `--plugin` modules of `argv` (before the subcommands' parsers are built,
    whose choices and defaults may name them); a module that fails is a warning."""
    from gomoku_jax import plugins

    early = argparse.ArgumentParser(add_help=False)
    add_plugin_argument(early)
    known, _ = early.parse_known_args(argv)
    for module in known.plugin:
        plugins.load(module)


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = argparse.ArgumentParser(
        prog="gomoku-jax",
        description="gomoku_jax: a JAX-native research platform for Gomoku AI and the board "
                    "games next to it.")
    parser.add_argument("--no-compilation-cache", action="store_true",
                        help="don't use JAX's persistent compilation cache")
    add_plugin_argument(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name, help_text, cache in SUBCOMMANDS:
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=help_text, description=module.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        module.build_parser(command).set_defaults(run=module.main, cache=cache)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    load_plugins(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.cache and not args.no_compilation_cache:
        from gomoku_jax import compilation_cache

        compilation_cache.enable()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
