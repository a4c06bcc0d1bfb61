"""The threat solver against a brute-force minimax over every empty cell, on small boards."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from gomoku_jax.games.gomoku.solver import Solver, windows


def makes_line(board: np.ndarray, n: int, k: int, cell: int, colour: int) -> bool:
    """Whether a `colour` stone on `cell` gives k in a row (walks the 4 lines)."""
    r, c = divmod(cell, n)
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            rr, cc = r + sign * dr, c + sign * dc
            while 0 <= rr < n and 0 <= cc < n and board[rr * n + cc] == colour:
                run += 1
                rr, cc = rr + sign * dr, cc + sign * dc
        if run >= k:
            return True
    return False


def brute_wins(board, n, k, me, plies) -> bool:
    """`me` to move forces k in a row within `plies`: every move, every reply."""
    empty = np.flatnonzero(board == 0)
    if any(makes_line(board, n, k, m, me) for m in empty):
        return True
    return plies >= 3 and any(brute_move_wins(board, n, k, me, m, plies) for m in empty)


def brute_move_wins(board, n, k, me, move, plies) -> bool:
    if makes_line(board, n, k, move, me):
        return True
    if plies < 3:
        return False
    board[move] = me
    try:
        replies = np.flatnonzero(board == 0)
        if not replies.size:
            return False
        for r in replies:
            if makes_line(board, n, k, r, -me):
                return False
            board[r] = -me
            won = brute_wins(board, n, k, me, plies - 2)
            board[r] = 0
            if not won:
                return False
        return True
    finally:
        board[move] = 0


def brute_saving(board, n, k, me, plies) -> list[int]:
    out = []
    for m in np.flatnonzero(board == 0):
        if makes_line(board, n, k, m, me):
            out.append(int(m))
            continue
        board[m] = me
        if not brute_wins(board, n, k, -me, plies):
            out.append(int(m))
        board[m] = 0
    return out


@st.composite
def positions(draw, n, k, stones):
    """A board with no k in a row, and the side to move by the stone counts."""
    count = draw(st.integers(*stones))
    cells = draw(st.permutations(range(n * n)))[:count]
    board = np.zeros(n * n, np.int8)
    board[cells[::2]] = 1
    board[cells[1::2]] = -1
    sums = board[windows(n, k)].sum(axis=1)
    if np.any(np.abs(sums) == k):
        board[cells[-1]] = 0  # usually enough; otherwise reject below
        sums = board[windows(n, k)].sum(axis=1)
    assume(not np.any(np.abs(sums) == k))
    me = 1 if np.sum(board == 1) == np.sum(board == -1) else -1
    return board, me


SMALL = [(6, 4, (12, 26)), (7, 4, (20, 36)), (7, 5, (26, 40))]


@pytest.mark.parametrize("n,k,stones", SMALL)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_wins_within_matches_brute_force(n, k, stones, data):
    board, me = data.draw(positions(n, k, stones))
    solver = Solver(n, k)
    for plies in (1, 3, 5):
        assert solver.wins_within(board, me, plies) == brute_wins(board.copy(), n, k, me, plies)


@pytest.mark.parametrize("n,k,stones", SMALL)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_winning_moves_match_brute_force(n, k, stones, data):
    board, me = data.draw(positions(n, k, stones))
    solver = Solver(n, k)
    for plies in (1, 3, 5):
        if plies > 1 and solver.wins_within(board, me, plies - 2):
            with pytest.raises(ValueError, match="already won"):
                solver.winning_moves(board, me, plies)
            break
        expected = [int(m) for m in np.flatnonzero(board == 0)
                    if brute_move_wins(board.copy(), n, k, me, int(m), plies)]
        assert solver.winning_moves(board, me, plies) == expected


@pytest.mark.parametrize("n,k,stones", SMALL)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_saving_moves_match_brute_force(n, k, stones, data):
    board, me = data.draw(positions(n, k, stones))
    solver = Solver(n, k)
    for plies in (1, 3):
        expected = brute_saving(board.copy(), n, k, me, plies)
        got = solver.saving_moves(board, me, plies)
        if got is None:
            assert len(expected) == np.sum(board == 0)
        else:
            assert got == expected and len(got) < np.sum(board == 0)


def test_open_three_on_a_big_board():
    """An open three: only the two cells next to it stop the open four (the far cells
    leave a four with two open ends)."""
    n = 15
    board = np.zeros((n, n), np.int8)
    board[7, 6:9] = -1
    board[0, 0], board[0, 2], board[14, 14] = 1, 1, 1  # black to move, far from the three
    solver = Solver(n, 5)
    assert solver.saving_moves(board, 1, 3) == [7 * n + 5, 7 * n + 9]
    assert solver.winning_moves(board, -1, 3) == [7 * n + 5, 7 * n + 9]
    assert solver.five_cells(board.reshape(-1), -1).size == 0
    assert sorted(solver.four_moves(board.reshape(-1), -1).tolist()) == [
        7 * n + c for c in (4, 5, 9, 10)]


def test_refuses_other_rules_and_bad_boards():
    with pytest.raises(ValueError, match="freestyle"):
        Solver(15, 5, rule="exact5")
    with pytest.raises(ValueError, match="15x15"):
        Solver(15, 5).wins_within(np.zeros(10, np.int8), 1, 3)
