"""DeepGomoku's HeuristicScore (seed 003): a line-based threat score with exponents κ0, κ1.

A candidate cell's value along one line comes from its adversary-free range (the stretch
of the line through the cell with no opponent stone and no edge): c is the largest number
of own stones in any window of k cells (k = 5) that lies in that range and contains the
cell, n the number of such windows reaching c, and the line's score is `c * n ** (1/κ1)`.
The cell's total over its lines is `(Σ score_i ** κ0) ** (1/κ0)`. Defaults κ0 = 1.6, κ1 = 5.

Line vectors use the seed's encoding: 8 entries, index i < 4 the cell at distance 4 - i on
one side, index i >= 4 the cell at distance i - 3 on the other; 0 empty, 1 own, 2 opponent
(or edge). Functions work on any leading batch axes and are jittable.

Two numbers printed in the seed's notebook don't follow from its own definition (kept
here as defined): for [0,1,1,0,1,0,0,2] the notebook prints cscore (3, 2) and score 3.446,
the definition gives (3, 1) and 3.0 (only one window holds three stones); for
[0,0,1,1,0,0,0,2] it prints 2.297 (c=2, n=2), the definition gives 2.491 (2, 3).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Sequence

import jax
import jax.numpy as jnp

from gomoku_jax.games.gomoku.features.lines import all_of, count_of, line_planes

OWN, OPPONENT = 1, 2


@dataclasses.dataclass(frozen=True)
class HeuristicScoreConfig:
    """κ0 combines the lines of a cell, κ1 weighs how many windows reach the best count."""

    kappa0: float = 1.6
    kappa1: float = 5.0

    def __post_init__(self):
        if self.kappa0 <= 0 or self.kappa1 <= 0:
            raise ValueError(f"kappa0 and kappa1 must be > 0, got {self.kappa0}, {self.kappa1}")


def _full_line(line: jax.Array) -> list[jax.Array]:
    """Seed vector int[..., 2h] -> the 2h + 1 cells in board order, centre (empty) included,
    as a list of int[...] arrays (one per offset)."""
    half = line.shape[-1] // 2
    cells = [line[..., i] for i in range(line.shape[-1])]
    return cells[:half] + [jnp.zeros_like(cells[0])] + cells[half:]


def _free_range(cells: Sequence[jax.Array]) -> list[jax.Array]:
    """Per cell of the line, bool: in the adversary-free stretch through the centre."""
    half = len(cells) // 2
    free = [c != OPPONENT for c in cells]
    right, left = [], []
    for o in range(half + 1, len(cells)):
        right.append(free[o] if not right else right[-1] & free[o])
    for o in range(half - 1, -1, -1):
        left.append(free[o] if not left else left[-1] & free[o])
    return left[::-1] + [jnp.ones_like(free[half])] + right


def _cscore_cells(cells: Sequence[jax.Array], width: int) -> tuple[jax.Array, jax.Array]:
    """(c, n) int32 of a line given cell by cell (centre in the middle), windows of `width`
    containing the centre and inside the free range."""
    half = len(cells) // 2
    in_range = _free_range(cells)
    own = [c == OWN for c in cells]
    counts, valid = [], []
    for s in range(max(0, half - width + 1), min(half, len(cells) - width) + 1):
        valid.append(all_of(in_range[s:s + width]))
        counts.append(count_of(own[s:s + width]))
    c = functools.reduce(jnp.maximum, [jnp.where(v, n, -1) for v, n in zip(valid, counts)])
    n = count_of([v & (m == c) for v, m in zip(valid, counts)])
    c = jnp.maximum(c, 0)  # no window fits in the range: (0, 0)
    return c.astype(jnp.int32), n.astype(jnp.int32)


def _score_from(c: jax.Array, n: jax.Array, kappa1: float) -> jax.Array:
    return c.astype(jnp.float32) * n.astype(jnp.float32) ** (1.0 / kappa1)


def f_range(line: jax.Array) -> jax.Array:
    """bool[..., 9]: the adversary-free range of a seed line vector int[..., 8], as a mask
    over the line in board order with the candidate cell at index 4 (the seed returns the
    sub-line itself, whose length varies; a mask keeps shapes static under jit)."""
    return jnp.stack(_free_range(_full_line(jnp.asarray(line))), axis=-1)


def cscore(line: jax.Array, width: int = 5) -> tuple[jax.Array, jax.Array]:
    """(c, n): the best own-stone count of a `width`-window in the free range through the
    cell, and how many windows reach it. int32[...] each; (0, 0) when no window fits."""
    return _cscore_cells(_full_line(jnp.asarray(line)), width)


def score(line: jax.Array, kappa1: float = 5.0, width: int = 5) -> jax.Array:
    """float32[...]: `c * n ** (1/κ1)` of a seed line vector int[..., 8]."""
    return _score_from(*cscore(line, width), kappa1)


def total_score(lines: jax.Array, kappa0: float = 1.6, kappa1: float = 5.0,
                width: int = 5) -> jax.Array:
    """float32[...]: `(Σ_i score_i ** κ0) ** (1/κ0)` over lines int[..., M, 8]."""
    return _combine(score(lines, kappa1, width), kappa0)


def _combine(scores: jax.Array, kappa0: float) -> jax.Array:
    return jnp.sum(scores ** kappa0, axis=-1) ** (1.0 / kappa0)


def heuristic_score_map(board: jax.Array, colour, win_length: int = 5,
                        config: HeuristicScoreConfig = HeuristicScoreConfig()) -> jax.Array:
    """float32[N, N]: HeuristicScore of every empty cell for `colour` (0 on occupied cells).

    Looks `win_length - 1` cells each way along the 4 lines (the seed's 8-vectors for
    k = 5), with opponent stones and off-board cells both encoded as 2.

    Args:
      board: int8[N, N]; colour: +1 or -1 (may be traced); win_length: k (static).
    """
    reach = win_length - 1
    lines = line_planes(board, reach)  # [2k-1, 4, N, N], WALL off the board
    colour = jnp.asarray(colour, jnp.int8)
    cells = [jnp.where(lines[o] == colour, OWN, jnp.where(lines[o] == 0, 0, OPPONENT))
             for o in range(2 * reach + 1)]
    cells[reach] = jnp.zeros_like(cells[reach])  # the candidate cell itself
    c, n = _cscore_cells(cells, win_length)  # [4, N, N]
    total = _combine(jnp.moveaxis(_score_from(c, n, config.kappa1), 0, -1), config.kappa0)
    return jnp.where(board == 0, total, 0.0)
