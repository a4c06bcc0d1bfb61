"""Uniformly random legal actions (`gomoku_jax.games.random_play`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax.games.random_play import pick_legal, random_legal_action

LENGTHS = [1, 2, 7, 25, 82, 225, 361]
BATCH = 512

# One compiled program per mask length, shared by the tests below (shapes [BATCH, A]).
PICK = jax.jit(pick_legal)
RANDOM = jax.jit(random_legal_action)


def random_masks(num_actions: int, seed: int) -> np.ndarray:
    """bool[BATCH, A] masks of varied density, each but row 2 with a legal action."""
    rng = np.random.default_rng(seed)
    density = rng.uniform(0.0, 1.0, size=(BATCH, 1))
    masks = rng.uniform(size=(BATCH, num_actions)) < density
    masks[np.arange(BATCH), rng.integers(num_actions, size=BATCH)] = True
    masks[0] = False  # a single legal action, at the very end
    masks[0, -1] = True
    masks[1] = True  # everything legal
    masks[2] = False  # nothing legal
    return masks


@pytest.mark.parametrize("num_actions", LENGTHS)
def test_random_and_picked_actions_are_always_legal(num_actions):
    masks = random_masks(num_actions, num_actions)
    some = np.ones(BATCH, bool)
    some[2] = False
    rows = np.arange(BATCH)
    for seed in range(3):
        actions = np.asarray(RANDOM(jax.random.key(seed), jnp.asarray(masks)))
        assert actions.shape == (BATCH,) and actions.dtype == np.int32
        assert ((actions >= 0) & (actions < num_actions)).all()
        assert masks[rows[some], actions[some]].all()
        assert actions[0] == num_actions - 1
        assert actions[2] == 0  # nothing legal: the documented fallback
    # any u in [0, 1), the ends included
    u = np.random.default_rng(num_actions).uniform(size=BATCH).astype(np.float32)
    u[3:7] = [0.0, np.nextafter(np.float32(1), np.float32(0)), 0.5, 1e-7]
    actions = np.asarray(PICK(jnp.asarray(u), jnp.asarray(masks)))
    assert actions.dtype == np.int32
    assert masks[rows[some], actions[some]].all()
    assert actions[0] == num_actions - 1 and actions[2] == 0


@pytest.mark.parametrize("num_actions", [7, 25, 82, 225])
def test_pick_legal_takes_the_quantile_in_cell_order(num_actions):
    rng = np.random.default_rng(num_actions)
    mask = rng.uniform(size=num_actions) < 0.4
    mask[[0, num_actions - 1]] = [False, True]
    legal = np.flatnonzero(mask)
    count = len(legal)
    # the midpoints of `count` equal slices of [0, 1) hit every legal cell once, in order;
    # the ends of [0, 1) give the first and the last legal cell
    u = np.full(BATCH, 0.5, np.float32)
    u[:count] = (np.arange(count) + 0.5) / count
    u[count:count + 2] = [0.0, np.nextafter(np.float32(1), np.float32(0))]
    masks = jnp.broadcast_to(jnp.asarray(mask), (BATCH, num_actions))
    got = np.asarray(PICK(jnp.asarray(u), masks))
    np.testing.assert_array_equal(got[:count], legal)
    np.testing.assert_array_equal(got[count:count + 2], [legal[0], legal[-1]])


def test_extra_batch_axes_and_vmap():
    masks = random_masks(82, 5)[8:40].reshape(4, 8, 82)
    actions = np.asarray(RANDOM(jax.random.key(1), jnp.asarray(masks)))
    assert actions.shape == (4, 8)
    assert np.take_along_axis(masks, actions[..., None], -1).all()
    # a single unbatched mask
    single = np.zeros(82, bool)
    single[13] = True
    assert int(RANDOM(jax.random.key(0), jnp.asarray(single))) == 13
    # vmap over single masks gives the batched answer
    u = jnp.linspace(0, 0.999, 32)
    flat = jnp.asarray(masks.reshape(32, 82))
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(pick_legal))(u, flat)),
                                  np.asarray(PICK(u, flat)))


def _chi_square(counts, expected):
    return float(np.sum((counts - expected) ** 2 / expected))


def _game_mask():
    env = gomoku_jax.make("gomoku", board_size=9, rule="exact5")
    state = env.from_moves([40, 41, 30, 50, 20, 60, 10, 70, 80])
    mask = np.asarray(state.legal_action_mask)
    assert mask.sum() == 81 - 9
    return mask


def _random_mask(num_actions, density):
    mask = np.random.default_rng(7).uniform(size=num_actions) < density
    mask[num_actions // 2] = True
    return mask


@pytest.mark.parametrize("case", ["7-random", "82-random", "81-game"])
def test_random_legal_action_is_uniform(case):
    mask = {"7-random": lambda: _random_mask(7, 0.7),
            "82-random": lambda: _random_mask(82, 0.45),
            "81-game": _game_mask}[case]()
    num_actions = mask.shape[0]
    draws = 200_000
    legal = np.flatnonzero(mask)
    actions = np.asarray(RANDOM(jax.random.key(42),
                                jnp.broadcast_to(jnp.asarray(mask), (draws, num_actions))))
    counts = np.bincount(actions, minlength=num_actions)
    assert counts[~mask].sum() == 0
    expected = draws / len(legal)
    dof = len(legal) - 1
    stat = _chi_square(counts[legal], expected)
    # a generous bound: mean dof, sd sqrt(2 dof); a biased sampler lands far beyond it
    assert stat < dof + 8 * np.sqrt(2 * dof) + 10, (stat, dof)
    assert counts[legal].min() > 0.9 * expected and counts[legal].max() < 1.1 * expected
