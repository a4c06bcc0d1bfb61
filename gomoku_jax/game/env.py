"""The Gomoku environment: pgx-style `init` / `step` / `observe` over a static config."""

from __future__ import annotations

from typing import Callable, Iterable, Optional

import jax
import jax.numpy as jnp

from gomoku_jax.game import positions, rules
from gomoku_jax.game.config import FeaturePlane, GameConfig
from gomoku_jax.game.observe import observe
from gomoku_jax.game.state import State

VERSION = "v1"


class Gomoku:
    """Gomoku on an N x N board, k in a row, freestyle or exact-k; pgx's Env conventions.

    Black (+1) moves first, white is -1, empty 0; `action = row * N + col`. Two player ids
    0 and 1: `init(key)` draws which one plays black (as pgx does), `rewards[player_id]`.

    Outcomes (all inside `jit`):
      - a winning line (k or more for "freestyle", exactly k for "exact5") through the new
        stone: +1 to the mover, -1 to the opponent, `winner` set to the mover's colour;
      - a full board without a winning line: a draw, zero rewards, `winner` 0;
      - an illegal action (an occupied cell, or outside [0, N*N)): the board is untouched,
        the game ends and the mover loses (-1, opponent +1), as in pgx;
      - stepping a terminated state returns it unchanged with zero rewards; its
        `legal_action_mask` is all True, so masked policies never divide by zero.

    All methods are pure functions of their arguments; batch them with `jax.vmap`.
    Instances with equal parameters compare equal and hash alike (usable as static args).
    """

    id = "gomoku"
    version = VERSION
    num_players = 2

    def __init__(self, board_size: int = 15, win_length: int = 5, rule: str = "freestyle",
                 observation: str = "absolute", feature_plane: Optional[FeaturePlane] = None):
        self.config = GameConfig(board_size, win_length, rule, observation, feature_plane)

    @classmethod
    def from_config(cls, config: GameConfig) -> "Gomoku":
        env = cls.__new__(cls)
        env.config = config
        return env

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.config == self.config

    def __hash__(self) -> int:
        return hash((type(self), self.config))

    def __repr__(self) -> str:
        c = self.config
        return (f"Gomoku(board_size={c.board_size}, win_length={c.win_length}, "
                f"rule={c.rule!r}, observation={c.observation!r})")

    @property
    def board_size(self) -> int:
        return self.config.board_size

    @property
    def num_actions(self) -> int:
        return self.config.num_actions

    @property
    def observation_shape(self) -> tuple[int, int, int]:
        return self.config.observation_shape

    def init(self, key: jax.Array) -> State:
        """A new game (empty board, black to move); `key` draws black's player id."""
        return rules.init(self.config, key)

    def step(self, state: State, action: jax.Array, key: Optional[jax.Array] = None) -> State:
        """Play `action` (int[]) for the side to move. `key` is unused (Gomoku is
        deterministic) and accepted for pgx compatibility."""
        del key
        return rules.step(state, action)

    def observe(self, state: State, player_id: Optional[jax.Array] = None, *,
                canonical: Optional[bool] = None) -> jax.Array:
        """float32[..., N, N, C] network planes; see `gomoku_jax.game.observe.observe`."""
        return observe(state, player_id, canonical=canonical)

    def from_board(self, board, to_move=None, *, allow_terminal: bool = False,
                   black_player: int = 0) -> State:
        """A State for a position given as int[N, N]; see `positions.from_board`."""
        return positions.from_board(self.config, board, to_move,
                                    allow_terminal=allow_terminal, black_player=black_player)

    def from_moves(self, moves: Iterable, *, allow_terminal: bool = False,
                   black_player: int = 0) -> State:
        """The State after `moves` (actions or (row, col) pairs); see `positions.from_moves`."""
        return positions.from_moves(self.config, moves, allow_terminal=allow_terminal,
                                    black_player=black_player)


def auto_reset(step_fn: Callable[[State, jax.Array], State],
               init_fn: Callable[[jax.Array], State]) -> Callable[..., State]:
    """Wrap `step_fn(state, action)` so that a game that ends is replaced by a fresh one.

    The returned `step(state, action, key)` (single state; vmap it) behaves like pgx's
    `auto_reset`: a state that arrives terminated is first un-terminated (its board is
    already a fresh one), then stepped; if that step ends the game, the result is
    `init_fn(key)` carrying the step's `terminated` and `rewards`, so the caller still sees
    the outcome. `key` is required.
    """

    def step(state: State, action: jax.Array, key: jax.Array) -> State:
        if key is None:
            raise ValueError("auto_reset's step needs a key for the fresh game")
        state = state.replace(terminated=jnp.zeros_like(state.terminated),
                              rewards=jnp.zeros_like(state.rewards))
        state = step_fn(state, action)
        fresh = init_fn(key).replace(terminated=state.terminated, rewards=state.rewards)
        return jax.tree.map(lambda a, b: jnp.where(state.terminated, a, b), fresh, state)

    return step
