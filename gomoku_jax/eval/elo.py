"""Elo from match results: a pairwise difference with a 95% interval, and a round-robin fit.

The logistic Elo model: a player `d` Elo points stronger than its opponent expects to score
E(d) = 1 / (1 + 10^(-d / 400)) per game (a draw counting 1/2), so a score s in (0, 1)
corresponds to d(s) = -400 log10(1/s - 1): 50% is 0, 75% is +190.85, 90% is +381.7.

Everything here runs on the host in NumPy; the numbers come from a handful of counts.
`fit_games` (from `gomoku_jax.eval.rating`, re-exported here) fits ratings from one record per
game instead: a first-move term, Davidson draws, the joint covariance, no prior, and
separated players reported as one-sided bounds.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional, Sequence

import numpy as np

from gomoku_jax.eval.rating import GameFit, fit_games  # noqa: F401  (re-exported)

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
_LN10 = math.log(10.0)


def expected_score(diff: float | np.ndarray) -> float | np.ndarray:
    """E(d) = 1 / (1 + 10^(-d/400)): the expected score per game at an Elo difference d."""
    return 1.0 / (1.0 + np.power(10.0, -np.asarray(diff, np.float64) / 400.0))


def elo_diff(score: float) -> float:
    """d(s) = -400 log10(1/s - 1) for a score s in [0, 1]; -inf at 0 and +inf at 1."""
    if not 0.0 <= score <= 1.0 or math.isnan(score):
        raise ValueError(f"score must be in [0, 1], got {score!r}")
    if score == 0.0:
        return -math.inf
    if score == 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no "-0.0" at 50%


@dataclasses.dataclass(frozen=True)
class EloEstimate:
    """An Elo difference (the first player's rating minus the second's) from a match.

    Attributes:
      wins, draws, losses: the first player's results.
      score: (wins + draws / 2) / games.
      diff: d(score); +inf for a 100% score, -inf for 0%.
      lower, upper: the interval's ends (see `estimate`). For a 100% score `upper` is +inf
        and `lower` a finite one-sided bound; for 0% the other way round.
      score_stderr: the standard error of the score (from the trinomial per-game variance).
      confidence: the interval's level (0.95 by default).
    """

    wins: int
    draws: int
    losses: int
    score: float
    diff: float
    lower: float
    upper: float
    score_stderr: float
    confidence: float = 0.95

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def margin(self) -> float:
        """Half the interval's width: `diff ± margin` (inf at a 0% or 100% score)."""
        return (self.upper - self.lower) / 2.0

    def to_dict(self) -> dict:
        """JSON-ready; infinite values become None (JSON has no infinity)."""
        out = dataclasses.asdict(self)
        out["games"], out["margin"] = self.games, self.margin
        return {k: (None if isinstance(v, float) and math.isinf(v) else v)
                for k, v in out.items()}

    def __str__(self) -> str:
        return format_elo(self)


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if confidence == 0.95:
        return Z95
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def estimate(wins: int, draws: int, losses: int, confidence: float = 0.95) -> EloEstimate:
    """The Elo difference of a match and its `confidence` interval.

    Inside (0, 1) the interval comes from the delta method: the per-game score X takes the
    values 1, 1/2, 0 with the observed frequencies (a trinomial), so the score s has standard
    error se = sqrt(Var(X) / n), and d'(s) = 400 / (ln 10 · s (1 - s)) gives the symmetric
    interval d(s) ± z · se · d'(s) (z = 1.96 at 95%).

    At a 0% or 100% score the maximum-likelihood difference is infinite and the observed
    variance is 0, so the delta method says nothing. There the estimate is ±inf and the
    interval is one-sided: for n wins out of n, the score's exact (Clopper-Pearson) lower
    bound is ((1 - confidence) / 2)^(1/n), and `lower` is d of that (e.g. +365 for 32 of 32
    games); `upper` is +inf. A 0% score mirrors it. When every game is drawn the variance
    is 0 too; then the rate p of decisive games is bounded by (1 - p)^n = 1 - confidence
    (the "rule of three"), and the interval is 0 ± d(1/2 + p/2) (±8.0 for 128 draws).

    Raises:
      ValueError: negative counts, no games, or a confidence outside (0, 1).
    """
    counts = (wins, draws, losses)
    if any(isinstance(c, bool) or int(c) != c or c < 0 for c in counts):
        raise ValueError(f"wins, draws and losses must be non-negative ints, got {counts}")
    wins, draws, losses = (int(c) for c in counts)
    n = wins + draws + losses
    if n == 0:
        raise ValueError("no games: an Elo difference needs at least one game")
    z = _z(confidence)
    s = (wins + 0.5 * draws) / n
    var = (wins * (1 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s ** 2) / n
    se = math.sqrt(var / n)
    diff = elo_diff(s)
    if s == 1.0 or s == 0.0:
        bound = elo_diff(((1.0 - confidence) / 2.0) ** (1.0 / n))
        lower, upper = (bound, math.inf) if s == 1.0 else (-math.inf, -bound)
    elif draws == n:
        # No decisive game: the observed variance is 0 as well. Bound the rate p of decisive
        # games instead ((1 - p)^n = 1 - confidence); the score is then within 1/2 ± p/2.
        p = 1.0 - (1.0 - confidence) ** (1.0 / n)
        margin = elo_diff(0.5 + p / 2.0)
        lower, upper = -margin, margin
    else:
        margin = z * se * 400.0 / (_LN10 * s * (1.0 - s))
        lower, upper = diff - margin, diff + margin
    return EloEstimate(wins, draws, losses, s, diff, lower, upper, se, confidence)


def format_elo(e: EloEstimate) -> str:
    """'+190.8 ± 124.3', or '> +365.2' / '< -365.2' for a 100% / 0% score."""
    if math.isinf(e.diff):
        return f"> {e.lower:+.1f}" if e.diff > 0 else f"< {e.upper:+.1f}"
    return f"{e.diff:+.1f} ± {e.margin:.1f}"


def fit_ratings(points: np.ndarray, games: np.ndarray, *, anchor: Optional[int] = None,
                prior_draws: float = 1.0, max_iterations: int = 10_000,
                tolerance: float = 1e-9) -> np.ndarray:
    """Elo ratings that best explain a set of pairwise results (Bradley-Terry, max likelihood).

    With strengths g_i = 10^(r_i / 400) the model says player i scores g_i / (g_i + g_j)
    per game against j. The maximum-likelihood ratings satisfy, for every i,
    sum_j n_ij E(r_i - r_j) = sum_j points_ij, and are found by the classic iteration of
    Zermelo (a minorise-maximise step, Hunter 2004): g_i <- W_i / sum_j n_ij / (g_i + g_j),
    which raises the likelihood at every step.

    A perfect score (all wins against everyone, or all losses) has no finite maximum, so by
    default every pair that met gets `prior_draws` = 1 extra virtual drawn game, a mild pull
    towards 0 (the idea of BayesElo's prior) that keeps every rating finite; with many games
    per pair its effect is small. `prior_draws=0` gives the plain maximum likelihood.

    Args:
      points: float[P, P], points[i, j] = what i scored against j (wins + draws / 2).
      games: float[P, P], symmetric, games[i, j] = games between i and j (0 on the diagonal).
      anchor: the index of the player rated 0; None (the default) makes the mean 0.
    Returns:
      float64[P] Elo ratings.
    Raises:
      ValueError: shapes that don't fit, points outside [0, games], a player with no games,
        or (with prior_draws=0) a player with a perfect or a zero score.
    """
    points = np.asarray(points, np.float64)
    games = np.asarray(games, np.float64)
    p = points.shape[0] if points.ndim == 2 else -1
    if points.shape != (p, p) or games.shape != (p, p) or p < 2:
        raise ValueError(f"points and games must be square [P, P] with P >= 2, got "
                         f"{points.shape} and {games.shape}")
    if not np.allclose(games, games.T) or np.any(np.diag(games) != 0) or np.any(games < 0):
        raise ValueError("games must be symmetric, non-negative and 0 on the diagonal")
    if np.any(points < 0) or np.any(points > games) \
            or not np.allclose(points + points.T, games):
        raise ValueError("points[i, j] must be in [0, games[i, j]] with "
                         "points[i, j] + points[j, i] = games[i, j]")
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0, got {prior_draws!r}")
    if anchor is not None and not 0 <= anchor < p:
        raise ValueError(f"anchor must be a player index in 0..{p - 1}, got {anchor!r}")
    met = games > 0
    if np.any(~met.any(axis=1)):
        raise ValueError(f"player(s) {np.flatnonzero(~met.any(axis=1)).tolist()} played no games")
    games = games + prior_draws * met
    points = points + 0.5 * prior_draws * met
    total = points.sum(axis=1)
    if np.any(total <= 0) or np.any(total >= games.sum(axis=1)):
        raise ValueError("a player with a zero or a perfect score has no finite maximum-"
                         "likelihood rating; use prior_draws > 0")
    log_g = np.zeros(p)
    for _ in range(max_iterations):
        g = np.exp(log_g)
        denom = np.sum(games / (g[:, None] + g[None, :]), axis=1)
        new = np.log(total / denom)
        new -= new.mean()  # the likelihood only sees differences; keep the numbers tame
        done = np.max(np.abs(new - log_g)) < tolerance
        log_g = new
        if done:
            break
    ratings = log_g * 400.0 / _LN10
    return ratings - (ratings.mean() if anchor is None else ratings[anchor])


def pairwise_tables(names: Sequence[str], results: dict[tuple[str, str], tuple[int, int, int]]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(points, games) [P, P] matrices from {(a, b): (a's wins, draws, losses)}."""
    index = {name: i for i, name in enumerate(names)}
    p = len(names)
    points, games = np.zeros((p, p)), np.zeros((p, p))
    for (a, b), (w, d, l) in results.items():
        i, j = index[a], index[b]
        points[i, j] += w + 0.5 * d
        points[j, i] += l + 0.5 * d
        games[i, j] += w + d + l
        games[j, i] += w + d + l
    return points, games


# --------------------------------------------------------------- paired (pentanomial) Elo

PAIR_POINTS = (0.0, 0.5, 1.0, 1.5, 2.0)  # what the first player can score in a game pair


def pair_counts(pair_points: Sequence[float] | np.ndarray) -> tuple[int, int, int, int, int]:
    """How many pairs scored 0, 1/2, 1, 3/2 and 2 points, from each pair's points.

    Raises:
      ValueError: a value that is not one of 0, 0.5, 1, 1.5, 2.
    """
    points = np.asarray(pair_points, np.float64).reshape(-1)
    index = np.rint(points * 2.0)
    if np.any(np.abs(points * 2.0 - index) > 1e-9) or np.any((index < 0) | (index > 4)):
        raise ValueError(f"pair points must be 0, 0.5, 1, 1.5 or 2, got {np.unique(points)}")
    return tuple(int(c) for c in np.bincount(index.astype(int), minlength=5))


@dataclasses.dataclass(frozen=True)
class PairedEloEstimate:
    """An Elo difference from game pairs (the pentanomial model).

    A pair is two games from one start position with the colours swapped. Pairs are
    independent of each other, the two games of a pair are not (an opening that favours one
    colour gives 1-1 pairs, a strong player 2-0 ones), so the score's error comes from the
    spread of the pair scores, not from the spread of single games.

    Attributes:
      counts: pairs where the first player scored 0, 1/2, 1, 3/2 and 2 points.
      score: points per game, sum(points) / (2 * pairs).
      diff: d(score); +inf at 100% and -inf at 0% (the maximum likelihood has no finite
        value there; the interval's finite end is the number to read).
      lower, upper: the Elo interval (see `estimate_pairs`); the end beyond a 0% or 100%
        score is infinite, and so is an end whose score bound leaves [0, 1] (too few pairs).
      score_lower, score_upper: the same interval on the score scale.
      score_stderr: sqrt(Var(pair score / 2) / pairs).
      method: "normal" (mean ± z se, ends mapped through d), "exact" (a 0% or 100% score:
        the one-sided Clopper-Pearson bound on pairs), or "uniform" (every pair scored the
        same other value: a bound on the rate of pairs that didn't).
      confidence: the level (0.95: two-sided 95%, or one-sided 97.5% at 0% / 100%).
    """

    counts: tuple[int, int, int, int, int]
    score: float
    diff: float
    lower: float
    upper: float
    score_lower: float
    score_upper: float
    score_stderr: float
    method: str
    confidence: float = 0.95

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def games(self) -> int:
        return 2 * self.pairs

    def to_dict(self) -> dict:
        """JSON-ready; infinite values become None."""
        out = dataclasses.asdict(self)
        out["counts"] = list(self.counts)
        out["pairs"], out["games"] = self.pairs, self.games
        return {k: (None if isinstance(v, float) and math.isinf(v) else v)
                for k, v in out.items()}

    def __str__(self) -> str:
        return format_paired(self)


def estimate_pairs(counts: Sequence[int], confidence: float = 0.95) -> PairedEloEstimate:
    """The Elo difference of a match played in colour-swapped pairs, with its interval.

    `counts` are the numbers of pairs in which the first player scored 0, 1/2, 1, 3/2 and 2
    points (`pair_counts`). With n pairs and X = pair points / 2 (the pair's score per
    game), the score is s = mean(X) and its standard error se = sqrt(Var(X) / n), Var the
    observed variance of X over the pairs (the pentanomial model). The interval is
    [s - z se, s + z se] on the score scale, mapped to Elo through d(s) (monotone, so the
    ends map to the ends; the Elo interval is asymmetric). An end outside (0, 1) maps to
    ±inf: the pairs cannot bound that side.

    Special cases (the observed variance is 0, so the normal interval says nothing):
      - 100% score (every pair 2 points): `lower` is d(p), p = ((1 - confidence) / 2)^(1/n),
        the exact one-sided (1 - (1 - confidence) / 2) = 97.5% Clopper-Pearson lower bound
        on the probability that a pair is won 2-0, which bounds the score from below (a pair
        scores at least 0). Exact rather than the rule of three (3/n is a 95% one-sided
        approximation, ln(40)/n at 97.5%), since the exact bound costs nothing. It counts
        pairs, not games: games within a pair are not independent, so n pairs weigh as n
        observations (32 pairs: > +365.2, where 64 independent games would say
        > +490.7). `upper` is +inf. A 0% score mirrors it.
      - every pair the same other value v (all 1-1 pairs, say): the rate q of pairs that
        differ is bounded by (1 - q)^n = 1 - confidence (the exact bound with no events),
        and those pairs move the score by at most q towards 0 or 1: the interval is
        [d(v (1 - q)), d(v + q (1 - v))] (v = 1/2, n = 64: ±15.9).

    Raises:
      ValueError: not 5 non-negative int counts, no pairs, or a confidence outside (0, 1).
    """
    counts = tuple(counts)
    if len(counts) != 5 or any(isinstance(c, bool) or int(c) != c or c < 0 for c in counts):
        raise ValueError(f"counts must be 5 non-negative ints (pairs scoring 0, 1/2, 1, 3/2, "
                         f"2), got {counts}")
    counts = tuple(int(c) for c in counts)
    n = sum(counts)
    if n == 0:
        raise ValueError("no pairs: an Elo difference needs at least one game pair")
    z = _z(confidence)
    x = np.asarray(PAIR_POINTS) / 2.0
    c = np.asarray(counts, np.float64)
    s = float(np.dot(c, x) / n)
    var = float(np.dot(c, (x - s) ** 2) / n)
    se = math.sqrt(var / n)
    diff = elo_diff(s)
    values = np.flatnonzero(c)
    if len(values) == 1 and s in (0.0, 1.0):
        p = ((1.0 - confidence) / 2.0) ** (1.0 / n)
        lo, hi = (p, 1.0) if s == 1.0 else (0.0, 1.0 - p)
        method = "exact"
    elif len(values) == 1:
        q = 1.0 - (1.0 - confidence) ** (1.0 / n)
        lo, hi = s * (1.0 - q), s + q * (1.0 - s)
        method = "uniform"
    else:
        lo, hi = s - z * se, s + z * se
        method = "normal"
    lo, hi = max(lo, 0.0), min(hi, 1.0)
    return PairedEloEstimate(counts, s, diff, elo_diff(lo), elo_diff(hi), lo, hi, se, method,
                             confidence)


def format_paired(e: PairedEloEstimate) -> str:
    """'+120.4 [+6.2, +268.7]'; '> +365.2' / '< -365.2' at a 100% / 0% score (the
    one-sided bound); an infinite end of a normal interval shows as -inf / +inf."""
    if e.method == "exact":
        return f"> {e.lower:+.1f}" if e.score == 1.0 else f"< {e.upper:+.1f}"

    def end(v: float) -> str:
        return ("+inf" if v > 0 else "-inf") if math.isinf(v) else f"{v:+.1f}"

    return f"{e.diff:+.1f} [{end(e.lower)}, {end(e.upper)}]"
