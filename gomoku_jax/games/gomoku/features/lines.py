"""The 4 lines through every cell of a board, as static shifts (no Python loop over cells)."""

from __future__ import annotations

import functools
import operator
from typing import Sequence

import jax
import jax.numpy as jnp

from gomoku_jax.games.gomoku.rules import DIRECTIONS

# Value of an off-board cell in a line window: neither a stone nor empty, it blocks like an
# opponent stone does.
WALL = 2


def line_planes(board: jax.Array, reach: int) -> jax.Array:
    """The cells at offsets -reach..reach along each direction, for every cell.

    Offset-major, so that everything built on it is elementwise arithmetic on whole planes
    (which XLA vectorises well), not reductions over a short minor axis.

    Args:
      board: int8[N, N] (+1 black, -1 white, 0 empty).
      reach: how far to look on each side.
    Returns:
      int8[2 * reach + 1, 4, N, N]: `out[reach + o, d, r, c]` is the cell at
      `(r, c) + o * DIRECTIONS[d]`, or WALL off the board; `out[reach]` is the board itself.
      Directions: horizontal, vertical, diagonal, anti-diagonal.
    """
    n = board.shape[-1]
    padded = jnp.pad(board.astype(jnp.int8), reach, constant_values=WALL)
    offsets = []
    for o in range(-reach, reach + 1):
        offsets.append(jnp.stack([
            jax.lax.slice(padded, (reach + o * dr, reach + o * dc),
                          (reach + o * dr + n, reach + o * dc + n))
            for dr, dc in DIRECTIONS]))
    return jnp.stack(offsets)


def any_of(planes: Sequence[jax.Array]) -> jax.Array:
    return functools.reduce(operator.or_, planes)


def all_of(planes: Sequence[jax.Array]) -> jax.Array:
    return functools.reduce(operator.and_, planes)


def count_of(planes: Sequence[jax.Array]) -> jax.Array:
    """int8 elementwise count of the True entries across `planes` (at most 127 of them)."""
    return functools.reduce(operator.add, [p.astype(jnp.int8) for p in planes])


def run_length(planes: Sequence[jax.Array]) -> jax.Array:
    """int8: how many of `planes`, in order, are True before the first False."""
    still, total = None, None
    for p in planes:
        still = p if still is None else still & p
        total = still.astype(jnp.int8) if total is None else total + still
    return total
