"""Round-robin tournaments: every pair of agents plays an arena match; an Elo table comes out.

Each pair plays `run_match` (every opening with both colours), and every game of every pair,
with its colours, goes into one rating fit (`elo.fit_games`: Bradley-Terry, or Davidson's
model when there are draws, with a first-move term; plain maximum likelihood, no prior; the
first agent, or `anchor`, at 0), which gives each rating its interval from the joint
covariance (a difference's standard error sqrt(C_ii + C_jj - 2 C_ij)), the fitted advantage
of moving first with its standard error, and for an agent that won (or lost) every game
against the rated ones a one-sided bound instead of a finite estimate. The result prints as
markdown (ratings, a score matrix, the pairs) or JSON. Each pair's Elo difference comes
twice: paired, from the colour-swapped game pairs (pentanomial, `elo.estimate_pairs`: the
head-to-head interval, the one to trust for one pair when the colour or the opening decides
games), and from the joint fit; with it the pairs' score counts and how many of the games
were different.

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
from gomoku_jax.eval.arena import (
    MatchResult,
    Record,
    fit_to_dict,
    format_first_move,
    format_fit,
    run_match,
)
from gomoku_jax.eval.rating import ABOVE, ANCHOR, BELOW, RATED, json_number
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
      fit: the rating fit of every game (`fit_matches`): ratings, their joint covariance,
        intervals and status, the first-move advantage.
      anchor: the label rated 0.
    """

    names: tuple[str, ...]
    matches: tuple[MatchResult, ...]
    fit: elo.GameFit
    anchor: str

    @property
    def ratings(self) -> np.ndarray:
        """float64[P] Elo, the anchor's 0; +inf / -inf for an agent separated above / below
        the rated ones (its bound is `fit.lower` / `fit.upper`), nan when undetermined."""
        return self.fit.ratings

    def difference(self, i: int, j: int) -> Optional[tuple[float, float]]:
        """(r_i - r_j, its standard error from the joint covariance), or None when either
        agent is not rated (separated or undetermined)."""
        if any(self.fit.status[k] not in (ANCHOR, RATED) for k in (i, j)):
            return None
        c = self.fit.covariance
        return (float(self.ratings[i] - self.ratings[j]),
                math.sqrt(max(c[i, i] + c[j, j] - 2.0 * c[i, j], 0.0)))

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
        """Indices of the agents from the highest rating down (a separated agent above or
        below the rated ones, an undetermined one last; ties by score)."""
        def key(i: int) -> tuple[float, float]:
            r = self.ratings[i]
            return (math.inf if math.isnan(r) else -r, -self.record(self.names[i]).score)

        return sorted(range(len(self.names)), key=key)

    def _model(self) -> str:
        f = self.fit
        if f.draws == "half":
            return "draws as half points"
        return "Davidson's draw model" if f.draw_param > 0 else "Bradley-Terry (no draws)"

    def markdown(self) -> str:
        """Three markdown tables: ratings, the score matrix, and the pairs."""
        m0, f = self.matches[0], self.fit
        games = m0.games
        header = (f"Round robin, {m0.game_label}: {len(self.names)} agents, {games} games "
                  f"per pair ({len(m0.openings)} openings x 2 sides x "
                  f"{m0.games_per_opening_colour}). "
                  f"Elo: one maximum-likelihood fit of every game with its colours "
                  f"({self._model()}, a first-move term, no prior), {self.anchor} = 0; "
                  f"first-move advantage {format_first_move(f)}.")
        order = self.ranking()
        rows = []
        for rank, i in enumerate(order, 1):
            r = self.record(self.names[i])
            rows.append([str(rank), self.names[i], _rating_cell(f, i), _interval_cell(f, i),
                         _se_cell(f, i), f"{r.score:.1%}", str(r.wins), str(r.draws),
                         str(r.losses), str(r.games),
                         str(self.distinct_games(self.names[i])[0])])
        ratings = markdown_table(["rank", "agent", "Elo", f"{f.confidence:.0%} interval", "SE",
                                  "score", "W", "D", "L", "games", "distinct games"], rows)
        scores = self.score_matrix()
        matrix = markdown_table(
            ["score of row vs column"] + [self.names[j] for j in order],
            [[self.names[i]] + ["—" if i == j else f"{scores[i, j]:.1%}" for j in order]
             for i in order])
        index = {n: i for i, n in enumerate(self.names)}
        pairs = markdown_table(
            ["A", "B", "A's W-D-L", "A's score", "A first", "A second",
             "A's pairs 0/½/1/1½/2", "distinct games", "Elo A - B, paired (95%)",
             "Elo A - B, fit (95%)"],
            [[m.agent_a, m.agent_b, str(m.record), f"{m.score:.1%}", str(m.as_first),
              str(m.as_second), _pairs_cell(m), _distinct_cell(m), _paired_cell(m),
              self._difference_cell(index[m.agent_a], index[m.agent_b])]
             for m in self.matches])
        notes = ("Elo: every game of every pair, with who moved first, in one Bradley-Terry "
                 "(Davidson with draws) maximum-likelihood fit with a first-move term "
                 "(`eval.elo.fit_games`); intervals ± 1.96 standard errors of the joint fit "
                 "(the full inverse Fisher information, so a difference's error counts both "
                 "ratings and their correlation). An agent that won (lost) every game against "
                 "the rated agents has no finite estimate: it shows as > (<) its one-sided "
                 "97.5% profile-likelihood bound, and its pairs' fit column as —. "
                 "Paired: the two games of an opening and replica with the sides swapped are "
                 "a pair; the interval is the pair score's mean ± 1.96 standard errors "
                 "mapped to Elo (pentanomial): the head-to-head interval. At 0% or 100% it is "
                 "the one-sided 97.5% exact (Clopper-Pearson) bound on the pairs; an end of "
                 "±inf: too few pairs to bound that side. Fit: the pair's difference in the "
                 "joint fit, which also uses the games against the other agents. Distinct "
                 "games: different final positions (repeated games count once).")
        return "\n\n".join([header, ratings, matrix, pairs, notes])

    def _difference_cell(self, i: int, j: int) -> str:
        d = self.difference(i, j)
        z = elo._z(self.fit.confidence)  # 1.96 at 95%
        return "—" if d is None else f"{d[0]:+.1f} ± {z * d[1]:.1f}"

    def to_dict(self) -> dict:
        """JSON-ready: the game, the rating fit (ratings with their intervals, the
        covariance, the first-move advantage), the ratings table (best first), the score
        matrix, the matches. Infinite or undefined numbers become None (see `status`)."""
        m0, f = self.matches[0], self.fit
        scores = self.score_matrix()

        def row(i: int) -> dict:
            rating = fit_to_dict(f, i)
            return {"elo": rating["diff"], "elo_lower": rating["lower"],
                    "elo_upper": rating["upper"], "elo_se": rating["se"],
                    "status": rating["status"]}

        return {
            "game": m0.game,
            "games_per_pair": m0.games,
            "games_per_opening_colour": m0.games_per_opening_colour,
            "openings": [list(o) for o in m0.openings],
            "anchor": self.anchor,
            "agents": list(self.names),
            "ratings": {n: json_number(self.ratings[i]) for i, n in enumerate(self.names)},
            "rating_fit": {
                "method": "fit_games", "draws": f.draws, "draw_param": json_number(f.draw_param),
                "dispersion": f.dispersion, "first_move": json_number(f.first_move),
                "first_move_se": json_number(f.first_move_se),
                "first_move_fitted": f.first_move_fitted, "confidence": f.confidence,
                "separated_games": f.separated_games, "converged": f.converged,
                "status": dict(zip(self.names, f.status)),
                "covariance": [[json_number(x) for x in r] for r in f.covariance]},
            "table": [{"rank": rank, "agent": self.names[i], **row(i),
                       "score": self.record(self.names[i]).score,
                       **self.record(self.names[i]).to_dict(),
                       "games": self.record(self.names[i]).games,
                       "distinct_games": self.distinct_games(self.names[i])[0]}
                      for rank, i in enumerate(self.ranking(), 1)],
            "score_matrix": [[None if math.isnan(x) else float(x) for x in row]
                             for row in scores],
            "matches": [m.to_dict() for m in self.matches],
        }


def _rating_cell(fit: elo.GameFit, i: int) -> str:
    """'+118.0', '0' for the anchor, '> +365.2' / '< -365.2' for a separated agent."""
    status = fit.status[i]
    if status == ANCHOR:
        return "0"
    if status == RATED:
        return f"{fit.ratings[i]:+.1f}"
    if status in (ABOVE, BELOW):
        return format_fit(fit, i)
    return status


def _interval_cell(fit: elo.GameFit, i: int) -> str:
    """'[+10.1, +225.9]'; the anchor's 'anchor'; a one-sided bound's '(+365.2, +inf)'."""
    status = fit.status[i]
    if status == ANCHOR:
        return "anchor"
    if status not in (RATED, ABOVE, BELOW):
        return "—"

    def end(v: float) -> str:
        return ("+inf" if v > 0 else "-inf") if math.isinf(v) else f"{v:+.1f}"

    lo, hi = fit.lower[i], fit.upper[i]
    return f"[{end(lo)}, {end(hi)}]" if status == RATED else f"({end(lo)}, {end(hi)})"


def _se_cell(fit: elo.GameFit, i: int) -> str:
    return f"{math.sqrt(fit.covariance[i, i]):.1f}" if fit.status[i] == RATED else "—"


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


def game_records(names: Sequence[str], matches: Sequence[MatchResult]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second, score): every game of `matches` with its colours, players indexed as
    in `names`, the records `elo.fit_games` takes (see `arena.game_records`)."""
    index = {n: i for i, n in enumerate(names)}
    parts = [m.game_records(index[m.agent_a], index[m.agent_b]) for m in matches]
    return tuple(np.concatenate([p[k] for p in parts]) if parts else np.zeros(0)
                 for k in range(3))


def fit_matches(names: Sequence[str], matches: Sequence[MatchResult], anchor: int = 0,
                **fit_options) -> elo.GameFit:
    """One `elo.fit_games` over every game of `matches` (`game_records`), `names[anchor]`
    at 0; `fit_options` go to `fit_games` (draws, first_move, confidence)."""
    first, second, score = game_records(names, matches)
    return elo.fit_games(first, second, score, num_players=len(names), anchor=anchor,
                         **fit_options)


def run_tournament(env: Env, entrants: Sequence[Entrant], key: jax.Array,
                   games_per_opening_colour: int,
                   openings: Optional[Sequence[Sequence[int]]] = None, *,
                   params: Optional[Mapping[str, Any]] = None, anchor: Optional[str] = None,
                   progress: Optional[Callable[[MatchResult, float], None]] = None,
                   on_games: Optional[Callable[[int], None]] = None) -> TournamentResult:
    """Every pair of `entrants` plays `run_match`; then one rating fit of all the games
    (`fit_matches`).

    Args:
      entrants: agent specs ('heuristic:defence=1.2') or (label, agent) pairs.
      openings: action sequences (default: the game's `default_openings()`).
      key: pair k (in `itertools.combinations` order) plays with `fold_in(key, k)`.
      params: optional {label: params} for agents that have them (None otherwise).
      anchor: the label rated 0 (default: the first agent).
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
    anchor = names[0] if anchor is None else anchor
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
    fit = fit_matches(names, matches, names.index(anchor))
    return TournamentResult(names, tuple(matches), fit, anchor)
