"""Round-robin tournaments: every pair of agents plays an arena match; an Elo table comes out.

Each pair plays `run_match` (every opening with both colours), the pairwise results feed a
Bradley-Terry / Elo maximum-likelihood fit (`elo.fit_ratings`, mean 0 or one agent
anchored at 0), and the result prints as markdown (ratings, a score matrix, the pairs with
their Elo differences) or JSON.

    python experiments/tournament.py --agents random,proximity_random,heuristic \\
        --board-size 9 --games 64 --out table.md --json table.json
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import time
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import jax
import numpy as np

from gomoku_jax.agents.base import Agent
from gomoku_jax.benchmarks.timing import markdown_table
from gomoku_jax.eval import elo
from gomoku_jax.eval.arena import (MatchResult, Record, add_game_arguments, load_network,
                                   per_opening_colour, run_match, setup_game)
from gomoku_jax.eval.openings import DEFAULT_OPENINGS
from gomoku_jax.eval.specs import make_agent, split_specs
from gomoku_jax.game.env import Gomoku

# An entrant: an agent spec string, or a (label, agent) pair for an agent built in code.
Entrant = Union[str, tuple[str, Agent]]


@dataclasses.dataclass(frozen=True)
class TournamentResult:
    """A round robin's matches and fitted ratings.

    Attributes:
      names: the agents' labels, in entry order.
      matches: one `MatchResult` per pair (i < j: names[i] is A).
      ratings: float64[P] Elo ratings (mean 0, or the anchor's 0).
      anchor: the label rated 0, or None for mean 0.
      prior_draws: the virtual draws per pair of the fit.
    """

    names: tuple[str, ...]
    matches: tuple[MatchResult, ...]
    ratings: np.ndarray
    anchor: Optional[str] = None
    prior_draws: float = 1.0

    def record(self, name: str) -> Record:
        """`name`'s total record over all its matches."""
        total = Record()
        for m in self.matches:
            if m.agent_a == name:
                total = total + m.record
            elif m.agent_b == name:
                total = total + Record(m.losses, m.draws, m.wins)
        return total

    def score_matrix(self) -> np.ndarray:
        """float[P, P]: row agent's score against the column agent (nan on the diagonal)."""
        index = {n: i for i, n in enumerate(self.names)}
        out = np.full((len(self.names),) * 2, np.nan)
        for m in self.matches:
            i, j = index[m.agent_a], index[m.agent_b]
            out[i, j], out[j, i] = m.score, 1.0 - m.score
        return out

    def ranking(self) -> list[int]:
        """Indices of the agents from the highest rating down."""
        return sorted(range(len(self.names)), key=lambda i: -self.ratings[i])

    def markdown(self) -> str:
        """Three markdown tables: ratings, the score matrix, and the pairs."""
        m0 = self.matches[0]
        games = m0.games
        header = (f"Round robin, {m0.board_size}x{m0.board_size} {m0.rule} Gomoku "
                  f"(k={m0.win_length}): {len(self.names)} agents, {games} games per pair "
                  f"({len(m0.openings)} openings x 2 colours x {m0.games_per_opening_colour}). "
                  f"Elo: maximum likelihood, {self.prior_draws:g} virtual draw(s) per pair, "
                  + (f"{self.anchor} = 0." if self.anchor else "mean 0."))
        order = self.ranking()
        rows = []
        for rank, i in enumerate(order, 1):
            r = self.record(self.names[i])
            rows.append([str(rank), self.names[i], f"{self.ratings[i]:+.1f}", f"{r.score:.1%}",
                         str(r.wins), str(r.draws), str(r.losses), str(r.games)])
        ratings = markdown_table(["rank", "agent", "Elo", "score", "W", "D", "L", "games"], rows)
        scores = self.score_matrix()
        matrix = markdown_table(
            ["score of row vs column"] + [self.names[j] for j in order],
            [[self.names[i]] + ["—" if i == j else f"{scores[i, j]:.1%}" for j in order]
             for i in order])
        pairs = markdown_table(
            ["A", "B", "A's W-D-L", "A's score", "A as black", "A as white",
             "Elo A - B (95%)"],
            [[m.agent_a, m.agent_b, str(m.record), f"{m.score:.1%}", str(m.as_black),
              str(m.as_white), elo.format_elo(m.elo)] for m in self.matches])
        return "\n\n".join([header, ratings, matrix, pairs])

    def to_dict(self) -> dict:
        """JSON-ready: the game, the ratings table (best first), the score matrix, the
        matches."""
        m0 = self.matches[0]
        scores = self.score_matrix()
        return {
            "game": {"board_size": m0.board_size, "win_length": m0.win_length,
                     "rule": m0.rule},
            "games_per_pair": m0.games,
            "games_per_opening_colour": m0.games_per_opening_colour,
            "openings": [[list(mv) for mv in o] for o in m0.openings],
            "anchor": self.anchor, "prior_draws": self.prior_draws,
            "agents": list(self.names),
            "ratings": {n: float(self.ratings[i]) for i, n in enumerate(self.names)},
            "table": [{"rank": rank, "agent": self.names[i],
                       "elo": float(self.ratings[i]),
                       "score": self.record(self.names[i]).score,
                       **self.record(self.names[i]).to_dict(),
                       "games": self.record(self.names[i]).games}
                      for rank, i in enumerate(self.ranking(), 1)],
            "score_matrix": [[None if math.isnan(x) else float(x) for x in row]
                             for row in scores],
            "matches": [m.to_dict() for m in self.matches],
        }


def _entrants(entrants: Sequence[Entrant]) -> list[tuple[str, Agent]]:
    out = []
    for e in entrants:
        out.append((e, make_agent(e)) if isinstance(e, str) else (e[0], e[1]))
    names = [n for n, _ in out]
    if len(out) < 2:
        raise ValueError(f"a tournament needs at least 2 agents, got {names}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"agent {dup[0]!r} is entered twice; every agent needs its own label")
    return out


def run_tournament(env: Gomoku, entrants: Sequence[Entrant], key: jax.Array,
                   games_per_opening_colour: int,
                   openings: Sequence[Sequence[Sequence[int]]] = DEFAULT_OPENINGS, *,
                   params: Optional[Mapping[str, Any]] = None, anchor: Optional[str] = None,
                   prior_draws: float = 1.0,
                   progress: Optional[Callable[[MatchResult, float], None]] = None
                   ) -> TournamentResult:
    """Every pair of `entrants` plays `run_match`; then the Elo fit.

    Args:
      entrants: agent specs ('heuristic:defence=1.2') or (label, agent) pairs.
      key: pair k (in `itertools.combinations` order) plays with `fold_in(key, k)`.
      params: optional {label: params} for agents that have them (None otherwise).
      anchor: the label rated 0 (default: the mean rating is 0).
      prior_draws: virtual draws per pair in the fit (see `elo.fit_ratings`).
      progress: called as progress(match_result, seconds) after each pair.
    Raises:
      ValueError: fewer than 2 agents, a label twice, a bad spec (the registry's message),
        an unknown anchor, or bad openings.
    """
    players = _entrants(entrants)
    names = tuple(n for n, _ in players)
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not one of the agents {list(names)}")
    params = dict(params or {})
    unknown = sorted(set(params) - set(names))
    if unknown:
        raise ValueError(f"params given for unknown agents {unknown}; agents: {list(names)}")
    matches = []
    for k, ((na, a), (nb, b)) in enumerate(itertools.combinations(players, 2)):
        t0 = time.perf_counter()
        m = run_match(env, a, b, jax.random.fold_in(key, k), games_per_opening_colour,
                      openings, params.get(na), params.get(nb), names=(na, nb))
        matches.append(m)
        if progress is not None:
            progress(m, time.perf_counter() - t0)
    points, games = elo.pairwise_tables(
        names, {(m.agent_a, m.agent_b): (m.wins, m.draws, m.losses) for m in matches})
    ratings = elo.fit_ratings(points, games, prior_draws=prior_draws,
                              anchor=None if anchor is None else names.index(anchor))
    return TournamentResult(names, tuple(matches), ratings, anchor, prior_draws)


# ---------------------------------------------------------------------------- command line


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
                        help="the agent rated 0 (default: the mean rating is 0)")
    parser.add_argument("--prior-draws", type=float, default=1.0,
                        help="virtual draws per pair in the Elo fit (default 1; 0 = plain "
                             "maximum likelihood, infinite for a perfect score)")
    parser.add_argument("--out", metavar="FILE", help="write the markdown tables here")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    return parser


def main(args: argparse.Namespace) -> int:
    network = load_network(args)
    env, openings = setup_game(args, network)
    try:
        specs = split_specs(args.agents)
        entrants = [(s, make_agent(s, network)) for s in specs]
        params = {} if network is None else {s: network.params_for(a) for s, a in entrants}
        g = per_opening_colour(args.games, len(openings))
        if args.prior_draws < 0:
            raise ValueError(f"--prior-draws must be >= 0, got {args.prior_draws}")
        if args.anchor is not None and args.anchor not in specs:
            raise ValueError(f"--anchor {args.anchor!r} is not one of the agents {specs}")
        if len(specs) < 2:
            raise ValueError(f"a tournament needs at least 2 agents, got {specs}")
    except ValueError as e:
        raise SystemExit(f"error: {e}")

    def report(m: MatchResult, seconds: float) -> None:
        print(f"  {m.agent_a} vs {m.agent_b}: {m.record} (W-D-L), score {m.score:.1%}, "
              f"Elo {elo.format_elo(m.elo)}  [{seconds:.1f} s]", flush=True)

    print(f"{len(specs)} agents, {len(specs) * (len(specs) - 1) // 2} pairs, "
          f"{2 * len(openings) * g} games per pair:", flush=True)
    try:
        result = run_tournament(env, entrants, jax.random.key(args.seed), g, openings,
                                params=params, anchor=args.anchor, prior_draws=args.prior_draws,
                                progress=report)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    table = result.markdown()
    print()
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            extra = {"seed": args.seed}
            if network is not None:
                extra["checkpoint"] = network.to_dict()
            json.dump(result.to_dict() | extra, f, indent=1)
    return 0
