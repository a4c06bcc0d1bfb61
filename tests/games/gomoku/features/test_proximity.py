"""Proximity mask (`gomoku_jax.games.gomoku.features.proximity`, seed 000 level 1).

The main check is exact equality with a slow NumPy reference written here from the seed's
description (opening exception, occupied cells 0, Chebyshev distance to the nearest stone
mapped to a weight), on random boards of several sizes and with non-default configs. Each
(board size, config) is jitted once and fed one fixed-size batch of boards.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax.games.gomoku.features import ProximityConfig, proximity_mask
from gomoku_jax.games.gomoku.features.planes import ProximityPlane, plane_function

BATCH = 48  # boards per compiled call (fixed, so each config compiles once)

CONFIGS = {
    "default": ProximityConfig(),
    "four-rings-no-far-opening2": ProximityConfig((0.9, 0.6, 0.3, 0.1), far_weight=0.0,
                                                  opening_stones=2),
    "one-ring-no-opening": ProximityConfig((0.7,), far_weight=0.25, opening_stones=0),
    "late-opening": ProximityConfig((1.0, 0.75), far_weight=0.125, opening_stones=9),
}


def reference_mask(board: np.ndarray, config: ProximityConfig) -> np.ndarray:
    """The seed's `compute_proximity_mask`, cell by cell, with the weights of `config`."""
    n = board.shape[0]
    stones = np.argwhere(board != 0)  # [S, 2]
    if len(stones) < config.opening_stones:
        return np.ones((n, n), np.float32)
    out = np.empty((n, n), np.float32)
    for r in range(n):
        for c in range(n):
            if board[r, c] != 0:
                out[r, c] = 0.0
                continue
            # Chebyshev distance to the nearest stone (None without stones).
            dist = (int(np.max(np.abs(stones - (r, c)), axis=1).min()) if len(stones)
                    else None)
            if dist is not None and dist <= len(config.distance_weights):
                out[r, c] = config.distance_weights[dist - 1]
            else:
                out[r, c] = config.far_weight
    return out


@functools.lru_cache(maxsize=None)
def _batched_mask(n: int, config: ProximityConfig):
    del n  # part of the cache key only: one compiled program per board size
    return jax.jit(jax.vmap(lambda b: proximity_mask(b, config)))


def masks(boards: np.ndarray, config: ProximityConfig) -> np.ndarray:
    """proximity_mask of every board, through one compiled call per BATCH boards."""
    boards = np.asarray(boards, np.int8)
    count, n = boards.shape[0], boards.shape[-1]
    pad = (-count) % BATCH
    padded = np.concatenate([boards, np.zeros((pad, n, n), np.int8)])
    fn = _batched_mask(n, config)
    out = [np.asarray(fn(jnp.asarray(padded[i:i + BATCH])))
           for i in range(0, len(padded), BATCH)]
    return np.concatenate(out)[:count]


def random_boards(rng: np.random.Generator, count: int, n: int) -> np.ndarray:
    """Boards from empty to dense, with many stone counts around the opening threshold."""
    boards = np.zeros((count, n, n), np.int8)
    for i in range(count):
        if i % 3 == 0:  # 0..10 stones: the opening exception and its edge
            stones = i % 11
        else:
            stones = int(rng.integers(0, n * n // 3 + 1))
        cells = rng.choice(n * n, stones, replace=False)
        boards[i].flat[cells] = rng.choice(np.array([1, -1], np.int8), stones)
    return boards


@pytest.mark.parametrize("n", [5, 9, 15, 19])
def test_default_config_matches_reference_exactly(n):
    rng = np.random.default_rng(1000 + n)
    boards = random_boards(rng, BATCH, n)
    got = masks(boards, ProximityConfig())
    for i, board in enumerate(boards):
        np.testing.assert_array_equal(got[i], reference_mask(board, ProximityConfig()),
                                      err_msg=f"board {i}:\n{board}")
    # The sample really exercises every case of the definition.
    values = set(np.unique(got).tolist())
    assert {0.0, 1.0, np.float32(0.5)} <= values
    if n >= 9:
        assert {np.float32(0.2), np.float32(0.05)} <= values


@pytest.mark.parametrize("name", [c for c in CONFIGS if c != "default"])
@pytest.mark.parametrize("n", [9, 15])
def test_custom_configs_match_reference_exactly(name, n):
    config = CONFIGS[name]
    rng = np.random.default_rng(100 * list(CONFIGS).index(name) + n)
    boards = random_boards(rng, BATCH, n)
    got = masks(boards, config)
    for i, board in enumerate(boards):
        np.testing.assert_array_equal(got[i], reference_mask(board, config),
                                      err_msg=f"{name}, board {i}:\n{board}")


def test_seed_examples():
    board = np.zeros((15, 15), np.int8)
    # Empty board and one stone: the opening exception gives all ones (the seed's code
    # returns before its empty-board branch, whatever its comments say).
    assert np.all(masks(board[None], ProximityConfig())[0] == 1.0)
    board[7, 7] = 1
    assert np.all(masks(board[None], ProximityConfig())[0] == 1.0)
    # Without the opening exception, the seed's "Test 2" distances hold.
    mask = masks(board[None], ProximityConfig(opening_stones=1))[0]
    assert mask[7, 7] == 0.0
    assert mask[7, 8] == 1.0 and mask[6, 6] == 1.0
    assert mask[7, 9] == 0.5 and mask[5, 5] == 0.5
    assert mask[7, 10] == np.float32(0.2) and mask[10, 4] == np.float32(0.2)
    assert mask[7, 11] == np.float32(0.05) and mask[0, 0] == np.float32(0.05)
    assert mask[7, 8] > mask[0, 0]


def test_opening_threshold_is_strictly_fewer_than_opening_stones():
    board = np.zeros((9, 9), np.int8)
    cells = [(0, 0), (0, 8), (8, 0), (8, 8), (4, 4)]
    for r, c in cells[:4]:
        board[r, c] = 1 if (r + c) % 2 == 0 else -1
    four = board.copy()
    board[4, 4] = 1
    five = board
    got = masks(np.stack([four, five]), ProximityConfig())
    assert np.all(got[0] == 1.0), "4 stones: still the opening exception"
    assert got[1][4, 4] == 0.0 and got[1][0, 0] == 0.0, "5 stones: occupied cells are 0"
    assert got[1][3, 3] == 1.0 and got[1][2, 4] == 0.5 and got[1][1, 4] == 0.2
    # A custom threshold moves the boundary.
    got = masks(np.stack([four, five]), ProximityConfig(opening_stones=6))
    assert np.all(got == 1.0)


def test_no_opening_exception_on_an_empty_board_gives_far_weight_everywhere():
    config = CONFIGS["one-ring-no-opening"]
    got = masks(np.zeros((1, 9, 9), np.int8), config)[0]
    assert np.all(got == np.float32(config.far_weight))


def test_colour_does_not_matter():
    rng = np.random.default_rng(5)
    boards = random_boards(rng, BATCH, 9)
    np.testing.assert_array_equal(masks(boards, ProximityConfig()),
                                  masks(-boards, ProximityConfig()))


def test_batched_mask_equals_unbatched():
    """vmap over boards agrees with the mask of each board on its own (one compile)."""
    rng = np.random.default_rng(11)
    boards = random_boards(rng, 3, 9)
    single = jax.jit(proximity_mask)
    batched = masks(boards, ProximityConfig())
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(single(jnp.asarray(boards[i]))), batched[i])


@pytest.mark.parametrize("kwargs", [
    dict(distance_weights=()),
    dict(distance_weights=(1.0, 1.5)),
    dict(distance_weights=(-0.1,)),
    dict(far_weight=-0.01),
    dict(far_weight=1.01),
    dict(opening_stones=-1),
])
def test_config_validation(kwargs):
    with pytest.raises(ValueError):
        ProximityConfig(**kwargs)


def test_config_is_hashable_and_compares_by_value():
    assert ProximityConfig() == ProximityConfig((1.0, 0.5, 0.2), 0.05, 5)
    assert hash(ProximityConfig()) == hash(ProximityConfig((1.0, 0.5, 0.2), 0.05, 5))
    assert ProximityConfig() != ProximityConfig(opening_stones=4)


def test_proximity_feature_plane_of_the_env():
    env = gomoku_jax.make("gomoku", board_size=9, feature_plane="proximity")
    assert env == gomoku_jax.make("gomoku", board_size=9, feature_plane="proximity")
    assert env.config.feature_plane == "proximity" and env.config.has_feature_plane
    assert plane_function(env.config) == ProximityPlane()
    assert env.observation_shape == (9, 9, 6)
    games = [[(4, 4), (4, 5), (3, 3)],
             [(4, 4), (4, 5), (3, 3), (0, 0), (8, 8), (2, 6)]]
    states = [env.from_moves(g) for g in games]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *states)
    obs = np.asarray(jax.jit(env.observe)(batch))
    assert obs.shape == (2, 9, 9, 6)
    for i, state in enumerate(states):
        np.testing.assert_array_equal(
            obs[i, ..., 5], reference_mask(np.asarray(state.board), ProximityConfig()))
    assert np.all(obs[0, ..., 5] == 1.0)  # 3 stones: opening exception
    assert obs[1, 4, 4, 5] == 0.0 and obs[1, 6, 6, 5] == 0.5
