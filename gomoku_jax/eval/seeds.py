"""Combining training seeds: cell means with intervals that hold with 2-5 seeds, and a
family of comparisons with adjusted intervals.

A *cell* is one arm at one rating point; its seeds are independent training runs, each
rated once (a checkpoint's Elo from `elo.fit_games`). Model, for seed s of cell c:

    y_cs = mu_c + e_cs,   e_cs ~ N(0, sigma^2) independent,

e_cs holding both what the seed did to training and the rating games' noise. The one
assumption beyond independence: **sigma^2 is the same in every cell pooled together** (the
seed-to-seed spread of a rating does not depend on the arm). Then

    s_p^2 = sum_c sum_s (y_cs - ybar_c)^2 / dof,   dof = sum_c (S_c - 1)

is the pooled variance, and ybar_c ± t(dof) s_p / sqrt(S_c) is an exact interval for mu_c;
a difference of two cells is ybar_b - ybar_a ± t(dof) s_p sqrt(1/S_a + 1/S_b), any contrast
sum_c w_c mu_c likewise with sqrt(sum_c w_c^2 / S_c). With 4 arms of 2 seeds, dof = 4 and
t = 2.78, where each cell's own t(S - 1) interval uses t(1) = 12.7 on a one-degree variance:
the pooled interval is several times narrower at the same coverage, as long as the
assumption holds (check it: `PooledSeeds.cell_variances` shows each cell's own spread).

Cells must be independent: different arms, or different points of different runs. A
difference between two points of the same runs (an arm's last point minus its first) is a
per-seed difference: pool those d_s = y_last,s - y_first,s as cells of their own. Seeds of
different arms are not paired (arms with one seed share only the initial network; their
self-play diverges at once), so differences between arms are unpaired.

Optionally `floor` (e.g. the mean of the seeds' rating variances from the fit) bounds s_p^2
from below: the seed spread cannot truly be smaller than the rating noise alone, and with
2-3 seeds the sample variance sometimes is. The floor makes intervals slightly conservative.

`adjust` takes a family of comparisons (estimates, standard errors, dof) and gives
Holm-adjusted p-values (strong family-wise error control, more powerful than Bonferroni)
and Bonferroni simultaneous intervals (all m intervals at level 1 - (1 - confidence) / m
cover together with probability >= confidence).

All functions are NumPy, vectorised over leading batch axes.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np


def t_quantile(dof, confidence: float = 0.95):
    """Student's t quantile at (1 + confidence) / 2 (array-friendly; dof > 0)."""
    from scipy.stats import t

    return t.ppf(0.5 + confidence / 2.0, dof)


@dataclasses.dataclass(frozen=True)
class Interval:
    """An estimate with its standard error, a `confidence` t interval and a two-sided
    p-value for 0 (arrays of one shape, or floats)."""

    estimate: np.ndarray
    stderr: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    dof: np.ndarray
    p_value: np.ndarray
    confidence: float = 0.95


def _interval(est, se, dof, confidence) -> Interval:
    from scipy.stats import t

    q = t_quantile(dof, confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2.0 * t.sf(np.abs(est) / se, dof)
    return Interval(est, se, est - q * se, est + q * se, dof, p, confidence)


@dataclasses.dataclass(frozen=True)
class PooledSeeds:
    """Cell means with the pooled seed variance (the module doc). Shapes: batch [...], C
    cells.

    Attributes:
      means: float64[..., C], each cell's mean over its seeds.
      seeds: int64[C], each cell's number of seeds S_c.
      variance: float64[...], s_p^2 (after the floor, if any).
      dof: int, sum_c (S_c - 1).
      cells: the cells' intervals (`Interval`, [..., C]).
      cell_variances: float64[..., C], each cell's own sample variance (nan for S_c = 1).
      confidence: the level.
    """

    means: np.ndarray
    seeds: np.ndarray
    variance: np.ndarray
    dof: int
    cells: Interval
    cell_variances: np.ndarray
    confidence: float = 0.95

    def contrast(self, weights, confidence: Optional[float] = None) -> Interval:
        """sum_c w_c mu_c with its t(dof) interval; weights float[C] (or [..., C])."""
        w = np.asarray(weights, np.float64)
        est = np.sum(w * self.means, axis=-1)
        se = np.sqrt(self.variance * np.sum(w * w / self.seeds, axis=-1))
        return _interval(est, se, self.dof, self.confidence if confidence is None
                         else confidence)

    def difference(self, a: int, b: int, confidence: Optional[float] = None) -> Interval:
        """Cell b minus cell a (unpaired), with its t(dof) interval."""
        w = np.zeros(len(self.seeds))
        w[b] += 1.0
        w[a] -= 1.0
        return self.contrast(w, confidence)


def pool_seeds(values, confidence: float = 0.95, floor=None) -> PooledSeeds:
    """Pool the seed variance over cells (the module doc).

    Args:
      values: float[..., C, S]: each cell's per-seed estimates (e.g. Elo), nan where a cell
        has fewer seeds than S (a ragged design); the same cells have the same seeds in
        every batch entry.
      confidence: the intervals' level.
      floor: optional float (or float[...]): a lower bound for s_p^2, e.g. the mean variance
        of the seeds' ratings from their games.
    Returns:
      `PooledSeeds`.
    Raises:
      ValueError: fewer than 2 dimensions, a cell with no seeds, nan patterns that differ
        across the batch, infinite values (a separated rating has no place in a mean; report
        its bound instead), or no degrees of freedom (every cell has one seed).
    """
    y = np.asarray(values, np.float64)
    if y.ndim < 2:
        raise ValueError(f"values must be [..., cells, seeds], got shape {y.shape}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    present = ~np.isnan(y)
    pattern = present.reshape(-1, *y.shape[-2:])
    if not np.all(pattern == pattern[0]):
        raise ValueError("every batch entry must have the same seeds present (nan) per cell")
    pattern = pattern[0]
    if np.any(np.isinf(y)):
        raise ValueError("values must be finite: an infinite (separated) rating cannot be "
                         "averaged; rate it against stronger / weaker references")
    seeds = pattern.sum(axis=-1)
    if np.any(seeds == 0):
        raise ValueError(f"cell(s) {np.flatnonzero(seeds == 0).tolist()} have no seeds")
    dof = int(np.sum(seeds - 1))
    if dof == 0:
        raise ValueError("every cell has one seed: there is no seed variance to pool "
                         "(run at least 2 seeds of some cell)")
    means = np.nansum(y, axis=-1) / seeds
    sq = np.nansum((y - means[..., None]) ** 2, axis=-1)
    variance = np.sum(sq, axis=-1) / dof
    if floor is not None:
        variance = np.maximum(variance, np.asarray(floor, np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        cell_var = np.where(seeds > 1, sq / (seeds - 1), np.nan)
    se = np.sqrt(variance[..., None] / seeds)
    return PooledSeeds(means, seeds.astype(np.int64), variance, dof,
                       _interval(means, se, dof, confidence), cell_var, confidence)


def per_cell(values, confidence: float = 0.95) -> Interval:
    """Each cell on its own: mean ± t(S - 1) s / sqrt(S) (no pooling; for contrast).
    values: float[..., C, S] with no nan; S >= 2."""
    y = np.asarray(values, np.float64)
    s = y.shape[-1]
    if s < 2:
        raise ValueError("a per-cell interval needs at least 2 seeds")
    m = y.mean(axis=-1)
    se = y.std(axis=-1, ddof=1) / np.sqrt(s)
    return _interval(m, se, s - 1, confidence)


@dataclasses.dataclass(frozen=True)
class Family:
    """A family of m comparisons, adjusted for being made together.

    Attributes:
      p_values: float64[m], each comparison's own two-sided p-value.
      holm: float64[m], Holm's step-down adjusted p-values (reject where <= 1 - confidence:
        the family-wise error rate is at most 1 - confidence).
      lower, upper: float64[m], Bonferroni simultaneous intervals: each at level
        1 - (1 - confidence) / m, so all m cover together with probability >= confidence.
      confidence: the family's level.
    """

    p_values: np.ndarray
    holm: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    confidence: float = 0.95

    @property
    def significant(self) -> np.ndarray:
        """bool[m]: Holm rejects "the difference is 0" at the family's level."""
        return self.holm <= 1.0 - self.confidence


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values: sorted p_(1) <= ... <= p_(m),
    adj_(k) = max_{i <= k} min(1, (m - i + 1) p_(i)), returned in the input order."""
    p = np.asarray(p_values, np.float64)
    if p.ndim != 1 or np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"p_values must be a 1-D array of values in [0, 1], got {p!r}")
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def adjust(estimates, stderr, dof, confidence: float = 0.95) -> Family:
    """Holm p-values and Bonferroni simultaneous intervals for m comparisons, each a t
    statistic estimate / stderr with `dof` degrees of freedom (a scalar or float[m]; use
    np.inf for normal ones, e.g. a difference straight from `fit_games`)."""
    from scipy.stats import t

    est = np.asarray(estimates, np.float64).reshape(-1)
    se = np.asarray(stderr, np.float64).reshape(-1)
    if est.shape != se.shape or len(est) == 0:
        raise ValueError(f"estimates and stderr must be 1-D of one length >= 1, got "
                         f"{est.shape} and {se.shape}")
    if np.any(~np.isfinite(se)) or np.any(se <= 0):
        raise ValueError("stderr must be finite and positive")
    m = len(est)
    p = 2.0 * t.sf(np.abs(est) / se, dof)
    q = t.ppf(1.0 - (1.0 - confidence) / (2.0 * m), dof)
    return Family(p, holm(p), est - q * se, est + q * se, confidence)
