"""fit_games against known truth (simulated strengths), an independent optimiser, and the
invariances a rating fit must have."""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from gomoku_jax.eval import elo, rating
from gomoku_jax.eval.rating import fit_games

LN = math.log(10.0) / 400.0
Z = 1.959963984540054


# ------------------------------------------------------------------------ simulation

REFS = np.arange(5) * 300.0               # 5 references 300 Elo apart, the first the anchor
CHECKPOINTS = np.linspace(50.0, 1150.0, 10)  # 10 checkpoints between them
TRUE = np.concatenate([REFS, CHECKPOINTS])
GAMES_PER_COLOUR = 16                     # per pair and colour: 32 games a pair


def compare_design() -> tuple[np.ndarray, np.ndarray]:
    """`compare`'s shape: the references play a round robin, every checkpoint plays every
    reference, both colours, GAMES_PER_COLOUR games each way; checkpoints never meet."""
    r, p = len(REFS), len(TRUE)
    pairs = [(i, j) for i in range(r) for j in range(r) if i != j]
    pairs += [(c, x) for c in range(r, p) for x in range(r)]
    pairs += [(x, c) for c in range(r, p) for x in range(r)]
    first = np.repeat([a for a, _ in pairs], GAMES_PER_COLOUR)
    second = np.repeat([b for _, b in pairs], GAMES_PER_COLOUR)
    return first, second


def davidson_scores(rng, true, first, second, edge, nu, datasets) -> np.ndarray:
    """float[datasets, G]: every dataset's first-mover scores at once (Davidson's model)."""
    d = (true[first] - true[second] + edge) * LN
    z = np.exp(d / 2) + np.exp(-d / 2) + nu
    win, draw = np.exp(d / 2) / z, nu / z
    u = rng.random((datasets, len(first)))
    return np.where(u < win, 1.0, np.where(u < win + draw, 0.5, 0.0))


# 300 datasets x 45 checkpoint differences = 13,500 intervals per scenario. Differences of
# one dataset share its references' noise, so the Monte-Carlo error of the coverage is
# measured between datasets: its standard error came out 0.0032-0.0035 for differences (a
# 95% MC band of about ±0.7%) and 0.0045-0.0053 for ratings against the anchor, tight
# enough for the 93-97% target. Measured (rng seed 1), edge 0 / 300 Elo with draws (nu 0.5):
# differences 0.9507 / 0.9549, ratings 0.9514 / 0.9619; largest |bias| 14.3 / 11.2 Elo
# (MC s.e. at most 3.9; the plain MLE's small-sample bias away from the anchor, growing with
# the gap, at most 1.2%); first-move edge -0.7 / 302.9 with interval coverage 0.937 / 0.950;
# nu 0.506. The 600 fits take about 1 s.
DATASETS = 300


@functools.lru_cache(maxsize=None)
def simulated(edge: float, nu: float):
    first, second = compare_design()
    scores = davidson_scores(np.random.default_rng(1), TRUE, first, second, edge, nu, DATASETS)
    return [fit_games(first, second, s, num_players=len(TRUE)) for s in scores]


SCENARIOS = [(0.0, 0.0), (300.0, 0.5)]  # (first-move edge, Davidson's nu)


@pytest.mark.parametrize("edge, nu", SCENARIOS)
def test_intervals_for_differences_and_ratings_hold_their_coverage(edge, nu):
    fits = simulated(edge, nu)
    assert all(f.converged and f.rated.all() for f in fits)
    i, j = np.triu_indices(len(CHECKPOINTS), 1)
    i, j = i + len(REFS), j + len(REFS)
    diff_cover, rating_cover = [], []
    for f in fits:
        c = f.covariance
        se = np.sqrt(c[i, i] + c[j, j] - 2 * c[i, j])
        error = f.ratings[i] - f.ratings[j] - (TRUE[i] - TRUE[j])
        diff_cover.append(np.abs(error) <= Z * se)
        rating_cover.append(np.abs(f.ratings[1:] - TRUE[1:]) <= Z * f.stderr[1:])
        # `GameFit.difference` says the same.
        est, se01 = f.difference(i[0], j[0])
        assert est == pytest.approx(f.ratings[i[0]] - f.ratings[j[0]])
        assert se01 == pytest.approx(se[0])
    assert 0.93 <= np.mean(diff_cover) <= 0.97
    assert 0.93 <= np.mean(rating_cover) <= 0.97


@pytest.mark.parametrize("edge, nu", SCENARIOS)
def test_ratings_are_unbiased_and_the_first_move_edge_is_recovered(edge, nu):
    fits = simulated(edge, nu)
    ratings = np.array([f.ratings for f in fits])
    bias = ratings.mean(axis=0) - TRUE           # gaps up to 1,200 Elo from the anchor
    assert np.all(np.abs(bias) < 25.0), bias.round(1)
    assert all(f.ratings[0] == 0.0 for f in fits)
    edges = np.array([f.first_move for f in fits])
    ses = np.array([f.first_move_se for f in fits])
    assert abs(edges.mean() - edge) < 10.0  # MC s.e. of the mean about 1.5
    assert 0.92 <= np.mean(np.abs(edges - edge) <= Z * ses) <= 0.98
    if nu:
        assert np.mean([f.draw_param for f in fits]) == pytest.approx(nu, rel=0.05)
    else:
        assert all(f.draw_param == 0.0 for f in fits)


# ------------------------------------------------------------ an independent reference

def reference_nll(first, second, score, params, p, draws):
    """The negative log-likelihood written per game from the model: params are the
    ratings of players 1..P-1 and h in natural units (Elo * ln 10 / 400) and, for Davidson,
    log nu."""
    r = np.concatenate([[0.0], params[:p - 1]])
    h = params[p - 1]
    total = 0.0
    for f, s, x in zip(first, second, score):
        d = r[f] - r[s] + h
        if draws == "davidson":
            nu = math.exp(params[p])
            z = math.exp(d / 2) + math.exp(-d / 2) + nu
            prob = {1.0: math.exp(d / 2), 0.5: nu, 0.0: math.exp(-d / 2)}[x] / z
            total -= math.log(prob)
        else:
            e = 1.0 / (1.0 + math.exp(-d))
            total -= x * math.log(e) + (1 - x) * math.log(1 - e)
    return total


def tiny_games():
    rng = np.random.default_rng(7)
    true = np.array([0.0, 150.0, -100.0, 60.0])
    first = rng.integers(0, 4, 80)
    second = (first + rng.integers(1, 4, 80)) % 4
    score = davidson_scores(rng, true, first, second, 80.0, 0.6, 1)[0]
    return first, second, score


@pytest.mark.parametrize("draws", ["davidson", "half"])
def test_matches_a_general_optimiser_on_a_tiny_case(draws):
    first, second, score = tiny_games()
    assert 0 < np.sum(score == 0.5) < len(score)
    fit = fit_games(first, second, score, num_players=4, draws=draws)
    k = 4 + (1 if draws == "davidson" else 0)
    nll = functools.partial(reference_nll, first, second, score, p=4, draws=draws)
    res = minimize(nll, np.zeros(k), method="BFGS", jac="3-point",
                   options={"gtol": 1e-11, "maxiter": 1000})
    assert np.max(np.abs(res.jac)) < 1e-7  # a maximum (BFGS stops at float precision)
    assert np.allclose(fit.ratings[1:], res.x[:3] / LN, atol=1e-6, rtol=0)
    assert fit.first_move == pytest.approx(res.x[3] / LN, abs=1e-6)
    assert fit.log_likelihood == pytest.approx(-res.fun, abs=1e-9)
    if draws == "davidson":
        assert math.log(fit.draw_param) == pytest.approx(res.x[4], abs=1e-6)
    # The covariance is the inverse of the likelihood's curvature (finite differences of the
    # reference), "half" scaled by its dispersion.
    step = 1e-4
    eye = np.eye(k) * step
    hess = np.array([[(nll(res.x + a + b) - nll(res.x + a - b) - nll(res.x - a + b)
                       + nll(res.x - a - b)) / (4 * step * step) for b in eye] for a in eye])
    cov = np.linalg.inv(hess) * (fit.dispersion if draws == "half" else 1.0) / LN ** 2
    assert np.allclose(fit.covariance[1:, 1:], cov[:3, :3], rtol=1e-4)
    assert fit.first_move_se == pytest.approx(math.sqrt(cov[3, 3]), rel=1e-4)
    if draws == "half":
        assert 0.0 < fit.dispersion < 1.0  # draws make a score less variable than a coin


def test_half_and_davidson_agree_without_draws():
    first, second, score = tiny_games()
    score = np.where(score == 0.5, 1.0, score)
    a = fit_games(first, second, score, num_players=4)
    b = fit_games(first, second, score, num_players=4, draws="half")
    assert np.allclose(a.ratings, b.ratings, atol=1e-9)
    assert np.allclose(a.covariance, b.covariance, atol=1e-9)
    assert a.draw_param == 0.0 and b.dispersion == 1.0


# ------------------------------------------------------------------------ separation

def test_a_sweep_against_one_known_opponent_is_the_clopper_pearson_bound():
    # Players 0, 1, 2 play evenly; player 3 wins all 32 games against the anchor, player 4
    # loses all 20. The anchor's rating is known (0), so the bound is the exact binomial one.
    # (No draws: with draws Davidson's win probability at a given Elo is lower than the
    # logistic one, and so is the bound.)
    first = np.r_[np.zeros(20, int), np.ones(20, int), np.zeros(32, int), np.full(20, 4)]
    second = np.r_[np.ones(20, int), np.full(20, 2), np.full(32, 3), np.zeros(20, int)]
    score = np.r_[np.tile([1.0, 0.0], 20), np.zeros(32), np.zeros(20)]
    fit = fit_games(first, second, score, num_players=5, first_move=False)
    assert fit.status == ("anchor", "rated", "rated", "above", "below")
    assert fit.ratings[3] == math.inf and fit.ratings[4] == -math.inf
    assert fit.lower[3] == pytest.approx(elo.estimate(32, 0, 0).lower, abs=1e-6)  # +365.2
    assert fit.upper[3] == math.inf and fit.lower[4] == -math.inf
    assert fit.upper[4] == pytest.approx(elo.estimate(0, 0, 20).upper, abs=1e-6)
    assert np.isnan(fit.covariance[3]).all()
    est, se = fit.difference(3, 1)
    assert est == math.inf and math.isnan(se)
    assert fit.separated_games == 52
    json.dumps(fit.to_dict())  # infinities and nans become null


def test_a_separated_player_among_many_is_a_one_sided_bound():
    first, second = compare_design()
    score = davidson_scores(np.random.default_rng(3), TRUE, first, second, 300.0, 0.0, 1)[0]
    # Checkpoint 14 (the strongest) now wins every game.
    score = np.where(first == 14, 1.0, np.where(second == 14, 0.0, score))
    fit = fit_games(first, second, score, num_players=len(TRUE))
    assert fit.status[14] == "above" and fit.ratings[14] == math.inf
    assert fit.upper[14] == math.inf and math.isfinite(fit.lower[14])
    # Its bound lies above the references it beat, and every other rating is finite.
    assert fit.lower[14] > 600.0
    assert all(s in ("anchor", "rated") for s in fit.status[:14])
    assert abs(fit.first_move - 300.0) < 100.0


def test_a_first_move_that_always_wins_is_reported_undetermined():
    first, second = np.array([0, 1] * 10), np.array([1, 0] * 10)
    fit = fit_games(first, second, np.ones(20), num_players=2)
    assert not fit.first_move_fitted and math.isnan(fit.first_move)
    assert fit.ratings[1] == 0.0 and fit.status[1] == "rated"  # 10-10: even, h fixed at 0
    plain = fit_games(first, second, np.ones(20), num_players=2, first_move=False)
    assert plain.first_move == 0.0 and not plain.first_move_fitted


# ------------------------------------------------------------------------ invariances

def test_relabelling_the_players_permutes_the_fit():
    first, second, score = tiny_games()
    fit = fit_games(first, second, score, num_players=4)
    perm = np.array([2, 0, 3, 1])  # new label of old player i is perm[i]
    relabelled = fit_games(perm[first], perm[second], score, num_players=4, anchor=perm[0])
    assert np.allclose(relabelled.ratings[perm], fit.ratings, atol=1e-9)
    assert np.allclose(relabelled.covariance[np.ix_(perm, perm)], fit.covariance, atol=1e-9)
    assert relabelled.first_move == pytest.approx(fit.first_move, abs=1e-9)


def test_the_anchor_only_shifts_ratings_and_leaves_differences():
    first, second, score = tiny_games()
    a = fit_games(first, second, score, num_players=4, anchor=0)
    b = fit_games(first, second, score, num_players=4, anchor=2)
    assert b.ratings[2] == 0.0 and b.stderr[2] == 0.0
    assert np.allclose(b.ratings, a.ratings - a.ratings[2], atol=1e-9)
    for i in range(4):
        for j in range(4):
            assert np.allclose(a.difference(i, j), b.difference(i, j), atol=1e-9)


def test_game_order_does_not_matter():
    first, second, score = tiny_games()
    order = np.random.default_rng(0).permutation(len(first))
    a = fit_games(first, second, score, num_players=4)
    b = fit_games(first[order], second[order], score[order], num_players=4)
    assert np.allclose(a.ratings, b.ratings, atol=1e-12)


def test_a_player_with_no_games_is_unrated_and_changes_nothing():
    first, second, score = tiny_games()
    fit = fit_games(first, second, score, num_players=5)
    base = fit_games(first, second, score, num_players=4)
    assert fit.status[4] == "no games" and fit.games[4] == 0
    assert math.isnan(fit.ratings[4]) and np.isnan(fit.covariance[4]).all()
    assert np.allclose(fit.ratings[:4], base.ratings, atol=1e-12)
    assert list(fit.games[:4]) == list(np.bincount(first, minlength=4)
                                       + np.bincount(second, minlength=4))


def test_fit_games_is_reexported_from_elo():
    assert elo.fit_games is rating.fit_games and elo.GameFit is rating.GameFit


@pytest.mark.parametrize("kwargs, message", [
    (dict(first=[0, 1], second=[1], score=[1.0, 0.0]), "one entry per game"),
    (dict(first=[0, 3], second=[1, 0], score=[1.0, 0.0]), "outside 0..2"),
    (dict(first=[0, -1], second=[1, 0], score=[1.0, 0.0]), "outside 0..2"),
    (dict(first=[0, 1], second=[1, 0], score=[1.0, 0.7]), "1 \\(win\\), 0.5"),
    (dict(first=[0, 1], second=[0, 0], score=[1.0, 0.0]), "cannot play itself"),
    (dict(first=[0.5, 1], second=[1, 0], score=[1.0, 0.0]), "integer player indices"),
    (dict(first=[[0, 1]], second=[1, 0], score=[1.0, 0.0]), "1-D"),
    (dict(first=[1], second=[2], score=[1.0]), "anchor \\(player 0\\) played no games"),
    (dict(first=[0], second=[1], score=[1.0], anchor=3), "anchor must be"),
    (dict(first=[0], second=[1], score=[1.0], draws="bayes"), "draws must be"),
    (dict(first=[0], second=[1], score=[1.0], num_players=0), "num_players"),
])
def test_bad_input_is_a_clear_error(kwargs, message):
    kwargs.setdefault("num_players", 3)
    with pytest.raises(ValueError, match=message):
        fit_games(**kwargs)


def test_davidson_without_a_finite_maximum_falls_back_to_half_points():
    # The first mover never lost (wins and draws): Davidson's nu and h run to infinity
    # together; the half-point model has a finite maximum.
    first, second = np.array([0, 1] * 6), np.array([1, 0] * 6)
    score = np.array([1.0, 0.5, 0.5, 1.0, 0.5, 0.5] * 2)
    fit = fit_games(first, second, score, num_players=2)
    assert fit.draws == "half" and fit.converged and fit.first_move_fitted
    half = fit_games(first, second, score, num_players=2, draws="half")
    assert np.allclose(fit.ratings, half.ratings) and fit.first_move == half.first_move
    # Every game drawn: ratings equal, with a (conservative) unit dispersion, not 0.
    fit = fit_games(first, second, np.full(12, 0.5), num_players=2)
    assert fit.draws == "half" and fit.ratings[1] == pytest.approx(0.0, abs=1e-9)
    assert fit.dispersion == 1.0 and fit.stderr[1] > 100.0


def test_many_players_and_games_fit_quickly():
    # 200 players, 100,000 games: one fit well under a second or two on a laptop core.
    rng = np.random.default_rng(4)
    true = rng.normal(0.0, 300.0, 200)
    first = rng.integers(0, 200, 100_000)
    second = (first + rng.integers(1, 200, 100_000)) % 200
    score = davidson_scores(rng, true, first, second, 50.0, 0.3, 1)[0]
    fit = fit_games(first, second, score, num_players=200)
    assert fit.converged and fit.rated.all()
    assert np.corrcoef(fit.ratings, true)[0, 1] > 0.99
