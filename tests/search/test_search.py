"""The search algorithms as plug-ins: the registry and configs, root noise, move selection,
prior shaping and symmetries, tactics with the heuristic evaluator, and search on pgx's
connect_four unchanged."""

from __future__ import annotations

import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from search_helpers import four_positions, stack

import gomoku_jax
from gomoku_jax import agents, search
from gomoku_jax.search import selection
from gomoku_jax.search.noise import add_root_noise, dirichlet_alpha
from gomoku_jax.search.prior import candidates, evaluate

N = 9
ENV = gomoku_jax.make("gomoku", board_size=N)


# ----------------------------------------------------------------- registry and configs

def test_registry_names_every_algorithm_and_refuses_unknown_ones():
    assert set(search.ALGORITHMS) == {"puct", "gumbel", "pure_mcts"}
    for name, cls in search.ALGORITHMS.items():
        algorithm = search.make(name)
        assert type(algorithm) is cls and algorithm.name == name
        assert hash(algorithm) == hash(search.make(name))
    with pytest.raises(ValueError, match="unknown search algorithm 'alphabeta'"):
        search.make("alphabeta")
    with pytest.raises(ValueError, match=r"unknown field 'pb_c_init' for search algorithm "
                                         r"'gumbel'; valid fields: \['candidate_threshold'"):
        search.make("gumbel", pb_c_init=1.0)  # each config holds only its own knobs


@pytest.mark.parametrize("name, fields, message", [
    ("puct", dict(q_transform="optimistic"), "q_transform must be one of"),
    ("puct", dict(prior_shaping="medium"), "prior_shaping must be one of"),
    ("puct", dict(dirichlet_fraction=1.5), "dirichlet_fraction must be in"),
    ("gumbel", dict(symmetry="some"), "symmetry must be one of"),
    ("pure_mcts", dict(exploration=-1.0), "exploration must be >= 0"),
    ("pure_mcts", dict(temperature=0.0), "temperature must be > 0"),
])
def test_configs_refuse_bad_values(name, fields, message):
    with pytest.raises(ValueError, match=message):
        search.make(name, **fields)


def test_for_play_is_full_strength():
    assert search.make("puct").for_play() == search.make("puct", dirichlet_fraction=0.0,
                                                         greedy=True)
    assert search.make("gumbel", sample_plies=8).for_play() == search.make(
        "gumbel", gumbel_scale=0.0)
    assert search.make("pure_mcts", greedy=False).for_play().greedy


# ----------------------------------------------------------------- root noise and moves

def test_adaptive_alpha_is_actions_over_legal_moves_times_alpha0():
    legal = stack([ENV.from_moves([]), ENV.from_moves([40, 41, 42])]).legal_action_mask
    np.testing.assert_allclose(dirichlet_alpha(legal, 0.3, True),
                               [81 / 81 * 0.3, 81 / 78 * 0.3], rtol=1e-6)
    np.testing.assert_allclose(dirichlet_alpha(legal, 0.5, False), [0.5, 0.5])


def softmax(logits) -> np.ndarray:
    x = np.asarray(logits, np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_root_noise_lands_on_candidates_only():
    allowed = np.zeros((64, N * N), bool)
    allowed[:, 10:20] = True
    logits = np.random.default_rng(0).normal(size=(64, N * N)).astype(np.float32)
    noise = jax.jit(add_root_noise)  # one program for both fractions
    alpha = np.full((64,), 0.3, np.float32)
    probs = softmax(noise(logits, allowed, alpha, 1.0, jax.random.key(1)))
    assert probs[:, :10].max() == 0.0 and probs[:, 20:].max() == 0.0
    np.testing.assert_allclose(probs[:, 10:20].sum(axis=1), 1.0, rtol=1e-5)
    # With epsilon = 0.2 the prior keeps 80% of the (renormalised) network prior.
    mixed = softmax(noise(logits, allowed, alpha, 0.2, jax.random.key(1)))
    base = softmax(np.where(allowed, logits, -np.inf))
    assert (mixed >= 0.8 * base - 1e-6).all()


def test_temperature_decays_to_its_floor():
    t = selection.move_temperature(jnp.array([0, 1, 10, 100]), 0.8, 0.9, 0.05)
    np.testing.assert_allclose(t, [0.8, 0.72, max(0.8 * 0.9 ** 10, 0.05), 0.05], rtol=1e-5)


def test_alphazero_q_is_the_mean_value_and_zero_when_unvisited():
    """Seed 001's Q: W/N of visited children, 0 for the rest (mctx's own transforms give an
    unvisited child the lowest value in sight instead)."""
    tree = types.SimpleNamespace(
        children_visits=jnp.array([[3, 0, 1, 0]]), node_values=jnp.array([0.4]),
        qvalues=lambda i: jnp.array([[-0.5, 0.7, 0.25, -1.0]])[i])
    np.testing.assert_allclose(selection.alphazero_qtransform(tree, 0), [-0.5, 0.0, 0.25, 0.0])
    np.testing.assert_allclose(selection.parent_value_qtransform(tree, 0),
                               [-0.5, 0.4, 0.25, 0.4])


# ----------------------------------------------------------------- shaping and symmetries

def test_hard_shaping_limits_candidates_outside_the_opening_only():
    opening = stack([ENV.from_moves([40, 41])])
    later = stack([ENV.from_moves([40, 41, 31, 32, 49, 50])])
    hard = jax.jit(lambda s: candidates(ENV, "hard", 0.5, s))
    allowed, _ = hard(opening)
    assert bool(np.all(allowed == opening.legal_action_mask))
    allowed, weights = hard(later)
    assert bool(np.all(~allowed | (weights >= 0.5)))
    assert int(allowed.sum()) < int(np.sum(later.legal_action_mask))


def board_evaluator(env, params, states, key):
    """Logits = the board itself (black stones 1): a position-dependent 'policy'."""
    return states.board.reshape(states.board.shape[0], -1).astype(jnp.float32), \
        jnp.zeros(states.board.shape[:1])


@pytest.mark.parametrize("mode", ["random", "average", "none"])
def test_evaluation_under_symmetries_maps_the_policy_back(mode):
    states = stack([ENV.from_moves([3, 40, 12, 77, 5])] * 8)
    logits, _ = jax.jit(lambda s, k: evaluate(ENV, board_evaluator, mode, None, s, k))(
        states, jax.random.key(0))
    expected = states.board.reshape(8, -1).astype(np.float32)  # board_evaluator's logits
    if mode == "average":
        np.testing.assert_allclose(np.log(softmax(logits)), np.log(softmax(expected)),
                                   atol=1e-5)
    else:
        np.testing.assert_array_equal(logits, expected)


# ----------------------------------------------------------------- tactics

def test_gumbel_with_the_heuristic_evaluator_takes_the_win_and_blocks_the_four():
    """The search finds them, not the threat search at the root (off: it would find these
    wins and blocks itself). (PUCT's tactics with the heuristic evaluator:
    games/gomoku/test_tactics_suite.py.)"""
    wins, win_answers = four_positions(ENV, "win", 8, seed=1)
    blocks, block_answers = four_positions(ENV, "block", 8, seed=2)
    states = jax.tree.map(lambda a, b: np.concatenate([a, b]), wins, blocks)
    answers = np.concatenate([win_answers, block_answers])
    agent = agents.make("gumbel", num_simulations=32, evaluator="heuristic",
                        threat_search=0).bind(ENV)
    actions, _, _ = jax.jit(agent.act_batch)(None, None, states,
                                             jax.random.split(jax.random.key(1), 16))
    assert answers[np.arange(16), np.asarray(actions)].all(), np.asarray(actions)


# ----------------------------------------------------------------- other games and limits

CONNECT_FOUR = gomoku_jax.make("pgx/connect_four")


def connect_four_wins():
    """Positions where the side to move completes four in a column (column 0..3 for the
    first player, after alternating stacks), with the winning action."""
    states, answers = [], []
    for column in range(4):
        other = (column + 1) % 7
        moves = [column, other, column, other, column, other]
        states.append(CONNECT_FOUR.from_moves(moves))
        answers.append(column)
    return stack(states), np.array(answers)


# (Pure MCTS with its rollouts on connect_four: tests/search/test_pure_mcts.py's arena; its
# wins in one on Gomoku there too.)
@pytest.mark.parametrize("name, evaluator", [("puct", "uniform"), ("gumbel", "uniform")])
def test_every_algorithm_runs_on_pgx_connect_four_and_takes_the_win(name, evaluator):
    states, answers = connect_four_wins()
    algorithm = search.make(name).for_play()
    evaluator = agents.evaluator_registry.make(evaluator, CONNECT_FOUR)
    out = jax.jit(lambda s, k: algorithm.search(CONNECT_FOUR, evaluator, None, s, k, 32))(
        states, jax.random.key(0))
    np.testing.assert_array_equal(out.action, answers)
    assert out.tree.children_visits.shape == (4, 33, 7)


def test_tree_memory_is_checked_before_compiling():
    states = stack([ENV.from_moves([])] * 4)
    need = search.check_tree_memory(ENV, states, 10)
    assert need == search.tree_bytes(4, 10, 81, need // (4 * 11) - 24 * 81)
    with pytest.raises(ValueError, match="search tree would need"):
        search.check_tree_memory(ENV, states, 10, max_tree_bytes=1000)
    agent = agents.make("mcts", num_simulations=10, max_tree_bytes=1000,
                        threat_search=0).bind(ENV)
    with pytest.raises(ValueError, match="lower the batch or num_simulations"):
        jax.jit(agent.act_batch)(None, None, states, jax.random.split(jax.random.key(0), 4))
