"""The Faux Go `State` pytree, in pgx's State conventions."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

BLACK, WHITE, EMPTY = 1, -1, 0


@struct.dataclass
class State:
    """One Faux Go position (or a batch, with leading batch axes on every array).

    Stored fields (pytree leaves):
      board: int8[N, N], +1 black stone, -1 white stone, 0 empty; `action = row * N + col`,
        the pass is action N*N.
      owner: int8[N, N], the enclosure owner of each cell: +1 black, -1 white, 0 none (always
        0 under a stone).
      color: int8[], the colour to move (+1 black, -1 white); flips on every live step.
      black_player: int32[], the player id (0 or 1) playing black (`init` draws it).
      passes: int32[], consecutive passes just played (two end the game).
      ply: int32[], moves played so far, passes included (the cap is 2 N^2).
      captures: int32[2], stones captured so far by black and by white.
      last_action: int32[], the previous step's action (-1 before the first).
      winner: int8[], +1 black won, -1 white won, 0 none yet or a draw.
      rewards: float32[2], by player id, of the step that produced this state.
      terminated: bool[]; truncated: bool[], always False (the ply cap scores the game).
      komi: float32[], added to white's score (`init` sets it from `FauxGoConfig.komi`).

    A state carries no static metadata: the board size is its arrays' shape and komi is a
    leaf, so one compiled step, search or agent serves every komi (`state.replace(komi=k)`
    changes a game's komi without a new compilation).
    """

    board: jax.Array
    owner: jax.Array
    color: jax.Array
    black_player: jax.Array
    passes: jax.Array
    ply: jax.Array
    captures: jax.Array
    last_action: jax.Array
    winner: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    komi: jax.Array

    @property
    def current_player(self) -> jax.Array:
        """int32[]: the player id to move."""
        return jnp.where(self.color == BLACK, self.black_player, 1 - self.black_player)

    @property
    def legal_action_mask(self) -> jax.Array:
        """bool[N*N + 1]: empty cells outside the opponent's enclosures, and the pass; all
        True once the game is over (pgx's convention)."""
        lead = self.board.shape[:-2]
        board = self.board.reshape(*lead, -1)
        owner = self.owner.reshape(*lead, -1)
        cells = (board == EMPTY) & (owner != -self.color[..., None])
        mask = jnp.concatenate([cells, jnp.ones(lead + (1,), bool)], axis=-1)
        return mask | self.terminated[..., None]

    def _repr_html_(self) -> str:
        from gomoku_jax.games.fauxgo.render import to_svg

        return to_svg(self)

    def __str__(self) -> str:
        if isinstance(self.board, jax.core.Tracer):
            return repr(self)
        from gomoku_jax.games.fauxgo.render import to_text

        return to_text(self)
