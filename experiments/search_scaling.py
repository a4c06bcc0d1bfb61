"""Does more search make a search agent stronger? For each agent spec, the agent at
`factor` x the simulations plays the same agent at 1x (an arena match from random balanced
openings, both colours), and optionally each spec at 1x plays a baseline spec at 1x.

    python experiments/search_scaling.py --board-size 15 --simulations 64 --factor 8 \\
        --agents "mcts:q_transform=alphazero,threat_search=0;mcts:threat_search=0;mcts" \\
        --baseline "mcts:q_transform=alphazero,threat_search=0" --openings 32

Specs are separated by ';' (a spec has commas of its own). The openings are 3 stones within
2 cells of the centre, drawn at random without repeats (`--openings`, `--seed`): black,
white, black; each is played once with each colour per match. The table gives the score of
the first agent named with its paired (pentanomial) Elo interval and the distinct games.
A progress bar on stderr counts the games of all matches (not with `--no-progress` or when
stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Optional

import jax
import numpy as np

import gomoku_jax
from gomoku_jax import progress
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.eval.arena import run_match
from gomoku_jax.eval.elo import format_paired
from gomoku_jax.markdown import table as markdown_table


def random_openings(board_size: int, count: int, seed: int, radius: int = 2
                    ) -> list[tuple[int, ...]]:
    """`count` distinct 3-stone openings (flat actions, black first) within `radius` of the
    centre, the first stone on it, sorted. ValueError if there are fewer than `count`."""
    n, c = board_size, board_size // 2
    cells = [(c + dr) * n + c + dq for dr in range(-radius, radius + 1)
             for dq in range(-radius, radius + 1) if (dr, dq) != (0, 0)]
    if count > len(cells) * (len(cells) - 1):
        raise ValueError(f"only {len(cells) * (len(cells) - 1)} openings within {radius} "
                         f"cells of the centre, asked for {count}")
    rng = np.random.default_rng(seed)
    out: set[tuple[int, ...]] = set()
    while len(out) < count:
        white, black = rng.choice(cells, 2, replace=False)
        out.add((c * n + c, int(white), int(black)))
    return sorted(out)


def with_sims(spec: str, sims: int) -> str:
    return f"{spec}{',' if ':' in spec else ':'}num_simulations={sims}"


def match_row(env, a: str, b: str, openings, seed: int, log,
              on_games: Optional[Callable[[int], None]] = None) -> list:
    start = time.perf_counter()
    r = run_match(env, make_agent(a), make_agent(b), jax.random.key(seed), 1, openings,
                  names=(a, b), on_games=on_games)
    seconds = time.perf_counter() - start
    log(f"{a} vs {b}: {r.wins}-{r.draws}-{r.losses} ({seconds:.0f} s)")
    return [a, b, f"{r.wins}-{r.draws}-{r.losses}", f"{r.score:.1%}",
            format_paired(r.elo_paired), f"{r.distinct_games} of {r.games}",
            f"{r.mean_length:.0f}", f"{seconds:.0f}"]


def count_games(specs: list[str], openings: int, baseline: str | None) -> int:
    """The games `run` plays: a game per opening and colour in every match."""
    matches = len(specs) + sum(baseline is not None and s != baseline for s in specs)
    return matches * 2 * openings


def run(board_size: int, specs: list[str], sims: int, factor: int, openings: int,
        baseline: str | None, seed: int, log=print,
        on_games: Optional[Callable[[int], None]] = None) -> str:
    """The markdown table of every match (see the module doc); `on_games(n)`: n more games
    played (`count_games` in all)."""
    env = gomoku_jax.make("gomoku", board_size=board_size)
    ops = random_openings(board_size, openings, seed)
    rows = []
    for spec in specs:
        rows.append(match_row(env, with_sims(spec, sims * factor), with_sims(spec, sims), ops,
                              seed, log, on_games))
        if baseline is not None and spec != baseline:
            rows.append(match_row(env, with_sims(spec, sims), with_sims(baseline, sims), ops,
                                  seed, log, on_games))
    return markdown_table(["A", "B", "W-D-L (A)", "score", "Elo A - B, paired 95%",
                           "distinct games", "mean length", "s"], rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--agents", default="mcts:q_transform=alphazero,threat_search=0;"
                                            "mcts:threat_search=0",
                        help="agent specs separated by ';'")
    parser.add_argument("--baseline", help="also play each spec at 1x against this one")
    parser.add_argument("--simulations", type=int, default=64)
    parser.add_argument("--factor", type=int, default=8)
    parser.add_argument("--openings", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="also write the table to this file")
    progress.add_argument(parser)
    args = parser.parse_args(argv)
    specs = [s.strip() for s in args.agents.split(";") if s.strip()]
    if not specs or args.simulations < 1 or args.factor < 1 or args.openings < 1:
        parser.error("need agent specs and --simulations, --factor, --openings >= 1")
    shown = progress.shows(not args.no_progress)
    total = count_games(specs, args.openings, args.baseline)
    try:
        with progress.bar(total, "search_scaling", "game", enabled=shown) as bar:
            # a match's line on stdout, through the bar when one shows
            table = run(args.board_size, specs, args.simulations, args.factor,
                        args.openings, args.baseline, args.seed,
                        log=progress.printer(bar),
                        on_games=bar.update if shown else None)
    except ValueError as e:
        parser.error(str(e))
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
