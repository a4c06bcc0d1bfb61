"""`gomoku-jax tactics`: solve rates of agents on Gomoku's tactical suite, as a markdown
table and JSON.

    gomoku-jax tactics --agents random,heuristic,mcts,mcts:num_simulations=256
    python experiments/tactics.py --agents mcts --out tactics.md --json tactics.json

Each agent plays one move in every puzzle (batched), at full strength (the agents' own
defaults: greedy, no root noise); a move counts when it is in the puzzle's solution set
(`gomoku_jax.games.gomoku.tactics_suite`). "ms/move" is the compiled wall time of one
single-position move (median of a few), "batched" the time per position when the whole
suite runs in batches. `--generate N` builds a fresh suite of N puzzles in each of the
eight categories with the solver (seeded) instead of loading the shipped one; `--save FILE`
keeps it. Specs with a network (`trained`, `policy:evaluator=network`, ...) play with
`--checkpoint`'s, else with the shipped 15x15 network (`gomoku_jax.players`), on
puzzles of its board size, win length and rule. The table has a column per category
present in the suite (older suite files without `fours_7` / `fours_9` still load).
Progress bars on stderr count the puzzles generated and played (not with `--no-progress`
or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Optional

import jax

from gomoku_jax import progress
from gomoku_jax.agents.specs import make_agent, split_specs
from gomoku_jax.cli import common
from gomoku_jax.eval.puzzles import SolveResult, solve_rates
from gomoku_jax.games.gomoku import tactics_suite
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report

DEFAULT_AGENTS = "random,proximity_random,heuristic,mcts,gumbel"


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", default=DEFAULT_AGENTS, metavar="SPECS",
                        help=f"comma-separated agent specs (default {DEFAULT_AGENTS})")
    parser.add_argument("--suite", metavar="FILE",
                        help="a suite JSON file (default: the shipped 15x15 freestyle suite)")
    parser.add_argument("--generate", type=int, metavar="N",
                        help="generate N puzzles per category instead of loading a suite")
    parser.add_argument("--board-size", type=int, default=15, help="with --generate")
    parser.add_argument("--save", metavar="FILE", help="with --generate: write the suite")
    parser.add_argument("--batch-size", type=int, default=8,
                        help="puzzles per compiled call (default 8)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", metavar="PATH",
                        help="a trained network for the specs that need one ('trained', "
                             "'policy:evaluator=network', ...; default: the shipped network)")
    parser.add_argument("--step", type=int, metavar="N",
                        help="the checkpoint step to load (default: the latest)")
    parser.add_argument("--out", metavar="FILE", help="write the markdown table")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    progress.add_argument(parser)
    return parser


def load_suite(args: argparse.Namespace) -> tactics_suite.Suite:
    if args.generate is None:
        return tactics_suite.load(args.suite) if args.suite else tactics_suite.default_suite()
    if args.suite:
        raise ValueError("give --suite or --generate, not both")
    if args.generate < 1:
        raise ValueError(f"--generate must be >= 1, got {args.generate}")
    count = args.generate * len(tactics_suite.CATEGORIES)
    with progress.bar(count, "generating", "puzzle", enabled=not args.no_progress) as bar:
        suite = tactics_suite.generate(args.board_size, args.generate, seed=args.seed,
                                       on_found=lambda category: bar.update(1))
    if args.save:
        tactics_suite.save(suite, args.save)
    return suite


def network_puzzles(suite: tactics_suite.Suite, network) -> tuple[Any, list]:
    """(the network's env, the suite's puzzles as its states: its observation planes);
    ValueError when the network plays another board, win length or rule."""
    game = network.game_spec
    cfg = suite.config
    mine = (getattr(game, "board_size", None), getattr(game, "win_length", None),
            getattr(game, "rule", None))
    if mine != (cfg.board_size, cfg.win_length, cfg.rule):
        raise ValueError(f"the network plays {network.env!r}; the suite is {cfg.board_size}x"
                         f"{cfg.board_size}, k={cfg.win_length}, {cfg.rule}")
    return network.env, suite.puzzles_for_eval(game)


def row(spec: str, result: SolveResult) -> list[str]:
    cells = [f"{s}/{t} ({s / max(t, 1):.0%})" for s, t in result.solved.values()]
    return [spec, *cells, f"**{result.rate:.1%}**",
            f"{result.seconds_per_move * 1e3:.1f}", f"{result.batch_seconds_per_move * 1e3:.1f}"]


def solved_by(spec: str, agent, env, puzzles: list, network, args: argparse.Namespace,
              on_puzzles: Callable[[int], None], say: Callable[[str], None]) -> SolveResult:
    """One agent's `solve_rates` over the puzzles, with a line of its total to `say`."""
    start = time.perf_counter()
    params = None if network is None else network.params_for(agent)
    result = solve_rates(env, agent, puzzles, jax.random.key(args.seed), params=params,
                         batch_size=args.batch_size, on_puzzles=on_puzzles)
    say(f"  {spec}: {result.total[0]}/{result.total[1]} "
        f"[{time.perf_counter() - start:.1f} s]")
    return result


def main(args: argparse.Namespace) -> int:
    try:
        if args.batch_size < 1:
            raise ValueError(f"--batch-size must be >= 1, got {args.batch_size}")
        suite = load_suite(args)
        specs = split_specs(args.agents)
        network = common.load_network(args, specs)
        env, puzzles = suite.env, suite.puzzles_for_eval()
        if network is not None:
            env, puzzles = network_puzzles(suite, network)
        agents = [(s, make_agent(s, network).bind(env)) for s in specs]
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    cfg = suite.config
    # the categories in order of first appearance, as `solve_rates` reports them (a suite
    # file may have fewer than tactics_suite.CATEGORIES, or another order)
    order = list(dict.fromkeys(p.category for p in suite.puzzles))
    counts = {c: sum(p.category == c for p in suite.puzzles) for c in order}
    print(f"{len(suite.puzzles)} puzzles, {cfg.board_size}x{cfg.board_size} {cfg.rule} "
          f"({', '.join(f'{c} {n}' for c, n in counts.items())})", flush=True)
    with progress.bar(len(puzzles) * len(agents), "tactics", "puzzle",
                      enabled=not args.no_progress) as bar:
        # an agent's line on stdout, through the bar when one shows
        say = progress.printer(bar)
        results = [solved_by(spec, agent, env, puzzles, network, args, bar.update, say)
                   for spec, agent in agents]
    rows = [row(spec, result) for (spec, _), result in zip(agents, results)]
    records = [{"agent": spec, "solved": result.solved,
                "seconds_per_move": result.seconds_per_move,
                "batch_seconds_per_move": result.batch_seconds_per_move,
                "actions": result.actions} for (spec, _), result in zip(agents, results)]
    header = ["agent", *counts, "total", "ms/move", "batched ms/move"]
    table = markdown_table(header, rows)
    print()
    print(table)
    write_report(table, args.out, args.json, {"board_size": cfg.board_size, "rule": cfg.rule,
                                             "seed": args.seed, "results": records})
    return 0
