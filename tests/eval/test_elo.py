"""Elo: the score <-> difference formulas, the match interval, and the round-robin fit."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from gomoku_jax.eval import elo


@pytest.mark.parametrize("score, diff", [
    (0.5, 0.0),
    (0.75, 400 * math.log10(3)),    # 1/0.75 - 1 = 1/3: +190.85
    (0.25, -400 * math.log10(3)),
    (0.9, 400 * math.log10(9)),     # +381.70
    (10 / 11, 400.0),               # odds 10:1 are 400 points
])
def test_elo_diff_matches_the_formula(score, diff):
    assert elo.elo_diff(score) == pytest.approx(diff, abs=1e-9)


def test_hand_computed_values():
    assert round(elo.elo_diff(0.75), 2) == 190.85
    assert str(elo.elo_diff(0.5)) == "0.0"  # not "-0.0"
    assert elo.elo_diff(1.0) == math.inf and elo.elo_diff(0.0) == -math.inf


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_elo_diff_rejects_scores_outside_0_1(bad):
    with pytest.raises(ValueError, match="score must be in"):
        elo.elo_diff(bad)


def test_expected_score_inverts_elo_diff():
    for s in (0.01, 0.2, 0.5, 0.75, 0.999):
        assert elo.expected_score(elo.elo_diff(s)) == pytest.approx(s)
    assert elo.expected_score(0.0) == 0.5


def test_interval_by_hand():
    # 30 wins, 10 losses: s = 0.75, per-game variance (30 * 0.25^2 + 10 * 0.75^2) / 40
    # = 0.1875, se = sqrt(0.1875 / 40) = 0.068465, d'(s) = 400 / (ln 10 * 0.1875) = 926.49,
    # margin = 1.96 * 0.068465 * 926.49 = 124.33.
    e = elo.estimate(30, 0, 10)
    assert e.score == 0.75 and e.games == 40
    assert e.score_stderr == pytest.approx(0.068465, abs=1e-6)
    assert e.diff == pytest.approx(190.85, abs=0.01)
    assert e.margin == pytest.approx(124.33, abs=0.01)
    assert e.diff - e.lower == pytest.approx(e.upper - e.diff)  # symmetric
    assert str(e) == "+190.8 ± 124.3"


def test_a_50_percent_score_is_0_with_a_symmetric_interval():
    e = elo.estimate(10, 4, 10)
    assert e.diff == 0.0 and e.lower == pytest.approx(-e.upper) and e.upper > 0


def test_intervals_shrink_with_more_games():
    margins = [elo.estimate(3 * k, 0, k).margin for k in (10, 40, 160, 640)]
    assert all(a > b for a, b in zip(margins, margins[1:]))
    # Same score, 4x the games: half the width.
    assert margins[1] / margins[2] == pytest.approx(2.0)
    assert {round(elo.estimate(3 * k, 0, k).diff, 6) for k in (10, 40, 160)} == {190.848502}


def test_draws_narrow_the_interval_at_the_same_score():
    # 0.75 from 20 wins + 20 draws has a smaller per-game variance than 30 wins + 10 losses.
    assert elo.estimate(20, 20, 0).diff == pytest.approx(elo.estimate(30, 0, 10).diff)
    assert elo.estimate(20, 20, 0).margin < elo.estimate(30, 0, 10).margin


def test_a_higher_confidence_widens_the_interval():
    assert elo.estimate(30, 0, 10, 0.99).margin > elo.estimate(30, 0, 10).margin


def test_a_100_percent_score_gives_infinity_and_a_one_sided_bound():
    e = elo.estimate(32, 0, 0)
    assert e.diff == math.inf and e.upper == math.inf and e.margin == math.inf
    # Clopper-Pearson: the score's lower bound is 0.025^(1/32) = 0.8910.
    assert e.lower == pytest.approx(elo.elo_diff(0.025 ** (1 / 32)))
    assert e.lower == pytest.approx(365.2, abs=0.1)
    assert elo.estimate(128, 0, 0).lower > e.lower > elo.estimate(8, 0, 0).lower > 0
    assert str(e) == "> +365.2"
    zero = elo.estimate(0, 0, 32)
    assert zero.diff == -math.inf and zero.upper == pytest.approx(-e.lower)
    assert str(zero) == "< -365.2"


def test_infinite_values_become_null_in_json():
    d = elo.estimate(32, 0, 0).to_dict()
    assert d["diff"] is None and d["upper"] is None and d["lower"] > 0 and d["games"] == 32
    json.dumps(d, allow_nan=False)


def test_all_draws_give_0_with_a_rule_of_three_interval():
    e = elo.estimate(0, 128, 0)
    p = 1 - 0.05 ** (1 / 128)  # decisive-game rate bound
    assert e.diff == 0.0 and e.upper == pytest.approx(elo.elo_diff(0.5 + p / 2))
    assert e.lower == pytest.approx(-e.upper) and 7 < e.upper < 9
    assert elo.estimate(0, 512, 0).margin < e.margin


@pytest.mark.parametrize("counts, message", [
    ((0, 0, 0), "no games"),
    ((-1, 2, 3), "non-negative ints"),
    ((1.5, 2, 3), "non-negative ints"),
    ((True, 2, 3), "non-negative ints"),
])
def test_bad_counts(counts, message):
    with pytest.raises(ValueError, match=message):
        elo.estimate(*counts)


def test_bad_confidence():
    with pytest.raises(ValueError, match="confidence must be in"):
        elo.estimate(3, 0, 1, confidence=1.0)


def synthetic(ratings, games_per_pair=1000.0):
    """(points, games) with every pair scoring exactly its expected score."""
    r = np.asarray(ratings, np.float64)
    games = np.full((len(r), len(r)), games_per_pair)
    np.fill_diagonal(games, 0)
    points = elo.expected_score(r[:, None] - r[None, :]) * games
    return points, games


def test_fit_recovers_known_ratings():
    truth = np.array([0.0, 100.0, 250.0, -150.0, 600.0])
    points, games = synthetic(truth)
    fitted = elo.fit_ratings(points, games, prior_draws=0)
    np.testing.assert_allclose(fitted, truth - truth.mean(), atol=1e-3)
    anchored = elo.fit_ratings(points, games, prior_draws=0, anchor=0)
    np.testing.assert_allclose(anchored, truth, atol=1e-3)


def test_fit_recovers_ratings_from_unequal_schedules():
    truth = np.array([-200.0, 0.0, 300.0])
    points, games = synthetic(truth)
    games[0, 2] = games[2, 0] = 50.0  # fewer games on one pair: the MLE is still exact
    points = elo.expected_score(truth[:, None] - truth[None, :]) * games
    np.testing.assert_allclose(elo.fit_ratings(points, games, prior_draws=0, anchor=1), truth,
                               atol=1e-3)


def test_the_prior_pulls_towards_0_and_keeps_perfect_scores_finite():
    truth = np.array([-150.0, 0.0, 150.0])
    points, games = synthetic(truth, 40.0)
    plain = elo.fit_ratings(points, games, prior_draws=0)
    shrunk = elo.fit_ratings(points, games, prior_draws=4)
    np.testing.assert_allclose(plain, truth, atol=1e-3)
    assert plain[0] < shrunk[0] < shrunk[1] < shrunk[2] < plain[2]
    # Agent 0 beats everyone every time: finite with the prior, an error without it.
    points = np.array([[0, 16, 16], [0, 0, 8], [0, 8, 0]], np.float64)
    games = np.array([[0, 16, 16], [16, 0, 16], [16, 16, 0]], np.float64)
    fitted = elo.fit_ratings(points, games)
    assert np.all(np.isfinite(fitted)) and fitted[0] > 400
    assert fitted[1] == pytest.approx(fitted[2]) and fitted.mean() == pytest.approx(0, abs=1e-9)
    with pytest.raises(ValueError, match="use prior_draws > 0"):
        elo.fit_ratings(points, games, prior_draws=0)


def test_fit_does_not_depend_on_the_order_of_the_players():
    points, games = synthetic([0.0, 80.0, -40.0], 20.0)
    points[0, 1] += 3
    points[1, 0] -= 3
    perm = [2, 0, 1]
    a = elo.fit_ratings(points, games)
    b = elo.fit_ratings(points[np.ix_(perm, perm)], games[np.ix_(perm, perm)])
    np.testing.assert_allclose(a[perm], b, atol=1e-6)


def test_pairwise_tables():
    points, games = elo.pairwise_tables(["a", "b", "c"], {("a", "b"): (3, 2, 1),
                                                          ("c", "a"): (0, 0, 4)})
    np.testing.assert_array_equal(points, [[0, 4, 4], [2, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(games, [[0, 6, 4], [6, 0, 0], [4, 0, 0]])


@pytest.mark.parametrize("points, games, kwargs, message", [
    (np.zeros((2, 3)), np.zeros((2, 3)), {}, "square"),
    ([[0, 3], [1, 0]], [[0, 4], [3, 0]], {}, "symmetric"),
    ([[0, 5], [-1, 0]], [[0, 4], [4, 0]], {}, r"points\[i, j\] must be in"),
    ([[0, 2], [2, 0]], [[0, 4], [4, 0]], {"anchor": 2}, "anchor must be"),
    ([[0, 2], [2, 0]], [[0, 4], [4, 0]], {"prior_draws": -1}, "prior_draws must be"),
    ([[0, 2, 0], [2, 0, 0], [0, 0, 0]], [[0, 4, 0], [4, 0, 0], [0, 0, 0]], {}, "played no"),
])
def test_fit_rejects_bad_input(points, games, kwargs, message):
    with pytest.raises(ValueError, match=message):
        elo.fit_ratings(points, games, **kwargs)
