"""Does subtree reuse win at equal simulations per move? An arena match of a search agent
with `reuse_tree=true` against the same agent with a fresh tree every move, for each
simulation count (every opening of the game, both colours).

    python experiments/tree_reuse.py --board-size 9 --simulations 32,64 --games 64

Both agents play at full strength (greedy, no root noise) with the same algorithm and
evaluator (`--agent`, an agent spec: `mcts`, `gumbel`, `mcts:evaluator=rollout`, ...).
A progress bar on stderr counts the games of all matches (not with `--no-progress` or when
stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Optional

import jax

import gomoku_jax
from gomoku_jax import progress
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.benchmarks.timing import parse_int_list
from gomoku_jax.eval.arena import per_opening_colour, run_match


def run(board_size: int, sims_list, games: int, agent: str, seed: int, log=print,
        on_games: Optional[Callable[[int], None]] = None) -> list:
    """[(simulations, MatchResult of reuse against no reuse)]; `on_games(n)`: n more games
    played."""
    env = gomoku_jax.make("gomoku", board_size=board_size)
    sep = "," if ":" in agent else ":"
    out = []
    for sims in sims_list:
        spec = f"{agent}{sep}num_simulations={sims}"
        reuse, fresh = make_agent(spec + ",reuse_tree=true"), make_agent(spec)
        g = per_opening_colour(games, len(env.default_openings()))
        start = time.perf_counter()
        result = run_match(env, reuse, fresh, jax.random.key(seed), g,
                           names=(f"{spec},reuse_tree=true", spec), on_games=on_games)
        log(f"## S={sims} ({time.perf_counter() - start:.0f} s)\n{result.summary()}")
        out.append((sims, result))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=9)
    parser.add_argument("--simulations", default="64", help="comma-separated (default: 64)")
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--agent", default="mcts", help="agent spec (default: mcts)")
    parser.add_argument("--seed", type=int, default=0)
    progress.add_argument(parser)
    args = parser.parse_args(argv)
    sims_list = parse_int_list(args.simulations, "--simulations")
    openings = len(gomoku_jax.make("gomoku", board_size=args.board_size).default_openings())
    total = len(sims_list) * 2 * openings * per_opening_colour(args.games, openings)
    shown = progress.shows(not args.no_progress)
    with progress.bar(total, "tree_reuse", "game", enabled=shown) as bar:
        # the results on stdout, through the bar when one shows
        run(args.board_size, sims_list, args.games, args.agent, args.seed,
            log=progress.printer(bar),
            on_games=bar.update if shown else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
