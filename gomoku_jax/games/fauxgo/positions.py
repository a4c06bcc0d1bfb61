"""Faux Go positions from host data: a board and its enclosures, checked at the boundary."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gomoku_jax.games.fauxgo.config import FauxGoConfig
from gomoku_jax.games.fauxgo.state import BLACK, WHITE, State


def from_board(config: FauxGoConfig, board, owner=None, to_move: int = BLACK, *,
               black_player: int = 0) -> State:
    """A live State for a position: `board` int[N, N] (+1 black, -1 white, 0 empty),
    `owner` int[N, N] (the enclosure owner of empty cells, default none), `to_move` +1 / -1.
    Counters start at zero (ply, passes, captures); komi is `config.komi`.

    Raises:
      ValueError: a wrong shape, a value outside {-1, 0, 1}, an owner under a stone, a bad
        `to_move` or `black_player`.
    """
    n = config.board_size
    board = np.asarray(board)
    owner = np.zeros((n, n), np.int64) if owner is None else np.asarray(owner)
    for name, grid in (("board", board), ("owner", owner)):
        if grid.shape != (n, n):
            raise ValueError(f"{name} must have shape ({n}, {n}), got {grid.shape}")
        if not np.isin(grid, (-1, 0, 1)).all():
            raise ValueError(f"{name} values must be -1, 0 or 1")
    if np.any((board != 0) & (owner != 0)):
        raise ValueError("owner must be 0 under every stone (enclosures are empty cells)")
    if to_move not in (BLACK, WHITE):
        raise ValueError(f"to_move must be {BLACK} (black) or {WHITE} (white), got {to_move!r}")
    if black_player not in (0, 1):
        raise ValueError(f"black_player must be 0 or 1, got {black_player!r}")
    return State(
        board=jnp.asarray(board, jnp.int8), owner=jnp.asarray(owner, jnp.int8),
        color=jnp.int8(to_move), black_player=jnp.int32(black_player), passes=jnp.int32(0),
        ply=jnp.int32(0), captures=jnp.zeros((2,), jnp.int32), last_action=jnp.int32(-1),
        winner=jnp.int8(0), rewards=jnp.zeros((2,), jnp.float32),
        terminated=jnp.bool_(False), truncated=jnp.bool_(False),
        komi=jnp.float32(config.komi))
