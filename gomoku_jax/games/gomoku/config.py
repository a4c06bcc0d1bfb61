"""Static configuration of a Gomoku game: board size, win length, rule, observation form."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Callable, Optional, Union

import jax

from gomoku_jax.configs import Bounds
from gomoku_jax.games.protocol import FieldInfo, GameSpec

RULES = ("freestyle", "exact5", "renju", "caro", "caro_exact5")
EXACT_RULES = ("exact5", "caro_exact5")  # rules where an overline never wins
CARO_RULES = ("caro", "caro_exact5")  # rules where a run blocked at both ends never wins
OBSERVATION_FORMS = ("absolute", "canonical")
PLANE_NAMES = ("none", "patterns", "proximity")
MIN_BOARD_SIZE, MAX_BOARD_SIZE = 5, 20  # 20: the Gomocup freestyle league's board
MIN_WIN_LENGTH = 3

# One line per rule, for people choosing one (the web UI's rule selector).
RULE_NOTES = {
    "freestyle": "k or more in a row wins, for both sides.",
    "exact5": "exactly k in a row wins; an overline (more than k) does not.",
    "renju": "black wins only with exactly five and may not play a double-three, "
             "double-four or overline (marked x); white wins with five or more.",
    "caro": "k or more in a row wins unless the opponent's stones block both ends "
            "(the board's edge is no block).",
    "caro_exact5": "caro with exactly k in a row.",
}

# Row / column steps of the four lines through a cell: horizontal, vertical, two diagonals.
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))

# f(board: int8[N, N], colour: int8[]) -> float32[N, N]; one extra observation plane.
FeaturePlane = Callable[[jax.Array, jax.Array], jax.Array]


@dataclasses.dataclass(frozen=True)
class GameConfig(GameSpec):
    """Everything static about a Gomoku game. Hashable, so it can be a static argument of
    `jit`; JSON-serialisable unless `feature_plane` is a callable.

    Attributes:
      board_size: N, the board is N x N (5..20).
      win_length: k, stones in a row needed to win (3..N).
      rule: "freestyle" (k or more in a row wins), "exact5" (exactly k wins; overlines
        do not, as in standard Gomoku; the name follows the usual k = 5), "renju" (k = 5
        only: black wins with exactly five and may not play a forbidden point, a
        double-three, double-four or overline, unless it makes five; white wins with five or
        more), "caro" (k or more wins unless the run is blocked at both ends by opponent
        stones; the board's edge is not a block) or "caro_exact5" (caro with exactly k).
      observation: default form of `observe`: "absolute" (black / white planes, as in seed
        001) or "canonical" (side-to-move / opponent planes, as AlphaZero nets usually take).
      feature_plane: an extra observation plane appended as the last channel: "none",
        "patterns" (seed 000's pattern heat map), "proximity" (the proximity mask), or a
        callable `f(board, colour) -> float32[N, N]` (`None` is read as "none").
    """

    id = "gomoku"
    # The game's defaults for the layers above (see `GameSpec`).
    preferred_evaluator = "heuristic"
    default_agent = "mcts"  # PUCT on the heuristic evaluator with VCF at the root
    playable = ("board_size", "win_length", "rule")
    title = "Gomoku"
    field_info = {"win_length": FieldInfo(label="In a row to win"),
                  "rule": FieldInfo(choices={rule: RULE_NOTES[rule] for rule in RULES})}
    references = ("random", "heuristic", "mcts:num_simulations=32")
    # The heuristic's prior sampled (`policy ... sample=true`) is the heuristic with move
    # noise: it still completes and blocks fives (the prior's win bonus), else plays a
    # random good-looking move.
    ladder = ("random", "proximity_random",
              *(f"pure_mcts:num_simulations={n}" for n in (16, 32, 64, 128, 256)),
              "policy:evaluator=heuristic,sample=true", "heuristic",
              *(f"mcts:num_simulations={n}" for n in (8, 32, 128)),
              *(f"pure_mcts:num_simulations={n}" for n in (512, 1024)))

    board_size: Annotated[int, Bounds(MIN_BOARD_SIZE, MAX_BOARD_SIZE)] = 15
    win_length: Annotated[int, Bounds(MIN_WIN_LENGTH)] = 5
    rule: str = "freestyle"
    observation: str = "absolute"
    feature_plane: Optional[Union[str, FeaturePlane]] = "none"

    def __post_init__(self):
        super().__post_init__()  # types and ranges (NumPy ints are stored as Python ints)
        if self.feature_plane is None:
            object.__setattr__(self, "feature_plane", "none")
        n, k = self.board_size, self.win_length
        if k > n:
            raise ValueError(
                f"game.win_length must be an int in {MIN_WIN_LENGTH}..board_size ({n}), "
                f"got {k!r}")
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {self.rule!r}")
        if self.rule == "renju" and k != 5:
            raise ValueError(f"rule 'renju' is defined for win_length 5, got {k}")
        if self.observation not in OBSERVATION_FORMS:
            raise ValueError(
                f"observation must be one of {OBSERVATION_FORMS}, got {self.observation!r}")
        plane = self.feature_plane
        if isinstance(plane, str) and plane not in PLANE_NAMES:
            raise ValueError(f"feature_plane must be one of {PLANE_NAMES} or a callable "
                             f"f(board, colour) -> float32[N, N], got {plane!r}")
        if not isinstance(plane, str) and not callable(plane):
            raise ValueError(f"feature_plane must be one of {PLANE_NAMES} or a callable "
                             f"f(board, colour) -> float32[N, N], got {plane!r}")

    @property
    def has_feature_plane(self) -> bool:
        return self.feature_plane != "none"

    @property
    def num_actions(self) -> int:
        return self.board_size * self.board_size

    @property
    def num_planes(self) -> int:
        return 5 + self.has_feature_plane

    @property
    def observation_shape(self) -> tuple[int, int, int]:
        return (self.board_size, self.board_size, self.num_planes)
