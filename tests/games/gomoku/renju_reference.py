"""Renju's forbidden points for black, in plain Python, from the rules' text (RIF, 1996).

The oracle of `gomoku_jax.games.gomoku.renju`'s tests; it shares no code with it and walks the
whole line on a list-of-lists board (+1 black, -1 white, 0 empty) instead of looking windows
up in a table. The rules' terms, for black, along one line through the new stone p:

- five: exactly 5 black stones in an unbroken row; overline: 6 or more.
- four: 4 stones to which one more stone (at a "five point") makes a five. Each distinct set
  of 4 stones is one four, so a straight four (_XXXX_: one set, two five points) is one
  four, while X_XXX_X or XX_XX_XX with p inside are two fours on one line.
- straight four: an unbroken four with two five points.
- three: 3 stones to which one more stone, at a point where black may play (not forbidden,
  recursively), makes a straight four. A line that holds a four through p is not also
  counted as a three; a line counts at most one three.
- forbidden(p), for an empty p: black at p makes no five on any line, and makes an overline,
  or fours on two or more lines (or two fours on one line), or threes on two or more lines.
  A move that makes a five is never forbidden (the five wins first).

Every four, five point and three must contain p (the stone being judged). A completion
point q of a three is judged on the board with p already placed. `depth` bounds that
recursion: with depth 0 every completion point counts as legal, with depth d they are judged
with depth d - 1; `None` (the default) recurses until it stops on its own (each level adds a
stone, so it does).
"""

from __future__ import annotations

BLACK, WHITE, EMPTY = 1, -1, 0
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def on_board(board, r: int, c: int) -> bool:
    return 0 <= r < len(board) and 0 <= c < len(board)


def with_stone(board, cell, colour=BLACK):
    """A copy of `board` with a `colour` stone at `cell` (row, col)."""
    out = [list(row) for row in board]
    out[cell[0]][cell[1]] = colour
    return out


def line_cells(board, cell, direction) -> list[tuple[int, int]]:
    """Every on-board cell of the line through `cell` along `direction`, in order."""
    dr, dc = direction
    r, c = cell
    while on_board(board, r - dr, c - dc):
        r, c = r - dr, c - dc
    cells = []
    while on_board(board, r, c):
        cells.append((r, c))
        r, c = r + dr, c + dc
    return cells


def black_run(board, cell, direction) -> list[tuple[int, int]]:
    """The unbroken row of black stones through `cell` along `direction` (empty list when
    `cell` is not black)."""
    cells = line_cells(board, cell, direction)
    i = cells.index(cell)
    if board[cell[0]][cell[1]] != BLACK:
        return []
    lo, hi = i, i
    while lo > 0 and board[cells[lo - 1][0]][cells[lo - 1][1]] == BLACK:
        lo -= 1
    while hi + 1 < len(cells) and board[cells[hi + 1][0]][cells[hi + 1][1]] == BLACK:
        hi += 1
    return cells[lo:hi + 1]


def empties_on_line(board, cell, direction):
    return [q for q in line_cells(board, cell, direction) if board[q[0]][q[1]] == EMPTY]


def five_sets(board, p, direction) -> set[frozenset]:
    """With black on p: the distinct fours through p along `direction`, each as its set of
    4 stones (a straight four is one set with two five points)."""
    sets = set()
    for q in empties_on_line(board, p, direction):
        run = black_run(with_stone(board, q), p, direction)
        if len(run) == 5 and q in run:
            sets.add(frozenset(run) - {q})
    return sets


def is_straight_four(board, p, direction) -> bool:
    """With black on p: is the unbroken row through p exactly 4 long with both ends five
    points (each makes exactly five)?"""
    run = black_run(board, p, direction)
    if len(run) != 4:
        return False
    ends = [(run[0][0] - direction[0], run[0][1] - direction[1]),
            (run[-1][0] + direction[0], run[-1][1] + direction[1])]
    for e in ends:
        if not on_board(board, *e) or board[e[0]][e[1]] != EMPTY:
            return False
        if len(black_run(with_stone(board, e), p, direction)) != 5:
            return False
    return True


def three_points(board, p, direction) -> list[tuple[int, int]]:
    """With black on p: the empty points q of the line where black would make a straight
    four through p (legality of q not checked)."""
    return [q for q in empties_on_line(board, p, direction)
            if is_straight_four(with_stone(board, q), p, direction)]


class Stats:
    """How deep the last `forbidden` calls recursed (max over calls since `reset`)."""

    max_depth = 0

    @classmethod
    def reset(cls):
        cls.max_depth = 0


def forbidden(board, p, depth: int | None = None, _level: int = 0) -> bool:
    """Is black forbidden to play the empty point `p` (row, col)?

    depth: None recurses fully; an int d judges completion points of threes with depth d - 1
    and, at 0, counts them all as legal (so the result can only err towards "forbidden").
    """
    if board[p[0]][p[1]] != EMPTY:
        raise ValueError(f"{p} is not empty")
    Stats.max_depth = max(Stats.max_depth, _level)
    b = with_stone(board, p)
    runs = [len(black_run(b, p, d)) for d in DIRECTIONS]
    if any(r == 5 for r in runs):
        return False
    if any(r >= 6 for r in runs):
        return True
    fours = [len(five_sets(b, p, d)) for d in DIRECTIONS]
    if sum(fours) >= 2:
        return True
    threes = 0
    for d, f in zip(DIRECTIONS, fours):
        if f:
            continue
        for q in three_points(b, p, d):
            if depth == 0 or not forbidden(b, q, None if depth is None else depth - 1,
                                           _level + 1):
                threes += 1
                break
    return threes >= 2


def forbidden_points(board, depth: int | None = None) -> list[list[bool]]:
    """bool per cell: `forbidden` on every empty cell, False on stones."""
    n = len(board)
    return [[board[r][c] == EMPTY and forbidden(board, (r, c), depth) for c in range(n)]
            for r in range(n)]


def winner_after(board, move, colour) -> int:
    """The winner (BLACK, WHITE or 0 for none yet) once `colour` plays the empty `move` on
    `board` (the board before the move): black wins with exactly five, white with five or
    more, and a forbidden black move loses (white wins)."""
    if board[move[0]][move[1]] != EMPTY:
        raise ValueError(f"{move} is not empty")
    if colour == BLACK and forbidden(board, move):
        return WHITE
    b = with_stone(board, move, colour)
    for d in DIRECTIONS:
        run = _colour_run(b, move, d, colour)
        if run == 5 or (colour == WHITE and run > 5):
            return colour
    return 0


def _colour_run(board, cell, direction, colour) -> int:
    cells = line_cells(board, cell, direction)
    i = cells.index(cell)
    lo, hi = i, i
    while lo > 0 and board[cells[lo - 1][0]][cells[lo - 1][1]] == colour:
        lo -= 1
    while hi + 1 < len(cells) and board[cells[hi + 1][0]][cells[hi + 1][1]] == colour:
        hi += 1
    return hi - lo + 1


def parse(text: str):
    """A board from rows of 'X' (black), 'O' (white), '.' (empty); spaces ignored."""
    rows = [row.replace(" ", "") for row in text.strip().splitlines()]
    values = {"X": BLACK, "O": WHITE, ".": EMPTY}
    board = [[values[ch] for ch in row] for row in rows]
    if any(len(row) != len(board) for row in board):
        raise ValueError("the board must be square")
    return board
