"""Round-robin tournaments: every pair of agents plays an arena match; an Elo table comes out.

Each pair plays `run_match` (every opening with both colours), the pairwise results feed a
Bradley-Terry / Elo maximum-likelihood fit (`elo.fit_ratings`, mean 0 or one agent
anchored at 0), and the result prints as markdown (ratings, a score matrix, the pairs with
their Elo differences) or JSON. Each pair's Elo difference comes twice: from the games as if
independent (trinomial) and from the colour-swapped game pairs (pentanomial, `elo.
estimate_pairs`), the one to trust when the colour or the opening decides games; with it
the pairs' score counts and how many of the games were different.

    python experiments/tournament.py --agents random,proximity_random,heuristic \\
        --board-size 9 --games 64 --out table.md --json table.json
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import jax
import numpy as np

from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.eval import elo
from gomoku_jax.eval.arena import MatchResult, Record, run_match
from gomoku_jax.games.protocol import Env
from gomoku_jax.markdown import table as markdown_table

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

    def distinct_games(self, name: str) -> tuple[int, int]:
        """(different games, games) of `name` over all its matches."""
        distinct = sum(m.distinct_games or 0 for m in self.matches
                       if name in (m.agent_a, m.agent_b))
        return distinct, self.record(name).games

    def ranking(self) -> list[int]:
        """Indices of the agents from the highest rating down."""
        return sorted(range(len(self.names)), key=lambda i: -self.ratings[i])

    def markdown(self) -> str:
        """Three markdown tables: ratings, the score matrix, and the pairs."""
        m0 = self.matches[0]
        games = m0.games
        header = (f"Round robin, {m0.game_label}: {len(self.names)} agents, {games} games "
                  f"per pair ({len(m0.openings)} openings x 2 sides x "
                  f"{m0.games_per_opening_colour}). "
                  f"Elo: maximum likelihood, {self.prior_draws:g} virtual draw(s) per pair, "
                  + (f"{self.anchor} = 0." if self.anchor else "mean 0."))
        order = self.ranking()
        rows = []
        for rank, i in enumerate(order, 1):
            r = self.record(self.names[i])
            rows.append([str(rank), self.names[i], f"{self.ratings[i]:+.1f}", f"{r.score:.1%}",
                         str(r.wins), str(r.draws), str(r.losses), str(r.games),
                         str(self.distinct_games(self.names[i])[0])])
        ratings = markdown_table(["rank", "agent", "Elo", "score", "W", "D", "L", "games",
                                  "distinct games"], rows)
        scores = self.score_matrix()
        matrix = markdown_table(
            ["score of row vs column"] + [self.names[j] for j in order],
            [[self.names[i]] + ["—" if i == j else f"{scores[i, j]:.1%}" for j in order]
             for i in order])
        pairs = markdown_table(
            ["A", "B", "A's W-D-L", "A's score", "A first", "A second",
             "A's pairs 0/½/1/1½/2", "distinct games", "Elo A - B, paired (95%)",
             "Elo A - B, games (95%)"],
            [[m.agent_a, m.agent_b, str(m.record), f"{m.score:.1%}", str(m.as_first),
              str(m.as_second), _pairs_cell(m), _distinct_cell(m), _paired_cell(m),
              elo.format_elo(m.elo)] for m in self.matches])
        notes = ("Paired: the two games of an opening and replica with the sides swapped are "
                 "a pair; the interval is the pair score's mean ± 1.96 standard errors "
                 "mapped to Elo (pentanomial). At 0% or 100% it is the one-sided 97.5% exact "
                 "(Clopper-Pearson) bound on the pairs; an end of ±inf: too few pairs to bound "
                 "that side. Games: the trinomial interval, which "
                 "treats the games as independent. Distinct games: different final "
                 "positions (repeated games count once).")
        return "\n\n".join([header, ratings, matrix, pairs, notes])

    def to_dict(self) -> dict:
        """JSON-ready: the game, the ratings table (best first), the score matrix, the
        matches."""
        m0 = self.matches[0]
        scores = self.score_matrix()
        return {
            "game": m0.game,
            "games_per_pair": m0.games,
            "games_per_opening_colour": m0.games_per_opening_colour,
            "openings": [list(o) for o in m0.openings],
            "anchor": self.anchor, "prior_draws": self.prior_draws,
            "agents": list(self.names),
            "ratings": {n: float(self.ratings[i]) for i, n in enumerate(self.names)},
            "table": [{"rank": rank, "agent": self.names[i],
                       "elo": float(self.ratings[i]),
                       "score": self.record(self.names[i]).score,
                       **self.record(self.names[i]).to_dict(),
                       "games": self.record(self.names[i]).games,
                       "distinct_games": self.distinct_games(self.names[i])[0]}
                      for rank, i in enumerate(self.ranking(), 1)],
            "score_matrix": [[None if math.isnan(x) else float(x) for x in row]
                             for row in scores],
            "matches": [m.to_dict() for m in self.matches],
        }


def _pairs_cell(m: MatchResult) -> str:
    return "—" if m.pairs is None else "/".join(map(str, m.pairs))


def _distinct_cell(m: MatchResult) -> str:
    return "—" if m.distinct_games is None else f"{m.distinct_games} of {m.games}"


def _paired_cell(m: MatchResult) -> str:
    return "—" if m.pair_points is None else elo.format_paired(m.elo_paired)


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


def run_tournament(env: Env, entrants: Sequence[Entrant], key: jax.Array,
                   games_per_opening_colour: int,
                   openings: Optional[Sequence[Sequence[int]]] = None, *,
                   params: Optional[Mapping[str, Any]] = None, anchor: Optional[str] = None,
                   prior_draws: float = 1.0,
                   progress: Optional[Callable[[MatchResult, float], None]] = None,
                   on_games: Optional[Callable[[int], None]] = None) -> TournamentResult:
    """Every pair of `entrants` plays `run_match`; then the Elo fit.

    Args:
      entrants: agent specs ('heuristic:defence=1.2') or (label, agent) pairs.
      openings: action sequences (default: the game's `default_openings()`).
      key: pair k (in `itertools.combinations` order) plays with `fold_in(key, k)`.
      params: optional {label: params} for agents that have them (None otherwise).
      anchor: the label rated 0 (default: the mean rating is 0).
      prior_draws: virtual draws per pair in the fit (see `elo.fit_ratings`).
      progress: called as progress(match_result, seconds) after each pair.
      on_games: called as on_games(n) as games end, n at a time, over all pairs (see
        `run_match`): for a progress bar counting the tournament's games.
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
                      openings, params.get(na), params.get(nb), names=(na, nb),
                      on_games=on_games)
        matches.append(m)
        if progress is not None:
            progress(m, time.perf_counter() - t0)
    points, games = elo.pairwise_tables(
        names, {(m.agent_a, m.agent_b): (m.wins, m.draws, m.losses) for m in matches})
    ratings = elo.fit_ratings(points, games, prior_draws=prior_draws,
                              anchor=None if anchor is None else names.index(anchor))
    return TournamentResult(names, tuple(matches), ratings, anchor, prior_draws)
