"""Threat patterns (seed 000 `detect_patterns` / `get_pattern_features`, seed 001 evaluate).

For every empty cell, each colour and each of the 4 lines through the cell: what a stone of
that colour placed there makes along that line. Names follow k = 5 (`win_length`); for other
k the same definitions hold with k in place of 5:

  FIVE          a winning line through the cell under the rule (`rules.wins_through`)
  OPEN_FOUR     two or more distinct cells of the line would each complete a five next move
                (the straight four _xxxx_, or two fours sharing the line)
  FOUR          exactly one such cell (a closed four xxxx| or a broken one xx_xx, x_xxx)
  OPEN_THREE    one more stone in the line can make a straight four: a (k+1)-window with
                both ends empty whose inner k-1 cells hold k-2 stones and one empty cell,
                e.g. _xxx_, _x_xx_ (split threes included)
  CLOSED_THREE  a k-window free of opponent stones and edges holding k-2 stones, no open three
  OPEN_TWO      a (k+1)-window with both ends empty whose inner cells hold k-3 stones
  NONE          none of these

The cell's own stone is counted. Off-board cells block like opponent stones inside a window.
The rule decides what a five is, and every code follows from that:
  exact5, caro_exact5  an overline is not a five, so windows whose completion would make one
                       are not counted;
  caro, caro_exact5    a run whose cells just beyond both ends are opponent stones is not a
                       five (the edge does not block), so a completion or a closed three
                       that would make such a run is not counted (`o xxxx_ o` is no four).
                       An open three or two is unchanged: the straight four it makes keeps
                       an empty cell at the far end of either five. The line is seen k cells
                       each way; a run reaching past that is taken as not blocked there
                       (only on a board where a run of k already stands next to the cell);
  renju                colour-dependent: black's codes are exact5's, white's freestyle's,
                       and every point forbidden for black (`renju.forbidden_points`: it
                       makes no five) is NONE on all 4 lines for black: a forbidden point
                       is never a threat for black.
Everything is pure JAX over `board: int8[N, N]`; vmap over boards. `threats` looks the codes
up in a table of every line window, built from the direct evaluation `threats_scan` (caro's
table tells the edge apart from an opponent stone: base-4 windows, 4 ** (2k) entries).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax import configs
from gomoku_jax.games.gomoku.config import CARO_RULES, EXACT_RULES, RULES
from gomoku_jax.games.gomoku.features.lines import (
    BLOCKED_DIGIT,
    OWN_DIGIT,
    WALL,
    WALL_DIGIT,
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


# Largest lookup table `threats` builds on its own (entries, one byte each): base ** (2k) for
# k = win_length, base 3 (4 under caro, which tells the edge from a stone): so freestyle,
# exact5 and renju look patterns up for k <= 6, caro for k <= 5, and larger k scan the lines.
MAX_TABLE_SIZE = 4 ** 10
METHODS = ("auto", "table", "scan")
BLACK = 1


def _rule_flags(rule: str, colour) -> tuple:
    """(exact, caro) of `_line_codes` for `rule` seen from `colour`: exact is a bool, or
    under renju a bool array (black plays exact five, white freestyle)."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if rule == "renju":
        return jnp.asarray(colour, jnp.int8) == BLACK, False
    return rule in EXACT_RULES, rule in CARO_RULES


def _line_codes(lines: jax.Array, colour, k: int, exact, xp=jnp, caro: bool = False
                ) -> jax.Array:
    """int8[...]: the pattern code a `colour` stone on the centre of each line makes along
    it, whatever the centre holds. The definition of the patterns (the module doc) in code.

    lines: int8[2k + 1, ...], the cells at offsets -k..k of each line (board values, WALL
    off the board), as `line_planes(board, k)`; any trailing shape. xp: the array module,
    jax.numpy (`threats_scan`) or numpy (to build `threat_table` without compiling).
    exact: overlines are not fives (a bool, or a bool array broadcasting against the lines'
    trailing shape); caro (static): a run blocked at both ends by opponent stones is not a
    five.
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
    static_exact = isinstance(exact, bool)

    run = (1 + run_length(own[reach + 1:]) + run_length(own[reach - 1::-1]))
    if static_exact:
        five = (run == k) if exact else (run >= k)
    else:
        five = xp.where(exact, run == k, run >= k)

    def flanks_ok(start: int, size: int) -> jax.Array:
        """Under exact5, own stones just outside the window would make an overline."""
        if static_exact and not exact:
            return True
        clear = ~own[start - 1] & ~own[start + size]
        return clear if static_exact else (~exact | clear)

    def end_stopped(start: int, step: int) -> jax.Array:
        """The run of own stones from offset `start` outwards (by `step`) ends on an
        opponent stone (not the edge; past the window: not known, taken as open)."""
        stopped, still = xp.zeros_like(own[reach]), xp.ones_like(own[reach])
        for o in range(start, -1 if step < 0 else width, step):
            stopped = stopped | (still & (lines[o] == -colour))
            still = still & own[o]
        return stopped

    def open_end(start: int, size: int) -> jax.Array:
        """Caro: the run made by filling offsets start..start+size-1 is not blocked at both
        ends."""
        if not caro:
            return True
        return ~(end_stopped(start - 1, -1) & end_stopped(start + size, 1))

    five = five & open_end(reach, 1)

    # k-windows through the cell: which cells would complete a five.
    completes = [xp.zeros_like(five) for _ in range(width)]
    closed_three = xp.zeros_like(five)
    for s in _windows(reach, k, (0, k)):
        free = ~any_of(blocked[s:s + k]) & flanks_ok(s, k) & open_end(s, k)
        count = count_of(own[s:s + k])
        hit = free & (count == k - 1)
        for o in range(s, s + k):
            completes[o] = completes[o] | (hit & empty[o])
        closed_three = closed_three | (free & (count == k - 2))
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
def _threat_table(k: int, exact: bool, caro: bool = False) -> np.ndarray:
    windows = all_windows(k, walls=caro)  # [2k + 1, base ** (2k)] digits
    lines = np.select([windows == OWN_DIGIT, windows == BLOCKED_DIGIT, windows == WALL_DIGIT],
                      [1, -1, WALL], 0)
    # The very code `threats_scan` runs, in NumPy: the table is a constant of the program
    # (also when first asked for inside a jit trace), computed once per (k, rule).
    table = _line_codes(lines.astype(np.int8), 1, k, exact, np, caro)
    table.flags.writeable = False
    return table


def _table_size(win_length: int, rule: str) -> int:
    return (4 if rule in CARO_RULES else 3) ** (2 * win_length)


def threat_table(win_length: int = 5, rule: str = "freestyle", colour: int = BLACK
                 ) -> np.ndarray:
    """int8[base ** (2k)]: the pattern code of every line window, indexed by `window_index`
    with reach k (the 2k cells around a cell on one line, seen from the stone's colour;
    base 3, or 4 with `walls` under the caro rules).

    Built once per (k, rule) by running the scan's definition (`_line_codes`) on every
    window, so table and scan cannot disagree; read-only, cached. Under renju the table
    depends on `colour` (+1 black: exact five, -1 white: freestyle) and leaves out the
    forbidden points, which need the whole board (`threats` masks them). ValueError when it
    would have more than MAX_TABLE_SIZE entries.
    """
    size = _table_size(win_length, rule)
    if size > MAX_TABLE_SIZE:
        raise ValueError(f"no threat table for win_length {win_length} under {rule}: {size} "
                         f"entries > MAX_TABLE_SIZE ({MAX_TABLE_SIZE}); use method='scan'")
    if rule == "renju":
        return _threat_table(win_length, colour == BLACK)
    exact, caro = _rule_flags(rule, colour)
    return _threat_table(win_length, exact, caro)


def threats(board: jax.Array, colour, win_length: int = 5, rule: str = "freestyle",
            method: str = "auto", forbidden: Optional[jax.Array] = None) -> jax.Array:
    """int8[N, N, 4]: the pattern code (see the module doc) a stone of `colour` would make
    on each empty cell along each line (horizontal, vertical, diagonal, anti-diagonal);
    NONE on occupied cells.

    A cell's code on a line depends only on the k cells on each side of it (WALL off the
    board blocks like an opponent stone inside a window), so it is looked up: one window
    number per cell and line (`lines.window_index`), one gather from `threat_table`.

    Args:
      board: int8[N, N]; colour: +1 black or -1 white (may be traced).
      win_length, rule: the game's k and rule (static).
      method: "table" (look up), "scan" (`threats_scan`: evaluate the patterns on the line
        planes directly, the table's source), or "auto": "table" while the table has at most
        MAX_TABLE_SIZE entries, else "scan". Both give the same codes.
      forbidden: renju only: bool[N, N], black's forbidden points if the caller has them
        (default: `renju.forbidden_points(board)`, computed here).
    Raises:
      ValueError: an unknown method or rule, or "table" for a k too large for one.
    """
    if not use_threat_table(win_length, method, rule):
        return threats_scan(board, colour, win_length, rule, forbidden)
    index = window_index(board, colour, win_length, walls=rule in CARO_RULES)
    return lookup_threats(index, board, win_length, rule, colour, forbidden)


def use_threat_table(win_length: int, method: str, rule: str = "freestyle") -> bool:
    """Whether `method` ("auto", "table" or "scan") means the threat table for k =
    `win_length` under `rule`: "auto" does while the table has at most MAX_TABLE_SIZE
    entries. ValueError for an unknown method."""
    if method not in METHODS:
        raise ValueError(f"threats method must be one of {METHODS}, got {method!r}")
    return method == "table" or (method == "auto"
                                 and _table_size(win_length, rule) <= MAX_TABLE_SIZE)


def forbidden_for(board: jax.Array, colour, rule: str,
                  forbidden: Optional[jax.Array] = None) -> Optional[jax.Array]:
    """bool[N, N]: the cells where a `colour` stone is forbidden (renju, black only), or
    None for the other rules. `forbidden`: black's forbidden points, when already known."""
    if rule != "renju":
        return None
    if forbidden is None:
        from gomoku_jax.games.gomoku.renju import forbidden_points

        forbidden = forbidden_points(board)
    return forbidden & (jnp.asarray(colour, jnp.int8) == BLACK)


def _mask(codes: jax.Array, board: jax.Array, barred: Optional[jax.Array]) -> jax.Array:
    """codes int8[4, N, N] -> int8[N, N, 4], NONE on occupied and barred cells."""
    off = board != 0 if barred is None else (board != 0) | barred
    return jnp.moveaxis(jnp.where(off, jnp.int8(NONE), codes), 0, -1)


def lookup_threats(index: jax.Array, board: jax.Array, win_length: int = 5,
                   rule: str = "freestyle", colour=BLACK,
                   forbidden: Optional[jax.Array] = None) -> jax.Array:
    """int8[N, N, 4]: `threats` from `index = window_index(board, colour, k, walls=rule in
    CARO_RULES)` (int32[4, N, N]), by one gather from `threat_table`. `colour` and
    `forbidden` matter under renju only (as in `threats`)."""
    # Every index is in range; "clip" is XLA's own gather semantics, so unlike the default
    # mode no wrapping of negative indices is emitted (about 20% of a lookup on CPU).
    if rule == "renju":  # black's and white's tables end to end, one gather
        table = jnp.asarray(np.concatenate([threat_table(win_length, rule, BLACK),
                                            threat_table(win_length, rule, -BLACK)]))
        index = index + jnp.where(jnp.asarray(colour, jnp.int8) == BLACK, 0,
                                  _table_size(win_length, rule))
    else:
        table = jnp.asarray(threat_table(win_length, rule))
    codes = jnp.take(table, index, mode="clip")
    return _mask(codes, board, forbidden_for(board, colour, rule, forbidden))


def threats_scan(board: jax.Array, colour, win_length: int = 5, rule: str = "freestyle",
                 forbidden: Optional[jax.Array] = None) -> jax.Array:
    """int8[N, N, 4]: `threats` computed from the line planes, window by window (no table;
    20-30x slower than the lookup on CPU; used for large k and as the table's source)."""
    k = win_length
    exact, caro = _rule_flags(rule, colour)
    code = _line_codes(line_planes(board, k), colour, k, exact, caro=caro)  # [4, N, N]
    return _mask(code, board, forbidden_for(board, colour, rule, forbidden))


def five_cells(board: jax.Array, colour, win_length: int = 5, rule: str = "freestyle"
               ) -> jax.Array:
    """bool[N, N]: the empty cells where a `colour` stone wins at once (FIVE on a line).
    Needs no forbidden-point scan under renju: a point where black makes five is never
    forbidden."""
    no_ban = jnp.zeros(board.shape, bool) if rule == "renju" else None
    return jnp.any(threats(board, colour, win_length, rule, forbidden=no_ban) == FIVE, axis=-1)


def pattern_counts(codes: jax.Array) -> jax.Array:
    """int32[N, N, 7]: for each cell, on how many of its 4 lines each pattern code occurs."""
    return jnp.sum(codes[..., None] == jnp.arange(NUM_PATTERNS, dtype=codes.dtype), axis=-2,
                   dtype=jnp.int32)


def pattern_scores(board: jax.Array, colour, win_length: int = 5, rule: str = "freestyle",
                   config: PatternConfig = PatternConfig(), method: str = "auto",
                   forbidden: Optional[jax.Array] = None) -> jax.Array:
    """float32[N, N]: sum over the 4 lines of `config.weights[code]` for `colour` (codes
    as `threats(..., method, forbidden)` gives them)."""
    weights = jnp.asarray(config.weights, jnp.float32)
    if not use_threat_table(win_length, method, rule) or rule == "renju":
        codes = threats(board, colour, win_length, rule, method, forbidden)
        return jnp.sum(weights[codes], axis=-1)
    # Line by line, added up: XLA then fuses each line's window numbers into its gathers,
    # which on CPU takes half the time of gathering [4, N, N] codes and summing them.
    index = window_index(board, colour, win_length, walls=rule in CARO_RULES)
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
    all-ones proximity; a stone is never a place to play). `method`: as in `threats`; the
    codes follow `rule` (under renju black's forbidden points score nothing for black).
    """
    to_move = jnp.asarray(to_move, jnp.int8)
    forbidden = forbidden_for(board, BLACK, rule)  # once, for both colours (renju only)
    combined = (pattern_scores(board, to_move, win_length, rule, config, method, forbidden)
                + config.defence_weight * pattern_scores(board, -to_move, win_length, rule,
                                                         config, method, forbidden))
    proximity = proximity_mask(board, config.proximity) * (board == 0)
    combined = combined * proximity
    combined = jnp.where(jnp.max(combined) > 0, combined, config.fallback * proximity)
    top = jnp.max(combined)
    return jnp.where(top > 0, combined / jnp.where(top > 0, top, 1.0), combined)
