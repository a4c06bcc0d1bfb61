"""The Faux Go environment: the game protocol (`games.protocol.Env`) over a static config."""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp

from gomoku_jax.games import symmetry
from gomoku_jax.games.board import BoardEnv
from gomoku_jax.games.fauxgo import positions, rules
from gomoku_jax.games.fauxgo.config import FauxGoConfig
from gomoku_jax.games.fauxgo.observe import observe
from gomoku_jax.games.fauxgo.render import to_svg, to_text
from gomoku_jax.games.fauxgo.state import State

VERSION = "v1"


class FauxGo(BoardEnv):
    """Faux Go ("Simply GO", seed 004) on an N x N board; pgx's Env conventions.

    Black (+1) moves first, white is -1; actions `row * N + col` and the pass N*N. Two
    player ids: `init(key)` draws which one plays black. The rules are in `rules.py` and
    docs/games/fauxgo.md; all outcomes are decided inside `jit`:
      - an illegal action ends the game, the mover loses (-1, opponent +1);
      - two passes in a row, or 2 N^2 plies, end the game by score (+1 / -1, 0 for a draw);
      - stepping a finished state returns it unchanged with zero rewards.

    Hooks: D4 symmetries (the pass is fixed), the pass action, `max_game_length` 2 N^2,
    text/SVG pictures with the enclosures shaded.
    """

    Spec = FauxGoConfig
    version = VERSION

    def __init__(self, board_size: int = 9, komi: float = 0.0):
        super().__init__(FauxGoConfig(board_size, komi))

    def init(self, key: jax.Array) -> State:
        return rules.init(self.config, key)

    def step(self, state: State, action: jax.Array, key: Optional[jax.Array] = None) -> State:
        """Play `action` for the side to move; `key` is unused (the game is deterministic)."""
        del key
        return rules.step(state, action)

    def observe(self, state: State) -> jax.Array:
        return observe(state)

    # ------------------------------------------------------------------ hooks

    def transform_state(self, state: State, g: jax.Array) -> State:
        """Board, enclosures and the last move under D4 element g (a pass, -1 or an
        off-board action stays as it is)."""
        last = state.last_action
        on_board = (last >= 0) & (last < self.config.num_cells)
        moved = symmetry.transform_action(self, jnp.where(on_board, last, 0), g)
        return state.replace(board=symmetry.transform_board(state.board, g),
                             owner=symmetry.transform_board(state.owner, g),
                             last_action=jnp.where(on_board, moved, last))

    @property
    def pass_action(self) -> int:
        return self.config.pass_action

    @property
    def max_game_length(self) -> int:
        return self.config.max_plies

    def move_number(self, state: State) -> jax.Array:
        return state.ply

    def action_to_text(self, action: int) -> str:
        """`(row, col)`, or `pass`."""
        return "pass" if int(action) == self.config.pass_action else super().action_to_text(action)

    def to_text(self, state: State) -> str:
        return to_text(state)

    def to_svg(self, state: State, **kwargs) -> str:
        return to_svg(state, **kwargs)

    def from_board(self, board, owner=None, to_move: int = 1, *,
                   black_player: int = 0) -> State:
        """A State for a position given as host arrays; see `positions.from_board`."""
        return positions.from_board(self.config, board, owner, to_move,
                                    black_player=black_player)

    def scores(self, state: State) -> jax.Array:
        """float32[2]: (black, white) scores of a position (the state's komi included)."""
        return rules.scores(state.board, state.owner, state.komi)
