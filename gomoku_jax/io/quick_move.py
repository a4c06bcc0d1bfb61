"""A move without search, in NumPy on the host (no JAX call, nothing to compile): the
engine's move when its match clock cannot pay for the cheapest search move (`io.pbrain`,
"Time"). About a millisecond on 20x20.

Every empty cell is scored by the longest run of each side's stones through it, along the
four lines, if a stone were put there: our winning line first, then blocking the
opponent's, then the longest run (ours before the opponent's of the same length), then the
cell nearest the centre. Weak, but it never misses a five in one or a block of one, under
any of the game's rules.
"""

from __future__ import annotations

from typing import Optional, Union

import numpy as np

DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def _shifted(mask: np.ndarray, dr: int, dc: int) -> np.ndarray:
    """out[r, c] = mask[r + dr, c + dc], False off the board."""
    n = mask.shape[0]
    out = np.zeros_like(mask)
    out[max(0, -dr):min(n, n - dr), max(0, -dc):min(n, n - dc)] = \
        mask[max(0, dr):min(n, n + dr), max(0, dc):min(n, n + dc)]
    return out


def runs(stones: np.ndarray, win_length: int) -> np.ndarray:
    """int32[4, N, N]: for each direction, 1 + the side's stones in a row on both sides of
    each cell (each side counted up to `win_length`): the run a stone there would make.

    stones: bool[N, N], one side's stones.
    """
    out = []
    for dr, dc in DIRECTIONS:
        run = np.ones(stones.shape, np.int32)
        for sign in (1, -1):
            alive = np.ones(stones.shape, bool)
            for k in range(1, win_length + 1):
                alive &= _shifted(stones, sign * k * dr, sign * k * dc)
                run += alive
        out.append(run)
    return np.stack(out)


def _winning_cells(own: np.ndarray, opp: np.ndarray, win_length: int, exact: bool,
                   caro: bool) -> np.ndarray:
    """bool[N, N]: the cells where a stone of the `own` side wins: its maximal run on a line
    is k long (k or more unless `exact`) and, under `caro`, the cells just past both ends
    are not both `opp` stones (the edge does not block)."""
    n = own.shape[0]
    wins = np.zeros(own.shape, bool)
    for dr, dc in DIRECTIONS:
        run = np.ones(own.shape, np.int32)
        stopped = []
        for sign in (1, -1):
            alive = np.ones(own.shape, bool)
            stop = np.zeros(own.shape, bool)
            for k in range(1, n):
                stop |= alive & _shifted(opp, sign * k * dr, sign * k * dc)
                alive &= _shifted(own, sign * k * dr, sign * k * dc)
                run += alive
            stopped.append(stop)
        five = (run == win_length) if exact else (run >= win_length)
        if caro:
            five &= ~(stopped[0] & stopped[1])
        wins |= five
    return wins


RULES = ("freestyle", "exact5", "renju", "caro", "caro_exact5")


def quick_move(board: np.ndarray, win_length: int = 5, rule: Union[str, bool] = "freestyle",
               allowed: Optional[np.ndarray] = None, black: bool = True) -> int:
    """The action (y * N + x) of the no-search move for the side to move.

    board: int8[N, N], +1 the side to move's stones, -1 the opponent's, 0 empty (at least
      one empty cell).
    rule: the game's rule ("freestyle", "exact5", "renju", "caro", "caro_exact5"); what
      wins follows it for both sides (under renju black needs exactly five, white five or
      more). A bool is read as the former `exact` flag (True: "exact5").
    allowed: bool[N, N] or bool[N * N], the cells it may play (None: every empty cell).
      Under renju, with black to move, leave black's forbidden points out of it: this
      NumPy move does not detect them.
    black: the side to move plays black (only renju's colours depend on it).
    """
    if isinstance(rule, (bool, np.bool_)):
        rule = "exact5" if rule else "freestyle"
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    board = np.asarray(board)
    n = board.shape[0]
    empty = board == 0
    if allowed is not None:
        empty &= np.asarray(allowed, bool).reshape(board.shape)
    if not empty.any():
        raise ValueError("no empty (allowed) cell to play")
    own = runs(board == 1, win_length)
    opp = runs(board == -1, win_length)
    caro = rule in ("caro", "caro_exact5")

    def wins(side: int, is_black: bool) -> np.ndarray:
        exact = rule in ("exact5", "caro_exact5") or (rule == "renju" and is_black)
        return _winning_cells(board == side, board == -side, win_length, exact, caro)

    longest = np.maximum(2 * np.minimum(own.max(0), win_length) + 1,
                         2 * np.minimum(opp.max(0), win_length))
    rows, cols = np.indices((n, n))
    centre = np.maximum(abs(rows - n // 2), abs(cols - n // 2))
    score = (4000 * wins(1, black) + 2000 * wins(-1, not black) + 100 * longest
             + (own + opp).sum(0) - centre / (n + 1))
    return int(np.argmax(np.where(empty, score, -np.inf)))
