"""The opening rule of the engines that play people and other programs (pbrain, the web
UI): on the empty board the centre, with 1 to 4 stones a move within two cells of a stone.

`OpeningGomoku` is Gomoku whose candidate weights (the search's prior shaping) follow the
rule (`opening_weights`), instead of the proximity mask's all-ones opening exception, which
had the search answer an empty board at the edge; both live in `env` (Gomoku's
`for_people` is an `OpeningGomoku`) and are named here too. `opening_cells` is the rule as
a mask, for an engine that also checks the agent's move.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from gomoku_jax.games.gomoku.env import NEAR, OPENING, OpeningGomoku, opening_weights

__all__ = ["EMPTY", "NEAR", "OPENING", "OpeningGomoku", "opening_cells", "opening_weights"]

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
