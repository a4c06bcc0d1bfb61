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
table, the Elo ratings (one maximum-likelihood fit of every game with its colours,
`gomoku_jax.eval.elo.fit_games`: a first-move term, intervals from the joint covariance, an
agent that won or lost every game as a one-sided bound), and per pair the W-D-L, the pair
score counts, the number of distinct games, the paired (pentanomial) Elo interval (the
head-to-head claim) and the pair's difference in the joint fit.

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

Ladder mode: our engine against each rung of any pbrain (Gomocup) engine, by node budget.

    python experiments/strength.py --ladder pbrain-rapfi --rungs 1000,3000,10000 \\
        --ms-per-move 1000 --openings 8 --out ladder.md --json ladder.json

`--ladder ENGINE` (a command on PATH or a path, with its arguments) is started once per
rung, and told its node budget by INFO lines after START (`--rung-info`, default
`max_node={nodes}`) and/or by arguments appended to its command (`--rung-args`, e.g.
`"--nodes {nodes}"`); which keys or flags an engine takes is the engine's business: check
its documentation. Its timeout_turn is `--rung-ms` (a safety bound: the node budget should
end its moves first; read the ms column). Our side is `--ours` (default `gomoku-jax pbrain`,
the default engine), one process for the whole ladder, with INFO timeout_turn
`--ms-per-move`. Both run as a Gomocup manager runs them (`gomoku_jax.io.pbrain_match`:
START / INFO / BOARD for the opening, then TURN; a move that does not come within its time
plus `--margin-ms`, a crash, an illegal move or an answer that is not a move loses that
game, and the ladder goes on; a rung whose engine does not START is reported and skipped).
Every opening is played with both colours; the table per rung: W-D-L, the pair counts, the
paired Elo (ours minus the rung: a head-to-head claim, so the paired interval), time losses
and errors of each side, and their mean wall milliseconds per move as the manager measured
them (writing the command to reading the move). `--games-out FILE` writes every game as a
JSON line that `experiments/loss_analysis.py` reads.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shlex
import signal
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
from gomoku_jax.eval import elo
from gomoku_jax.eval.arena import MatchResult, opening_states, per_opening_colour
from gomoku_jax.eval.tournament import TournamentResult, run_tournament
from gomoku_jax.games.protocol import Env
from gomoku_jax.io import pbrain_match
from gomoku_jax.io.pbrain_match import FAULTS, GameRecord, Manager, Side
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report

DEFAULT_AGENTS = "random,heuristic,mcts,pure_mcts"
DEFAULT_OURS = "gomoku-jax pbrain"
DEFAULT_RUNG_INFO = "max_node={nodes}"


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
            max_seconds: float = 5.0, min_repeats: int = 3) -> float:
    """Median wall milliseconds of one compiled move of `agent` at batch 1 from `state`:
    `repeats` timed moves, fewer when they would take over `max_seconds`, never fewer than
    `min_repeats` (one slow outlier must not decide a multi-second calibration)."""
    keys = jax.random.split(jax.random.key(seed), 1)
    states = jax.tree.map(lambda x: x[None], state)
    agent_states = jax.vmap(agent.init)(keys)
    act = jax.jit(agent.act_batch).lower(params, agent_states, states, keys).compile()
    t0 = time.perf_counter()
    jax.block_until_ready(act(params, agent_states, states, keys))  # warm-up
    first = time.perf_counter() - t0
    walls = []
    for _ in range(max(min_repeats, min(repeats, int(max_seconds / max(first, 1e-6))))):
        t0 = time.perf_counter()
        jax.block_until_ready(act(params, agent_states, states, keys))
        walls.append(time.perf_counter() - t0)
    return 1000.0 * statistics.median(walls)


def first_openings(env: Env, openings, count: Optional[int]) -> tuple:
    """`openings` (None: the game's own), the first `count` of them when `count` is given
    (`--openings N`); ValueError when the game has fewer."""
    openings = tuple(openings or env.default_openings())
    if count is None:
        return openings
    if not 1 <= count <= len(openings):
        raise ValueError(f"--openings {count}: the game has {len(openings)} openings; "
                         f"give 1..{len(openings)} or an openings file")
    return openings[:count]


GROWTH = 8  # the most a guess may exceed the largest count measured so far


def calibrate(budget_ms: float, step: int, measure: Callable[[int], float], start: int = 16,
              max_simulations: int = 100_000, max_tries: int = 8
              ) -> tuple[int, float, tuple[tuple[int, float], ...]]:
    """(simulations, ms, tried): the most simulations (a multiple of `step`) whose
    `measure(sims)` (ms per move) is at most `budget_ms`, from a few measurements (each one
    compiles anew): a proportional guess from the first, then the line t = a + b * sims
    through the nearest measurements below and above the budget, until they are within 5%
    of each other. When even `step` simulations take longer, that is the answer.

    Until a count over the budget is found, a guess is at most GROWTH x the largest count
    measured: a simulation costs more in a bigger tree (PUCT on the heuristic evaluator on
    15x15: about 0.1 ms each at 1,000, 0.5 ms at 50,000), so a line through small counts
    overshoots a multi-second budget many times over, and the overshoot is the costliest
    measurement of all."""
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
            guess = sims * budget_ms / max(tried[sims], 1e-3)
        else:
            lo = max(ok) if ok else min(tried)
            hi = min(bad) if bad else max(tried)
            if lo == hi:
                lo, hi = sorted(tried)[-2:] if not bad else sorted(tried)[:2]
            slope = (tried[hi] - tried[lo]) / (hi - lo)
            guess = lo + (budget_ms - tried[lo]) / slope if slope > 0 else 2 * max(tried)
            if ok and bad:  # strictly between the best known ends
                guess = min(max(guess, max(ok) + step), min(bad) - step)
        if not bad:
            guess = min(guess, GROWTH * max(tried))
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


# ------------------------------------------------------------------ ladder mode

@dataclasses.dataclass
class Rung:
    """One rung of the ladder: the outside engine at `nodes`, against our side ("a").

    `games` are in pairs (2i: ours black, 2i + 1: ours white, the same opening); `failed`
    says why the rung was not played ("" when it was); `name` is the engine's ABOUT name."""

    nodes: int
    side: Side
    name: str = ""
    failed: str = ""
    games: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0

    @property
    def record(self) -> tuple[int, int, int]:
        """Our wins, draws, losses."""
        points = [g.result for g in self.games]
        return points.count(1.0), points.count(0.5), points.count(0.0)

    @property
    def pairs(self) -> tuple[int, int, int, int, int]:
        return elo.pair_counts([self.games[i].result + self.games[i + 1].result
                                for i in range(0, len(self.games) - 1, 2)])

    def faults(self, side: str, kinds: Sequence[str]) -> int:
        """Games `side` ("a" ours, "b" the rung) lost by one of the `kinds` of fault."""
        return sum(g.loser == side and g.reason in kinds for g in self.games)

    def mean_ms(self, side: str) -> float:
        ms = [t for g in self.games for t in g.ms[side]]
        return statistics.fmean(ms) if ms else math.nan

    def to_dict(self) -> dict:
        out = {"nodes": self.nodes, "label": self.side.label, "argv": list(self.side.argv),
               "info": [list(kv) for kv in self.side.info], "name": self.name,
               "failed": self.failed, "seconds": self.seconds}
        if self.games:
            w, d, lost = self.record
            out.update(
                wins=w, draws=d, losses=lost, pairs=list(self.pairs),
                elo=elo.estimate(w, d, lost).to_dict(),
                elo_paired=elo.estimate_pairs(self.pairs).to_dict(),
                time_losses={k: self.faults(k, ("time",)) for k in "ab"},
                errors={k: self.faults(k, ERRORS) for k in "ab"},
                mean_ms={k: self.mean_ms(k) for k in "ab"},
                games=[g.to_dict() for g in self.games])
        return out


ERRORS = tuple(f for f in FAULTS if f != "time")  # faults counted as errors, not on time


def parse_rungs(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or any(v < 1 for v in values):
        raise ValueError(f"--rungs takes comma-separated positive node budgets, got {text!r}")
    return values


def ladder_sides(engine: str, rungs: Sequence[int], rung_info: str, rung_args: str,
                 rung_ms: int, ours: str, ms_per_move: int, match_ms: int = 0,
                 max_memory: int = 0) -> tuple[Side, list[tuple[int, Side]]]:
    """(our side, [(nodes, the engine's side at that budget)]) from the flags; ValueError
    for an engine not found or a malformed `--rung-info`."""
    def fill(text: str, nodes: int) -> str:
        return text.replace("{nodes}", str(nodes))

    ours_side = Side("ours", pbrain_match.engine_argv(ours), ms_per_move, match_ms,
                     max_memory)
    sides = []
    for nodes in rungs:
        argv = pbrain_match.engine_argv(f"{engine} {fill(rung_args, nodes)}".strip())
        info = pbrain_match.parse_info(fill(rung_info, nodes))
        name = os.path.basename(shlex.split(engine)[0])
        sides.append((nodes, Side(f"{name}@{nodes}", argv, rung_ms,
                                  match_ms, max_memory, info)))
    return ours_side, sides


def game_line(nodes: int, g: GameRecord) -> str:
    outcome = {1.0: "won", 0.5: "drew", 0.0: "lost"}[g.result]
    why = g.reason + (f": {g.detail}" if g.detail else "")
    ms = ", ".join(f"{who} {statistics.fmean(g.ms[k]):.1f} ms a move"
                   for k, who in (("a", "ours"), ("b", "rung")) if g.ms[k])
    return (f"  {nodes} nodes, opening {g.opening}, ours {'black' if g.a_black else 'white'}: "
            f"{outcome} ({why}), {len(g.moves)} stones; {ms}")


def run_ladder(manager: Manager, ours: Side, rungs: Sequence[tuple[int, Side]],
               openings: Sequence[Sequence[int]], repeats: int = 1,
               log: Callable[[str], None] = print,
               on_games: Optional[Callable[[int], None]] = None) -> list[Rung]:
    """Every rung against `ours` over every opening `repeats` times with both colours.

    Our engine is started once (SystemExit when it cannot be); each rung's engine is
    started at its rung (a failure skips the rung, recorded) and ended after it."""
    try:
        log(f"starting ours: {shlex.join(ours.argv)}")
        name = manager.start(ours)
        log(f"  ours is {name!r}")
    except pbrain_match.EngineFailed as e:
        raise SystemExit(f"error: our engine did not start: {e.detail}")
    out = []
    per_rung = 2 * repeats * len(openings)
    for nodes, side in rungs:
        rung = Rung(nodes, side)
        t0 = time.perf_counter()
        try:
            log(f"{nodes} nodes: starting {shlex.join(side.argv)}"
                + "".join(f"; INFO {k} {v}" for k, v in side.info))
            rung.name = manager.start(side)
        except pbrain_match.EngineFailed as e:
            rung.failed = e.detail
            log(f"  {nodes} nodes: skipped, the engine did not start ({e.detail})")
            if on_games is not None:
                on_games(per_rung)
        else:
            def done(g: GameRecord, nodes=nodes) -> None:
                log(game_line(nodes, g))
                if on_games is not None:
                    on_games(1)

            rung.games = manager.play_pairs(ours, side, openings, repeats, on_game=done)
        finally:
            manager.release(side)
        rung.seconds = time.perf_counter() - t0
        if rung.games:
            w, d, lost = rung.record
            log(f"  {nodes} nodes: ours {w}-{d}-{lost}, pairs "
                f"{'/'.join(map(str, rung.pairs))}, Elo {elo.estimate_pairs(rung.pairs)}")
        out.append(rung)
    return out


def ladder_table(rungs: Sequence[Rung]) -> str:
    rows = []
    for r in rungs:
        if r.failed:
            rows.append([f"{r.nodes:,}", r.name or "—", f"not played: {r.failed}"]
                        + ["—"] * 6)
            continue
        w, d, lost = r.record
        rows.append([
            f"{r.nodes:,}", r.name or "—", f"{w}-{d}-{lost}", f"{(w + d / 2) / (w + d + lost):.1%}",
            "/".join(map(str, r.pairs)), elo.format_paired(elo.estimate_pairs(r.pairs)),
            f"{r.faults('a', ('time',))} / {r.faults('b', ('time',))}",
            f"{r.faults('a', ERRORS)} / {r.faults('b', ERRORS)}",
            f"{r.mean_ms('a'):.1f} / {r.mean_ms('b'):.1f}"])
    return markdown_table(
        ["rung (nodes)", "engine", "ours W-D-L", "our score", "pairs 0/½/1/1½/2",
         "paired Elo, ours - rung", "time losses ours / rung", "errors ours / rung",
         "ms per move ours / rung"], rows)


def games_table(rung: Rung) -> str:
    """One row per pair: the opening, our game as black and as white, our pair points."""
    def cell(g: GameRecord) -> str:
        outcome = {1.0: "W", 0.5: "D", 0.0: "L"}[g.result]
        who = {"a": "ours", "b": "rung", None: ""}[g.loser]
        why = g.reason if g.reason in ("five", "draw") else f"{who} {g.reason}"
        return f"{outcome} ({why}, {len(g.moves)})"

    rows = [[str(g.opening), cell(g), cell(h), f"{g.result + h.result:g}"]
            for g, h in zip(rung.games[::2], rung.games[1::2])]
    return markdown_table(["opening", "ours black (end, stones)", "ours white",
                           "our pair points"], rows)


def ladder_report(config, ours: Side, engine: str, rungs: Sequence[Rung], openings: int,
                  repeats: int, margin_ms: float, seconds: float) -> str:
    faulty = [f"- {r.nodes:,} nodes, opening {g.opening}, ours "
              f"{'black' if g.a_black else 'white'}: "
              f"{'ours' if g.loser == 'a' else 'the rung'} lost by {g.reason} ({g.detail})"
              for r in rungs for g in r.games if g.reason not in ("five", "draw")]
    first = rungs[0].side if rungs else None
    told = ("" if first is None else
            f" Each rung is told its budget by INFO "
            f"{', '.join(f'{k} {v}' for k, v in first.info) or '(none)'} and the command "
            f"`{shlex.join(first.argv)}` (shown for the first rung, "
            f"{rungs[0].nodes:,} nodes).")
    parts = [
        f"# Ladder: ours against `{engine}` by node budget ({config.board_size}x"
        f"{config.board_size} {config.rule}, {openings} openings x 2 colours"
        f"{f' x {repeats}' if repeats > 1 else ''})",
        f"Ours: `{shlex.join(ours.argv)}` at INFO timeout_turn {ours.timeout_turn_ms} ms; "
        f"the rung's timeout_turn {rungs[0].side.timeout_turn_ms if rungs else 0} ms"
        f"{f', timeout_match {ours.timeout_match_ms} ms' if ours.timeout_match_ms else ''}; "
        f"a move later than its time + {margin_ms:g} ms loses.{told} Milliseconds per move "
        f"are the manager's wall time, writing the command to reading the move "
        f"({describe_machine()}).",
        ladder_table(rungs)]
    for r in rungs:
        if r.games:
            parts += [f"## {r.nodes:,} nodes ({r.name or r.side.label}, {r.seconds:.0f} s)",
                      games_table(r)]
    if faulty:
        parts += ["Games lost by a fault:", "\n".join(faulty)]
    parts.append(f"Total {seconds:.0f} s.")
    return "\n\n".join(parts)


def ladder_games(config: Any, rungs: Sequence[Rung],
                 openings: Sequence[Sequence[int]]) -> list[dict]:
    """Every game of the ladder, one dict each in the format `loss_analysis.py` reads:
    `game` (1-based), `black` / `white` ("ours" or "ext-NODES"),
    `board_size`, `rule`, `opening_stones`, `moves` ([x, y], black first), `winner`
    ("black", "white" or None), `reason`, and `nodes`, the rung."""
    out = []
    for rung in rungs:
        theirs = f"ext-{rung.nodes}"
        for g in rung.games:
            ours_colour, theirs_colour = ("black", "white") if g.a_black else ("white", "black")
            winner = {1.0: ours_colour, 0.0: theirs_colour}.get(g.result)
            out.append({"game": len(out) + 1, "black": "ours" if g.a_black else theirs,
                        "white": theirs if g.a_black else "ours",
                        "board_size": config.board_size, "rule": config.rule,
                        "opening_stones": len(openings[g.opening]),
                        "moves": [list(m) for m in g.moves], "winner": winner,
                        "reason": g.reason, "nodes": rung.nodes})
    return out


def ladder_main(args: argparse.Namespace) -> int:
    """The ladder mode of `main` (`--ladder ENGINE`)."""
    given = [flag for flag, v in (("--agents", args.agents), ("--checkpoint", args.checkpoint),
                                  ("--step", args.step)) if v is not None]
    if given:
        raise SystemExit(f"error: {', '.join(given)} is not an option of --ladder (our side "
                         f"is --ours, a pbrain command, e.g. \"gomoku-jax pbrain --checkpoint "
                         f"RUN\")")
    if (args.game or "gomoku") != "gomoku":
        raise SystemExit(f"error: --ladder plays gomoku (the Gomocup protocol), not {args.game}")
    count = None
    if args.openings is not None and args.openings.strip().isdigit():
        count, args.openings = int(args.openings), None
    env, openings = common.setup_game(args, None)
    try:
        budgets = parse_budgets(args.ms_per_move)
        if len(budgets) != 1 or budgets[0] != int(budgets[0]):
            raise ValueError(f"--ladder takes one --ms-per-move, in whole ms, got "
                             f"{args.ms_per_move!r}")
        openings = first_openings(env, openings, count)
        for flag, v in (("--rung-ms", args.rung_ms), ("--match-ms", args.match_ms),
                        ("--max-memory", args.max_memory), ("--margin-ms", args.margin_ms),
                        ("--start-timeout-s", args.start_timeout_s)):
            if v < 0:
                raise ValueError(f"{flag} must be >= 0, got {v}")
        repeats = per_opening_colour(args.games or 2 * len(openings), len(openings))
        ours, rungs = ladder_sides(args.ladder, parse_rungs(args.rungs), args.rung_info,
                                   args.rung_args, args.rung_ms, args.ours, int(budgets[0]),
                                   args.match_ms, args.max_memory)
        manager = Manager(env.config, args.margin_ms, args.start_timeout_s,
                          stderr=open(args.engine_log, "a") if args.engine_log else None)
    except (ValueError, OSError) as e:
        raise SystemExit(f"error: {e}")
    t0 = time.perf_counter()
    total = len(rungs) * 2 * repeats * len(openings)
    # A TERM (a job killed) ends the engines too: they run in their own sessions.
    before = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        with manager, progress.bar(total, "ladder", "game",
                                   enabled=not args.no_progress) as bar:
            log = progress.printer(bar, sys.stderr)
            results = run_ladder(manager, ours, rungs, openings, repeats, log, bar.update)
    finally:
        signal.signal(signal.SIGTERM, before)
        if manager.stderr is not None:
            manager.stderr.close()
    seconds = time.perf_counter() - t0
    text = ladder_report(env.config, ours, args.ladder, results, len(openings), repeats,
                         args.margin_ms, seconds)
    print(text)
    record = {"mode": "ladder", "seed": args.seed, "machine": describe_machine(),
              "engine": args.ladder, "rung_info": args.rung_info, "rung_args": args.rung_args,
              "config": {"board_size": env.config.board_size, "rule": env.config.rule},
              "openings": [list(o) for o in openings], "repeats": repeats,
              "margin_ms": args.margin_ms, "seconds": seconds,
              "ours": {"argv": list(ours.argv), "timeout_turn_ms": ours.timeout_turn_ms,
                       "timeout_match_ms": ours.timeout_match_ms},
              "rungs": [r.to_dict() for r in results]}
    write_report(text, args.out, args.json, record)
    if args.games_out:
        with open(args.games_out, "w") as f:
            f.writelines(json.dumps(g) + "\n"
                         for g in ladder_games(env.config, results, openings))
    return 0


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
    ladder = parser.add_argument_group(
        "ladder mode", "our pbrain engine against each node budget of an outside one")
    ladder.add_argument("--ladder", metavar="ENGINE",
                        help="the outside engine: a command on PATH or a path, with its "
                             "arguments (quoted as one value)")
    ladder.add_argument("--rungs", default="1000,3000,10000", metavar="N,N",
                        help="its node budgets, one rung each (default 1000,3000,10000)")
    ladder.add_argument("--rung-info", default=DEFAULT_RUNG_INFO, metavar="KEY=VALUE,...",
                        help="INFO lines that tell a rung its budget, {nodes} filled in "
                             "(default %(default)s; '' for none): check your engine's keys")
    ladder.add_argument("--rung-args", default="", metavar="ARGS",
                        help="arguments appended to the engine's command per rung, {nodes} "
                             "filled in, e.g. '--nodes {nodes}'")
    ladder.add_argument("--rung-ms", type=int, default=5000,
                        help="the rung's INFO timeout_turn in ms, a bound beside its node "
                             "budget (default 5000)")
    ladder.add_argument("--ours", default=DEFAULT_OURS, metavar="COMMAND",
                        help="our engine's command (default %(default)r: the default "
                             "engine), timed by --ms-per-move (INFO timeout_turn)")
    ladder.add_argument("--match-ms", type=int, default=0,
                        help="INFO timeout_match of both sides per game, with time_left "
                             "before every move (default 0: no match clock)")
    ladder.add_argument("--max-memory", type=int, default=0,
                        help="INFO max_memory of both sides in bytes (default 0: no limit)")
    ladder.add_argument("--margin-ms", type=float, default=1000.0,
                        help="how late past its time a move may come before it loses "
                             "(default 1000)")
    ladder.add_argument("--start-timeout-s", type=float, default=300.0,
                        help="how long START (and ABOUT after the INFO lines) may take "
                             "(default 300: an engine may compile there)")
    ladder.add_argument("--games-out", metavar="FILE",
                        help="write every game as a JSON line, the format "
                             "experiments/loss_analysis.py reads")
    ladder.add_argument("--engine-log", metavar="FILE",
                        help="append the engines' stderr here (default: discarded)")
    progress.add_argument(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.ladder is not None:
        return ladder_main(args)
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
        openings = first_openings(env, openings, count)
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
