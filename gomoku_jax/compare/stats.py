"""One Elo scale over a comparison, and each arm's rating with an interval over seeds.

Every rated checkpoint played the same reference agents, and the references played each
other; one Bradley-Terry fit (`elo.fit_ratings`, one virtual draw per pair so a 100% score
stays finite) over all those results puts every checkpoint and every reference on one
scale, the first reference at 0.

An arm's rating at a point is the mean of its seeds' checkpoints, m = mean(r_s) over S
seeds. Each r_s carries two kinds of noise: the run's seed (which network training
produced) and the rating games' outcomes (how that network happened to score). The spread
of the r_s over seeds contains both, so s^2 / S (s^2 the sample variance) estimates
Var(m) without a separate model of either. With few seeds s^2 is itself noisy and can come
out below the games' noise alone by chance, which cannot be the true spread; so the
variance used is max(s^2, v), v the mean over seeds of each checkpoint's game variance
(the inverse Fisher information of its rating given the references'), and the interval
is m ± t(S-1) sqrt(max(s^2, v) / S), t Student's 97.5% quantile with S-1 degrees of
freedom (S = 1: the normal quantile and v alone, which ignores the unseen seed spread).

A difference between two sets of checkpoints rated on the same seeds (arm B - arm A at one
point, or an arm's last point - its first) is paired by seed: run seed s of every arm starts
from the same network and draws the same keys, so d_s = r_B,s - r_A,s cancels what the seed
gives both. Its interval is the one above over the d_s, with v the mean of the two game
variances' sum.

The references' own uncertainty moves every checkpoint's rating together; it does not
change the difference between two arms, which is what the intervals are for.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Iterable, Sequence

import numpy as np

from gomoku_jax.eval import elo

_SCALE = math.log(10.0) / 400.0  # d logit / d Elo


@dataclasses.dataclass(frozen=True)
class Result:
    """A match: `a`'s wins, draws and losses against `b`."""

    a: str
    b: str
    wins: int
    draws: int
    losses: int


def fit_scale(names: Sequence[str], results: Iterable[Result], prior_draws: float = 1.0
              ) -> dict[str, float]:
    """{name: Elo} from the results, one Bradley-Terry fit, `names[0]` rated 0."""
    table: dict[tuple[str, str], tuple[int, int, int]] = {}
    for r in results:
        w, d, lo = table.get((r.a, r.b), (0, 0, 0))
        table[(r.a, r.b)] = (w + r.wins, d + r.draws, lo + r.losses)
    points, games = elo.pairwise_tables(list(names), table)
    ratings = elo.fit_ratings(points, games, anchor=0, prior_draws=prior_draws)
    return {n: float(x) for n, x in zip(names, ratings)}


def game_variance(name: str, ratings: dict[str, float], results: Iterable[Result],
                  prior_draws: float = 1.0) -> float:
    """The variance (Elo^2) of `name`'s rating from its games alone, its opponents' ratings
    held fixed: 1 / Fisher information, sum over games of p (1 - p) (ln 10 / 400)^2 with p
    the fitted expected score (the prior's virtual draws counted as games, as in the fit)."""
    info = 0.0
    for r in results:
        if name not in (r.a, r.b):
            continue
        other = r.b if r.a == name else r.a
        p = float(elo.expected_score(ratings[name] - ratings[other]))
        info += (r.wins + r.draws + r.losses + prior_draws) * p * (1.0 - p) * _SCALE ** 2
    return math.inf if info == 0.0 else 1.0 / info


@dataclasses.dataclass(frozen=True)
class ArmPoint:
    """An arm at a rating point: the mean Elo over seeds and its 95% interval.

    Attributes:
      ratings: float[S] each seed's checkpoint rating.
      game_sd: sqrt(v), the mean game noise of one seed's rating (Elo).
      seed_sd: the sample standard deviation over seeds (nan for one seed).
    """

    mean: float
    lower: float
    upper: float
    ratings: tuple[float, ...]
    game_sd: float
    seed_sd: float

    @property
    def margin(self) -> float:
        return (self.upper - self.lower) / 2.0

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["ratings"] = list(self.ratings)
        out["margin"] = self.margin
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in out.items()}


def t_quantile(dof: int, confidence: float = 0.95) -> float:
    """Student's t quantile at (1 + confidence) / 2; the normal one for dof = 0."""
    if dof <= 0:
        from statistics import NormalDist

        return NormalDist().inv_cdf(0.5 + confidence / 2.0)
    from scipy.stats import t

    return float(t.ppf(0.5 + confidence / 2.0, dof))


def arm_point(ratings: Sequence[float], game_variances: Sequence[float],
              confidence: float = 0.95) -> ArmPoint:
    """The mean of the seeds' ratings with the interval of the module doc."""
    r = np.asarray(ratings, np.float64)
    s = len(r)
    if s == 0:
        raise ValueError("no seeds to average")
    v = float(np.mean(game_variances))
    spread = float(np.var(r, ddof=1)) if s > 1 else math.nan
    variance = v if s == 1 else max(spread, v)
    half = t_quantile(s - 1, confidence) * math.sqrt(variance / s)
    mean = float(np.mean(r))
    return ArmPoint(mean, mean - half, mean + half, tuple(float(x) for x in r), math.sqrt(v),
                    math.sqrt(spread) if s > 1 else math.nan)


def paired_difference(a: Sequence[float], b: Sequence[float], a_variances: Sequence[float],
                      b_variances: Sequence[float], confidence: float = 0.95) -> ArmPoint:
    """B - A over seeds paired by index (the module doc): the mean of the differences with
    its interval; `ratings` holds the per-seed differences."""
    if len(a) != len(b) or len(a_variances) != len(a) or len(b_variances) != len(b):
        raise ValueError(f"paired ratings need one of each per seed, got {len(a)} and "
                         f"{len(b)} ratings, {len(a_variances)} and {len(b_variances)} "
                         f"variances")
    diffs = np.asarray(b, np.float64) - np.asarray(a, np.float64)
    variances = np.asarray(a_variances, np.float64) + np.asarray(b_variances, np.float64)
    return arm_point(diffs, variances, confidence)
