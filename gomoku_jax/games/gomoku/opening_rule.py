"""The opening rule of the engines that play people and other programs (pbrain, the web
UI): on the empty board the centre, with 1 to 4 stones a move within two cells of a stone.

`OpeningGomoku` is Gomoku whose candidate weights (the search's prior shaping) follow the
rule, instead of the proximity mask's all-ones opening exception, which had the search
answer an empty board at the edge; `opening_cells` is the rule as a mask, for an engine
that also checks the agent's move.
"""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.features.proximity import ProximityConfig, proximity_mask

OPENING = ProximityConfig()  # its opening_stones: the opening rule's extent
NEAR = 2  # in the opening, moves within this Chebyshev distance of a stone
EMPTY = 0


def opening_cells(board: np.ndarray) -> Optional[np.ndarray]:
    """bool[N*N]: the moves the opening rule allows on `board` (int[N, N], 0 empty), or
    None when it allows all legal ones. Empty board: the centre (N // 2, N // 2) only;
    1 .. `OPENING.opening_stones` - 1 stones: the empty cells within Chebyshev distance
    `NEAR` of a stone; more stones: None."""
    n = board.shape[0]
    stones = int(np.count_nonzero(board))
    if stones >= OPENING.opening_stones:
        return None
    allowed = np.zeros((n, n), bool)
    if stones == 0:
        allowed[n // 2, n // 2] = True
    else:
        padded = np.pad(board != EMPTY, NEAR)
        for dy in range(2 * NEAR + 1):
            for dx in range(2 * NEAR + 1):
                allowed |= padded[dy:dy + n, dx:dx + n]
        allowed &= board == EMPTY
    return allowed.reshape(-1)


def opening_weights(board: jax.Array, config: ProximityConfig = OPENING) -> jax.Array:
    """float32[N, N] candidate weights with the engine's opening rule (jittable): on the
    empty board 1 / (1 + d), d the Chebyshev distance to the centre (N // 2, N // 2)
    (seed 000's centre weighting); with 1 .. opening_stones - 1 stones the proximity mask
    of the first `NEAR` rings only (1.0, 0.5; 0 farther); then seed 000's proximity mask."""
    n = board.shape[-1]
    stones = jnp.sum(board != 0)
    line = jnp.abs(jnp.arange(n) - n // 2)
    centre = 1.0 / (1.0 + jnp.maximum(line[:, None], line[None, :]).astype(jnp.float32))
    near = proximity_mask(board, ProximityConfig(distance_weights=config.distance_weights[:NEAR],
                                                 far_weight=0.0, opening_stones=0))
    return jnp.where(stones == 0, centre,
                     jnp.where(stones < config.opening_stones, near, proximity_mask(board,
                                                                                    config)))


class OpeningGomoku(Gomoku):
    """Gomoku whose candidate weights (the search's prior shaping) follow the engine's
    opening rule (`opening_weights`) instead of the proximity mask's all-ones opening
    exception; the game itself is Gomoku's."""

    def candidate_weights(self, state) -> jax.Array:
        return opening_weights(state.board).reshape(-1)
