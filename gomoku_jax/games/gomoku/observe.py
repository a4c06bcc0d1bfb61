"""Network input planes of a state (seed 001's five planes, absolute or canonical)."""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp

from gomoku_jax.games.gomoku.features.planes import plane_function
from gomoku_jax.games.gomoku.state import BLACK, State

# The channels `observe` makes, in order, for each form (a feature plane, when the config
# has one, is appended as channel 5).
PLANES = {
    "absolute": ("black stones", "white stones", "last black move", "last white move",
                 "ones when black is to move"),
    "canonical": ("own stones", "opponent stones", "own last move", "opponent last move",
                  "ones when the own colour is black"),
}


def _move_plane(action: jax.Array, num_actions: int) -> jax.Array:
    """float32[..., N*N]: one-hot of `action`, all zeros for -1 (or any index off the board)."""
    return jax.nn.one_hot(action, num_actions, dtype=jnp.float32)


def observe(state: State, player_id: Optional[jax.Array] = None, *,
            canonical: Optional[bool] = None) -> jax.Array:
    """Input planes for a network. Works on a single state or on any batch of states.

    Absolute form (seed 001), float32[..., N, N, 5]:
      0 black stones, 1 white stones, 2 last black move, 3 last white move,
      4 colour to move (all ones when black is to move, zeros otherwise).
    Canonical form, the same five planes seen from one side ("own" = the colour of
    `player_id`, by default the side to move):
      0 own stones, 1 opponent stones, 2 own last move, 3 opponent last move,
      4 ones when the own colour is black (so the first-move advantage stays visible).
    With a `config.feature_plane`, its plane `f(board, colour)` is appended as channel 5,
    computed for the colour the observation is taken for: the side to move in the absolute
    form, the own colour (`player_id`'s) in the canonical form.

    Args:
      state: a State, unbatched or with leading batch axes.
      player_id: int32[...] player whose view the canonical form takes (default: current).
      canonical: overrides the config's default form.
    """
    cfg = state.config
    n = cfg.board_size
    batch = state.board.shape[:-2]
    if canonical is None:
        canonical = cfg.observation == "canonical"

    board = state.board
    viewer = state.color
    black_last = _move_plane(state.last_moves[..., 0], n * n).reshape(*batch, n, n)
    white_last = _move_plane(state.last_moves[..., 1], n * n).reshape(*batch, n, n)
    if canonical:
        if player_id is None:
            own = state.color
        else:
            own = jnp.where(jnp.asarray(player_id) == state.black_player, BLACK, -BLACK)
        viewer = own.astype(board.dtype)
        own = viewer[..., None, None]
        own_is_black = own == BLACK
        planes = [
            board == own,
            board == -own,
            jnp.where(own_is_black, black_last, white_last),
            jnp.where(own_is_black, white_last, black_last),
            jnp.broadcast_to(own_is_black, board.shape),
        ]
    else:
        to_move_black = (state.color == BLACK)[..., None, None]
        planes = [
            board == BLACK,
            board == -BLACK,
            black_last,
            white_last,
            jnp.broadcast_to(to_move_black, board.shape),
        ]
    if cfg.has_feature_plane:
        feature = plane_function(cfg)
        for _ in batch:
            feature = jax.vmap(feature)
        planes.append(feature(board, viewer))
    return jnp.stack([p.astype(jnp.float32) for p in planes], axis=-1)
