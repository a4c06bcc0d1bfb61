"""`gomoku-jax arena`: agent A against agent B, every opening with both sides.

    gomoku-jax arena --a heuristic --b random --board-size 9 --games 64
    gomoku-jax arena --a heuristic:defence=1.2 --b heuristic --openings my_openings.txt
    gomoku-jax arena --game pgx/connect_four --a mcts --b pure_mcts:num_simulations=400
    gomoku-jax arena --checkpoint runs/quick --a trained --b heuristic
    gomoku-jax arena --checkpoint runs/quick --a trained:num_simulations=256 \\
        --b policy:evaluator=network
    gomoku-jax arena --checkpoint runs/new --checkpoint-b default \\
        --a trained:num_simulations=205 --b trained:num_simulations=205

The summary gives the Elo difference A - B twice: paired (the colour-swapped game pairs,
pentanomial: the head-to-head interval) and from the rating fit of the games with their
colours (`elo.fit_games`, with the fitted first-move advantage and its standard error).

With `--checkpoint` (a run directory of `gomoku-jax train`) the game is the network's:
the game flags default to the run's, and other values are refused. `--checkpoint-b` gives B
a network of its own (a run of the same game, or `default` for the shipped network): two
networks then meet with the same agent spec, e.g. a continued run against the one it
started from (without it, B plays --checkpoint's network too). A progress bar counts
the games on stderr (not with `--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import time
from typing import Optional

import jax

from gomoku_jax import progress
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.cli.common import add_game_arguments, load_network, setup_game
from gomoku_jax.eval.arena import per_opening_colour, run_match
from gomoku_jax.markdown import write_report


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, metavar="SPEC",
                        help="agent A: name or name:field=value,... (e.g. heuristic:defence=1.2)")
    parser.add_argument("--b", required=True, metavar="SPEC", help="agent B, as --a")
    add_game_arguments(parser)
    parser.add_argument("--games", type=int, default=64,
                        help="games in all, rounded up to a multiple of 2 x the number of "
                             "openings (default 64)")
    parser.add_argument("--checkpoint-b", metavar="PATH",
                        help="B's network (default: --checkpoint's): a run of the same game "
                             "as --checkpoint's, as --checkpoint takes it, or 'default' for "
                             "the shipped network; its latest step")
    parser.add_argument("--per-opening", action="store_true",
                        help="also print A's record per opening")
    parser.add_argument("--json", metavar="OUT", help="write the result as JSON")
    progress.add_argument(parser)
    return parser


def network_b(args: argparse.Namespace, network):
    """B's `players.Player`: --checkpoint-b's (checked to play --checkpoint's game), else
    `network`; SystemExit on a bad path or another game."""
    if args.checkpoint_b is None:
        return network
    from gomoku_jax.players import default_network_path, load_for_cli

    path = str(default_network_path()) if args.checkpoint_b == "default" else args.checkpoint_b
    other = load_for_cli(path, flag="--checkpoint-b")
    if network is not None and other.game != network.game:
        raise SystemExit(f"error: --checkpoint-b {args.checkpoint_b} plays {other.env!r}, "
                         f"--checkpoint's network {network.env!r}: both must play one game")
    return other


def main(args: argparse.Namespace) -> int:
    network = load_network(args, [args.a, args.b])
    other = network_b(args, network)
    env, openings = setup_game(args, network if network is not None else other)
    try:
        agent_a = make_agent(args.a, network).bind(env)
        agent_b = make_agent(args.b, other).bind(env)
        g = per_opening_colour(args.games, len(openings or env.default_openings()))
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    params = [None if n is None else n.params_for(a)
              for n, a in ((network, agent_a), (other, agent_b))]
    count = 2 * g * len(openings or env.default_openings())
    shown = progress.shows(not args.no_progress)  # else no chunks: one call per half
    t0 = time.perf_counter()
    with progress.bar(count, "arena", "game", enabled=shown) as bar:
        result = run_match(env, agent_a, agent_b, jax.random.key(args.seed), g, openings,
                           *params, names=(args.a, args.b),
                           on_games=bar.update if shown else None)
    seconds = time.perf_counter() - t0
    print(result.summary())
    if network is not None:
        print(f"  network: {network.describe()}")
    if other is not network:
        print(f"  B's network: {other.describe()}")
    print(f"  {seconds:.1f} s on {jax.default_backend()} (compiling included)")
    if args.per_opening:
        print()
        print(result.per_opening_table())
    extra = {"seed": args.seed}
    if network is not None:
        extra["checkpoint"] = network.to_dict()
    if other is not network:
        extra["checkpoint_b"] = other.to_dict()
    write_report("", json_path=args.json, record=result.to_dict() | extra)
    return 0
