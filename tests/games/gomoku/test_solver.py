"""The threat solver against a brute-force minimax over every empty cell, on small boards."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

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


def brute_fives(board, n, k, colour) -> list[int]:
    return [int(c) for c in np.flatnonzero(board == 0) if makes_line(board, n, k, int(c), colour)]


def makes_four(board, n, k, cell, colour) -> bool:
    """Whether a `colour` stone on `cell` leaves k - 1 of its stones and one empty cell in
    some run of k cells through `cell` (walks the 4 lines)."""
    r, c = divmod(cell, n)
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for start in range(-(k - 1), 1):
            run = [(r + (start + i) * dr, c + (start + i) * dc) for i in range(k)]
            if not all(0 <= rr < n and 0 <= cc < n for rr, cc in run):
                continue
            values = [colour if (rr, cc) == (r, c) else board[rr * n + cc] for rr, cc in run]
            if values.count(colour) == k - 1 and values.count(0) == 1:
                return True
    return False


def brute_vcf_moves(board, n, k, me, plies, first=False) -> list[int]:
    """The moves with which `me` (to move) wins within `plies` by fives and fours only:
    every empty cell tried (`first`: up to the first that wins)."""
    threats = brute_fives(board, n, k, -me)  # (the same for every move: found once)
    out = []
    for m in np.flatnonzero(board == 0):
        if brute_vcf_move(board, n, k, me, int(m), plies, threats):
            out.append(int(m))
            if first:
                break
    return out


def brute_vcf_move(board, n, k, me, move, plies, threats) -> bool:
    """The VCF rules, from the definitions: a five wins; else the move must block the
    opponent's only five (`threats`: its five cells; none if it has two) and must make a
    four; then two five cells of `me` win, one is blocked and the VCF goes on."""
    if makes_line(board, n, k, move, me):
        return True
    if plies < 3:
        return False
    if len(threats) >= 2 or (threats and move != threats[0]):
        return False
    if not makes_four(board, n, k, move, me):
        return False
    board[move] = me
    try:
        after = brute_fives(board, n, k, me)
        assert after, "a four leaves a five cell"
        if len(after) >= 2:
            return True
        if plies < 5:
            return False
        block = after[0]
        if makes_line(board, n, k, block, -me):
            return False
        board[block] = -me
        won = bool(brute_vcf_moves(board, n, k, me, plies - 2, first=True))
        board[block] = 0
        return won
    finally:
        board[move] = 0


VCF_PLIES = (1, 3, 5, 7, 9)


def check_vcf(solver, board, n, k, me):
    for plies in VCF_PLIES:
        expected = brute_vcf_moves(board.copy(), n, k, me, plies)
        assert solver.vcf_wins_within(board, me, plies) == bool(expected), plies
        assert solver.vcf_moves(board, me, plies) == expected, plies
    depth = solver.vcf_depth(board, me, 9)
    assert depth == next((p for p in VCF_PLIES if solver.vcf_wins_within(board, me, p)), None)


@pytest.mark.parametrize("n,k,stones", [(7, 4, (12, 30)), (6, 4, (10, 24)), (7, 5, (20, 36))])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_vcf_matches_brute_force(n, k, stones, data):
    board, me = data.draw(positions(n, k, stones))
    check_vcf(Solver(n, k), board, n, k, me)


def test_vcf_matches_brute_force_on_deep_positions():
    """Positions the generator labels `fours_7` / `fours_9` on 7x7 (k = 5), where VCFs of
    three and four fours are the point, against the brute force at every depth."""
    from gomoku_jax.games.gomoku import tactics_suite
    suite = tactics_suite.generate(7, per_category=3, seed=12, max_positions=5_000,
                                   categories=tactics_suite.FOURS_CATEGORIES)
    assert len(suite.puzzles) == 6
    solver = Solver(7, 5)
    for p in suite.puzzles:
        board = p.board.reshape(-1)
        check_vcf(solver, board, 7, 5, p.to_move)
        assert solver.vcf_depth(board, p.to_move, 9) == tactics_suite.FOURS_PLIES[p.category]


@pytest.mark.parametrize("n,k,stones", SMALL)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_vcf_win_is_a_win(n, k, stones, data):
    """A VCF within p plies is a win within p plies (the converse fails: threes)."""
    board, me = data.draw(positions(n, k, stones))
    solver = Solver(n, k)
    for plies in (1, 3, 5):
        if solver.vcf_wins_within(board, me, plies):
            assert solver.wins_within(board, me, plies)
        if plies > 1 and not solver.wins_within(board, me, plies - 2):
            assert set(solver.vcf_moves(board, me, plies)) <= set(
                solver.winning_moves(board, me, plies))


def test_vcf_of_three_fours_on_a_big_board():
    """Hand-built 7-ply VCF: black (2, 5) makes a four on row 2 (white must block (2, 6)),
    then (6, 5) a four on column 5 (white must block (3, 5)) that also makes the three
    (6, 3)-(6, 5), then (6, 2) or (6, 6) an open four, and five at ply 7. (2, 5) is its only
    start. Black also wins within 5 plies, but not by fours: (6, 5) at once is a double
    three, which a VCF search does not see."""
    n = 15
    board = np.zeros((n, n), np.int8)
    for r, c in [(2, 2), (2, 3), (2, 4), (4, 5), (5, 5), (6, 3), (6, 4)]:
        board[r, c] = 1
    for r, c in [(2, 1), (1, 5), (14, 14), (14, 0), (0, 14), (14, 7), (7, 14)]:
        board[r, c] = -1
    solver = Solver(n, 5)
    b = board.reshape(-1).copy()
    cell = lambda r, c: r * n + c  # noqa: E731
    assert solver.five_cells(b, -1).size == 0 and solver.five_cells(b, 1).size == 0
    assert solver.four_moves(b, 1).tolist() == [cell(2, 5), cell(2, 6)]
    assert solver.vcf_depth(b, 1, 9) == 7
    assert not solver.vcf_wins_within(b, 1, 5) and solver.vcf_moves(b, 1, 5) == []
    assert solver.vcf_moves(b, 1, 7) == [cell(2, 5)] == solver.vcf_moves(b, 1, 9)
    assert solver.vcf_wins_within(b, 1, 7) and solver.vcf_wins_within(b, 1, 9)
    assert solver.wins_within(b, 1, 5) and cell(6, 5) in solver.winning_moves(b, 1, 5)
    assert np.array_equal(b, board.reshape(-1))  # the solver never modifies its input
    b[cell(2, 5)], b[cell(2, 6)] = 1, -1  # the forced exchange: a VCF of 5 plies is left
    assert solver.vcf_moves(b, 1, 5) == [cell(6, 5)] and solver.vcf_depth(b, 1, 9) == 5
    b[cell(6, 5)], b[cell(3, 5)] = 1, -1
    assert solver.vcf_moves(b, 1, 3) == [cell(6, 2), cell(6, 6)]


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
