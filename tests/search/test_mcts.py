"""mctx search over the real env: seed exploration features, masking, tactics, memory check."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.features import proximity_mask
from gomoku_jax.game import positions, symmetry
from gomoku_jax.search import (RolloutEvaluator, SearchConfig, add_root_noise, candidate_mask,
                               check_tree_memory, dirichlet_alpha, move_temperature,
                               tree_bytes)
from gomoku_jax.search.mcts import _transform_states

N = 9
ENV = gomoku_jax.make("gomoku", board_size=N)
BATCH = 16


def stack(states):
    return jax.tree.map(lambda *x: jnp.stack(x), *states)


@functools.lru_cache(maxsize=None)
def compiled_act(agent):
    return jax.jit(agent.act_batch)


def tactical_positions(kind: str, count: int, seed: int):
    """Random positions where the side to move (black) can win in one ("win"), or must
    block white's lone four ("block"); with the answer cells (bool[B, A])."""
    rng = np.random.default_rng(seed)
    states, answers = [], []
    while len(states) < count:
        board = np.zeros((N, N), np.int8)
        r, c = rng.integers(0, N), rng.integers(0, N - 4)
        line = [(r, c + i) for i in range(4)]
        four_colour = 1 if kind == "win" else -1
        for cell in line:
            board[cell] = four_colour
        # Scatter the other stones so counts fit black to move, without other lines.
        need_white = int((board == 1).sum()) - int((board == -1).sum())
        need_black = 0
        if need_white < 0:
            need_black, need_white = -need_white, 0
        extra = rng.integers(1, 4)
        free = [tuple(x) for x in np.argwhere(board == 0)]
        rng.shuffle(free)
        cells = free[:need_black + need_white + 2 * extra]
        colours = [1] * (need_black + extra) + [-1] * (need_white + extra)
        for cell, colour in zip(cells, colours):
            board[cell] = colour
        config = ENV.config
        if positions.winning_colours(board, config):
            continue
        answer = np.zeros(N * N, bool)
        for cell in [(r, c - 1), (r, c + 4)]:
            if 0 <= cell[1] < N and board[cell] == 0:
                trial = board.copy()
                trial[cell] = four_colour
                if four_colour in positions.winning_colours(trial, config):
                    answer[cell[0] * N + cell[1]] = True
        if kind == "block":
            # Black must have no win of its own, and exactly one blocking cell.
            black_wins = any(1 in positions.winning_colours(
                np.where(np.arange(N * N).reshape(N, N) == a, 1, board), config)
                for a in np.flatnonzero(board.reshape(-1) == 0))
            if black_wins or answer.sum() != 1:
                continue
        if not answer.any():
            continue
        try:
            states.append(ENV.from_board(board, 1))
        except ValueError:
            continue
        answers.append(answer)
    return stack(states), np.stack(answers)


def test_adaptive_alpha_is_board_area_over_legal_moves_times_alpha0():
    s = stack([ENV.from_moves([]), ENV.from_moves([40, 41, 42])])
    alpha = dirichlet_alpha(s, SearchConfig())
    np.testing.assert_allclose(alpha, [81 / 81 * 0.3, 81 / 78 * 0.3], rtol=1e-6)
    fixed = dirichlet_alpha(s, SearchConfig(adaptive_alpha=False, dirichlet_alpha=0.5))
    np.testing.assert_allclose(fixed, [0.5, 0.5])


def test_root_noise_lands_on_candidates_only():
    key = jax.random.key(0)
    candidates = jnp.zeros((64, N * N), bool).at[:, 10:20].set(True)
    logits = jax.random.normal(key, (64, N * N))
    noisy = add_root_noise(logits, candidates, jnp.full((64,), 0.3), 1.0,
                           jax.random.key(1))
    probs = jax.nn.softmax(noisy)
    assert float(jnp.max(probs[:, :10])) == 0.0 and float(jnp.max(probs[:, 20:])) == 0.0
    np.testing.assert_allclose(jnp.sum(probs[:, 10:20], axis=1), 1.0, rtol=1e-5)
    # With epsilon = 0.2 the prior keeps 80% of the (renormalised) network prior.
    mixed = jax.nn.softmax(add_root_noise(logits, candidates, jnp.full((64,), 0.3), 0.2,
                                          jax.random.key(1)))
    base = jax.nn.softmax(jnp.where(candidates, logits, -jnp.inf))
    assert bool(jnp.all(mixed >= 0.8 * base - 1e-6))


def test_temperature_decays_to_its_floor():
    t = move_temperature(jnp.array([0, 1, 10, 100]), SearchConfig())
    np.testing.assert_allclose(t, [0.8, 0.72, max(0.8 * 0.9 ** 10, 0.05), 0.05], rtol=1e-5)


def test_transform_states_round_trip_and_follow_the_board():
    s = stack([ENV.from_moves([3, 40, 12, 77])] * 8)
    g = jnp.arange(8)
    t = _transform_states(s, g)
    back = _transform_states(t, symmetry.inverse(g))
    np.testing.assert_array_equal(back.board, s.board)
    np.testing.assert_array_equal(back.last_moves, s.last_moves)
    for i in range(8):  # the last-move cells carry the right stones after the transform
        for slot, colour in ((0, 1), (1, -1)):
            assert t.board[i].reshape(-1)[t.last_moves[i, slot]] == colour


def test_hard_mask_limits_candidates_outside_the_opening_only():
    opening = stack([ENV.from_moves([40, 41])])
    later = stack([ENV.from_moves([40, 41, 31, 32, 49, 50])])
    hard = SearchConfig(proximity="hard", proximity_threshold=0.5)
    c_open, _ = candidate_mask(opening, hard)
    assert bool(jnp.all(c_open == opening.legal_action_mask))
    c_late, near = candidate_mask(later, hard)
    assert bool(jnp.all(~c_late | (near >= 0.5)))
    assert int(c_late.sum()) < int(later.legal_action_mask.sum())


@pytest.mark.parametrize("name", ["mcts", "gumbel"])
def test_search_never_picks_a_hard_masked_move(name):
    agent = agents.make(name, num_simulations=16,
                        search_config=SearchConfig(proximity="hard", proximity_threshold=0.5))
    rng = np.random.default_rng(3)
    centre = [r * N + c for r in range(2, 7) for c in range(2, 7)]
    states = []
    while len(states) < BATCH:
        moves = rng.choice(centre, 6, replace=False).tolist()
        try:
            states.append(ENV.from_moves(moves))
        except ValueError:  # a line already won
            continue
    s = stack(states)
    actions, _, info = compiled_act(agent)(None, None, s, jax.random.split(jax.random.key(0),
                                                                            BATCH))
    near = jax.vmap(proximity_mask)(s.board).reshape(BATCH, -1)
    assert bool(jnp.all(near[jnp.arange(BATCH), actions] >= 0.5))
    assert bool(jnp.all(jnp.where(near < 0.5, info["policy"], 0.0) == 0.0))


TACTICS = [("mcts", "win"), ("mcts", "block"), ("gumbel", "win"), ("gumbel", "block")]


@pytest.mark.parametrize("name,kind", TACTICS)
def test_search_with_the_heuristic_evaluator_takes_the_win_and_blocks_the_four(name, kind):
    agent = agents.make(name, num_simulations=32, search_config=SearchConfig(greedy=True))
    s, answers = tactical_positions(kind, BATCH, seed=len(name) + len(kind))
    actions, _, _ = compiled_act(agent)(None, None, s, jax.random.split(jax.random.key(1),
                                                                         BATCH))
    assert bool(np.all(answers[np.arange(BATCH), np.asarray(actions)])), np.asarray(actions)


def test_rollout_value_sees_an_open_four_and_search_runs_on_it():
    # Black to move with an open four: random playouts from here mostly end in black's win.
    s = stack([ENV.from_moves([(4, 2), (0, 0), (4, 3), (0, 2), (4, 4), (0, 4), (4, 5),
                               (8, 8)])])
    _, value = RolloutEvaluator(num_rollouts=64)(None, s, jax.random.key(0))
    assert float(value[0]) > 0.5
    # The same position with white to move (white's view of it) is bad for the mover.
    w = stack([ENV.from_moves([(4, 2), (0, 0), (4, 3), (0, 2), (4, 4), (0, 4), (4, 5)])])
    _, value_w = RolloutEvaluator(num_rollouts=64)(None, w, jax.random.key(0))
    assert float(value_w[0]) < 0.0
    agent = agents.make("mcts", num_simulations=16, evaluator="rollout")
    actions, _, info = compiled_act(agent)(None, None, s, jax.random.split(jax.random.key(0), 1))
    assert bool(s.legal_action_mask[0, actions[0]])
    assert -1.0 <= float(info["value"][0]) <= 1.0


def test_agents_are_deterministic_for_a_key_and_vmappable():
    agent = agents.make("mcts", num_simulations=8)
    s = stack([ENV.from_moves([40, 41, 31])] * 4)
    keys = jax.random.split(jax.random.key(5), 4)
    f = compiled_act(agent)
    a1, _, i1 = f(None, None, s, keys)
    a2, _, i2 = f(None, None, s, keys)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(i1["policy"], i2["policy"])
    one = jax.jit(agent.act)(None, None, jax.tree.map(lambda x: x[0], s), keys[0])
    assert bool(s.legal_action_mask[0, one[0]])
    np.testing.assert_allclose(jnp.sum(i1["policy"], axis=-1), 1.0, rtol=1e-5)


def test_tree_memory_is_checked_before_compiling():
    s = stack([ENV.from_moves([])] * 4)
    need = check_tree_memory(s, 10, SearchConfig())
    assert need == tree_bytes(4, 10, 81, need // (4 * 11) - 24 * 81)
    with pytest.raises(ValueError, match="search tree would need"):
        check_tree_memory(s, 10, SearchConfig(max_tree_bytes=1000))
    agent = agents.make("mcts", num_simulations=10,
                        search_config=SearchConfig(max_tree_bytes=1000))
    with pytest.raises(ValueError, match="lower the batch or num_simulations"):
        jax.jit(agent.act_batch)(None, None, s, jax.random.split(jax.random.key(0), 4))


def test_search_config_and_agent_errors():
    with pytest.raises(ValueError, match="proximity must be one of"):
        SearchConfig(proximity="medium")
    with pytest.raises(ValueError, match="q_transform must be one of"):
        SearchConfig(q_transform="optimistic")
    with pytest.raises(ValueError, match="unknown evaluator"):
        agents.make("mcts", evaluator="oracle")
    with pytest.raises(ValueError, match="needs a network"):
        agents.make("policy", evaluator="network")
    with pytest.raises(ValueError, match="bad evaluator_options"):
        agents.make("mcts", evaluator="rollout", evaluator_options=(("depth", 3),))


def test_alphazero_q_is_the_mean_value_and_zero_when_unvisited():
    """Seed 001's Q: W/N of visited children, 0 for the rest (mctx's own transforms give an
    unvisited child the lowest value in sight instead)."""
    import types
    from gomoku_jax.search.mcts import alphazero_qtransform
    tree = types.SimpleNamespace(
        children_visits=jnp.array([[3, 0, 1, 0]]),
        qvalues=lambda i: jnp.array([[-0.5, 0.7, 0.25, -1.0]])[i])
    np.testing.assert_allclose(alphazero_qtransform(tree, 0), [-0.5, 0.0, 0.25, 0.0])
