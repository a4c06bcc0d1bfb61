"""Uniformly random legal moves, cheap enough for millions of playout steps per second."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp


def pick_legal(u: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """The legal action at quantile `u` of the legal cells, in cell order.

    With `u ~ U[0, 1)` this is a uniform draw over the legal actions from a single random
    number. It counts legal cells row by row and then within the chosen row (two prefix sums
    of length ~sqrt(A) instead of one of length A, which XLA's CPU backend makes quadratic).

    Args:
      u: float32[...] in [0, 1).
      legal_action_mask: bool[..., A], any A. If nothing is legal the result is 0.
    Returns:
      int32[...] actions.
    """
    num_actions = legal_action_mask.shape[-1]
    n = math.isqrt(num_actions - 1) + 1  # ceil(sqrt(A)): rows of n cells, the last padded
    grid = jnp.pad(legal_action_mask, [(0, 0)] * (legal_action_mask.ndim - 1)
                   + [(0, n * n - num_actions)])
    grid = grid.reshape(*legal_action_mask.shape[:-1], n, n).astype(jnp.int32)
    per_row = grid.sum(-1)  # [..., N]
    through_row = jnp.cumsum(per_row, axis=-1)  # legal cells in rows 0..r
    target = jnp.floor(u * through_row[..., -1]).astype(jnp.int32)  # 0-based rank of the pick
    row = jnp.argmax(through_row > target[..., None], axis=-1)
    before_row = jnp.take_along_axis(through_row - per_row, row[..., None], -1)[..., 0]
    row_mask = jnp.take_along_axis(grid, row[..., None, None], -2)[..., 0, :]  # [..., N]
    col = jnp.argmax(jnp.cumsum(row_mask, axis=-1) > (target - before_row)[..., None], axis=-1)
    return (row * n + col).astype(jnp.int32)


def random_legal_action(key: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """int32[...]: a uniformly random legal action for each mask in bool[..., A].

    Draws one float per mask from `key`; pass a whole batch of masks rather than vmapping
    over keys, which would hash a key per board.
    """
    u = jax.random.uniform(key, legal_action_mask.shape[:-1])
    return pick_legal(u, legal_action_mask)
