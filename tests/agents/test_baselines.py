"""The agent registry and interface, and the baseline players (`random`, `proximity_random`).

Every fixed agent runs through one jitted, vmapped `act` per agent config on a batch of
BATCH positions; sampling tests call the same program again with fresh keys. (The search
agents are tested in test_search_agents.py, on smaller batches.)
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.agents import ProximityRandomAgent
from gomoku_jax.games.gomoku import winning_colours
from gomoku_jax.games.gomoku.state import BLACK, WHITE

N = 9
ENV = gomoku_jax.make("gomoku", board_size=N)
CFG = ENV.config
BATCH = 256


FIXED = ("random", "proximity_random", "heuristic")


@functools.lru_cache(maxsize=None)
def batched_act(agent):
    return jax.jit(jax.vmap(agent.bind(ENV).act, in_axes=(None, None, 0, 0)))


def stack(states):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def run_act(agent, batch, seed: int):
    """(actions, policies, values) as NumPy for a stacked batch of BATCH states."""
    keys = jax.random.split(jax.random.key(seed), BATCH)
    actions, agent_state, info = batched_act(agent)(None, None, batch, keys)
    assert agent_state is None
    assert info["policy"].dtype == jnp.float32 and info["policy"].shape == (BATCH, N * N)
    assert info["value"].dtype == jnp.float32 and info["value"].shape == (BATCH,)
    assert actions.shape == (BATCH,) and jnp.issubdtype(actions.dtype, jnp.integer)
    return np.asarray(actions), np.asarray(info["policy"]), np.asarray(info["value"])


def draws(agent, state, rounds: int, seed: int) -> np.ndarray:
    """Counts per cell of `rounds * BATCH` independent moves of `agent` from `state`."""
    batch = stack([state] * BATCH)
    counts = np.zeros(N * N, np.int64)
    for i in range(rounds):
        actions, _, _ = run_act(agent, batch, seed * 1000 + i)
        counts += np.bincount(actions, minlength=N * N)
    return counts


def one_empty_cell_board() -> np.ndarray:
    """A drawn-looking board with a single empty cell, black to move (40 + 40 stones)."""
    r, c = np.indices((N, N))
    board = np.where(((c + 2 * r) // 2) % 2 == 1, BLACK, WHITE).astype(np.int8)
    board.reshape(-1)[np.flatnonzero(board.reshape(-1) == WHITE)[-1]] = 0
    return board


def random_boards(count: int, seed: int) -> np.ndarray:
    """Live boards: the empty one, the one-empty-cell one, and random stones (0 to 50)."""
    rng = np.random.default_rng(seed)
    boards = [np.zeros((N, N), np.int8), one_empty_cell_board()]
    while len(boards) < count:
        stones = int(rng.integers(0, 51))
        cells = rng.permutation(N * N)[:stones]
        board = np.zeros(N * N, np.int8)
        board[cells[: (stones + 1) // 2]] = BLACK
        board[cells[(stones + 1) // 2:]] = WHITE
        board = board.reshape(N, N)
        if not winning_colours(board, CFG):
            boards.append(board)
    return np.stack(boards)


@pytest.fixture(scope="module")
def positions():
    boards = random_boards(BATCH, seed=0)
    return boards, stack([ENV.from_board(b) for b in boards])


def chebyshev_distance(board: np.ndarray) -> np.ndarray:
    """int[N, N]: distance from each cell to the nearest stone (0 on stones)."""
    stones = np.argwhere(board != 0)
    r, c = np.indices(board.shape)
    d = np.maximum(np.abs(r[..., None] - stones[:, 0]), np.abs(c[..., None] - stones[:, 1]))
    return d.min(-1)


SEED_WEIGHTS = {1: 1.0, 2: 0.5, 3: 0.2}  # seed 000; 0.05 beyond


def seed_weights(board: np.ndarray) -> np.ndarray:
    """float[N*N]: seed 000's proximity weight of each cell (all ones below 5 stones)."""
    if np.count_nonzero(board) < 5:
        return np.ones(N * N)
    d = chebyshev_distance(board).reshape(-1)
    return np.where(d == 0, 0.0, [SEED_WEIGHTS.get(int(x), 0.05) for x in d])


# ----------------------------------------------------------------- registry


def test_make_unknown_name_lists_the_available_agents():
    with pytest.raises(ValueError, match="unknown agent 'alphazero'") as e:
        agents.make("alphazero")
    for name in ("random", "proximity_random", "heuristic"):
        assert repr(name) in str(e.value)


def test_make_unknown_field_lists_the_valid_fields():
    with pytest.raises(ValueError, match=r"unknown field 'atack' for agent 'heuristic'") as e:
        agents.make("heuristic", atack=2.0)
    for field in ("attack", "defence", "score_weight", "proximity_weight", "patterns"):
        assert field in str(e.value)
    with pytest.raises(ValueError, match=r"valid fields: \['env'\]"):
        agents.make("random", temperature=1.0)
    with pytest.raises(ValueError, match="threshold"):
        agents.make("proximity_random", thresold=0.5)


def test_make_builds_the_registered_class_with_its_config():
    assert set(agents.AGENTS) >= {"random", "proximity_random", "heuristic", "policy", "mcts",
                                  "puct", "gumbel", "pure_mcts", "fauxgo_heuristic", "gmo"}
    for name, cls in agents.AGENTS.items():
        agent = agents.make(name)
        assert agent == cls() and type(agent) is cls
        assert agent == agents.make(name) and hash(agent) == hash(agents.make(name))
        agent_state = agent.init(jax.random.key(0))
        if name == "gmo":  # its novelty memory, empty at the start of a game
            assert int(agent_state.count) == 0
        else:
            assert agent_state is None
        assert agent.env is None
    for name in FIXED:
        assert agents.make(name).name == name
    h = agents.make("heuristic", attack=2.0, defence=1.5)
    assert (h.attack, h.defence) == (2.0, 1.5)
    assert h != agents.make("heuristic")
    assert agents.make("proximity_random", threshold=0.5).threshold == 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.attack = 3.0


@pytest.mark.parametrize("threshold", [-0.1, 1.5])
def test_proximity_random_rejects_a_threshold_outside_0_1(threshold):
    with pytest.raises(ValueError, match="threshold must be in"):
        agents.make("proximity_random", threshold=threshold)


# ----------------------------------------------------------------- every agent


def test_agents_are_bound_to_a_game_and_refuse_other_games():
    unbound = agents.make("heuristic")
    with pytest.raises(ValueError, match="not bound to a game"):
        unbound.game
    bound = unbound.bind(ENV)
    assert bound.env == ENV and bound.bind(ENV) is bound and unbound.env is None
    connect_four = gomoku_jax.make("pgx/connect_four")
    with pytest.raises(ValueError, match="plays \\['gomoku'\\], not 'pgx/connect_four'"):
        unbound.bind(connect_four)
    assert agents.make("random").bind(connect_four).env == connect_four
    with pytest.raises(ValueError, match="plays"):
        agents.make("heuristic", env=connect_four)


@pytest.mark.parametrize("name", FIXED)
def test_every_agent_plays_legal_moves_with_a_masked_normalised_policy(name, positions):
    boards, batch = positions
    agent = agents.make(name)
    actions, policy, value = run_act(agent, batch, seed=1)
    legal = boards.reshape(BATCH, -1) == 0
    rows = np.arange(BATCH)
    assert ((actions >= 0) & (actions < N * N)).all()
    assert legal[rows, actions].all(), "an illegal move"
    assert actions[1] == np.flatnonzero(legal[1])[0]  # the only empty cell
    np.testing.assert_allclose(policy.sum(1), 1.0, atol=1e-5)
    assert (policy >= 0).all() and (policy[~legal] == 0).all()
    assert (policy[rows, actions] > 0).all()  # the move came from the policy
    assert np.isfinite(value).all() and (np.abs(value) <= 1).all()
    # Pure function of its arguments: the same key gives the same move and info.
    again = run_act(agent, batch, seed=1)
    for x, y in zip((actions, policy, value), again):
        np.testing.assert_array_equal(x, y)
    other, _, _ = run_act(agent, batch, seed=2)
    assert (other != actions).any()  # ...and the key matters somewhere (ties at least)


# ----------------------------------------------------------------- random


def test_random_policy_is_uniform_over_legal_cells(positions):
    boards, batch = positions
    _, policy, value = run_act(agents.make("random"), batch, seed=0)
    legal = (boards.reshape(BATCH, -1) == 0).astype(np.float32)
    np.testing.assert_allclose(policy, legal / legal.sum(1, keepdims=True), rtol=1e-6)
    assert (value == 0).all()


def test_random_draws_every_legal_cell_about_equally(positions):
    boards, batch = positions
    i = int(np.argmin(np.abs((boards != 0).sum((1, 2)) - 45)))  # a board with ~36 empties
    board = boards[i]
    state = jax.tree.map(lambda x: x[i], batch)
    counts = draws(agents.make("random"), state, rounds=16, seed=1)
    legal = board.reshape(-1) == 0
    assert counts[~legal].sum() == 0
    expected = counts.sum() / legal.sum()
    assert (np.abs(counts[legal] - expected) < 5 * np.sqrt(expected)).all()


# ----------------------------------------------------------------- proximity_random


def corner_board() -> np.ndarray:
    """Five stones in the top-left corner, white to move: rings 1 to 4+ all present."""
    board = np.zeros((N, N), np.int8)
    board[0, 0] = board[1, 0] = board[0, 2] = BLACK
    board[0, 1] = board[1, 1] = WHITE
    return board


def test_proximity_random_policy_is_the_seed_proximity_weights(positions):
    boards, batch = positions
    _, policy, value = run_act(agents.make("proximity_random"), batch, seed=0)
    expected = np.stack([seed_weights(b) for b in boards])
    expected = expected * (boards.reshape(BATCH, -1) == 0)
    np.testing.assert_allclose(policy, expected / expected.sum(1, keepdims=True), rtol=1e-5,
                               atol=1e-7)
    assert (value == 0).all()
    # Below five stones (the opening) it is uniform over the legal cells.
    opening = (boards != 0).sum((1, 2)) < 5
    assert opening.sum() >= 3
    legal = boards.reshape(BATCH, -1)[opening] == 0
    np.testing.assert_allclose(policy[opening], legal / legal.sum(1, keepdims=True), rtol=1e-6)


def test_proximity_random_draws_near_cells_far_more_often_than_distant_ones():
    board = corner_board()
    state = ENV.from_board(board, to_move="white")
    dist = chebyshev_distance(board).reshape(-1)
    counts = draws(agents.make("proximity_random"), state, rounds=16, seed=2)
    total = counts.sum()
    assert counts[dist == 0].sum() == 0
    adjacent, far = 2 * N + 2, 5 * N + 5  # (2, 2) at distance 1, (5, 5) at distance 4
    assert dist[adjacent] == 1 and dist[far] == 4
    assert counts[far] * 5 < counts[adjacent]  # expected ratio 0.05 : 1
    # Each distance ring gets its share of the probability mass (about +-4 sigma).
    weights = seed_weights(board)
    for ring in (1, 2, 3):
        p = weights[dist == ring].sum() / weights.sum()
        assert abs(counts[dist == ring].sum() / total - p) < 4 * np.sqrt(p * (1 - p) / total)
    p = weights[dist >= 4].sum() / weights.sum()
    assert abs(counts[dist >= 4].sum() / total - p) < 4 * np.sqrt(p * (1 - p) / total)


@pytest.mark.parametrize("threshold, max_distance", [(1.0, 1), (0.5, 2)])
def test_proximity_random_threshold_draws_uniformly_among_near_cells(threshold, max_distance):
    board = corner_board()
    state = ENV.from_board(board, to_move="white")
    dist = chebyshev_distance(board).reshape(-1)
    near = (dist >= 1) & (dist <= max_distance)
    agent = ProximityRandomAgent(threshold=threshold)
    _, policy, _ = run_act(agent, stack([state] * BATCH), seed=0)
    np.testing.assert_allclose(policy[0], near / near.sum(), rtol=1e-6)
    counts = draws(agent, state, rounds=8, seed=3)
    assert counts[~near].sum() == 0  # only cells whose weight reaches the threshold
    assert (counts[near] > 0).all()
    expected = counts.sum() / near.sum()
    assert (np.abs(counts[near] - expected) < 5 * np.sqrt(expected)).all()


def test_proximity_random_threshold_in_the_opening_falls_back_to_all_legal():
    board = np.zeros((N, N), np.int8)
    board[4, 4], board[0, 0] = BLACK, WHITE  # two stones: every weight is 1
    state = ENV.from_board(board)
    _, policy, _ = run_act(ProximityRandomAgent(threshold=1.0), stack([state] * BATCH), seed=0)
    legal = board.reshape(-1) == 0
    np.testing.assert_allclose(policy[0], legal / legal.sum(), rtol=1e-6)
