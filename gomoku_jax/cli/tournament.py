"""`gomoku-jax tournament`: a round robin over agent specs, with an Elo table.

The ratings are one maximum-likelihood fit of every game with its colours (`elo.fit_games`:
a first-move term, no prior, intervals from the joint covariance; an agent that won or lost
every game shows as a one-sided bound), the first agent (or `--anchor`) at 0; each pair also
gets its paired (head-to-head) interval.

    gomoku-jax tournament --agents random,proximity_random,heuristic --board-size 9 \\
        --games 64 --out table.md --json table.json
    gomoku-jax tournament --game pgx/connect_four --agents random,mcts,gumbel,pure_mcts

A line per pair as it ends, then the tables; a progress bar counts the games of all pairs
on stderr (not with `--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional

import jax

from gomoku_jax import progress
from gomoku_jax.agents.specs import make_agent, split_specs
from gomoku_jax.cli.common import add_game_arguments, load_network, setup_game
from gomoku_jax.eval import elo
from gomoku_jax.eval.arena import MatchResult, per_opening_colour
from gomoku_jax.eval.tournament import run_tournament
from gomoku_jax.markdown import write_report


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPECS",
                        help="agent specs, comma- or space-separated: "
                             "random,proximity_random,heuristic:defence=1.2,attack=0.8")
    add_game_arguments(parser, board_size=9)
    parser.add_argument("--games", type=int, default=64,
                        help="games per pair, rounded up to a multiple of 2 x the number of "
                             "openings (default 64)")
    parser.add_argument("--anchor", metavar="AGENT",
                        help="the agent rated 0 (default: the first agent)")
    # Kept so that old command lines still run: the fit has no prior any more.
    parser.add_argument("--prior-draws", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", metavar="FILE", help="write the markdown tables here")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    progress.add_argument(parser)
    return parser


def main(args: argparse.Namespace) -> int:
    try:
        specs = split_specs(args.agents)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    network = load_network(args, specs)
    env, openings = setup_game(args, network)
    try:
        entrants = [(s, make_agent(s, network).bind(env)) for s in specs]
        params = {} if network is None else {s: network.params_for(a) for s, a in entrants}
        g = per_opening_colour(args.games, len(openings or env.default_openings()))
        if args.anchor is not None and args.anchor not in specs:
            raise ValueError(f"--anchor {args.anchor!r} is not one of the agents {specs}")
        if len(specs) < 2:
            raise ValueError(f"a tournament needs at least 2 agents, got {specs}")
    except ValueError as e:
        raise SystemExit(f"error: {e}")

    if args.prior_draws is not None:
        print("note: --prior-draws is ignored: the ratings are a plain maximum-likelihood fit "
              "with no prior (a perfect or a zero score shows as a one-sided bound)",
              file=sys.stderr)
    pairs, games = len(specs) * (len(specs) - 1) // 2, 2 * g * len(
        openings or env.default_openings())
    print(f"{len(specs)} agents, {pairs} pairs, {games} games per pair:", flush=True)
    shown = progress.shows(not args.no_progress)
    try:
        with progress.bar(pairs * games, "tournament", "game", enabled=shown) as bar:
            # a pair's line on stdout, through the bar when one shows
            say = progress.printer(bar)

            def report(m: MatchResult, seconds: float) -> None:
                say(f"  {m.agent_a} vs {m.agent_b}: {m.record} (W-D-L), score {m.score:.1%}, "
                    f"pairs {'/'.join(map(str, m.pairs))}, Elo "
                    f"{elo.format_paired(m.elo_paired)} (paired), {m.distinct_games} "
                    f"distinct games  [{seconds:.1f} s]")

            result = run_tournament(env, entrants, jax.random.key(args.seed), g, openings,
                                    params=params, anchor=args.anchor, progress=report,
                                    on_games=bar.update if shown else None)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    table = result.markdown()
    print()
    print(table)
    extra = {"seed": args.seed}
    if network is not None:
        extra["checkpoint"] = network.to_dict()
    write_report(table, args.out, args.json, result.to_dict() | extra)
    return 0
