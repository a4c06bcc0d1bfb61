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
Everything is pure JAX over `board: int8[N, N]`; vmap over boards.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from gomoku_jax.games.gomoku.features.lines import WALL, any_of, count_of, line_planes, run_length
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
        if len(self.weights) != NUM_PATTERNS:
            raise ValueError(f"weights needs {NUM_PATTERNS} entries {PATTERN_NAMES}, got "
                             f"{len(self.weights)}")


def _windows(reach: int, width: int, centre_range: tuple[int, int]) -> list[int]:
    """Start indices of the windows of `width` whose cells [lo, hi) of the window hold the
    centre (index `reach` of a line of 2 * reach + 1)."""
    lo, hi = centre_range
    return [s for s in range(0, 2 * reach + 2 - width) if s + lo <= reach < s + hi]


def threats(board: jax.Array, colour, win_length: int = 5, rule: str = "freestyle"
            ) -> jax.Array:
    """int8[N, N, 4]: the pattern code (see the module doc) a stone of `colour` would make
    on each empty cell along each line (horizontal, vertical, diagonal, anti-diagonal);
    NONE on occupied cells.

    Args:
      board: int8[N, N]; colour: +1 black or -1 white (may be traced).
      win_length, rule: the game's k and rule (static).
    """
    k, exact = win_length, rule == "exact5"
    reach = k
    width = 2 * reach + 1
    lines = line_planes(board, reach)  # [2k+1, 4, N, N]
    colour = jnp.asarray(colour, jnp.int8)
    # Per offset along the line, bool[4, N, N]; the cell itself holds the hypothetical stone.
    own = [lines[o] == colour for o in range(width)]
    blocked = [(lines[o] == -colour) | (lines[o] == WALL) for o in range(width)]
    own[reach] = jnp.ones_like(own[reach])
    blocked[reach] = jnp.zeros_like(blocked[reach])
    empty = [~own[o] & ~blocked[o] for o in range(width)]

    run = (1 + run_length(own[reach + 1:]) + run_length(own[reach - 1::-1]))
    five = (run == k) if exact else (run >= k)

    def flanks_ok(start: int, size: int) -> jax.Array:
        """Under exact5, own stones just outside the window would make an overline."""
        if not exact:
            return True
        return ~own[start - 1] & ~own[start + size]

    # k-windows through the cell: which cells would complete a five.
    completes = [jnp.zeros_like(five) for _ in range(width)]
    closed_three = jnp.zeros_like(five)
    for s in _windows(reach, k, (0, k)):
        free = ~any_of(blocked[s:s + k])
        count = count_of(own[s:s + k])
        hit = free & (count == k - 1) & flanks_ok(s, k)
        for o in range(s, s + k):
            completes[o] = completes[o] | (hit & empty[o])
        closed_three = closed_three | (free & (count == k - 2) & flanks_ok(s, k))
    completions = count_of(completes)

    # (k+1)-windows with both ends empty and the cell inside: open threes and twos.
    open_three = jnp.zeros_like(five)
    open_two = jnp.zeros_like(five)
    for s in _windows(reach, k + 1, (1, k)):
        clear = (empty[s] & empty[s + k] & flanks_ok(s, k + 1)
                 & ~any_of(blocked[s + 1:s + k]))
        count = count_of(own[s + 1:s + k])
        open_three = open_three | (clear & (count == k - 2))
        open_two = open_two | (clear & (count == k - 3))

    code = jnp.select(
        [five, completions >= 2, completions == 1, open_three, closed_three, open_two],
        [FIVE, OPEN_FOUR, FOUR, OPEN_THREE, CLOSED_THREE, OPEN_TWO], NONE)
    code = jnp.where(board != 0, NONE, code)  # [4, N, N]
    return jnp.moveaxis(code, 0, -1).astype(jnp.int8)


def pattern_counts(codes: jax.Array) -> jax.Array:
    """int32[N, N, 7]: for each cell, on how many of its 4 lines each pattern code occurs."""
    return jnp.sum(codes[..., None] == jnp.arange(NUM_PATTERNS, dtype=codes.dtype), axis=-2,
                   dtype=jnp.int32)


def pattern_scores(board: jax.Array, colour, win_length: int = 5, rule: str = "freestyle",
                   config: PatternConfig = PatternConfig()) -> jax.Array:
    """float32[N, N]: sum over the 4 lines of `config.weights[code]` for `colour`."""
    codes = threats(board, colour, win_length, rule)
    return jnp.sum(jnp.asarray(config.weights, jnp.float32)[codes], axis=-1)


def pattern_features(board: jax.Array, to_move, win_length: int = 5, rule: str = "freestyle",
                     config: PatternConfig = PatternConfig()) -> jax.Array:
    """float32[N, N] in [0, 1]: seed 000's pattern heat map, an extra observation plane.

    (own patterns + defence_weight * opponent patterns) * proximity mask, divided by its
    maximum; when that is zero everywhere, `fallback * proximity` (divided by its maximum).
    Occupied cells are always 0 (the seed's fallback would leave them at the opening's
    all-ones proximity; a stone is never a place to play).
    """
    to_move = jnp.asarray(to_move, jnp.int8)
    combined = (pattern_scores(board, to_move, win_length, rule, config)
                + config.defence_weight * pattern_scores(board, -to_move, win_length, rule,
                                                         config))
    proximity = proximity_mask(board, config.proximity) * (board == 0)
    combined = combined * proximity
    combined = jnp.where(jnp.max(combined) > 0, combined, config.fallback * proximity)
    top = jnp.max(combined)
    return jnp.where(top > 0, combined / jnp.where(top > 0, top, 1.0), combined)
