"""Configuration of a Faux Go game: board size (static) and komi (the initial state's)."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from gomoku_jax.configs import Bounds
from gomoku_jax.games.protocol import FieldInfo, GameSpec

MIN_BOARD_SIZE, MAX_BOARD_SIZE = 5, 19
MAX_KOMI = 1000.0  # |komi| at most: far beyond any score (N^2 <= 361), exact in float32
NUM_PLANES = 5  # own stones, opponent stones, own enclosures, opponent enclosures, colour


@dataclasses.dataclass(frozen=True)
class FauxGoConfig(GameSpec):
    """A Faux Go game; hashable (a static `jit` argument) and JSON-serialisable.

    Attributes:
      board_size: N, the board is N x N (5..19, default 9).
      komi: added to white's score at the end (default 0; a float in [-1000, 1000]). `init`
        puts it in the state's `komi` leaf, and the rules read it there: compiled code
        depends on the board size only, so one compilation plays every komi.
    """

    id = "fauxgo"
    # The game's defaults for the layers above (see `GameSpec`).
    default_agent = "fauxgo_heuristic"  # seed 004's AI
    playable = ("board_size", "komi")
    title = "Faux Go"
    field_info = {"komi": FieldInfo(step=0.5)}
    traced = ("komi",)  # a leaf of the state: one compiled program plays every komi
    references = ("random", "fauxgo_heuristic", "pure_mcts:num_simulations=64")
    ladder = ("random", *(f"pure_mcts:num_simulations={n}" for n in (16, 32, 64)),
              "fauxgo_heuristic",
              *(f"pure_mcts:num_simulations={n}" for n in (128, 256, 512, 1024)))

    board_size: Annotated[int, Bounds(MIN_BOARD_SIZE, MAX_BOARD_SIZE)] = 9
    komi: Annotated[float, Bounds(-MAX_KOMI, MAX_KOMI)] = 0.0

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
