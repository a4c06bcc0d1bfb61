"""Renju's forbidden points on the host, for the programs that play people and other
programs (the web UI through `Gomoku.host_masks`, pbrain through `io.forbidden`):
`renju.forbidden_points` compiled once per board size and shared by every caller in the
process, and the legal cells of the side to move that follow from them (the rule of
`State.legal_action_mask`, on a NumPy board)."""

from __future__ import annotations

import jax
import numpy as np

from gomoku_jax.games.gomoku.renju import forbidden_points

_forbidden_points = jax.jit(forbidden_points)  # one compile per board size

# What a forbidden point is, for a person (a refused move's message, the board's marks).
RENJU_NOTE = ("a forbidden point for black under renju (a double-three, double-four or "
              "overline that makes no five)")


def forbidden_for_black(board: np.ndarray) -> np.ndarray:
    """bool[N*N]: the empty cells where a black stone is forbidden under renju (a
    double-three, double-four or overline that makes no five) on `board` (int[N, N], +1
    black, -1 white, 0 empty)."""
    return np.asarray(_forbidden_points(np.asarray(board, np.int8))).reshape(-1)


def renju_cells(board: np.ndarray, black_to_move: bool) -> tuple[np.ndarray, np.ndarray]:
    """(legal, forbidden), bool[N*N] each, for the side to move on `board` (int[N, N], +1
    black) under renju: black's forbidden points when black is to move (else none), and
    the empty cells less them (all empty cells when that leaves none: the mask's fallback,
    where any move loses)."""
    empty = np.asarray(board).reshape(-1) == 0
    forbidden = forbidden_for_black(board) if black_to_move else np.zeros_like(empty)
    legal = empty & ~forbidden
    return (legal if legal.any() else empty), forbidden


def warm(board_size: int) -> None:
    """Compile `forbidden_for_black` for `board_size` now (off any clock)."""
    forbidden_for_black(np.zeros((board_size, board_size), np.int8))
