"""Static configuration of a Faux Go game: board size and komi."""

from __future__ import annotations

import dataclasses
import math
import numbers

from gomoku_jax.games.protocol import GameSpec

MIN_BOARD_SIZE, MAX_BOARD_SIZE = 5, 19
NUM_PLANES = 5  # own stones, opponent stones, own enclosures, opponent enclosures, colour


@dataclasses.dataclass(frozen=True)
class FauxGoConfig(GameSpec):
    """Everything static about a Faux Go game; hashable (a static `jit` argument) and
    JSON-serialisable.

    Attributes:
      board_size: N, the board is N x N (5..19, default 9).
      komi: added to white's score at the end (default 0; a float, any sign).
    """

    id = "fauxgo"

    board_size: int = 9
    komi: float = 0.0

    def __post_init__(self):
        n = self.board_size
        if isinstance(n, numbers.Integral) and not isinstance(n, bool):
            object.__setattr__(self, "board_size", int(n))
            n = int(n)
        if isinstance(n, bool) or not isinstance(n, int) \
                or not MIN_BOARD_SIZE <= n <= MAX_BOARD_SIZE:
            raise ValueError(
                f"board_size must be an int in {MIN_BOARD_SIZE}..{MAX_BOARD_SIZE}, got {n!r}")
        k = self.komi
        if isinstance(k, bool) or not isinstance(k, numbers.Real) or not math.isfinite(k):
            raise ValueError(f"komi must be a finite number, got {k!r}")
        object.__setattr__(self, "komi", float(k))

    @property
    def num_cells(self) -> int:
        return self.board_size * self.board_size

    @property
    def num_actions(self) -> int:
        """N*N placements plus the pass (the last action)."""
        return self.num_cells + 1

    @property
    def pass_action(self) -> int:
        return self.num_cells

    @property
    def max_plies(self) -> int:
        """The ply cap, 2 N^2 (passes count): the game is then scored."""
        return 2 * self.num_cells

    @property
    def observation_shape(self) -> tuple[int, int, int]:
        return (self.board_size, self.board_size, NUM_PLANES)
