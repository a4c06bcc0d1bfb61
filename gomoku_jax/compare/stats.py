"""A comparison's statistics: one rating fit over every game, seeds pooled per rating
point, the family of comparisons with adjusted intervals, and what the design can resolve.

**The scale.** Every match row (`runner`'s `matches.jsonl`: a rated checkpoint against a
reference, the references against each other, or anything else two named players played)
is expanded into one record per game with who moved first (`expand`), and one
`elo.fit_games` fits every player at once (`fit`): Davidson's model for draws, a first-move
term, plain maximum likelihood (no prior), the first reference at 0, the joint covariance.
A checkpoint whose results are separated (it won, or lost, every game against everything
it met) has no finite rating: it is reported as the fit's one-sided bound ("> +X" / "< -X")
and is "out of the ladder's range": it takes no part in any mean or interval below.

**Games that repeat.** Deterministic agents replay an opening move for move, so a match's
G games may hold only D different ones (`distinct_games`, counted by the arena from the
games' final positions). Each game of that match enters the fit with weight D / G: the
match keeps its results and carries the information of D games (exact when the distinct
games repeat equally often; otherwise an approximation in the right direction, where
counting the G games as independent would overstate the information G / D times). The
report gives each cell's distinct and played games. Rows written before the per-colour
records existed have only A's totals: each of their games enters twice, once with each
colour, at half its weight (an even split; it says nothing about the first-move term and
pulls it towards 0 a little, so the report says how many rows lacked colours; with no
coloured row at all the term is not fitted).

**Seeds.** A cell is an arm at a rating point; its S seeds are independent training runs,
each checkpoint rated once. At each point the cells of all arms are pooled with
`seeds.pool_seeds`: y_as = mu_a + e_as with one variance sigma^2 for every arm at that
point (**the assumption**: at a given point the seed-to-seed spread of a rating, training
noise plus rating-game noise, does not depend on the arm; `PooledSeeds.cell_variances`
shows each arm's own spread to check it). It is pooled per point, not across points,
because the spread grows as runs diverge. s_p^2 has sum_a (S_a - 1) degrees of freedom and
t(dof) intervals; with 2 arms of 3 seeds that is t(4) = 2.78 instead of each cell's own
t(2) = 4.30. The floor: with few seeds s_p^2 can come out below what the rating games
alone would give, which the true spread cannot be; s_p^2 is raised to that value,
g = sum_a (tr(C_a) - 1^T C_a 1 / S_a) / dof, C_a the fit's covariance of arm a's seeds'
ratings (the expected s_p^2 if training added no spread at all). This makes the intervals
slightly conservative.

A cell's interval is the pooled one, mean ± t(dof) sqrt(s_p^2 / S + o), where o, the mean
covariance between two checkpoints' ratings at the point, is the references' own
uncertainty, which moves every checkpoint's rating together (it is not in the seeds'
spread). Differences between cells do not contain it.

Differences between arms at the last point are unpaired (seed s of two arms shares only
the initial network; self-play diverges at once, so pairing buys nothing):
mean_b - mean_a ± t(dof) s_p sqrt(1/S_a + 1/S_b). An arm's gain (its last point minus its
first) is a per-seed difference d_s = y_last,s - y_first,s (the same run twice: these are
paired), and the gains of all arms are pooled the same way (one variance of d_s across
arms, floor from the fit's covariance of the d_s).

With one seed per arm there is no seed variance to pool: the intervals then come from the
fit alone (normal quantile) and count only the rating games, and the report says so.

**The family.** The report makes two families of comparisons: every pairwise difference
between arms at the last point (K (K - 1) / 2 of them) and every arm's gain (K). Within each,
`seeds.adjust` gives Holm's step-down p-values (family-wise error at most 5%) and
Bonferroni simultaneous intervals (level 1 - 0.05 / m each: all m cover together with
probability >= 95%), next to the per-comparison intervals.

**What the design can resolve** (`resolution`). For a family, the smallest difference its
per-comparison intervals would detect is their half-width t(dof) SE: an estimate beyond
it excludes 0. Its variance per seed splits into the rating games' part g and the seed
part max(s_p^2 - g, 0). Four times the seeds halve the half-width (both parts shrink with
1/S; t shrinks too, so a little more than half); more games shrink only the game part, so
m times the games halve it only when the seed part is below a quarter of the total:
m = g / (V / 4 - seed part). When every comparison's half-width exceeds `UNRESOLVED_ELO`
the report says plainly that the run cannot separate the arms.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional, Sequence

import numpy as np

from gomoku_jax.eval import seeds as seedstats
from gomoku_jax.eval.rating import GameFit, fit_games, json_number

# A comparison whose every interval half-width (the smallest difference it can detect)
# exceeds this many Elo cannot separate arms that differ by any plausible amount.
UNRESOLVED_ELO = 400.0
CONFIDENCE = 0.95


# ------------------------------------------------------------------------------ the games

def colours(row: dict) -> Optional[tuple[tuple[int, int, int], tuple[int, int, int]]]:
    """A match row's ((W, D, L) of A as the first mover, (W, D, L) of A as the second), or
    None for a row written without per-colour records."""
    first, second = row.get("as_first"), row.get("as_second")
    if first is None or second is None:
        return None
    return ((int(first["wins"]), int(first["draws"]), int(first["losses"])),
            (int(second["wins"]), int(second["draws"]), int(second["losses"])))


def row_games(row: dict) -> int:
    """The games a match row holds."""
    return int(row["wins"]) + int(row["draws"]) + int(row["losses"])


def row_weight(row: dict) -> float:
    """Each game's weight in the fit: distinct games / games (1 when not recorded)."""
    games, distinct = row_games(row), row.get("distinct_games")
    if distinct is None or games == 0:
        return 1.0
    return min(max(int(distinct), 1), games) / games


@dataclasses.dataclass(frozen=True)
class Games:
    """The rows as game records for `fit_games`: `first`, `second` (indices into `names`),
    `score` (the first mover's), `weight` (see the module doc); `uncoloured_rows`: rows
    without per-colour records (split evenly); `unknown_distinct_rows`: rows without a
    distinct-games count (weight 1)."""

    names: tuple[str, ...]
    first: np.ndarray
    second: np.ndarray
    score: np.ndarray
    weight: np.ndarray
    rows: int
    uncoloured_rows: int
    unknown_distinct_rows: int


def expand(rows: Sequence[dict], names: Sequence[str]) -> Games:
    """One record per game from match rows ('a', 'b', A's 'wins' / 'draws' / 'losses',
    optional 'as_first' / 'as_second' / 'distinct_games'); `names` lists every player."""
    index = {n: i for i, n in enumerate(names)}
    first, second, score, weight = [], [], [], []
    uncoloured = unknown = 0

    def add(f: int, s: int, results: tuple[int, int, int], w: float) -> None:
        # results: the first mover's (wins, draws, losses)
        for value, count in zip((1.0, 0.5, 0.0), results):
            first.extend([f] * count)
            second.extend([s] * count)
            score.extend([value] * count)
            weight.extend([w] * count)

    for row in rows:
        a, b = index[row["a"]], index[row["b"]]
        w = row_weight(row)
        unknown += row.get("distinct_games") is None
        split = colours(row)
        if split is None:
            uncoloured += 1
            total = (int(row["wins"]), int(row["draws"]), int(row["losses"]))
            add(a, b, total, w / 2.0)
            add(b, a, total[::-1], w / 2.0)
        else:
            add(a, b, split[0], w)
            add(b, a, split[1][::-1], w)  # B first: B's wins are A's losses
    return Games(tuple(names), np.asarray(first, np.int64), np.asarray(second, np.int64),
                 np.asarray(score, np.float64), np.asarray(weight, np.float64), len(rows),
                 uncoloured, unknown)


def fit(rows: Sequence[dict], names: Sequence[str], anchor: int = 0,
        draws: str = "davidson") -> tuple[GameFit, Games]:
    """One `fit_games` over every row (the module doc); the first-move term is fitted unless
    no row has per-colour records."""
    games = expand(rows, names)
    result = fit_games(games.first, games.second, games.score, num_players=len(names),
                       anchor=anchor, draws=draws,
                       first_move=games.uncoloured_rows < games.rows,
                       weights=games.weight, confidence=CONFIDENCE)
    return result, games


# ------------------------------------------------------------------------------ the seeds

@dataclasses.dataclass(frozen=True)
class SeedPool:
    """Cells' seeds pooled (the module doc), with the fit's covariance of the values.

    Attributes:
      values: float64[C, S], each cell's per-seed values, nan where a seed is missing.
      covariance: float64[C * S, C * S], the game covariance of the values (Elo^2) from the
        fit (nan rows for missing seeds).
      pooled: the `seeds.PooledSeeds` (variance after the floor), or None when no cell has
        two seeds (then every interval comes from the fit alone).
      raw_variance: s_p^2 before the floor (nan without pooling).
      game_variance: g, the s_p^2 the rating games alone would give (nan without pooling).
    """

    values: np.ndarray
    covariance: np.ndarray
    pooled: Optional[seedstats.PooledSeeds]
    raw_variance: float
    game_variance: float
    confidence: float = CONFIDENCE

    @property
    def seeds(self) -> np.ndarray:
        return np.sum(~np.isnan(self.values), axis=-1)

    @property
    def dof(self) -> float:
        return math.inf if self.pooled is None else float(self.pooled.dof)

    @property
    def variance(self) -> float:
        """The per-seed variance the intervals use (nan without pooling)."""
        return math.nan if self.pooled is None else float(self.pooled.variance)

    @property
    def seed_variance(self) -> float:
        """The part of `variance` beyond the rating games': max(s_p^2 - g, 0)."""
        return max(self.variance - self.game_variance, 0.0) if self.pooled else math.nan

    def _full_weights(self, weights: np.ndarray) -> np.ndarray:
        """Per-cell contrast weights spread over the cells' seeds (w_c / S_c each)."""
        present = ~np.isnan(self.values)
        return np.where(present, (weights / np.maximum(self.seeds, 1))[:, None], 0.0
                        ).reshape(-1)

    def game_se(self, weights) -> float:
        """The contrast's standard error from the rating games alone (the fit's covariance)."""
        full = self._full_weights(np.asarray(weights, np.float64))
        keep = full != 0.0
        c = self.covariance[np.ix_(keep, keep)]
        return float(math.sqrt(max(full[keep] @ c @ full[keep], 0.0)))

    def contrast(self, weights, extra_variance: float = 0.0) -> seedstats.Interval:
        """sum_c w_c mu_c: pooled t(dof) interval, or the fit's normal one without pooling;
        `extra_variance` is added to the pooled variance of the estimate."""
        w = np.asarray(weights, np.float64)
        if self.pooled is None:
            est = float(np.nansum(self._full_weights(w) * self.values.reshape(-1)))
            return _interval(est, self.game_se(w), math.inf, self.confidence)
        base = self.pooled.contrast(w, self.confidence)
        se = math.sqrt(float(base.stderr) ** 2 + extra_variance)
        return _interval(float(base.estimate), se, self.dof, self.confidence)

    def difference(self, a: int, b: int) -> seedstats.Interval:
        """Cell b minus cell a (unpaired)."""
        w = np.zeros(len(self.values))
        w[b] += 1.0
        w[a] -= 1.0
        return self.contrast(w)


def pool(values, covariance, floor: bool = True, confidence: float = CONFIDENCE) -> SeedPool:
    """Pool the seed variance over cells (the module doc).

    Args:
      values: float[C, S]: per-seed values (finite), nan for missing seeds.
      covariance: float[C * S, C * S]: their game covariance from the fit.
      floor: raise s_p^2 to g, the rating games' share.
    """
    y = np.asarray(values, np.float64)
    cov = np.asarray(covariance, np.float64)
    present = ~np.isnan(y)
    s = present.sum(axis=-1)
    if y.ndim != 2 or np.any(s == 0) or cov.shape != (y.size, y.size):
        raise ValueError(f"values must be [cells, seeds] with a seed in every cell and "
                         f"covariance [cells * seeds] square, got {y.shape} and {cov.shape}")
    dof = int(np.sum(np.maximum(s - 1, 0)))
    if dof == 0:
        return SeedPool(y, cov, None, math.nan, math.nan, confidence)
    g = 0.0
    size = y.shape[1]
    for c in range(len(y)):
        idx = c * size + np.flatnonzero(present[c])
        block = cov[np.ix_(idx, idx)]
        g += float(np.trace(block) - block.sum() / len(idx))
    g /= dof
    raw = seedstats.pool_seeds(y, confidence)
    pooled = seedstats.pool_seeds(y, confidence, floor=g if floor else None)
    return SeedPool(y, cov, pooled, float(raw.variance), g, confidence)


def _interval(est: float, se: float, dof: float, confidence: float) -> seedstats.Interval:
    """A t(dof) interval (normal for dof = inf) with the two-sided p-value for 0."""
    from scipy.stats import t

    q = float(t.ppf(0.5 + confidence / 2.0, dof))
    p = float(2.0 * t.sf(abs(est) / se, dof)) if se > 0 else math.nan
    return seedstats.Interval(est, se, est - q * se, est + q * se, dof, p, confidence)


def to_dict(interval: seedstats.Interval) -> dict:
    """An `Interval` as JSON: mean, se, lower, upper, margin, dof (None: normal), p_value."""
    return {"mean": json_number(interval.estimate), "se": json_number(interval.stderr),
            "lower": json_number(interval.lower), "upper": json_number(interval.upper),
            "margin": json_number((interval.upper - interval.lower) / 2.0),
            "dof": json_number(interval.dof), "p_value": json_number(interval.p_value)}


# ---------------------------------------------------------------- families and resolution

def family(intervals: Sequence[seedstats.Interval], confidence: float = CONFIDENCE
           ) -> list[dict]:
    """Each comparison's interval (`to_dict`) with Holm's adjusted p-value ('holm') and its
    Bonferroni simultaneous interval ('simultaneous': [lower, upper]) within the family."""
    out = [to_dict(i) for i in intervals]
    if not intervals:
        return out
    adj = seedstats.adjust([float(i.estimate) for i in intervals],
                           [float(i.stderr) for i in intervals],
                           np.array([float(i.dof) for i in intervals]), confidence)
    for d, h, lo, hi in zip(out, adj.holm, adj.lower, adj.upper):
        d.update(holm=float(h), simultaneous=[float(lo), float(hi)],
                 significant=bool(h <= 1.0 - confidence))
    return out


def resolution(intervals: Sequence[seedstats.Interval], seed_pool: SeedPool,
               seeds_per_arm: Sequence[int], confidence: float = CONFIDENCE) -> dict:
    """What a family's design can resolve (the module doc): the smallest detectable
    difference (min and max half-width over the family), its simultaneous counterpart,
    which part of the variance dominates, and the seeds or games that would halve it."""
    if not intervals:
        return {"comparisons": 0}
    half = np.array([float(i.upper - i.estimate) for i in intervals])
    m = len(intervals)
    dof = np.array([float(i.dof) for i in intervals])
    from scipy.stats import t

    ratio = t.ppf(1.0 - (1.0 - confidence) / (2.0 * m), dof) / t.ppf(
        0.5 + confidence / 2.0, dof)
    out = {"comparisons": m, "detectable": [float(half.min()), float(half.max())],
           "detectable_simultaneous": [float((half * ratio).min()),
                                       float((half * ratio).max())],
           "unresolved": bool(np.all(half > UNRESOLVED_ELO)),
           "seeds_to_halve": [4 * int(s) for s in seeds_per_arm]}
    if seed_pool.pooled is None:
        out.update(dominant="games", seed_variance=None, game_variance=None,
                   games_to_halve=4.0)
        return out
    v, g, sv = seed_pool.variance, seed_pool.game_variance, seed_pool.seed_variance
    quarter = v / 4.0
    out.update(dominant="seeds" if sv > g else "games", seed_variance=sv,
               game_variance=g,
               games_to_halve=(g / (quarter - sv)) if quarter > sv and g > 0 else None)
    return out
