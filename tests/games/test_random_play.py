"""Uniformly random legal actions (`gomoku_jax.games.random_play`)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax.games.random_play import pick_legal, random_legal_action

LENGTHS = [1, 2, 7, 25, 82, 225, 361]
BATCH = 512

PICK = jax.jit(pick_legal)


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


def picked_u(num_actions: int) -> np.ndarray:
    """float32[BATCH] of u for `pick_legal`: any u in [0, 1), the ends included."""
    u = np.random.default_rng(num_actions).uniform(size=BATCH).astype(np.float32)
    u[3:7] = [0.0, np.nextafter(np.float32(1), np.float32(0)), 0.5, 1e-7]
    return u


@functools.lru_cache(maxsize=None)
def every_length() -> dict:
    """For each of LENGTHS (as a string): (`random_legal_action` on `random_masks` for keys
    0, 1, 2; `pick_legal` on them with `picked_u`), every length in one compiled program."""

    def run(masks):
        return {a: ([random_legal_action(jax.random.key(seed), m) for seed in range(3)],
                    pick_legal(jnp.asarray(picked_u(int(a))), m)) for a, m in masks.items()}

    masks = {str(a): random_masks(a, a) for a in LENGTHS}
    return jax.device_get(jax.jit(run)(masks))


@pytest.mark.parametrize("num_actions", LENGTHS)
def test_random_and_picked_actions_are_always_legal(num_actions):
    masks = random_masks(num_actions, num_actions)
    some = np.ones(BATCH, bool)
    some[2] = False
    rows = np.arange(BATCH)
    drawn, picked = every_length()[str(num_actions)]
    for actions in drawn:
        assert actions.shape == (BATCH,) and actions.dtype == np.int32
        assert ((actions >= 0) & (actions < num_actions)).all()
        assert masks[rows[some], actions[some]].all()
        assert actions[0] == num_actions - 1
        assert actions[2] == 0  # nothing legal: the documented fallback
    assert picked.dtype == np.int32
    assert masks[rows[some], picked[some]].all()
    assert picked[0] == num_actions - 1 and picked[2] == 0


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
    single = np.zeros(82, bool)  # a single unbatched mask
    single[13] = True
    u = np.linspace(0, 0.999, 32, dtype=np.float32)
    flat = masks.reshape(32, 82)

    @jax.jit
    def run(masks, single, u, flat):
        return (random_legal_action(jax.random.key(1), masks),
                random_legal_action(jax.random.key(0), single),
                jax.vmap(pick_legal)(u, flat), pick_legal(u, flat))

    actions, one, by_vmap, batched = map(np.asarray, run(masks, single, u, flat))
    assert actions.shape == (4, 8)
    assert np.take_along_axis(masks, actions[..., None], -1).all()
    assert int(one) == 13
    # vmap over single masks gives the batched answer
    np.testing.assert_array_equal(by_vmap, batched)


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


DRAWS = 200_000


@functools.lru_cache(maxsize=None)
def uniform_cases() -> dict:
    """case -> (mask, DRAWS actions drawn for it with key 42), every case in one compiled
    program."""
    masks = {"7-random": _random_mask(7, 0.7), "82-random": _random_mask(82, 0.45),
             "81-game": _game_mask()}
    drawn = jax.jit(lambda masks: {case: random_legal_action(
        jax.random.key(42), jnp.broadcast_to(m, (DRAWS,) + m.shape))
        for case, m in masks.items()})(masks)
    return {case: (masks[case], np.asarray(drawn[case])) for case in masks}


@pytest.mark.parametrize("case", ["7-random", "82-random", "81-game"])
def test_random_legal_action_is_uniform(case):
    mask, actions = uniform_cases()[case]
    num_actions = mask.shape[0]
    draws = DRAWS
    legal = np.flatnonzero(mask)
    counts = np.bincount(actions, minlength=num_actions)
    assert counts[~mask].sum() == 0
    expected = draws / len(legal)
    dof = len(legal) - 1
    stat = _chi_square(counts[legal], expected)
    # a generous bound: mean dof, sd sqrt(2 dof); a biased sampler lands far beyond it
    assert stat < dof + 8 * np.sqrt(2 * dof) + 10, (stat, dof)
    assert counts[legal].min() > 0.9 * expected and counts[legal].max() < 1.1 * expected
