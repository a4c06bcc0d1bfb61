"""The Gomoku `State` pytree, following pgx's State conventions."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from gomoku_jax.games.gomoku.config import GameConfig

BLACK, WHITE, EMPTY = 1, -1, 0


@struct.dataclass
class State:
    """One Gomoku position (or a batch of them, with leading batch axes on every array).

    Stored fields (pytree leaves):
      board: int8[N, N], +1 black, -1 white, 0 empty; `action = row * N + col`.
      color: int8[], colour to move (+1 black, -1 white). It flips on every step that a live
        game takes, including the step that ends it.
      black_player: int32[], the player id (0 or 1) that plays black; `init` draws it at
        random, as pgx does, so that player ids are not tied to colours.
      last_moves: int32[2], the last action of black and of white (-1 before their first).
      move_count: int32[], stones on the board.
      winner: int8[], +1 black won, -1 white won, 0 none yet or a draw.
      rewards: float32[2], by player id, of the step that produced this state (nonzero only
        on the step that ends a game).
      terminated: bool[].
      truncated: bool[], always False: a Gomoku game ends only by termination (a full
        board draws). Stored, as in pgx, so generic code (auto-reset) can set it.
      config: the static `GameConfig` (pytree metadata, not a leaf).

    Derived on access (cheap, and free when unused, so `step` writes only the board):
      current_player, legal_action_mask, last_action. The observation is `env.observe(state)`.
    """

    board: jax.Array
    color: jax.Array
    black_player: jax.Array
    last_moves: jax.Array
    move_count: jax.Array
    winner: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    config: GameConfig = struct.field(pytree_node=False, default=GameConfig())

    @property
    def current_player(self) -> jax.Array:
        """int32[]: the player id whose turn it is (after the end: who would move next)."""
        return jnp.where(self.color == BLACK, self.black_player, 1 - self.black_player)

    @property
    def legal_action_mask(self) -> jax.Array:
        """bool[N*N]: empty cells; all True once terminated (pgx's convention).

        Under "renju", with black to move, black's forbidden points are left out
        (`renju.forbidden_points`); if that leaves nothing, the empty cells (stepping a
        forbidden one still loses) so that a masked policy never divides by zero. That
        costs a forbidden-point scan of the board on every access (docs/games/gomoku.md).
        """
        flat = self.board.reshape(*self.board.shape[:-2], -1)
        empty = flat == EMPTY
        if self.config.rule == "renju":
            from gomoku_jax.games.gomoku.renju import forbidden_points

            n = self.board.shape[-1]
            forbidden = jax.vmap(forbidden_points)(self.board.reshape(-1, n, n))
            allowed = empty & ~((self.color == BLACK)[..., None]
                                & forbidden.reshape(flat.shape))
            empty = jnp.where(jnp.any(allowed, axis=-1, keepdims=True), allowed, empty)
        return empty | self.terminated[..., None]

    @property
    def last_action(self) -> jax.Array:
        """int32[]: the action of the previous step (-1 before the first move).

        For a game ended by an illegal action, that illegal action.
        """
        black_to_move = self.color == BLACK
        return jnp.where(black_to_move, self.last_moves[..., 1], self.last_moves[..., 0])

    def _repr_html_(self) -> str:
        from gomoku_jax.games.gomoku.render import to_svg

        return to_svg(self)

    def __str__(self) -> str:
        if isinstance(self.board, jax.core.Tracer):  # inside jit/vmap: no values to draw
            return repr(self)
        from gomoku_jax.games.gomoku.render import to_text

        return to_text(self)
