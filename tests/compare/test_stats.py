"""compare.stats against independent references: the Elo fit's likelihood, a numerical
Fisher information, and Student's t."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_jax.compare import stats
from gomoku_jax.eval import elo

RESULTS = [stats.Result("a", "b", 10, 4, 6), stats.Result("a", "c", 3, 2, 15),
           stats.Result("b", "c", 5, 5, 10), stats.Result("x", "a", 6, 0, 10),
           stats.Result("x", "c", 2, 0, 14)]


def log_likelihood(ratings: dict, results, prior_draws=1.0) -> float:
    """The fit's objective written from the model: points scored and conceded at the
    logistic expected score, each pair's prior draws counted as half a point each way."""
    total = 0.0
    for r in results:
        p = float(elo.expected_score(ratings[r.a] - ratings[r.b]))
        points = r.wins + 0.5 * r.draws + 0.5 * prior_draws
        against = r.losses + 0.5 * r.draws + 0.5 * prior_draws
        total += points * math.log(p) + against * math.log(1 - p)
    return total


def test_fit_scale_anchors_the_first_name_and_maximises_the_likelihood():
    names = ["a", "b", "c", "x"]
    ratings = stats.fit_scale(names, RESULTS)
    assert ratings["a"] == 0.0
    best = log_likelihood(ratings, RESULTS)
    for name in names[1:]:
        for step in (-5.0, 5.0):
            moved = dict(ratings, **{name: ratings[name] + step})
            assert log_likelihood(moved, RESULTS) < best


def test_fit_scale_adds_up_repeated_pairs():
    once = stats.fit_scale(["a", "b"], [stats.Result("a", "b", 8, 2, 4)])
    split = stats.fit_scale(["a", "b"], [stats.Result("a", "b", 5, 1, 2),
                                         stats.Result("b", "a", 2, 1, 3)])
    assert once["b"] == pytest.approx(split["b"], abs=1e-6)


def test_game_variance_is_the_inverse_curvature():
    names = ["a", "b", "c", "x"]
    ratings = stats.fit_scale(names, RESULTS)
    h = 1.0

    def ll(v):
        return log_likelihood(dict(ratings, x=v), RESULTS)

    x = ratings["x"]
    curvature = -(ll(x + h) - 2 * ll(x) + ll(x - h)) / h ** 2
    assert stats.game_variance("x", ratings, RESULTS) == pytest.approx(1 / curvature, rel=1e-3)
    assert math.isinf(stats.game_variance("nobody", ratings, RESULTS))


def test_t_quantile():
    assert stats.t_quantile(2) == pytest.approx(4.302653, abs=1e-5)
    assert stats.t_quantile(1) == pytest.approx(12.706205, abs=1e-5)
    assert stats.t_quantile(0) == pytest.approx(elo.Z95)


def test_arm_point_one_seed_uses_game_noise():
    p = stats.arm_point([100.0], [400.0])
    assert p.mean == 100.0 and p.margin == pytest.approx(elo.Z95 * 20.0)
    assert math.isnan(p.seed_sd) and p.to_dict()["seed_sd"] is None


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-800, 800), min_size=2, max_size=6),
       st.floats(1.0, 1e4))
def test_arm_point_interval(ratings, game_var):
    p = stats.arm_point(ratings, [game_var] * len(ratings))
    s = len(ratings)
    spread = float(np.var(ratings, ddof=1))
    expected = stats.t_quantile(s - 1) * math.sqrt(max(spread, game_var) / s)
    assert p.mean == pytest.approx(np.mean(ratings))
    assert p.margin == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert p.lower <= p.mean <= p.upper
    # Never narrower than the games' noise alone, nor than the seeds' spread alone.
    assert p.margin >= stats.t_quantile(s - 1) * math.sqrt(game_var / s) - 1e-9


def test_paired_difference_cancels_what_the_seed_gives_both():
    """Seeds that move both arms together: the paired interval sees only the differences."""
    a = [100.0, 300.0, 500.0]
    b = [150.0, 340.0, 560.0]
    d = stats.paired_difference(a, b, [100.0] * 3, [100.0] * 3)
    assert d.mean == pytest.approx(50.0) and d.ratings == (50.0, 40.0, 60.0)
    assert d.margin == pytest.approx(stats.t_quantile(2) * math.sqrt(200.0 / 3))
    unpaired = stats.arm_point(b, [100.0] * 3).margin + stats.arm_point(a, [100.0] * 3).margin
    assert d.margin < unpaired
    with pytest.raises(ValueError, match="one of each per seed"):
        stats.paired_difference(a, b[:2], [1.0] * 3, [1.0] * 2)
