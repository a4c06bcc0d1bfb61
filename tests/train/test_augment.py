"""Symmetry augmentation of training samples (`gomoku_jax.train.augment`): on Gomoku (D4)
the observation made after the transform, the transformed policy target and the move
played stay aligned (no move, -1, stays -1); a game without symmetries is left as it is."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import compiled

import gomoku_jax
from gomoku_jax.games import symmetry
from gomoku_jax.games.gomoku.observe import observe
from gomoku_jax.train import augment
from gomoku_jax.train.alphazero.samples import Sample

N, K, B = 7, 4, 48


@functools.lru_cache(maxsize=None)
def positions(observation: str = "absolute", feature_plane=None):
    """B random mid-game positions (leaves [B, ...]) of a 7×7 four-in-a-row game."""
    env = gomoku_jax.make("gomoku", board_size=N, win_length=K, observation=observation,
                          feature_plane=feature_plane)
    rng = np.random.default_rng(0)
    actions = np.stack([rng.permutation(N * N) for _ in range(B)]).astype(np.int32)
    trajectory = compiled(env).play(jnp.asarray(actions[:, :20]))  # leaves [20, B]
    t = rng.integers(0, 20, size=B)
    states = jax.tree.map(lambda x: x[t, np.arange(B)], trajectory)
    return env, states


def make_samples(states, policy, action=None) -> Sample:
    ones = jnp.ones((policy.shape[0],), jnp.float32)
    action = jnp.full(policy.shape[:1], -1, jnp.int32) if action is None else action
    return Sample(state=states, policy=jnp.asarray(policy, jnp.float32), value=ones * 0.5,
                  weight=ones, value_weight=ones, action=jnp.asarray(action, jnp.int32))


def random_actions(states, rng, none_every: int = 0) -> np.ndarray:
    """A random legal move per position (-1, no move, for every `none_every`-th one)."""
    legal = np.asarray(states.legal_action_mask)
    action = np.array([rng.choice(np.flatnonzero(row)) for row in legal], np.int32)
    if none_every:
        action[::none_every] = -1
    return action


ENV = gomoku_jax.make("gomoku", board_size=N, win_length=K)


@jax.jit
def _augment_and_observe(samples, key):
    out = augment.augment(ENV, samples, key)
    return out, observe(out.state), out.state.legal_action_mask


def transform_cells(values: np.ndarray, g: int) -> np.ndarray:
    """Flat N×N cell values under D4 element g (NumPy: rot90 g % 4 times, then fliplr)."""
    grid = np.rot90(np.asarray(values).reshape(N, N), g % 4)
    return (np.fliplr(grid) if g >= 4 else grid).reshape(-1)


def image_of_cell(cell: int, g: int) -> int:
    one = np.zeros(N * N)
    one[cell] = 1
    return int(np.argmax(transform_cells(one, g)))


def find_element(obs, policy, obs_aug, policy_aug):
    """The D4 elements g with transform(obs, g) == obs_aug and transform(policy, g) ==
    policy_aug (NumPy, from the documented rot90-then-fliplr definition)."""
    found = []
    for g in range(8):
        o = np.rot90(obs, g % 4, axes=(0, 1))
        p = np.rot90(policy.reshape(N, N), g % 4)
        if g >= 4:
            o, p = np.flip(o, axis=1), np.flip(p, axis=1)
        if np.array_equal(o, obs_aug) and np.array_equal(p.reshape(-1), policy_aug):
            found.append(g)
    return found


def test_random_policy_and_observation_move_together():
    env, states = positions()
    rng = np.random.default_rng(1)
    legal = np.asarray(states.legal_action_mask)
    policy = rng.dirichlet(np.ones(N * N), size=B) * legal
    policy /= policy.sum(axis=1, keepdims=True)
    action = random_actions(states, rng, none_every=5)
    samples = make_samples(states, policy, action)
    out, obs_aug, legal_aug = jax.device_get(_augment_and_observe(samples, jax.random.key(3)))
    obs = np.asarray(observe(states))
    used = set()
    for b in range(B):
        gs = find_element(obs[b], policy[b].astype(np.float32), obs_aug[b], out.policy[b])
        assert gs, f"sample {b}: no single symmetry maps (obs, policy) to the augmented pair"
        used.update(gs)
        # the move played lands where that symmetry takes its cell (-1, no move, stays)
        if action[b] < 0:
            assert int(out.action[b]) == -1
        else:
            images = {image_of_cell(int(action[b]), g) for g in gs}
            assert int(out.action[b]) in images, (b, action[b], out.action[b], gs)
            # placing the moved stone on the moved board = moving the board after the move
            after = np.asarray(states.board[b]).reshape(-1).copy()
            after[action[b]] = 3
            after_aug = np.asarray(out.state.board[b]).reshape(-1).copy()
            assert after_aug[out.action[b]] == 0 and legal_aug[b][out.action[b]]
            after_aug[out.action[b]] = 3
            assert any(np.array_equal(transform_cells(after, g), after_aug) for g in gs)
        # the legal mask of the augmented state moves like the policy: no mass on stones
        assert np.all(out.policy[b][~legal_aug[b]] == 0)
        np.testing.assert_allclose(out.policy[b].sum(), 1.0, rtol=1e-5)
    assert len(used) >= 6  # independent random elements per sample
    # untouched fields
    np.testing.assert_array_equal(out.value, 0.5)
    for name in ("color", "black_player", "move_count", "winner", "terminated"):
        np.testing.assert_array_equal(getattr(out.state, name), getattr(states, name))


def test_one_hot_on_last_move_lands_on_last_move_plane():
    env, states = positions()
    last = np.asarray(states.last_action)
    keep = last >= 0
    policy = np.zeros((B, N * N), np.float32)
    policy[np.arange(B)[keep], last[keep]] = 1.0
    out, obs_aug, _ = jax.device_get(_augment_and_observe(make_samples(states, policy),
                                                          jax.random.key(4)))
    obs = np.asarray(observe(states)).reshape(B, N * N, -1)
    obs_aug = obs_aug.reshape(B, N * N, -1)
    for b in np.flatnonzero(keep):
        a = int(np.argmax(out.policy[b]))
        assert out.policy[b][a] == 1.0
        assert a == int(out.state.last_action[b])
        # the same planes there as at the original cell: the mover's stone and its last-move
        np.testing.assert_array_equal(obs_aug[b, a], obs[b, last[b]])
        assert obs_aug[b, a, 2] + obs_aug[b, a, 3] == 1.0


def _neighbour_of_stone(board: np.ndarray) -> np.ndarray:
    padded = np.pad(board != 0, 1)
    near = np.zeros_like(board, bool)
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            if dr or dc:
                near |= padded[1 + dr:1 + dr + N, 1 + dc:1 + dc + N]
    return near & (board == 0)


def test_one_hot_on_stone_adjacent_cell_stays_stone_adjacent():
    env, states = positions()
    boards = np.asarray(states.board)
    rng = np.random.default_rng(5)
    policy = np.zeros((B, N * N), np.float32)
    chosen = {}
    for b in range(B):
        cells = np.flatnonzero(_neighbour_of_stone(boards[b]))
        if len(cells):
            chosen[b] = int(rng.choice(cells))
            policy[b, chosen[b]] = 1.0
    assert len(chosen) > B // 2
    out, obs_aug, _ = jax.device_get(_augment_and_observe(make_samples(states, policy),
                                                          jax.random.key(6)))
    for b, cell in chosen.items():
        a = int(np.argmax(out.policy[b]))
        board_aug = out.state.board[b]
        assert _neighbour_of_stone(board_aug).reshape(-1)[a]
        # stone planes agree with the augmented board
        np.testing.assert_array_equal(obs_aug[b][..., 0], board_aug == 1)
        np.testing.assert_array_equal(obs_aug[b][..., 1], board_aug == -1)
        # the 3×3 neighbourhood's stone count is invariant
        r0, c0 = divmod(cell, N)
        r1, c1 = divmod(a, N)
        count = lambda bd, r, c: np.count_nonzero(  # noqa: E731
            bd[max(r - 1, 0):r + 2, max(c - 1, 0):c + 2])
        assert count(boards[b], r0, c0) == count(board_aug, r1, c1)


@pytest.mark.parametrize("observation, plane", [("absolute", None), ("canonical", None),
                                                ("canonical", "patterns")])
def test_observe_commutes_with_transform_state(observation, plane):
    env, states = positions(observation, plane)

    @jax.jit
    def both(states, g):
        moved = jax.vmap(env.transform_state, in_axes=(0, None))(states, g)
        lhs = observe(moved)
        rhs = jax.vmap(env.transform_observation, in_axes=(0, None))(observe(states), g)
        legal = symmetry.transform_policy(env, states.legal_action_mask, g)
        return lhs, rhs, moved.legal_action_mask, legal

    for g in range(symmetry.NUM_D4):
        lhs, rhs, legal_moved, legal_transformed = both(states, jnp.int32(g))
        np.testing.assert_allclose(lhs, rhs, atol=1e-6, err_msg=f"g={g}")
        np.testing.assert_array_equal(legal_moved, legal_transformed, err_msg=f"g={g}")


def test_transform_sample_identity_and_inverse():
    env, states = positions()
    rng = np.random.default_rng(7)
    samples = make_samples(states, rng.uniform(size=(B, N * N)), random_actions(states, rng))
    one = jax.tree.map(lambda x: x[0], samples)
    transform = jax.jit(lambda s, g: augment.transform_sample(env, s, g))
    same = transform(one, jnp.int32(0))
    for a, b in zip(jax.tree.leaves(same), jax.tree.leaves(one)):
        np.testing.assert_array_equal(a, b)
    for g in range(8):
        there = transform(one, jnp.int32(g))
        back = transform(there, symmetry.d4_inverse(g))
        for a, b in zip(jax.tree.leaves(back), jax.tree.leaves(one)):
            np.testing.assert_array_equal(a, b)


def test_a_game_without_symmetries_is_left_as_it_is():
    env = gomoku_jax.make("pgx/connect_four")
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 4))
    samples = make_samples(states, np.full((4, 7), 1 / 7))
    out = augment.augment(env, samples, jax.random.key(1))
    for a, b in zip(jax.tree.leaves(out), jax.tree.leaves(samples)):
        np.testing.assert_array_equal(a, b)
