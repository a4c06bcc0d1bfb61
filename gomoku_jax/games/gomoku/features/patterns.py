"""Threat patterns (seed 000 `detect_patterns` / `get_pattern_features`, seed 001 evaluate).

For every empty cell, each colour and each of the 4 lines through the cell: what a stone of
that colour placed there makes along that line. Names follow k = 5 (`win_length`); for other
k the same definitions hold with k in place of 5:

  FIVE          a winning line through the cell (k or more in a row; exactly k for "exact5")
  OPEN_FOUR     two or more distinct cells of the line would each complete a five next move
                (the straight four _xxxx_, or two fours sharing the line)
  FOUR          exactly one such cell (a closed four xxxx| or a broken one xx_xx, x_xxx)
  OPEN_THREE    one more stone in the line can make a straight four: a (k+1)-window with
                both ends empty whose inner k-1 cells hold k-2 stones and one empty cell,
                e.g. _xxx_, _x_xx_ (split threes included)
  CLOSED_THREE  a k-window free of opponent stones and edges holding k-2 stones, no open three
  OPEN_TWO      a (k+1)-window with both ends empty whose inner cells hold k-3 stones
  NONE          none of these

The cell's own stone is counted. Off-board cells block like opponent stones. Under "exact5"
an overline is not a five, so windows whose completion would make one are not counted.
Everything is pure JAX over `board: int8[N, N]`; vmap over boards. `threats` looks the codes
up in a table of every line window, built from the direct evaluation `threats_scan`.
"""

from __future__ import annotations

import dataclasses
import functools
import operator

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax import configs
from gomoku_jax.games.gomoku.features.lines import (
    BLOCKED_DIGIT,
    OWN_DIGIT,
    WALL,
    all_windows,
    any_of,
    count_of,
    line_planes,
    run_length,
    window_index,
)
from gomoku_jax.games.gomoku.features.proximity import ProximityConfig, proximity_mask

NONE, OPEN_TWO, CLOSED_THREE, OPEN_THREE, FOUR, OPEN_FOUR, FIVE = range(7)
PATTERN_NAMES = ("none", "open_two", "closed_three", "open_three", "four", "open_four", "five")
NUM_PATTERNS = len(PATTERN_NAMES)


@dataclasses.dataclass(frozen=True)
class PatternConfig:
    """Weights of the pattern heat map (seed 000 `get_pattern_features`).

    Attributes:
      weights: score of each pattern code, indexed like PATTERN_NAMES (summed over the 4
        lines of a cell).
      defence_weight: the opponent's patterns count this much more (seed: 1.2).
      fallback: when no pattern exists anywhere, the map is `fallback * proximity` (seed: 0.3).
      proximity: the proximity mask that multiplies the map (seed 000 level 1).
    """

    weights: tuple[float, ...] = (0.0, 1.0, 2.0, 8.0, 10.0, 50.0, 100.0)
    defence_weight: float = 1.2
    fallback: float = 0.3
    proximity: ProximityConfig = ProximityConfig()

    def __post_init__(self):
        configs.validate(self)
        if len(self.weights) != NUM_PATTERNS:
            raise ValueError(f"weights needs {NUM_PATTERNS} entries {PATTERN_NAMES}, got "
                             f"{len(self.weights)}")


def _windows(reach: int, width: int, centre_range: tuple[int, int]) -> list[int]:
    """Start indices of the windows of `width` whose cells [lo, hi) of the window hold the
    centre (index `reach` of a line of 2 * reach + 1)."""
    lo, hi = centre_range
    return [s for s in range(0, 2 * reach + 2 - width) if s + lo <= reach < s + hi]


# Largest lookup table `threats` builds on its own (entries, one byte each): 3 ** (2k) for
# k = win_length, so k <= 6 looks patterns up and larger k scans the lines.
MAX_TABLE_SIZE = 3 ** 12
METHODS = ("auto", "table", "scan")


def _line_codes(lines: jax.Array, colour, k: int, exact: bool, xp=jnp) -> jax.Array:
    """int8[...]: the pattern code a `colour` stone on the centre of each line makes along
    it, whatever the centre holds. The definition of the patterns (the module doc) in code.

    lines: int8[2k + 1, ...], the cells at offsets -k..k of each line (board values, WALL
    off the board), as `line_planes(board, k)`; any trailing shape. xp: the array module,
    jax.numpy (`threats_scan`) or numpy (to build `threat_table` without compiling).
    """
    reach = k
    width = 2 * reach + 1
    colour = xp.asarray(colour, xp.int8)
    # Per offset along the line, bool[...]; the centre holds the hypothetical stone.
    own = [lines[o] == colour for o in range(width)]
    blocked = [(lines[o] == -colour) | (lines[o] == WALL) for o in range(width)]
    own[reach] = xp.ones_like(own[reach])
    blocked[reach] = xp.zeros_like(blocked[reach])
    empty = [~own[o] & ~blocked[o] for o in range(width)]

    run = (1 + run_length(own[reach + 1:]) + run_length(own[reach - 1::-1]))
    five = (run == k) if exact else (run >= k)

    def flanks_ok(start: int, size: int) -> jax.Array:
        """Under exact5, own stones just outside the window would make an overline."""
        if not exact:
            return True
        return ~own[start - 1] & ~own[start + size]

    # k-windows through the cell: which cells would complete a five.
    completes = [xp.zeros_like(five) for _ in range(width)]
    closed_three = xp.zeros_like(five)
    for s in _windows(reach, k, (0, k)):
        free = ~any_of(blocked[s:s + k])
        count = count_of(own[s:s + k])
        hit = free & (count == k - 1) & flanks_ok(s, k)
        for o in range(s, s + k):
            completes[o] = completes[o] | (hit & empty[o])
        closed_three = closed_three | (free & (count == k - 2) & flanks_ok(s, k))
    completions = count_of(completes)

    # (k+1)-windows with both ends empty and the cell inside: open threes and twos.
    open_three = xp.zeros_like(five)
    open_two = xp.zeros_like(five)
    for s in _windows(reach, k + 1, (1, k)):
        clear = (empty[s] & empty[s + k] & flanks_ok(s, k + 1)
                 & ~any_of(blocked[s + 1:s + k]))
        count = count_of(own[s + 1:s + k])
        open_three = open_three | (clear & (count == k - 2))
        open_two = open_two | (clear & (count == k - 3))

    code = xp.select(
        [five, completions >= 2, completions == 1, open_three, closed_three, open_two],
        [FIVE, OPEN_FOUR, FOUR, OPEN_THREE, CLOSED_THREE, OPEN_TWO], NONE)
    return code.astype(xp.int8)


@functools.lru_cache(maxsize=None)
def _threat_table(k: int, exact: bool) -> np.ndarray:
    windows = all_windows(k)  # [2k + 1, 3 ** (2k)] digits
    lines = np.where(windows == OWN_DIGIT, 1, np.where(windows == BLOCKED_DIGIT, -1, 0))
    # The very code `threats_scan` runs, in NumPy: the table is a constant of the program
    # (also when first asked for inside a jit trace), computed once per (k, rule).
    table = _line_codes(lines.astype(np.int8), 1, k, exact, np)
    table.flags.writeable = False
    return table


def threat_table(win_length: int = 5, rule: str = "freestyle") -> np.ndarray:
    """int8[3 ** (2k)]: the pattern code of every line window, indexed by `window_index`
    with reach k (the 2k cells around a cell on one line, seen from the stone's colour).

    Built once per (k, rule) by running the scan's definition (`_line_codes`) on every
    window, so table and scan cannot disagree; read-only, cached. ValueError when it would
    have more than MAX_TABLE_SIZE entries.
    """
    if 3 ** (2 * win_length) > MAX_TABLE_SIZE:
        raise ValueError(f"no threat table for win_length {win_length}: 3 ** {2 * win_length}"
                         f" entries > MAX_TABLE_SIZE ({MAX_TABLE_SIZE}); use method='scan'")
    return _threat_table(win_length, rule == "exact5")


def threats(board: jax.Array, colour, win_length: int = 5, rule: str = "freestyle",
            method: str = "auto") -> jax.Array:
    """int8[N, N, 4]: the pattern code (see the module doc) a stone of `colour` would make
    on each empty cell along each line (horizontal, vertical, diagonal, anti-diagonal);
    NONE on occupied cells.

    A cell's code on a line depends only on the k cells on each side of it (WALL off the
    board blocks like an opponent stone), so it is looked up: one base-3 window number per
    cell and line (`lines.window_index`), one gather from `threat_table` (3 ** (2k) bytes).

    Args:
      board: int8[N, N]; colour: +1 black or -1 white (may be traced).
      win_length, rule: the game's k and rule (static).
      method: "table" (look up), "scan" (`threats_scan`: evaluate the patterns on the line
        planes directly, the table's source), or "auto": "table" while the table has at most
        MAX_TABLE_SIZE entries (k <= 6), else "scan". Both give the same codes.
    Raises:
      ValueError: an unknown method, or "table" for a k too large for one.
    """
    if not use_threat_table(win_length, method):
        return threats_scan(board, colour, win_length, rule)
    return lookup_threats(window_index(board, colour, win_length), board, win_length, rule)


def use_threat_table(win_length: int, method: str) -> bool:
    """Whether `method` ("auto", "table" or "scan") means the threat table for k =
    `win_length`: "auto" does while the table has at most MAX_TABLE_SIZE entries. ValueError
    for an unknown method."""
    if method not in METHODS:
        raise ValueError(f"threats method must be one of {METHODS}, got {method!r}")
    return method == "table" or (method == "auto" and 3 ** (2 * win_length) <= MAX_TABLE_SIZE)


def lookup_threats(index: jax.Array, board: jax.Array, win_length: int = 5,
                   rule: str = "freestyle") -> jax.Array:
    """int8[N, N, 4]: `threats` from `index = window_index(board, colour, k)` (int32[4, N,
    N]), by one gather from `threat_table`."""
    table = jnp.asarray(threat_table(win_length, rule))
    # Every index is in range; "clip" is XLA's own gather semantics, so unlike the default
    # mode no wrapping of negative indices is emitted (about 20% of a lookup on CPU).
    codes = jnp.take(table, index, mode="clip")
    codes = jnp.where(board != 0, jnp.int8(NONE), codes)  # [4, N, N]
    return jnp.moveaxis(codes, 0, -1)


def threats_scan(board: jax.Array, colour, win_length: int = 5, rule: str = "freestyle"
                 ) -> jax.Array:
    """int8[N, N, 4]: `threats` computed from the line planes, window by window (no table;
    20-30x slower than the lookup on CPU; used for k > 6 and as the table's source)."""
    k = win_length
    code = _line_codes(line_planes(board, k), colour, k, rule == "exact5")  # [4, N, N]
    code = jnp.where(board != 0, jnp.int8(NONE), code)
    return jnp.moveaxis(code, 0, -1)


def pattern_counts(codes: jax.Array) -> jax.Array:
    """int32[N, N, 7]: for each cell, on how many of its 4 lines each pattern code occurs."""
    return jnp.sum(codes[..., None] == jnp.arange(NUM_PATTERNS, dtype=codes.dtype), axis=-2,
                   dtype=jnp.int32)


def pattern_scores(board: jax.Array, colour, win_length: int = 5, rule: str = "freestyle",
                   config: PatternConfig = PatternConfig(), method: str = "auto") -> jax.Array:
    """float32[N, N]: sum over the 4 lines of `config.weights[code]` for `colour` (codes
    as `threats(..., method)` gives them)."""
    weights = jnp.asarray(config.weights, jnp.float32)
    if not use_threat_table(win_length, method):
        return jnp.sum(weights[threats(board, colour, win_length, rule, method)], axis=-1)
    # Line by line, added up: XLA then fuses each line's window numbers into its gathers,
    # which on CPU takes half the time of gathering [4, N, N] codes and summing them.
    index = window_index(board, colour, win_length)
    table = jnp.asarray(threat_table(win_length, rule))
    empty = board == 0
    return functools.reduce(operator.add, [
        jnp.take(weights, jnp.where(empty, jnp.take(table, index[d], mode="clip"), NONE),
                 mode="clip")
        for d in range(4)])


def pattern_features(board: jax.Array, to_move, win_length: int = 5, rule: str = "freestyle",
                     config: PatternConfig = PatternConfig(), method: str = "auto"
                     ) -> jax.Array:
    """float32[N, N] in [0, 1]: seed 000's pattern heat map, an extra observation plane.

    (own patterns + defence_weight * opponent patterns) * proximity mask, divided by its
    maximum; when that is zero everywhere, `fallback * proximity` (divided by its maximum).
    Occupied cells are always 0 (the seed's fallback would leave them at the opening's
    all-ones proximity; a stone is never a place to play). `method`: as in `threats`.
    """
    to_move = jnp.asarray(to_move, jnp.int8)
    combined = (pattern_scores(board, to_move, win_length, rule, config, method)
                + config.defence_weight * pattern_scores(board, -to_move, win_length, rule,
                                                         config, method))
    proximity = proximity_mask(board, config.proximity) * (board == 0)
    combined = combined * proximity
    combined = jnp.where(jnp.max(combined) > 0, combined, config.fallback * proximity)
    top = jnp.max(combined)
    return jnp.where(top > 0, combined / jnp.where(top > 0, top, 1.0), combined)
