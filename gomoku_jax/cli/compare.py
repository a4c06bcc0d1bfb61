"""`gomoku-jax compare`: train several arms from one preset, several seeds each, under one
budget, rate their checkpoints against fixed references on one Elo scale, and report
learning curves with intervals (results.md, results.json, curves.png in --out).

    gomoku-jax compare --out cmp/gumbel --preset quick --seeds 3 --iterations 20 --points 4 \\
        --arm "puct-n2: search.algorithm=puct selfplay.num_simulations=2" \\
        --arm "gumbel-n2: search.algorithm=gumbel selfplay.num_simulations=2"
    gomoku-jax compare --out cmp/gumbel ...same arguments...   # continue a killed comparison

An arm is 'name: key=value ...', any `--set` key of the training config, and `preset=NAME`
for an arm that starts from a preset of its own, of any training algorithm on the same game
(`--arm "muzero: preset=muzero_quick"` beside AlphaZero's `quick`). Budgets are equal per
run: --iterations N, or --seconds S of training time (iterations' own wall time;
compilation, checkpoints and rating not counted). Every checkpoint is rated with the same
agent (--eval-agent) against the same references, on the game's openings with both colours;
the references also play each other, and one Elo scale is fitted with the first reference at
0 (one maximum-likelihood fit over every game, with a first-move term and repeated games
weighted down). An arm's cell is the mean over seeds with a 95% interval from the seeds'
variance pooled across arms at that point; the report adds the differences between arms at
the last point and the arms' gains with Holm and simultaneous intervals for each family, and
the smallest difference the design can detect (`compare.stats`).
"""

from __future__ import annotations

import argparse
from typing import Optional

from gomoku_jax import progress
from gomoku_jax.agents.specs import split_specs
from gomoku_jax.compare import report, runner
from gomoku_jax.compare.spec import (
    Budget,
    Comparison,
    default_ladder,
    default_references,
    parse_arm,
)
from gomoku_jax.train import algorithms
from gomoku_jax.train.config import override

DEFAULT_EVAL_AGENT = "mcts:evaluator=network,num_simulations=32,threat_search=0"


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="the comparison's directory: runs, matches, results (rerun with "
                             "the same arguments to continue it)")
    parser.add_argument("--algo", choices=sorted(algorithms.ALGORITHMS),
                        help="the training algorithm of --preset (default: the preset's)")
    parser.add_argument("--preset", default="quick", choices=sorted(algorithms.presets()),
                        help="the base config (default quick)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                        dest="base", help="override a base config field for every arm "
                                          "(repeatable)")
    parser.add_argument("--arm", action="append", required=True, metavar="'NAME: K=V ...'",
                        help="an arm: a name and its overrides (repeatable)")
    parser.add_argument("--seeds", default="3", metavar="N|A,B,...",
                        help="seeds per arm: a count (0..N-1) or a comma list (default 3)")
    budget = parser.add_mutually_exclusive_group(required=True)
    budget.add_argument("--iterations", type=int, metavar="N", help="iterations per run")
    budget.add_argument("--seconds", type=float, metavar="S",
                        help="training seconds per run")
    parser.add_argument("--points", type=int, default=5,
                        help="rating points per run, equally spaced (default 5)")
    parser.add_argument("--max-iterations", type=int, metavar="N",
                        help="with --seconds: run.iterations (the schedule's length and a "
                             "cap; default: the preset's)")
    parser.add_argument("--references", metavar="SPECS",
                        help="the reference agents, comma-separated, the first rated 0; "
                             "with --ladder the ladder's candidates, weakest first "
                             "(default: the game's ladder candidates; with --no-ladder the "
                             "game's fixed references, e.g. gomoku: random,heuristic,"
                             "mcts:num_simulations=32)")
    parser.add_argument("--ladder", action=argparse.BooleanOptionalAction, default=None,
                        help="rate against a calibrated reference ladder, neighbours at most "
                             "--ladder-gap Elo apart, extended as checkpoints climb, and let "
                             "the last point's checkpoints play each other (default: on "
                             "unless --references is given; see docs/compare.md)")
    parser.add_argument("--ladder-gap", type=float, default=250.0, metavar="ELO",
                        help="the widest gap between neighbouring rungs (default 250)")
    parser.add_argument("--eval-agent", default=DEFAULT_EVAL_AGENT, metavar="SPEC",
                        help=f"the agent every checkpoint plays with (default "
                             f"{DEFAULT_EVAL_AGENT}; a GMO run: gmo)")
    parser.add_argument("--games", type=int, default=32,
                        help="games per checkpoint and reference (rounded up to both colours "
                             "of every opening; default 32)")
    parser.add_argument("--seed", type=int, default=0, help="the rating games' seed")
    parser.add_argument("--runs", metavar="DIR",
                        help="the run directories (default OUT/runs); another comparison's "
                             "runs (same arms, seeds, budget) are rated without training, "
                             "e.g. with another --eval-agent")
    progress.add_argument(parser)
    return parser


def spec_from_args(args: argparse.Namespace) -> Comparison:
    """The `Comparison` the flags describe; ValueError on a bad one."""
    seeds = args.seeds.strip()
    if "," in seeds:
        seed_list = tuple(int(s) for s in seeds.split(",") if s.strip())
    else:
        seed_list = tuple(range(int(seeds)))
    kind, amount = (("iterations", args.iterations) if args.iterations is not None
                    else ("seconds", args.seconds))
    # The game is the preset's after the --set overrides (`--set game.id=...` changes it).
    game_id = override(algorithms.preset(args.preset, args.algo), list(args.base)).game.id
    ladder = args.ladder if args.ladder is not None else not args.references
    if args.references:
        references = tuple(split_specs([args.references]))
    else:
        references = (default_ladder if ladder else default_references)(game_id)
    return Comparison(preset=args.preset, algo=args.algo, base=tuple(args.base),
                      arms=tuple(parse_arm(a) for a in args.arm), seeds=seed_list,
                      budget=Budget(kind, amount, args.points), references=references,
                      eval_agent=args.eval_agent, games=args.games, seed=args.seed,
                      max_iterations=args.max_iterations, ladder=ladder,
                      ladder_gap=args.ladder_gap)


def main(args: argparse.Namespace) -> int:
    try:
        spec = spec_from_args(args)
        analysis = runner.run(spec, args.out, runs=args.runs, progress=not args.no_progress)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    paths = report.write(analysis, args.out)
    print(report.markdown(analysis))
    print(f"\nwrote {paths['markdown']}, {paths['json']} and {paths['plot']}")
    return 0
