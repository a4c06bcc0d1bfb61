"""Symmetries: the dihedral group D4 of square boards, and policies mapped through any env's
symmetry group.

D4 element `g` in 0..7: rotate the board `g % 4` quarter turns counter-clockwise (as
`np.rot90`), then, if `g >= 4`, mirror it left-right. Every element is a gather with a
static permutation table, so `g` may be traced (even vmapped, one per board).

An env's group is its `action_permutations` table, int32[G, A] (`perm[g][a]`: the action
whose value lands on `a`); `transform_policy(env, x, g)` and its inverse move any per-action
vector (logits, probabilities, masks) through it.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

NUM_D4 = 8


@functools.lru_cache(maxsize=None)
def d4_permutations(board_size: int, extra_actions: int = 0) -> np.ndarray:
    """int32[8, N*N + extra]: `perm[g][i]` is the cell whose content lands on cell i under g.
    The `extra_actions` after the N*N cells (a pass) are fixed by every element."""
    n = board_size
    cells = np.arange(n * n, dtype=np.int32).reshape(n, n)
    fixed = np.arange(n * n, n * n + extra_actions, dtype=np.int32)
    tables = []
    for g in range(NUM_D4):
        t = np.rot90(cells, g % 4)
        if g >= 4:
            t = np.fliplr(t)
        tables.append(np.concatenate([t.reshape(-1), fixed]))
    return np.stack(tables)


@functools.lru_cache(maxsize=None)
def _inverse(table_bytes: bytes, shape: tuple[int, int]) -> np.ndarray:
    table = np.frombuffer(table_bytes, np.int32).reshape(shape)
    return np.argsort(table, axis=1).astype(np.int32)


def inverse_permutations(table: np.ndarray) -> np.ndarray:
    """int32[G, A]: the gather tables undoing each row of `table`."""
    table = np.ascontiguousarray(table, np.int32)
    return _inverse(table.tobytes(), table.shape)


def d4_inverse(g: jax.Array) -> jax.Array:
    """The element undoing g: rotations invert to the opposite rotation, mirrors to themselves."""
    g = jnp.asarray(g, jnp.int32)
    return jnp.where(g >= 4, g, (4 - g) % 4)


def transform_policy(env, values: jax.Array, g: jax.Array) -> jax.Array:
    """values: [..., A] (any dtype) -> the same vector under the env's symmetry g."""
    return jnp.take(values, jnp.asarray(env.action_permutations)[g], axis=-1)


def inverse_transform_policy(env, values: jax.Array, g: jax.Array) -> jax.Array:
    """Undo `transform_policy(env, ., g)`: e.g. map a net's policy on a transformed position
    back to the original one."""
    inverse = inverse_permutations(env.action_permutations)
    return jnp.take(values, jnp.asarray(inverse)[g], axis=-1)


def transform_action(env, action: jax.Array, g: jax.Array) -> jax.Array:
    """int[]: where `action` goes under g (a stone on `action` lands on this action)."""
    inverse = inverse_permutations(env.action_permutations)
    return jnp.asarray(inverse)[g, action]


def transform_board(board: jax.Array, g: jax.Array) -> jax.Array:
    """board: [N, N] -> the board under the D4 element g."""
    n = board.shape[-1]
    flat = jnp.take(board.reshape(n * n), jnp.asarray(d4_permutations(n))[g], axis=0)
    return flat.reshape(n, n)


def inverse_transform_board(board: jax.Array, g: jax.Array) -> jax.Array:
    """Undo `transform_board(., g)`."""
    return transform_board(board, d4_inverse(g))


def transform_planes(planes: jax.Array, g: jax.Array) -> jax.Array:
    """planes: [N, N, C] -> every plane under the D4 element g."""
    n, _, c = planes.shape
    flat = jnp.take(planes.reshape(n * n, c), jnp.asarray(d4_permutations(n))[g], axis=0)
    return flat.reshape(n, n, c)


def inverse_transform_planes(planes: jax.Array, g: jax.Array) -> jax.Array:
    """Undo `transform_planes(., g)`."""
    return transform_planes(planes, d4_inverse(g))
