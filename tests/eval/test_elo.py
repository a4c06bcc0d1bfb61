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


# ------------------------------------------------------------- paired (pentanomial) Elo

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def test_pair_counts():
    assert elo.pair_counts([0, 0.5, 1, 1, 2, 1.5, 2, 2]) == (1, 1, 2, 1, 3)
    assert elo.pair_counts(np.array([[1.0, 1.0], [2.0, 0.0]])) == (1, 0, 2, 0, 1)
    with pytest.raises(ValueError, match="pair points must be"):
        elo.pair_counts([0.25])
    with pytest.raises(ValueError, match="pair points must be"):
        elo.pair_counts([2.5])


def test_paired_hand_computed():
    # 15 pairs: X = points / 2 takes 0, 1/4, 1/2, 3/4, 1 with counts 1..5.
    e = elo.estimate_pairs((1, 2, 3, 4, 5))
    assert e.pairs == 15 and e.games == 30 and e.method == "normal"
    assert e.score == pytest.approx(2 / 3)
    # E[X^2] = 8.125 / 15, Var = 8.125/15 - 4/9 = 7/72, se = sqrt(7/72 / 15) = sqrt(7/1080)
    assert e.score_stderr == pytest.approx(math.sqrt(7 / 1080))
    lo, hi = 2 / 3 - elo.Z95 * math.sqrt(7 / 1080), 2 / 3 + elo.Z95 * math.sqrt(7 / 1080)
    assert (e.score_lower, e.score_upper) == pytest.approx((lo, hi))
    assert (round(lo, 4), round(hi, 4)) == (0.5089, 0.8245)
    assert e.diff == pytest.approx(400 * math.log10(2))  # odds 2:1: +120.4
    assert e.lower == pytest.approx(-400 * math.log10(1 / lo - 1))
    assert round(e.lower, 1) == 6.2 and round(e.upper, 1) == 268.7
    assert str(e) == "+120.4 [+6.2, +268.7]"


def test_paired_perfect_score_is_a_one_sided_exact_bound():
    e = elo.estimate_pairs((0, 0, 0, 0, 32))
    assert e.method == "exact" and e.diff == math.inf and e.upper == math.inf
    # Clopper-Pearson, 0 failures in 32 pairs, one-sided 97.5%: p = 0.025^(1/32)
    assert e.score_lower == pytest.approx(0.025 ** (1 / 32))
    assert e.lower == pytest.approx(elo.elo_diff(0.025 ** (1 / 32)))
    assert math.isfinite(e.lower) and e.lower > 0
    assert str(e) == f"> {e.lower:+.1f}" == "> +365.2"
    zero = elo.estimate_pairs((32, 0, 0, 0, 0))
    assert zero.lower == -math.inf and zero.upper == pytest.approx(-e.lower)
    assert str(zero) == "< -365.2"
    d = json.loads(json.dumps(e.to_dict(), allow_nan=False))
    assert d["upper"] is None and d["diff"] is None and d["pairs"] == 32


def test_paired_pairs_weigh_less_than_independent_games_at_100_percent():
    # 32 won pairs are 64 won games, but only 32 independent observations.
    assert elo.estimate_pairs((0, 0, 0, 0, 32)).lower < elo.estimate(64, 0, 0).lower


def test_paired_uniform_pairs():
    # every pair 1-1: the rate q of other pairs is bounded by (1 - q)^64 = 0.05
    e = elo.estimate_pairs((0, 0, 64, 0, 0))
    q = 1 - 0.05 ** (1 / 64)
    assert e.method == "uniform" and e.diff == 0.0
    assert e.upper == pytest.approx(elo.elo_diff(0.5 + q / 2)) == pytest.approx(-e.lower)
    assert round(e.upper, 1) == 15.9
    e = elo.estimate_pairs((0, 0, 0, 10, 0))  # all 1.5: s = 3/4
    q = 1 - 0.05 ** (1 / 10)
    assert (e.score_lower, e.score_upper) == pytest.approx((0.75 * (1 - q), 0.75 + q / 4))


def test_paired_end_outside_0_1_is_infinite_not_nonsense():
    e = elo.estimate_pairs((1, 0, 0, 0, 3))  # 4 pairs: too few to bound from above
    assert e.method == "normal" and e.upper == math.inf and math.isfinite(e.lower)
    assert e.score_upper == 1.0
    assert str(e).endswith("+inf]")


@pytest.mark.parametrize("counts, message", [
    ((1, 2, 3, 4), "5 non-negative ints"),
    ((1, 2, 3, 4, -1), "5 non-negative ints"),
    ((1, 2, 3, 4, 0.5), "5 non-negative ints"),
    ((0, 0, 0, 0, 0), "no pairs"),
])
def test_paired_bad_counts(counts, message):
    with pytest.raises(ValueError, match=message):
        elo.estimate_pairs(counts)


def _independent_pairs(w: int, d: int, l: int) -> tuple[int, ...]:
    """Pentanomial counts whose empirical distribution is the product of the trinomial
    (w, d, l) with itself: every (first game, second game) outcome combination once per
    product of counts, so the two games of a pair look independent."""
    counts = [0] * 5
    for i, ci in enumerate((l, d, w)):  # points 0, 1/2, 1
        for j, cj in enumerate((l, d, w)):
            counts[i + j] += ci * cj
    return tuple(counts)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20))
def test_paired_equals_trinomial_when_pairs_look_independent(w, d, l):
    n = w + d + l
    if n == 0 or (w == n or l == n or d == n):
        return  # degenerate: no variance, bounds by different rules
    counts = _independent_pairs(w, d, l)
    paired = elo.estimate_pairs(counts)
    # The trinomial of the same games: each outcome appears 2 n times per count.
    games = elo.estimate(2 * n * w, 2 * n * d, 2 * n * l)
    assert paired.games == games.games
    assert paired.score == pytest.approx(games.score)
    # Var(X1 + X2) = 2 Var(X) for independent games, so the two standard errors agree.
    assert paired.score_stderr == pytest.approx(games.score_stderr, rel=1e-9)
    # The paired interval is the score interval mapped through d (computed here directly).
    s, se = games.score, games.score_stderr
    lo, hi = max(s - elo.Z95 * se, 0.0), min(s + elo.Z95 * se, 1.0)
    assert paired.lower == pytest.approx(elo.elo_diff(lo), rel=1e-9)
    assert paired.upper == pytest.approx(elo.elo_diff(hi), rel=1e-9)
    # ... and its half-width agrees with the trinomial's delta method to first order (when
    # the interval is narrow next to the distance to 0% and 100%, where d bends).
    if elo.Z95 * se < 0.05 * min(s, 1 - s):
        assert (paired.upper - paired.lower) / 2 == pytest.approx(games.margin, rel=0.02)


def test_correlated_pairs_change_the_width_as_theory_says():
    n = 40
    # Colour decides: every pair 1-1 (negatively correlated games). Pair variance 0: the
    # paired interval is much narrower than the trinomial one of 40 wins and 40 losses.
    one_one = elo.estimate_pairs((0, 0, n, 0, 0))
    trinomial = elo.estimate(n, 0, n)
    assert one_one.upper - one_one.lower < (trinomial.upper - trinomial.lower) / 3
    # Strength decides: pairs are 2-0 or 0-2 (positively correlated). Var(pair mean) is
    # twice the independent games' Var / 2: the standard error grows by sqrt(2).
    two_zero = elo.estimate_pairs((n // 2, 0, 0, 0, n // 2))
    assert two_zero.score_stderr == pytest.approx(math.sqrt(2) * trinomial.score_stderr)
    assert two_zero.upper - two_zero.lower > trinomial.upper - trinomial.lower
    # Independent-looking pairs (1/4 2-0, 1/2 1-1, 1/4 0-2) match the trinomial's se.
    independent = elo.estimate_pairs((n // 4, 0, n // 2, 0, n // 4))
    assert independent.score_stderr == pytest.approx(trinomial.score_stderr)
