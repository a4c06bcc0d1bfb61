"""compare.stats: match rows into game records, fit_games' weights, the seed pool's floor,
the families and what a design can resolve, against formulas written out here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t

from gomoku_jax.compare import stats
from gomoku_jax.eval import seeds
from gomoku_jax.eval.rating import fit_games

ROW = {"a": "x", "b": "y", "wins": 5, "draws": 2, "losses": 3,
       "as_first": {"wins": 4, "draws": 1, "losses": 0},
       "as_second": {"wins": 1, "draws": 1, "losses": 3}, "distinct_games": 8}


def test_expand_keeps_the_colours_and_weights_repeated_games():
    g = stats.expand([ROW], ["y", "x"])
    assert len(g.score) == 10 and g.rows == 1 and g.uncoloured_rows == 0
    assert np.allclose(g.weight, 0.8)  # 8 distinct of 10
    x_first = g.first == 1
    assert x_first.sum() == 5 and np.all(g.second[x_first] == 0)
    # x first: 4 wins, a draw; y first: y won x's 3 losses, drew once, lost x's 1 win
    assert sorted(g.score[x_first]) == [0.5, 1, 1, 1, 1]
    assert sorted(g.score[~x_first]) == [0.0, 0.5, 1, 1, 1]


def test_expand_splits_an_old_row_evenly_between_colours():
    old = {k: v for k, v in ROW.items() if k not in ("as_first", "as_second", "distinct_games")}
    g = stats.expand([old], ["x", "y"])
    assert g.uncoloured_rows == 1 and g.unknown_distinct_rows == 1
    assert len(g.score) == 20 and np.allclose(g.weight, 0.5)
    for first in (0, 1):  # each colour holds x's whole record at half weight
        mine = g.first == first
        x_score = np.where(first == 0, g.score[mine], 1.0 - g.score[mine])
        assert x_score.sum() == pytest.approx(5 + 0.5 * 2)
    # With no coloured row, the fit has no first-move term.
    fit, _ = stats.fit([old, dict(old, a="y", b="z")], ["x", "y", "z"])
    assert not fit.first_move_fitted


def test_row_weight():
    assert stats.row_weight(ROW) == 0.8
    assert stats.row_weight({**ROW, "distinct_games": None}) == 1.0
    assert stats.row_weight({**ROW, "distinct_games": 0}) == 0.1  # at least one game
    assert stats.row_weight({**ROW, "distinct_games": 99}) == 1.0


def _games(seed=0, n=400):
    rng = np.random.default_rng(seed)
    first = rng.integers(0, 4, n)
    second = (first + rng.integers(1, 4, n)) % 4
    true = np.array([0.0, 150.0, 300.0, 450.0])
    d = (true[first] - true[second] + 60.0) * math.log(10) / 400
    u = rng.random(n)
    pw = 1 / (1 + np.exp(-d)) * 0.8
    score = np.where(u < pw, 1.0, np.where(u < pw + 0.2, 0.5, 0.0))
    return first, second, score


@pytest.mark.parametrize("draws", ["davidson", "half"])
def test_fit_games_weights(draws):
    first, second, score = _games()
    plain = fit_games(first, second, score, num_players=4, draws=draws)
    ones = fit_games(first, second, score, num_players=4, draws=draws,
                     weights=np.ones(len(score)))
    assert np.array_equal(plain.ratings, ones.ratings)
    assert np.array_equal(plain.covariance, ones.covariance)
    twice = fit_games(np.tile(first, 2), np.tile(second, 2), np.tile(score, 2),
                      num_players=4, draws=draws, weights=np.full(2 * len(score), 0.5))
    np.testing.assert_allclose(twice.ratings, plain.ratings, atol=1e-7)
    np.testing.assert_allclose(twice.covariance, plain.covariance, rtol=1e-7, atol=1e-9)
    assert twice.first_move == pytest.approx(plain.first_move, abs=1e-7)
    assert list(twice.games) == [2 * g for g in plain.games]  # games played, unweighted
    # Weight w on every game: the same estimates, the covariance of w times the games
    # (Davidson's; the half-point model's dispersion also counts its degrees of freedom).
    if draws == "half":
        return
    half = fit_games(first, second, score, num_players=4, draws=draws,
                     weights=np.full(len(score), 0.5))
    np.testing.assert_allclose(half.ratings, plain.ratings, atol=1e-7)
    np.testing.assert_allclose(half.covariance, 2 * plain.covariance, rtol=1e-6)


@pytest.mark.parametrize("weights, message", [
    (np.ones(3), "one entry per game"), (np.zeros(400), "finite and positive"),
    (np.full(400, np.nan), "finite and positive")])
def test_fit_games_refuses_bad_weights(weights, message):
    first, second, score = _games()
    with pytest.raises(ValueError, match=message):
        fit_games(first, second, score, num_players=4, weights=weights)


def test_pool_floor_is_the_spread_the_games_alone_would_give():
    values = np.array([[100.0, 104.0, 98.0], [200.0, 201.0, np.nan]])
    cov = np.full((6, 6), np.nan)
    block = np.array([[900.0, 100.0, 100.0], [100.0, 900.0, 100.0], [100.0, 100.0, 900.0]])
    cov[:3, :3] = block
    cov[3:5, 3:5] = block[:2, :2]
    pool = stats.pool(values, cov)
    # E[within-cell sample variance] from games = mean variance - mean covariance = 800.
    assert pool.game_variance == pytest.approx(800.0)
    raw = (np.var([100, 104, 98], ddof=1) * 2 + np.var([200, 201], ddof=1)) / 3
    assert pool.raw_variance == pytest.approx(raw) and pool.variance == pytest.approx(800.0)
    assert pool.dof == 3 and pool.seed_variance == 0.0
    d = pool.difference(0, 1)
    assert float(d.estimate) == pytest.approx(200.5 - 302 / 3)
    assert float(d.stderr) == pytest.approx(math.sqrt(800.0 * (1 / 3 + 1 / 2)))
    assert float(d.upper - d.estimate) == pytest.approx(t.ppf(0.975, 3) * float(d.stderr))
    loose = stats.pool(values, cov, floor=False)
    assert loose.variance == pytest.approx(raw)


def test_pool_with_one_seed_falls_back_to_the_fit():
    values = np.array([[100.0], [250.0]])
    cov = np.array([[400.0, 100.0], [100.0, 900.0]])
    pool = stats.pool(values, cov)
    assert pool.pooled is None and math.isinf(pool.dof)
    d = pool.difference(0, 1)
    assert float(d.estimate) == 150.0
    assert float(d.stderr) == pytest.approx(math.sqrt(400 + 900 - 200))
    assert float(d.upper - d.estimate) == pytest.approx(1.959964 * float(d.stderr), rel=1e-6)
    with pytest.raises(ValueError, match="a seed in every cell"):
        stats.pool(np.array([[np.nan], [1.0]]), cov)


def test_family_adds_holm_and_simultaneous_intervals():
    intervals = [stats._interval(e, s, 4.0, 0.95) for e, s in ((300.0, 80.0), (50.0, 80.0),
                                                               (-200.0, 60.0))]
    fam = stats.family(intervals)
    ref = seeds.adjust([300.0, 50.0, -200.0], [80.0, 80.0, 60.0], 4.0)
    assert [f["holm"] for f in fam] == pytest.approx(ref.holm.tolist())
    assert [f["simultaneous"][0] for f in fam] == pytest.approx(ref.lower.tolist())
    assert all(f["holm"] >= f["p_value"] for f in fam)
    assert [f["significant"] for f in fam] == [bool(h <= 0.05) for h in ref.holm]


def test_resolution():
    values = np.array([[0.0, 300.0], [100.0, 500.0]])
    cov = np.diag([1000.0] * 4)
    pool = stats.pool(values, cov)
    d = pool.difference(0, 1)
    r = stats.resolution([d], pool, [2, 2])
    half = float(d.upper - d.estimate)
    assert r["detectable"] == pytest.approx([half, half])
    # s_p^2 = (300^2 / 2 + 400^2 / 2) / 2 = 62500, games 1000: the seeds dominate and no
    # number of games halves the interval.
    assert pool.variance == pytest.approx(62500.0)
    assert r["dominant"] == "seeds" and r["games_to_halve"] is None
    assert r["seeds_to_halve"] == [8, 8] and r["unresolved"] == (half > stats.UNRESOLVED_ELO)
    quiet = stats.pool(np.array([[0.0, 10.0], [100.0, 90.0]]), np.diag([1000.0] * 4))
    q = stats.resolution([quiet.difference(0, 1)], quiet, [2, 2])
    # floor binding: all games, so 4x the games halve it
    assert q["dominant"] == "games" and q["games_to_halve"] == pytest.approx(4.0)
