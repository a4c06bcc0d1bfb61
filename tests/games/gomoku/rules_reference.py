"""The win condition of every Gomoku rule, in plain Python, written from the rules' text.

Independent of the JAX code on purpose (no gomoku_jax import, no NumPy): it reads a board
as a list of rows and walks the maximal runs one stone at a time.

  freestyle    k or more in a row wins (both colours).
  exact5       exactly k in a row wins; an overline (k + 1 or more) does not.
  renju        k = 5: black wins with exactly five, white with five or more. Black may not
               play a forbidden point (double-three, double-four, overline) unless the
               move makes an exact five: that is decided by the renju reference
               (`forbidden` below takes it as a callable), not here.
  caro         k or more in a row wins unless both cells just beyond the ends of that
               maximal run hold opponent stones; the board's edge is not a block.
  caro_exact5  caro with exactly k.

Board values: +1 black, -1 white, 0 empty.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

BLACK, WHITE = 1, -1
RULES = ("freestyle", "exact5", "renju", "caro", "caro_exact5")
LINES = ((0, 1), (1, 0), (1, 1), (1, -1))

Board = Sequence[Sequence[int]]


def _on(board: Board, r: int, c: int) -> bool:
    return 0 <= r < len(board) and 0 <= c < len(board)


def maximal_run(board: Board, r: int, c: int, dr: int, dc: int
                ) -> tuple[int, Optional[int], Optional[int]]:
    """(length, value beyond the start, value beyond the end) of the maximal run of the
    stone at (r, c) along (dr, dc); None where the run ends at the board's edge."""
    colour = board[r][c]
    ends = []
    length = 1
    for sign in (-1, 1):
        rr, cc = r + sign * dr, c + sign * dc
        while _on(board, rr, cc) and board[rr][cc] == colour:
            length += 1
            rr, cc = rr + sign * dr, cc + sign * dc
        ends.append(board[rr][cc] if _on(board, rr, cc) else None)
    return length, ends[0], ends[1]


def run_wins(length: int, before: Optional[int], after: Optional[int], colour: int, k: int,
             rule: str) -> bool:
    """Does a maximal run of `colour` of `length` stones, with `before` / `after` beyond its
    ends (None: the edge), win under `rule`?"""
    if rule not in RULES:
        raise ValueError(rule)
    if rule in ("exact5", "caro_exact5") or (rule == "renju" and colour == BLACK):
        long_enough = length == k
    else:
        long_enough = length >= k
    if rule in ("caro", "caro_exact5"):
        return long_enough and not (before == -colour and after == -colour)
    return long_enough


def wins_at(board: Board, r: int, c: int, k: int, rule: str) -> bool:
    """The stone on (r, c) is part of a winning run (on any of its 4 lines)."""
    colour = board[r][c]
    if colour == 0:
        return False
    return any(run_wins(*maximal_run(board, r, c, dr, dc), colour, k, rule)
               for dr, dc in LINES)


def winners(board: Board, k: int, rule: str) -> set[int]:
    """The colours with a winning run anywhere on `board`."""
    n = len(board)
    return {board[r][c] for r in range(n) for c in range(n) if wins_at(board, r, c, k, rule)}


def place(board: Board, r: int, c: int, colour: int) -> list[list[int]]:
    out = [list(row) for row in board]
    out[r][c] = colour
    return out


def five_cells(board: Board, colour: int, k: int, rule: str) -> list[tuple[int, int]]:
    """Empty cells where a `colour` stone wins at once."""
    n = len(board)
    return [(r, c) for r in range(n) for c in range(n)
            if board[r][c] == 0 and wins_at(place(board, r, c, colour), r, c, k, rule)]


def step_outcome(board: Board, colour: int, action: int, k: int, rule: str,
                 forbidden: Optional[Callable[[Board, int, int], bool]] = None) -> str:
    """What a move does, by the rules: "illegal" (off the board, an occupied cell, or under
    renju a black move on a point `forbidden(board, r, c)` says is forbidden), "win",
    "draw" (the board is full) or "play"."""
    n = len(board)
    if not 0 <= action < n * n:
        return "illegal"
    r, c = divmod(action, n)
    if board[r][c] != 0:
        return "illegal"
    if rule == "renju" and colour == BLACK:
        if forbidden is None:
            raise ValueError("renju needs the forbidden-point reference")
        if forbidden(board, r, c):
            return "illegal"
    after = place(board, r, c, colour)
    if wins_at(after, r, c, k, rule):
        return "win"
    if all(v != 0 for row in after for v in row):
        return "draw"
    return "play"
