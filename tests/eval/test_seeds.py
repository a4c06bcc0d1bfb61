"""Combining seeds: the pooled-variance intervals' coverage by simulation, the per-cell
t(S - 1) interval for contrast, and the family adjustments against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import t

from gomoku_jax.eval import seeds

ARMS = 4
REPLICATIONS = 20_000  # datasets per seed count, simulated at once
# Monte-Carlo error: 20,000 datasets x 4 cells; the cells of a dataset share s_p, so the
# error is measured between datasets: 0.0008-0.0010 (a 95% MC band of ±0.2%); a single
# difference per dataset: 0.0015. Measured (rng seeds 2, 3, 5): cells 0.9499 / 0.9500 /
# 0.9506 and differences 0.9494 / 0.9500 / 0.9509 with 2 / 3 / 5 seeds; the per-cell
# t(S - 1) interval covers too (0.9524 / 0.9496 / 0.9506) but is 3.89x / 1.71x / 1.25x
# wider on average.


def simulate(num_seeds: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """[R, arms, seeds] ratings: different true means per arm, one seed spread (150 Elo,
    rating noise included) in every arm: the model's assumption."""
    mu = np.array([0.0, 120.0, 300.0, -80.0])
    y = mu[:, None] + 150.0 * rng.standard_normal((REPLICATIONS, ARMS, num_seeds))
    return mu, y


@pytest.mark.parametrize("num_seeds", [2, 3, 5])
def test_pooled_intervals_hold_nominal_coverage(num_seeds):
    mu, y = simulate(num_seeds, np.random.default_rng(num_seeds))
    pooled = seeds.pool_seeds(y)
    assert pooled.dof == ARMS * (num_seeds - 1)
    cover = (pooled.cells.lower <= mu) & (mu <= pooled.cells.upper)
    assert 0.93 <= cover.mean() <= 0.97
    diff = pooled.difference(0, 2)  # arm 2 - arm 0, unpaired
    assert diff.estimate.shape == (REPLICATIONS,)
    d_cover = (diff.lower <= mu[2] - mu[0]) & (mu[2] - mu[0] <= diff.upper)
    assert 0.93 <= d_cover.mean() <= 0.97
    # For contrast: each cell on its own, t(S - 1) on its own variance, covers as well but
    # is much wider with few seeds (t(1) = 12.7 against t(4) = 2.78 with 4 arms of 2 seeds).
    alone = seeds.per_cell(y)
    alone_cover = (alone.lower <= mu) & (mu <= alone.upper)
    assert 0.93 <= alone_cover.mean() <= 0.97
    ratio = np.mean(alone.upper - alone.lower) / np.mean(pooled.cells.upper
                                                         - pooled.cells.lower)
    assert ratio > {2: 3.0, 3: 1.5, 5: 1.15}[num_seeds]


def test_pooled_by_hand_with_ragged_seeds():
    y = np.array([[10.0, 14.0, np.nan], [0.0, 6.0, 3.0]])
    p = seeds.pool_seeds(y)
    # cell 0: mean 12, squares 4 + 4 = 8; cell 1: mean 3, squares 9 + 9 + 0 = 18; dof 1 + 2.
    assert list(p.means) == [12.0, 3.0] and list(p.seeds) == [2, 3] and p.dof == 3
    assert p.variance == pytest.approx(26.0 / 3.0)
    q = t.ppf(0.975, 3)
    se0 = np.sqrt(26.0 / 3.0 / 2.0)
    assert p.cells.lower[0] == pytest.approx(12.0 - q * se0)
    assert p.cell_variances.tolist() == pytest.approx([8.0, 9.0])
    d = p.difference(0, 1)
    assert d.estimate == pytest.approx(-9.0)
    assert d.stderr == pytest.approx(np.sqrt(26.0 / 3.0 * (1 / 2 + 1 / 3)))
    assert d.p_value == pytest.approx(2 * t.sf(9.0 / d.stderr, 3))
    floored = seeds.pool_seeds(y, floor=100.0)
    assert floored.variance == 100.0


@pytest.mark.parametrize("values, message", [
    ([1.0, 2.0], "cells, seeds"),
    ([[1.0], [2.0]], "one seed"),
    ([[1.0, np.inf]], "finite"),
    ([[1.0, 2.0], [np.nan, np.nan]], "no seeds"),
])
def test_bad_input_is_a_clear_error(values, message):
    with pytest.raises(ValueError, match=message):
        seeds.pool_seeds(values)


def test_holm_by_hand():
    # Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max.
    adj = seeds.holm([0.01, 0.04, 0.03, 0.005])
    assert adj == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert seeds.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError, match="p_values"):
        seeds.holm([0.1, 1.2])


def test_family_intervals_cover_simultaneously():
    # 6 comparisons of known truth 0, normal estimates with known se: the Bonferroni band
    # covers all 6 at once in >= 95% of 20,000 replications; the plain ones do not.
    rng = np.random.default_rng(0)
    est = rng.standard_normal((20_000, 6))
    all_cover = []
    for e in est[:2000]:
        fam = seeds.adjust(e, np.ones(6), np.inf)
        all_cover.append(np.all((fam.lower <= 0) & (0 <= fam.upper)))
    assert np.mean(all_cover) >= 0.94
    plain = np.mean(np.all(np.abs(est) <= 1.96, axis=1))  # about 0.95^6 = 0.74
    assert plain < 0.8
    fam = seeds.adjust([3.0, 0.5], [1.0, 1.0], np.inf)
    assert fam.significant.tolist() == [True, False]
    assert fam.holm[0] == pytest.approx(2 * fam.p_values[0])
