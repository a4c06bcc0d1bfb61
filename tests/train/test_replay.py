"""The FIFO replay buffer (`gomoku_jax.train.replay`) against `collections.deque`."""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_jax.games.gomoku import rules
from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.train import replay
from gomoku_jax.train.alphazero.samples import Sample

CONFIG = GameConfig(board_size=5, win_length=4)
M = 8  # samples per add call (a static shape: one compilation per capacity)


def tagged_samples(ids) -> Sample:
    """[len(ids)] samples whose every leaf carries its id (to check nothing gets mixed)."""
    return _tagged(jnp.asarray(ids, jnp.int32))


@jax.jit
def _tagged(ids_j: jax.Array) -> Sample:
    m = ids_j.shape[0]
    state = jax.vmap(lambda _: rules.initial_state(CONFIG, 0))(jnp.arange(m))
    state = state.replace(move_count=ids_j,
                          board=jnp.broadcast_to((ids_j % 3 - 1).astype(jnp.int8)[:, None, None],
                                                 state.board.shape))
    policy = jnp.broadcast_to(ids_j[:, None].astype(jnp.float32), (m, CONFIG.num_actions))
    return Sample(state=state, policy=policy, value=ids_j.astype(jnp.float32),
                  weight=jnp.ones((m,), jnp.float32), value_weight=ids_j.astype(jnp.float32) * 2,
                  action=ids_j + 7)


def empty(capacity: int) -> replay.Replay:
    return replay.init(jax.tree.map(lambda x: x[0], tagged_samples(np.zeros(1))), capacity)


_add = jax.jit(replay.add)
_sample = jax.jit(replay.sample, static_argnums=2)


def contents(buffer: replay.Replay) -> list[int]:
    """The buffer's samples oldest first (ids), checking every leaf agrees."""
    buffer = jax.device_get(buffer)
    size, pos, cap = int(buffer.size), int(buffer.position), buffer.capacity
    slots = [(pos - size + i) % cap for i in range(size)]
    data = buffer.data
    ids = [int(data.value[s]) for s in slots]
    for s, i in zip(slots, ids):
        assert int(data.state.move_count[s]) == i
        assert np.all(data.policy[s] == i)
        assert float(data.value_weight[s]) == 2 * i
        assert np.all(data.state.board[s] == i % 3 - 1)
        assert float(data.weight[s]) == 1.0
        assert int(data.action[s]) == i + 7
    return ids


@settings(max_examples=40, deadline=None)
@given(capacity=st.sampled_from([1, 5, 6]),
       masks=st.lists(st.lists(st.booleans(), min_size=M, max_size=M), min_size=1, max_size=6))
def test_add_matches_deque(capacity, masks):
    reference = collections.deque(maxlen=capacity)
    buffer = empty(capacity)
    next_id = 1
    added = 0
    for mask in masks:
        ids = np.arange(next_id, next_id + M)
        next_id += M
        buffer = _add(buffer, tagged_samples(ids), jnp.asarray(mask))
        reference.extend(int(i) for i, v in zip(ids, mask) if v)
        added += sum(mask)
        assert int(buffer.size) == len(reference)
        assert int(buffer.added) == added
        assert 0 <= int(buffer.position) < capacity
        assert contents(buffer) == list(reference)


def test_more_valid_samples_than_capacity_in_one_call():
    buffer = _add(empty(5), tagged_samples(np.arange(1, M + 1)), jnp.ones(M, bool))
    assert contents(buffer) == [4, 5, 6, 7, 8]
    assert (int(buffer.size), int(buffer.added)) == (5, 8)
    # with invalid ones interleaved: the last 5 valid ones, in order
    mask = jnp.asarray([True, False, True, True, False, True, True, True])
    buffer = _add(buffer, tagged_samples(np.arange(11, 11 + M)), mask)
    assert contents(buffer) == [13, 14, 16, 17, 18]


def test_all_invalid_adds_nothing():
    buffer = _add(empty(5), tagged_samples(np.arange(1, M + 1)), jnp.zeros(M, bool))
    assert (int(buffer.size), int(buffer.position), int(buffer.added)) == (0, 0, 0)


@pytest.mark.parametrize("valid", [[0, 2], [1, 3, 4, 5, 6]])
def test_sample_draws_only_filled_slots(valid):
    mask = np.zeros(M, bool)
    mask[valid] = True
    buffer = _add(empty(6), tagged_samples(np.arange(1, M + 1)), jnp.asarray(mask))
    batch = _sample(buffer, jax.random.key(0), 256)
    drawn = np.asarray(batch.value).astype(int)
    expected = set(np.arange(1, M + 1)[mask])
    assert set(drawn) == expected  # only filled slots, and (256 draws) all of them
    assert np.all(np.asarray(batch.state.move_count) == drawn)
    np.testing.assert_array_equal(batch.weight, 1.0)
    assert batch.policy.shape == (256, CONFIG.num_actions)


def test_sample_from_empty_buffer_has_zero_weight():
    batch = _sample(empty(5), jax.random.key(1), 16)
    np.testing.assert_array_equal(batch.weight, 0.0)
    assert batch.value.shape == (16,)


def test_sample_is_roughly_uniform():
    buffer = _add(empty(6), tagged_samples(np.arange(1, M + 1)), jnp.ones(M, bool))
    drawn = np.asarray(_sample(buffer, jax.random.key(2), 6000).value).astype(int)
    counts = np.bincount(drawn, minlength=M + 1)[3:]
    assert counts.sum() == 6000 and np.all(np.abs(counts - 1000) < 150)
