"""The 4 lines through every cell of a board, as static shifts (no Python loop over cells),
and the same lines as base-3 (or base-4) window numbers for table lookups."""

from __future__ import annotations

import functools
import operator
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.games.gomoku.config import DIRECTIONS

# Value of an off-board cell in a line window: neither a stone nor empty, it blocks like an
# opponent stone does.
WALL = 2

# A cell of a line window seen from one colour, as a base-3 digit (see `window_index`);
# WALL_DIGIT only in the base-4 windows that tell the edge apart (the caro rules).
EMPTY_DIGIT, OWN_DIGIT, BLOCKED_DIGIT, WALL_DIGIT = 0, 1, 2, 3


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


def window_index(board: jax.Array, colour, reach: int, walls: bool = False) -> jax.Array:
    """Every cell's 4 line windows as base-3 (base-4 with `walls`) numbers, the index of a
    lookup table.

    The window of a cell along a direction is the 2 * reach cells at offsets -reach..-1 and
    1..reach (the cell itself left out), each seen from `colour`: EMPTY_DIGIT, OWN_DIGIT (a
    `colour` stone) or BLOCKED_DIGIT (an opponent stone, and off the board unless `walls`:
    then WALL_DIGIT, for the caro rules, where the edge does not block like a stone). Digit
    j (place value base**j) is offset j - reach for j < reach and offset j - reach + 1
    after, so `all_windows(reach, walls)[:, i]` is the window whose index is i.

    Args:
      board: int8[N, N] (+1 black, -1 white, 0 empty); colour: +1 or -1 (may be traced).
      reach: how far to look on each side (static); base ** (2 * reach) must fit in int32.
      walls: tell the edge apart from an opponent stone (static).
    Returns:
      int32[4, N, N] in [0, base ** (2 * reach)); directions as in `line_planes`.
    """
    n = board.shape[-1]
    base = 4 if walls else 3
    padded = jnp.pad(board.astype(jnp.int8), reach, constant_values=WALL)
    colour = jnp.asarray(colour, jnp.int8)
    digits = jnp.where(padded == colour, OWN_DIGIT,
                       jnp.where(padded == 0, EMPTY_DIGIT,
                                 jnp.where(padded == WALL, WALL_DIGIT if walls else BLOCKED_DIGIT,
                                           BLOCKED_DIGIT))).astype(jnp.int32)
    offsets = [o for o in range(-reach, reach + 1) if o != 0]
    out = []
    for dr, dc in DIRECTIONS:
        out.append(functools.reduce(operator.add, [
            (base ** j) * jax.lax.slice(digits, (reach + o * dr, reach + o * dc),
                                        (reach + o * dr + n, reach + o * dc + n))
            for j, o in enumerate(offsets)]))
    return jnp.stack(out)


def all_windows(reach: int, walls: bool = False) -> np.ndarray:
    """int8[2 * reach + 1, base ** (2 * reach)]: column i is the window of index i (see
    `window_index`; base 3, or 4 with `walls`) cell by cell in line order, offsets
    -reach..reach, as digits; the centre (offset 0, row `reach`) is EMPTY_DIGIT."""
    base = 4 if walls else 3
    size = base ** (2 * reach)
    digits = [np.tile(np.repeat(np.arange(base, dtype=np.int8), base ** j),
                      size // base ** (j + 1))
              for j in range(2 * reach)]
    centre = np.full_like(digits[0], EMPTY_DIGIT)
    return np.stack(digits[:reach] + [centre] + digits[reach:])


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
