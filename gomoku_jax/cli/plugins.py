"""`gomoku-jax plugins`: every registered name of every kind of plug-in, and where each
came from: the package (gomoku_jax), an installed package's entry point (group
`gomoku_jax.plugins`), a `--plugin MODULE`, or a user's module. Plug-ins that failed to
load are listed at the end.

    gomoku-jax plugins
    gomoku-jax --plugin my_plugins plugins --kind agent
"""

from __future__ import annotations

import argparse
from typing import Optional

from gomoku_jax import plugins


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kind", choices=plugins.KINDS, metavar="KIND",
                        help=f"one kind only, of {', '.join(plugins.KINDS)}")
    return parser


def main(args: argparse.Namespace) -> int:
    for kind, names in plugins.sources(args.kind).items():
        print(f"{kind}:")
        for name, origin in names.items():
            print(f"  {name:<24} {origin}")
    for failure in plugins.FAILURES:
        print(f"failed: {failure}")
    return 0
