"""DeepGomoku's HeuristicScore (seed 003): a line-based threat score with exponents κ0, κ1.

A candidate cell's value along one line comes from its adversary-free range (the stretch
of the line through the cell with no opponent stone and no edge): c is the largest number
of own stones in any window of k cells (k = 5) that lies in that range and contains the
cell, n the number of such windows reaching c, and the line's score is `c * n ** (1/κ1)`.
The cell's total over its lines is `(Σ score_i ** κ0) ** (1/κ0)`. Defaults κ0 = 1.6, κ1 = 5.

Line vectors use the seed's encoding: 8 entries, index i < 4 the cell at distance 4 - i on
one side, index i >= 4 the cell at distance i - 3 on the other; 0 empty, 1 own, 2 opponent
(or edge). Functions work on any leading batch axes and are jittable. On a board,
`heuristic_score_map` looks each line's term up in a table of every line window, built from
the same definition (`score_table`, `line_score_table`).

Two numbers printed in the seed's notebook don't follow from its own definition (kept
here as defined): for [0,1,1,0,1,0,0,2] the notebook prints cscore (3, 2) and score 3.446,
the definition gives (3, 1) and 3.0 (only one window holds three stones); for
[0,0,1,1,0,0,0,2] it prints 2.297 (c=2, n=2), the definition gives 2.491 (2, 3).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax import configs
from gomoku_jax.games.gomoku.features.lines import (
    all_of,
    all_windows,
    count_of,
    line_planes,
    window_index,
)

OWN, OPPONENT = 1, 2


@dataclasses.dataclass(frozen=True)
class HeuristicScoreConfig:
    """κ0 combines the lines of a cell, κ1 weighs how many windows reach the best count."""

    kappa0: float = 1.6
    kappa1: float = 5.0

    def __post_init__(self):
        configs.validate(self)
        if self.kappa0 <= 0 or self.kappa1 <= 0:  # an open range: past what `Bounds` says
            raise ValueError(f"kappa0 and kappa1 must be > 0, got {self.kappa0}, {self.kappa1}")


def _full_line(line: jax.Array) -> list[jax.Array]:
    """Seed vector int[..., 2h] -> the 2h + 1 cells in board order, centre (empty) included,
    as a list of int[...] arrays (one per offset)."""
    half = line.shape[-1] // 2
    cells = [line[..., i] for i in range(line.shape[-1])]
    return cells[:half] + [jnp.zeros_like(cells[0])] + cells[half:]


def _free_range(cells: Sequence[jax.Array], xp=jnp) -> list[jax.Array]:
    """Per cell of the line, bool: in the adversary-free stretch through the centre. (xp:
    the array module, jax.numpy or numpy.)"""
    half = len(cells) // 2
    free = [c != OPPONENT for c in cells]
    right, left = [], []
    for o in range(half + 1, len(cells)):
        right.append(free[o] if not right else right[-1] & free[o])
    for o in range(half - 1, -1, -1):
        left.append(free[o] if not left else left[-1] & free[o])
    return left[::-1] + [xp.ones_like(free[half])] + right


def _cscore_cells(cells: Sequence[jax.Array], width: int, xp=jnp
                  ) -> tuple[jax.Array, jax.Array]:
    """(c, n) int32 of a line given cell by cell (centre in the middle), windows of `width`
    containing the centre and inside the free range. xp: the array module (jax.numpy, or
    numpy to build `score_table` without compiling)."""
    half = len(cells) // 2
    in_range = _free_range(cells, xp)
    own = [c == OWN for c in cells]
    counts, valid = [], []
    for s in range(max(0, half - width + 1), min(half, len(cells) - width) + 1):
        valid.append(all_of(in_range[s:s + width]))
        counts.append(count_of(own[s:s + width]))
    c = functools.reduce(xp.maximum, [xp.where(v, n, -1) for v, n in zip(valid, counts)])
    n = count_of([v & (m == c) for v, m in zip(valid, counts)])
    c = xp.maximum(c, 0)  # no window fits in the range: (0, 0)
    return c.astype(xp.int32), n.astype(xp.int32)


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


# Largest table `heuristic_score_map` builds on its own (entries): 3 ** (2k - 2) for k =
# win_length, so k <= 7 looks up and larger k scans.
MAX_TABLE_SIZE = 3 ** 12
METHODS = ("auto", "table", "scan")


def _check_table_size(win_length: int, reach: int) -> None:
    if 3 ** (2 * reach) > MAX_TABLE_SIZE:
        raise ValueError(f"no HeuristicScore table for win_length {win_length} with reach "
                         f"{reach}: 3 ** {2 * reach} entries > MAX_TABLE_SIZE "
                         f"({MAX_TABLE_SIZE}); use method='scan'")


def score_table(win_length: int = 5) -> np.ndarray:
    """uint8[3 ** (2k - 2)]: `16 * c + n` (the (c, n) of `cscore` with windows of k) of every
    line window of reach k - 1, indexed by `lines.window_index` (whose digits are this
    module's 0 empty, 1 own, 2 opponent or edge). Built once per k by `_cscore_cells`, the
    definition the scan runs, in NumPy; read-only, cached. ValueError beyond
    MAX_TABLE_SIZE."""
    _check_table_size(win_length, win_length - 1)
    return _score_table(win_length)


@functools.lru_cache(maxsize=None)
def _score_table(k: int) -> np.ndarray:
    c, n = _cscore_cells(list(all_windows(k - 1)), k, np)
    table = (16 * c + n).astype(np.uint8)  # c <= k - 1 and n <= k: fits while k <= 15
    table.flags.writeable = False
    return table


def line_score_table(win_length: int = 5, config: HeuristicScoreConfig = HeuristicScoreConfig(),
                     reach: Optional[int] = None) -> np.ndarray:
    """float32[3 ** (2 * reach)]: `score ** κ0`, a line's term of the total, for every line
    window of `reach` (default k - 1), from `score_table` (computed in float64, rounded
    once). With a larger reach (k, as `threats` looks) the outer cells are ignored, so one
    `window_index` serves both lookups. Read-only, cached; ValueError beyond
    MAX_TABLE_SIZE."""
    inner = win_length - 1
    reach = inner if reach is None else reach
    if reach < inner:
        raise ValueError(f"reach must be >= win_length - 1 = {inner}, got {reach}")
    _check_table_size(win_length, reach)
    return _line_score_table(win_length, config, reach)


@functools.lru_cache(maxsize=None)
def _line_score_table(k: int, config: HeuristicScoreConfig, reach: int) -> np.ndarray:
    packed = _score_table(k)
    inner = k - 1
    if reach > inner:  # the inner window's digits are digits reach - inner .. of the index
        index = np.arange(3 ** (2 * reach)) // 3 ** (reach - inner) % 3 ** (2 * inner)
        packed = packed[index]
    c, n = (packed >> 4).astype(np.float64), (packed & 15).astype(np.float64)
    table = ((c * n ** (1.0 / config.kappa1)) ** config.kappa0).astype(np.float32)
    table.flags.writeable = False
    return table


def lookup_heuristic_score(index: jax.Array, board: jax.Array, win_length: int = 5,
                           config: HeuristicScoreConfig = HeuristicScoreConfig(),
                           reach: Optional[int] = None) -> jax.Array:
    """float32[N, N]: `heuristic_score_map` from `index = window_index(board, colour,
    reach)` (int32[4, N, N]; reach default k - 1) by one gather from `line_score_table`."""
    table = jnp.asarray(line_score_table(win_length, config, reach))
    terms = jnp.take(table, index, mode="clip")  # [4, N, N]
    # x ** (1/κ0) as exp(log(x) / κ0): XLA's CPU pow is a scalar call per element, exp and
    # log are vectorised (about 10% of a whole cell-value lookup); x = 0 still gives 0.
    total = jnp.exp(jnp.log(jnp.sum(terms, axis=0)) * (1.0 / config.kappa0))
    return jnp.where(board == 0, total, 0.0)


def heuristic_score_map(board: jax.Array, colour, win_length: int = 5,
                        config: HeuristicScoreConfig = HeuristicScoreConfig(),
                        method: str = "auto") -> jax.Array:
    """float32[N, N]: HeuristicScore of every empty cell for `colour` (0 on occupied cells).

    Looks `win_length - 1` cells each way along the 4 lines (the seed's 8-vectors for
    k = 5), with opponent stones and off-board cells both encoded as 2.

    Args:
      board: int8[N, N]; colour: +1 or -1 (may be traced); win_length: k (static).
      method: "table" (`lookup_heuristic_score`: one gather per cell and line), "scan"
        (compute (c, n) on the line planes, then the scores), or "auto": "table" while it
        has at most MAX_TABLE_SIZE entries (k <= 7), else "scan". The two agree to float32
        rounding (the table's per-line terms are computed in float64).
    Raises:
      ValueError: an unknown method, or "table" for a k too large for one.
    """
    reach = win_length - 1
    if method not in METHODS:
        raise ValueError(f"heuristic_score_map method must be one of {METHODS}, got "
                         f"{method!r}")
    if method == "table" or (method == "auto" and 3 ** (2 * reach) <= MAX_TABLE_SIZE):
        return lookup_heuristic_score(window_index(board, colour, reach), board, win_length,
                                      config)
    c, n = _cscore_scan(board, colour, win_length)
    total = _combine(jnp.moveaxis(_score_from(c, n, config.kappa1), 0, -1), config.kappa0)
    return jnp.where(board == 0, total, 0.0)


def _cscore_scan(board: jax.Array, colour, win_length: int) -> tuple[jax.Array, jax.Array]:
    """(c, n) int32[4, N, N] of every cell and line, from the line planes."""
    reach = win_length - 1
    lines = line_planes(board, reach)  # [2k-1, 4, N, N], WALL off the board
    colour = jnp.asarray(colour, jnp.int8)
    cells = [jnp.where(lines[o] == colour, OWN, jnp.where(lines[o] == 0, 0, OPPONENT))
             for o in range(2 * reach + 1)]
    cells[reach] = jnp.zeros_like(cells[reach])  # the candidate cell itself
    return _cscore_cells(cells, win_length)
