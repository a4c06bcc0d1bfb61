"""Generate Gomoku's tactical suite with the exact solver, or append categories to one.

    # the shipped suite's fours_7 / fours_9 puzzles, appended to its first 200 (kept as is)
    python experiments/make_tactics_suite.py --categories fours_7,fours_9 --seed 0 \\
        --append gomoku_jax/games/gomoku/data/tactics_15x15_freestyle.json
    # a fresh suite of every category
    python experiments/make_tactics_suite.py --per-category 10 --out my_suite.json

With `--append FILE` the puzzles already in FILE are written back unchanged (same JSON
layout, so the same bytes) and the new ones follow; the selected categories must not be in
FILE yet. The output goes to `--out`, by default FILE itself. Prints the generation time and
how many random positions were drawn. A progress bar on stderr counts the puzzles found (not
with `--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional

from gomoku_jax import progress
from gomoku_jax.games.gomoku import tactics_suite


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--categories", default=",".join(tactics_suite.CATEGORIES),
                        help="comma-separated categories to generate (default: all)")
    parser.add_argument("--per-category", type=int, default=40)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-positions", type=int, default=200_000)
    parser.add_argument("--append", metavar="FILE", help="a suite to append the puzzles to")
    parser.add_argument("--out", metavar="FILE", help="where to write (default: --append)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    progress.add_argument(parser)
    return parser


def main(args: argparse.Namespace) -> int:
    try:
        categories = [c for c in args.categories.split(",") if c]
        if args.per_category < 1:
            raise ValueError(f"--per-category must be >= 1, got {args.per_category}")
        out = args.out or args.append
        if not out:
            raise ValueError("give --out FILE (or --append FILE)")
        base: Optional[dict] = None
        if args.append:
            base_suite = tactics_suite.load(args.append)
            if base_suite.config.board_size != args.board_size:
                raise ValueError(f"{args.append} is {base_suite.config.board_size}x"
                                 f"{base_suite.config.board_size}, not --board-size "
                                 f"{args.board_size}")
            present = sorted({p.category for p in base_suite.puzzles} & set(categories))
            if present:
                raise ValueError(f"{args.append} already has {', '.join(present)}")
            base = tactics_suite.to_json(base_suite)
        start = time.perf_counter()
        with progress.bar(args.per_category * len(categories), "generating", "puzzle",
                          enabled=not args.no_progress) as bar:
            # the lines on stdout, through the bar when one shows
            log = (lambda s: None) if args.quiet else progress.printer(bar)
            suite = tactics_suite.generate(args.board_size, args.per_category, seed=args.seed,
                                           max_positions=args.max_positions,
                                           categories=categories, log=log,
                                           on_found=lambda category: bar.update(1))
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    seconds = time.perf_counter() - start
    counts = {c: sum(p.category == c for p in suite.puzzles) for c in categories}
    summary = ", ".join(f"{c} {n}" for c, n in counts.items())
    print(f"generated {len(suite.puzzles)} puzzles ({summary}) in {seconds:.1f} s, "
          f"seed {args.seed}", flush=True)
    data = tactics_suite.to_json(suite)
    if base is not None:
        base["puzzles"] += data["puzzles"]
        data = base
    Path(out).write_text(json.dumps(data, indent=1) + "\n")
    short = [c for c, n in counts.items() if n < args.per_category]
    if short:
        print(f"warning: fewer than {args.per_category} puzzles in {', '.join(short)} "
              f"(raise --max-positions)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
