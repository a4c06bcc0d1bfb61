"""Leaf parallelism at batch 1: W leaves per evaluator call (`leaves_per_step`, a virtual
loss spreads each step's W descents) against one leaf per call.

    python experiments/leaf_parallel.py --board-size 15 --leaves 1,4,16 \\
        --simulations 256 --ms-per-move 100 --max-puzzles 80

(1) Simulations per second of one PUCT search (`for_play`) at batch 1 on one opening
position, for each W, with Gomoku's `HeuristicEvaluator` and the small network
(`NET_PRESETS[--net]`, random weights, through `NetworkEvaluator`): wall and process CPU
time, side by side with W = 1 measured in the same process. A "simulation" is one descent;
with W > 1 the descents of a step that collide on one edge are dropped, so the tree may hold
fewer nodes (the `nodes` column: the tree's nodes over S + 1). `--set FIELD=VALUE` changes
the search's config (e.g. `symmetry=none`).
(2) The tactical suite (`games.gomoku.tactics_suite`: the shipped 15x15 suite, or `--generate N`
puzzles per category on other boards) solved at equal time per move: for each W, the
simulation count that part (1) says fits `--ms-per-move` with the heuristic evaluator
(rounded down to a multiple of W), and the agent `--agent` (default `mcts:evaluator=heuristic`,
which runs the threat search at its root) with it and `leaves_per_step=W`.
Progress bars on stderr count part (1)'s configurations and part (2)'s puzzles (not with
`--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Optional

import jax
import jax.numpy as jnp

import gomoku_jax
from gomoku_jax import progress
from gomoku_jax.agents.specs import make_agent, parse_fields
from gomoku_jax.benchmarks.timing import describe_machine, fmt_rate, parse_int_list, time_jitted
from gomoku_jax.eval.puzzles import solve_rates
from gomoku_jax.games.gomoku import tactics_suite
from gomoku_jax.games.gomoku.heuristic_evaluator import HeuristicEvaluator
from gomoku_jax.markdown import table, write_report
from gomoku_jax.nets.resnet import NET_PRESETS, PolicyValueModel
from gomoku_jax.search import make as make_search
from gomoku_jax.search import tree_loop
from gomoku_jax.search.evaluators import NetworkEvaluator

EVALUATORS = ("heuristic", "network")
DEFAULT_AGENT = "mcts:evaluator=heuristic"  # part (2)'s


def make_evaluator(env, name: str, net: str, seed: int):
    """(evaluator, params) by name."""
    if name == "network":
        model = PolicyValueModel.for_env(NET_PRESETS[net], env)
        return NetworkEvaluator(model), model.init(jax.random.key(seed))
    return HeuristicEvaluator(), None


def opening(env, plies: int = 6):
    """A batch of one position: `plies` stones around the centre (leaves [1, ...])."""
    n = env.board_size
    c = n // 2
    cells = [(c, c), (c, c + 1), (c + 1, c), (c - 1, c - 1), (c + 1, c + 1), (c - 1, c + 1)]
    state = env.init(jax.random.key(0))
    for r, col in cells[:plies]:
        state = env.step(state, jnp.int32(r * n + col))
    return jax.tree.map(lambda x: x[None], state)


def round_to(sims: int, width: int) -> int:
    """`sims` rounded up to a multiple of `width`."""
    return -(-sims // width) * width


def speed(env, evaluators, leaves, sims, net, repeats, max_seconds, seed, log,
          tick: Callable[[int], None] = lambda n: None, fields: Optional[dict] = None):
    """Part (1): [{evaluator, W, S, ms_per_move, per_wall_s, per_cpu_s, nodes}], `tick(1)`
    after each row; PUCT's config with `fields` changed."""
    states = opening(env)
    rows = []
    for name in evaluators:
        evaluator, params = make_evaluator(env, name, net, seed)
        for width in leaves:
            s = round_to(sims, width)
            algorithm = make_search("puct", leaves_per_step=width, **(fields or {})).for_play()

            def fn(p, st, k, a=algorithm, s=s, e=evaluator):
                out = a.search(env, e, p, st, k, s)
                return out.action, tree_loop.used_nodes(out.tree)

            first = []
            compile_s, wall, cpu, timed = time_jitted(
                jax.jit(fn), (params, states, jax.random.key(seed)), repeats,
                max_seconds=max_seconds, first=first)
            rows.append(dict(evaluator=name, leaves=width, simulations=s, compile_s=compile_s,
                             ms_per_move=wall * 1e3, per_wall_s=s / wall, per_cpu_s=s / cpu,
                             nodes=int(first[0][1][0]), timed=timed))
            log(f"  {name} W={width} S={s}: {wall * 1e3:.1f} ms/move "
                f"(compile {compile_s:.1f} s)")
            tick(1)
    return rows


def speed_table(rows) -> str:
    base = {r["evaluator"]: r for r in rows if r["leaves"] == 1}
    out = []
    for r in rows:
        b = base.get(r["evaluator"])
        out.append([r["evaluator"], str(r["leaves"]), str(r["simulations"]),
                    f"{r['nodes']}/{r['simulations'] + 1}", f"{r['ms_per_move']:.1f}",
                    fmt_rate(r["per_wall_s"]), fmt_rate(r["per_cpu_s"]),
                    f"{r['per_wall_s'] / b['per_wall_s']:.2f}x" if b else "-"])
    return table(["evaluator", "W", "simulations", "nodes", "ms/move", "sims/s (wall)",
                  "sims/s (CPU)", "wall vs W=1"], out)


def tactic_sims(rows, leaves, ms_per_move: float) -> dict[int, int]:
    """{W: the simulations that fit `ms_per_move` at W's heuristic rate (>= W)}."""
    rate = {r["leaves"]: r["per_wall_s"] for r in rows if r["evaluator"] == "heuristic"}
    return {w: max(w, int(rate[w] * ms_per_move / 1e3) // w * w) for w in leaves}


def solve(env, puzzles, leaves, sims_of, batch_size, seed, log,
          on_puzzles: Callable[[int], None] = lambda n: None, agent: str = DEFAULT_AGENT):
    """Part (2): [{W, S, solved, total, ms_per_move}] of the agent spec `agent` with each
    W's simulations; `on_puzzles(n)`: n more puzzles played (len(leaves) * len(puzzles) in
    all)."""
    rows = []
    sep = "," if ":" in agent else ":"
    for width in leaves:
        spec = f"{agent}{sep}num_simulations={sims_of[width]},leaves_per_step={width}"
        start = time.perf_counter()
        result = solve_rates(env, make_agent(spec), puzzles, jax.random.key(seed),
                             batch_size=batch_size, latency_samples=3, on_puzzles=on_puzzles)
        solved, total = result.total
        log(f"  {spec}: {solved}/{total} [{time.perf_counter() - start:.1f} s]")
        rows.append(dict(leaves=width, simulations=sims_of[width], solved=solved, total=total,
                         ms_per_move=result.seconds_per_move * 1e3, by_category=result.solved))
    return rows


def solve_table(rows) -> str:
    return table(["W", "simulations", "ms/move (batch 1)", "solved", "rate"],
                 [[str(r["leaves"]), str(r["simulations"]), f"{r['ms_per_move']:.1f}",
                   f"{r['solved']}/{r['total']}", f"{r['solved'] / max(r['total'], 1):.1%}"]
                  for r in rows])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--leaves", default="1,4,16", help="values of W (default 1,4,16)")
    parser.add_argument("--simulations", type=int, default=256,
                        help="part (1)'s simulations per move (rounded up to each W)")
    parser.add_argument("--evaluators", default="heuristic,network",
                        help=f"part (1)'s, from {EVALUATORS}")
    parser.add_argument("--net", default="small", choices=sorted(NET_PRESETS))
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        dest="search_sets",
                        help="part (1)'s PUCT with this config field changed, e.g. "
                             "symmetry=none (repeatable; default: its config for play)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-seconds-per-cell", type=float, default=10.0)
    parser.add_argument("--ms-per-move", type=float, default=100.0,
                        help="part (2)'s time per move (default 100)")
    parser.add_argument("--generate", type=int, metavar="N",
                        help="part (2): N generated puzzles per category (default: the "
                             "shipped 15x15 suite, which needs --board-size 15)")
    parser.add_argument("--max-puzzles", type=int, default=0,
                        help="part (2): the first N puzzles only (0: all)")
    parser.add_argument("--tactics-batch", type=int, default=8)
    parser.add_argument("--agent", default=DEFAULT_AGENT,
                        help="part (2)'s agent spec, given num_simulations and "
                             "leaves_per_step (default: %(default)s)")
    parser.add_argument("--skip-tactics", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the markdown report")
    parser.add_argument("--json", help="write the results as JSON")
    progress.add_argument(parser)
    return parser


def main(args: argparse.Namespace, log=lambda s: print(s, flush=True)) -> int:
    leaves = parse_int_list(args.leaves, "--leaves")
    evaluators = [e for e in args.evaluators.split(",") if e]
    bad = sorted(set(evaluators) - set(EVALUATORS))
    if bad or "heuristic" not in evaluators:
        raise SystemExit(f"error: --evaluators takes names from {EVALUATORS} and needs "
                         f"heuristic (part 2's rates), got {args.evaluators!r}")
    if args.simulations < 1:
        raise SystemExit(f"error: --simulations must be >= 1, got {args.simulations}")
    try:
        env = gomoku_jax.make("gomoku", board_size=args.board_size)
        fields = parse_fields(args.search_sets, "--set")
        make_search("puct", **fields)
    except (TypeError, ValueError) as e:
        raise SystemExit(f"error: {e}")
    log(describe_machine())
    shown = progress.shows(not args.no_progress)
    with progress.bar(len(evaluators) * len(leaves), "speed", "config", enabled=shown) as bar:
        rows = speed(env, evaluators, leaves, args.simulations, args.net, args.repeats,
                     args.max_seconds_per_cell, args.seed, bar.write if shown else log,
                     bar.update, fields)
    changed = "".join(f", {k}={v}" for k, v in fields.items())
    report = [f"## Leaf parallelism at batch 1, {args.board_size}x{args.board_size} "
              f"(PUCT for play{changed})\n", describe_machine() + "\n", speed_table(rows)]
    record = {"board_size": args.board_size, "machine": describe_machine(), "speed": rows}
    if fields:
        record["fields"] = fields
    if not args.skip_tactics:
        if args.generate is not None:
            with progress.bar(args.generate * len(tactics_suite.CATEGORIES), "generating",
                              "puzzle", enabled=shown) as bar:
                suite = tactics_suite.generate(args.board_size, args.generate, seed=args.seed,
                                               on_found=lambda category: bar.update(1))
        elif args.board_size == 15:
            suite = tactics_suite.default_suite()
        else:
            raise SystemExit("error: the shipped suite is 15x15: give --generate N for "
                             f"board size {args.board_size}")
        puzzles = suite.puzzles_for_eval()
        puzzles = puzzles[:args.max_puzzles] if args.max_puzzles else puzzles
        sims_of = tactic_sims(rows, leaves, args.ms_per_move)
        with progress.bar(len(leaves) * len(puzzles), "tactics", "puzzle",
                          enabled=shown) as bar:
            solved = solve(suite.env, puzzles, leaves, sims_of, args.tactics_batch, args.seed,
                           bar.write if shown else log, bar.update, args.agent)
        report += [f"\n### Tactical suite at {args.ms_per_move:g} ms per move "
                   f"({len(puzzles)} puzzles, {args.agent})\n", solve_table(solved)]
        record["tactics"] = {"ms_per_move": args.ms_per_move, "agent": args.agent,
                             "results": solved}
    text = "\n".join(report)
    log("\n" + text)
    write_report(text, args.out, args.json, record)
    return 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
