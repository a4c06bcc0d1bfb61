"""The 8 symmetries of the square (dihedral group D4) on boards, observations and policies.

Element `g` in 0..7: rotate the board `g % 4` quarter turns counter-clockwise (as
`np.rot90`), then, if `g >= 4`, mirror it left-right. Each element is applied as a gather
with a static permutation table, so `g` may be a traced (even vmapped, per-board) int32.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

NUM_SYMMETRIES = 8


@functools.lru_cache(maxsize=None)
def permutations(board_size: int) -> np.ndarray:
    """int32[8, N*N]: `perm[g][i]` is the source cell whose content lands on cell i under g."""
    n = board_size
    cells = np.arange(n * n, dtype=np.int32).reshape(n, n)
    tables = []
    for g in range(NUM_SYMMETRIES):
        t = np.rot90(cells, g % 4)
        if g >= 4:
            t = np.fliplr(t)
        tables.append(t.reshape(-1))
    return np.stack(tables)


@functools.lru_cache(maxsize=None)
def _inverse_permutations(board_size: int) -> np.ndarray:
    return np.argsort(permutations(board_size), axis=1).astype(np.int32)


def inverse(g: jax.Array) -> jax.Array:
    """The element undoing g: rotations invert to the opposite rotation, mirrors to themselves."""
    g = jnp.asarray(g, jnp.int32)
    return jnp.where(g >= 4, g, (4 - g) % 4)


def transform_policy(policy: jax.Array, g: jax.Array) -> jax.Array:
    """policy: [N*N] (any dtype; a logits, probability or mask vector) -> the same under g."""
    n = int(round(policy.shape[-1] ** 0.5))
    return jnp.take(policy, jnp.asarray(permutations(n))[g], axis=-1)


def inverse_transform_policy(policy: jax.Array, g: jax.Array) -> jax.Array:
    """Undo `transform_policy(., g)`: e.g. map a net's policy on a transformed board back."""
    n = int(round(policy.shape[-1] ** 0.5))
    return jnp.take(policy, jnp.asarray(_inverse_permutations(n))[g], axis=-1)


def transform_board(board: jax.Array, g: jax.Array) -> jax.Array:
    """board: [N, N] -> the board under g."""
    n = board.shape[-1]
    return transform_policy(board.reshape(n * n), g).reshape(n, n)


def inverse_transform_board(board: jax.Array, g: jax.Array) -> jax.Array:
    """Undo `transform_board(., g)`."""
    n = board.shape[-1]
    return inverse_transform_policy(board.reshape(n * n), g).reshape(n, n)


def transform_observation(obs: jax.Array, g: jax.Array) -> jax.Array:
    """obs: [N, N, C] -> every plane under g."""
    n, _, c = obs.shape
    flat = jnp.take(obs.reshape(n * n, c), jnp.asarray(permutations(n))[g], axis=0)
    return flat.reshape(n, n, c)


def inverse_transform_observation(obs: jax.Array, g: jax.Array) -> jax.Array:
    """Undo `transform_observation(., g)`."""
    n, _, c = obs.shape
    flat = jnp.take(obs.reshape(n * n, c), jnp.asarray(_inverse_permutations(n))[g], axis=0)
    return flat.reshape(n, n, c)


def transform_action(action: jax.Array, g: jax.Array, board_size: int) -> jax.Array:
    """int[]: where cell `action` goes under g (so `transform_board` of a board with a stone
    at `action` has it at `transform_action(action, g, N)`)."""
    inv = jnp.asarray(_inverse_permutations(board_size))
    return inv[g, action]


def transform_state(state, g: jax.Array):
    """A single `State` under g: its board and its last moves (-1 stays -1); the rest is
    unchanged (colours, counts and outcomes are invariant)."""
    n = state.board.shape[-1]
    moved = transform_action(jnp.maximum(state.last_moves, 0), g, n)
    return state.replace(board=transform_board(state.board, g),
                         last_moves=jnp.where(state.last_moves >= 0, moved, -1))
