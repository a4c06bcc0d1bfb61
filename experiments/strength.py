"""A strength report: a round robin at equal time per move, with paired Elo intervals.

    python experiments/strength.py --agents random,heuristic,mcts,pure_mcts \\
        --ms-per-move 100,1000 --openings 8 --out strength.md --json strength.json
    python experiments/strength.py --checkpoint runs/r1 --agents heuristic,mcts,trained

For each budget (`--ms-per-move`, wall-clock milliseconds per move) every agent spec with a
`num_simulations` field (mcts, pure_mcts, gumbel, trained, ...) gets the largest number of
simulations whose compiled move takes at most the budget; agents without simulations
(random, heuristic) play as they are, and a spec that sets `num_simulations` itself keeps
it (so `pure_mcts:num_simulations=1000,pure_mcts:num_simulations=5000` plays fixed
playouts; the report still shows their time per move). Then every pair plays every opening
with both colours (`gomoku_jax.eval.tournament`), and the report shows the calibration
table, the Elo ratings, and per pair the W-D-L, the pair score counts, the number of
distinct games and the paired (pentanomial) Elo interval.

What "time per move" means. The arena plays many games in lockstep, a batch of B boards per
agent call, so the wall time of one ply at batch B is not the time one game would get. The
budget is the time control of a single game on this machine (a Gomocup / pbrain game, one
board at a time): simulations are calibrated at batch 1, on the position after the first
opening, as the median of a few timed calls of the compiled `act_batch` (compilation not
counted). Batching in the arena changes only how fast the games are played, not what
each agent computes per move. Time per move changes over a game (rollouts get shorter,
trees deeper); the calibration position is an early one, where playouts are longest.

The time is the host's: calibrate and play on the same machine, and read the machine line.
A progress bar on stderr counts the games of every budget (not with `--no-progress` or when
stderr is not a terminal); the calibration lines go to stderr too, the report to stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import time
from typing import Any, Callable, Optional, Sequence

import jax

from gomoku_jax import progress
from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.specs import make_agent, parse_spec, split_specs
from gomoku_jax.benchmarks.timing import describe_machine
from gomoku_jax.cli import common
from gomoku_jax.eval.arena import MatchResult, opening_states, per_opening_colour
from gomoku_jax.eval.tournament import TournamentResult, run_tournament
from gomoku_jax.games.protocol import Env
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report

DEFAULT_AGENTS = "random,heuristic,mcts,pure_mcts"


@dataclasses.dataclass(frozen=True)
class Calibration:
    """One agent at one budget: its simulations (None: it has none) and the measured
    milliseconds per move at batch 1; `how`: calibrated / fixed by spec / no simulations /
    over budget (even the fewest simulations take longer); `tried`: (sims, ms) measured."""

    label: str
    simulations: Optional[int]
    ms_per_move: float
    how: str
    tried: tuple[tuple[int, float], ...] = ()


def has_simulations(agent: Agent) -> bool:
    return dataclasses.is_dataclass(agent) and any(
        f.name == "num_simulations" for f in dataclasses.fields(agent))


def move_ms(env: Env, agent: Agent, params: Any, state: Any, seed: int, repeats: int = 5,
            max_seconds: float = 5.0) -> float:
    """Median wall milliseconds of one compiled move of `agent` at batch 1 from `state`."""
    keys = jax.random.split(jax.random.key(seed), 1)
    states = jax.tree.map(lambda x: x[None], state)
    agent_states = jax.vmap(agent.init)(keys)
    act = jax.jit(agent.act_batch).lower(params, agent_states, states, keys).compile()
    t0 = time.perf_counter()
    jax.block_until_ready(act(params, agent_states, states, keys))  # warm-up
    first = time.perf_counter() - t0
    walls = []
    for _ in range(max(1, min(repeats, int(max_seconds / max(first, 1e-6))))):
        t0 = time.perf_counter()
        jax.block_until_ready(act(params, agent_states, states, keys))
        walls.append(time.perf_counter() - t0)
    return 1000.0 * statistics.median(walls)


def calibrate(budget_ms: float, step: int, measure: Callable[[int], float], start: int = 16,
              max_simulations: int = 100_000, max_tries: int = 6
              ) -> tuple[int, float, tuple[tuple[int, float], ...]]:
    """(simulations, ms, tried): the most simulations (a multiple of `step`) whose
    `measure(sims)` (ms per move) is at most `budget_ms`, from a few measurements (each one
    compiles anew): a proportional guess from the first, then the line t = a + b * sims
    through the nearest measurements below and above the budget, until they are within 5%
    of each other. When even `step` simulations take longer, that is the answer."""
    def fit(s: float) -> int:
        return int(min(max(step, (s // step) * step), max_simulations))

    tried: dict[int, float] = {}
    sims = fit(start)
    for _ in range(max_tries):
        if sims in tried:
            break
        tried[sims] = measure(sims)
        ok = [s for s, t in tried.items() if t <= budget_ms]
        bad = [s for s, t in tried.items() if t > budget_ms]
        if (not ok and min(bad) <= step) or (ok and max(ok) >= max_simulations) or (
                ok and bad and min(bad) - max(ok) <= max(step, max(ok) // 20)):
            break
        if len(tried) == 1:
            guess = min(sims * budget_ms / max(tried[sims], 1e-3), 8 * sims)
        else:
            lo = max(ok) if ok else min(tried)
            hi = min(bad) if bad else max(tried)
            if lo == hi:
                lo, hi = sorted(tried)[-2:] if not bad else sorted(tried)[:2]
            slope = (tried[hi] - tried[lo]) / (hi - lo)
            guess = lo + (budget_ms - tried[lo]) / slope if slope > 0 else 2 * max(tried)
            if ok and bad:  # strictly between the best known ends
                guess = min(max(guess, max(ok) + step), min(bad) - step)
        sims = fit(0.97 * guess if not (ok and bad) else guess)
    ok = [s for s, t in tried.items() if t <= budget_ms]
    best = max(ok) if ok else min(tried)
    return best, tried[best], tuple(sorted(tried.items()))


def budget_agents(env: Env, specs: Sequence[str], network, budget_ms: float, state: Any,
                  seed: int, max_simulations: int, log: Callable[[str], None] = print
                  ) -> tuple[list[tuple[str, Agent]], dict[str, Any], list[Calibration]]:
    """The entrants at one budget: [(label, agent)], {label: params}, calibration rows."""
    entrants, params, rows = [], {}, []
    for spec in specs:
        agent = make_agent(spec, network).bind(env)
        p = None if network is None else network.params_for(agent)
        fixed = "num_simulations" in parse_spec(spec)[1]
        if not has_simulations(agent) or fixed:
            ms = move_ms(env, agent, p, state, seed)
            sims = agent.num_simulations if has_simulations(agent) else None
            rows.append(Calibration(spec, sims, ms, "fixed by spec" if fixed
                                    else "no simulations"))
        else:
            step = getattr(getattr(agent, "search", None), "leaves_per_step", 1) or 1

            def measure(s: int, agent=agent, p=p) -> float:
                ms = move_ms(env, dataclasses.replace(agent, num_simulations=s), p, state, seed)
                log(f"    {spec}: {s} simulations, {ms:.1f} ms per move")
                return ms

            sims, ms, tried = calibrate(budget_ms, step, measure,
                                        max_simulations=max_simulations)
            agent = dataclasses.replace(agent, num_simulations=sims)
            rows.append(Calibration(spec, sims, ms, "calibrated" if ms <= budget_ms
                                    else "over budget", tried))
        log(f"  {spec}: {rows[-1].how}, simulations {rows[-1].simulations}, "
            f"{rows[-1].ms_per_move:.1f} ms per move")
        entrants.append((spec, agent))
        if p is not None:
            params[spec] = p
    return entrants, params, rows


def calibration_table(rows: Sequence[Calibration], budget_ms: float) -> str:
    return markdown_table(
        ["agent", "simulations", "ms per move (batch 1)", f"of {budget_ms:g} ms", "how",
         "measured (simulations: ms)"],
        [[r.label, "—" if r.simulations is None else str(r.simulations),
          f"{r.ms_per_move:.1f}", f"{r.ms_per_move / budget_ms:.0%}", r.how,
          ", ".join(f"{s}: {t:.1f}" for s, t in r.tried) or "—"] for r in rows])


def report(budget_ms: float, rows: Sequence[Calibration], result: TournamentResult,
           seconds: float) -> str:
    """The markdown section of one budget."""
    return "\n\n".join([
        f"## {budget_ms:g} ms per move",
        f"Calibration: simulations per move at batch 1 on the position after the first "
        f"opening, median of timed compiled moves ({describe_machine()}).",
        calibration_table(rows, budget_ms),
        result.markdown(),
        f"Played in {seconds:.0f} s.",
    ])


def run(env: Env, specs: Sequence[str], budgets: Sequence[float], openings, games: int,
        seed: int = 0, network=None, max_simulations: int = 100_000,
        log: Callable[[str], None] = print,
        on_games: Optional[Callable[[int], None]] = None
        ) -> list[tuple[float, list[Calibration], TournamentResult, float]]:
    """One round robin per budget: [(budget ms, calibration rows, result, seconds)].
    `on_games(n)`: n more games played (see `run_tournament`)."""
    openings = tuple(openings or env.default_openings())
    g = per_opening_colour(games, len(openings))
    state = jax.tree.map(lambda x: x[0], opening_states(env, openings[:1]))
    out = []
    for budget in budgets:
        log(f"{budget:g} ms per move: calibrating")
        t0 = time.perf_counter()
        entrants, params, rows = budget_agents(env, specs, network, budget, state, seed,
                                               max_simulations, log)

        def pair_done(m: MatchResult, seconds: float) -> None:
            log(f"  {m.agent_a} vs {m.agent_b}: {m.record} (W-D-L), pairs "
                f"{'/'.join(map(str, m.pairs))}, Elo {m.elo_paired}  [{seconds:.1f} s]")

        result = run_tournament(env, entrants, jax.random.key(seed), g, openings,
                                params=params, progress=pair_done, on_games=on_games)
        out.append((budget, rows, result, time.perf_counter() - t0))
    return out


def parse_budgets(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or any(not math.isfinite(v) or v <= 0 for v in values):
        raise SystemExit(f"error: --ms-per-move takes comma-separated positive numbers, got "
                         f"{text!r}")
    return values


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", nargs="+", metavar="SPECS",
                        help=f"agent specs, comma-separated (default: {DEFAULT_AGENTS}, and "
                             f"'trained' with --checkpoint)")
    parser.add_argument("--ms-per-move", default="100", metavar="MS,MS",
                        help="wall-clock budgets per move in milliseconds, one round robin "
                             "each (default 100)")
    common.add_game_arguments(parser, board_size=15)
    parser.set_defaults(openings=None)
    parser.add_argument("--games", type=int, default=None,
                        help="games per pair, rounded up to 2 x the openings (default: one "
                             "game per opening and colour)")
    parser.add_argument("--max-simulations", type=int, default=100_000,
                        help="the most simulations calibration may give (default 100000)")
    parser.add_argument("--out", metavar="FILE", help="write the markdown report here")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    progress.add_argument(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    # --openings N takes the first N of the game's openings; anything else is a file.
    count = None
    if args.openings is not None and args.openings.strip().isdigit():
        count, args.openings = int(args.openings), None
    try:
        named = split_specs(args.agents) if args.agents else []
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    network = common.load_network(args, named)
    env, openings = common.setup_game(args, network)
    budgets = parse_budgets(args.ms_per_move)
    try:
        openings = tuple(openings or env.default_openings())
        if count is not None:
            if not 1 <= count <= len(openings):
                raise ValueError(f"--openings {count}: the game has {len(openings)} openings; "
                                 f"give 1..{len(openings)} or an openings file")
            openings = openings[:count]
        default = DEFAULT_AGENTS + (",trained" if network is not None else "")
        specs = split_specs(args.agents or default)
        if len(specs) < 2:
            raise ValueError(f"a tournament needs at least 2 agents, got {specs}")
        if args.max_simulations < 1:
            raise ValueError(f"--max-simulations must be >= 1, got {args.max_simulations}")
        games = 2 * len(openings) if args.games is None else args.games
        per_opening_colour(games, len(openings))
        for s in specs:
            make_agent(s, network).bind(env)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    t0 = time.perf_counter()
    shown = progress.shows(not args.no_progress)
    pairs = len(specs) * (len(specs) - 1) // 2
    total = len(budgets) * pairs * 2 * len(openings) * per_opening_colour(games, len(openings))
    with progress.bar(total, "strength", "game", enabled=shown) as bar:
        # the log on stderr, through the bar when one shows
        log = progress.printer(bar, sys.stderr)
        results = run(env, specs, budgets, openings, games, args.seed, network,
                      args.max_simulations, log=log, on_games=bar.update if shown else None)
    text = "\n\n".join([f"# Strength at equal time per move ({env.id}, {len(specs)} agents, "
                        f"{len(openings)} openings x 2 colours)"]
                       + [report(*r) for r in results]
                       + [f"Total {time.perf_counter() - t0:.0f} s."])
    print(text)
    record = {"seed": args.seed, "machine": describe_machine(), "budgets": [
        {"ms_per_move": b, "calibration": [dataclasses.asdict(r) for r in rows],
         "seconds": s, **result.to_dict()} for b, rows, result, s in results]}
    if network is not None:
        record["checkpoint"] = network.to_dict()
    write_report(text, args.out, args.json, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
