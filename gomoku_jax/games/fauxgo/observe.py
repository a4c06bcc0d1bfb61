"""Faux Go's observation: five planes from the side to move's view."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gomoku_jax.games.fauxgo.state import BLACK, EMPTY, State


def observe(state: State) -> jax.Array:
    """float32[N, N, 5]: own stones, opponent stones, own enclosures, opponent enclosures
    (owned empty cells), and a plane of ones when black is to move."""
    me = state.color
    empty = state.board == EMPTY
    planes = [state.board == me, state.board == -me, empty & (state.owner == me),
              empty & (state.owner == -me),
              jnp.broadcast_to(me == BLACK, state.board.shape)]
    return jnp.stack(planes, axis=-1).astype(jnp.float32)
