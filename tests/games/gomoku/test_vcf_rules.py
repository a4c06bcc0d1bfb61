"""The VCF search under renju, caro and caro_exact5, against a brute force written from the
rules (`rules_reference` for the fives, the renju reference for black's forbidden points),
and hand-made positions for what each rule changes.

The brute force follows vcf.py's semantics for every rule at once: at the attacker's turn
the defender's five cells restrict it (two or more: the line fails; one: only that cell);
an attacker move must leave it a five cell; the defender's answers are every cell (legal
for it: under renju not a forbidden point for black) after which the attacker has no five
cell; none: the attacker wins; one: it is forced; more: the line is not followed (what the
search proves is a win whose every four has one answer; under freestyle that is all VCFs).
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
import renju_reference
import rules_reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from test_vcf import random_boards as vcf_boards

from gomoku_jax.games.gomoku.vcf import VCFConfig, vcf

BLACK, WHITE = 1, -1


def legal_for(board, cell, colour, rule) -> bool:
    r, c = cell
    if board[r][c] != 0:
        return False
    return not (rule == "renju" and colour == BLACK and renju_reference.forbidden(board, cell))


def fives(board, colour, k, rule) -> list:
    return ref.five_cells(board, colour, k, rule)


def answers(board, att, k, rule) -> list:
    """The defender's cells after which the attacker has no five cell (the attacker has
    one now): on the 4 lines through the five cells (no other cell can change them)."""
    n = len(board)
    near = set()
    for r, c in fives(board, att, k, rule):
        for dr, dc in ref.LINES:
            for o in range(-n, n + 1):
                rr, cc = r + o * dr, c + o * dc
                if 0 <= rr < n and 0 <= cc < n and board[rr][cc] == 0:
                    near.add((rr, cc))
    return sorted(e for e in near if legal_for(board, e, -att, rule)
                  and not fives(ref.place(board, *e, -att), att, k, rule))


def bf_depth(board, att, k, rule, max_depth):
    board = [list(map(int, row)) for row in board]
    if fives(board, att, k, rule):
        return 0
    for d in range(1, max_depth + 1):
        if bf_within(board, att, k, rule, d):
            return d
    return None


def bf_within(board, att, k, rule, depth) -> bool:
    if depth == 0:
        return False
    n = len(board)
    threats = fives(board, -att, k, rule)
    if len(threats) >= 2:
        return False
    moves = threats or [(r, c) for r in range(n) for c in range(n) if board[r][c] == 0]
    for m in moves:
        if not legal_for(board, m, att, rule):
            continue
        after = ref.place(board, *m, att)
        if not fives(after, att, k, rule):
            continue
        answer = answers(after, att, k, rule)
        if not answer:
            return True
        if len(answer) == 1 and bf_within(ref.place(after, *answer[0], -att), att, k, rule,
                                          depth - 1):
            return True
    return False


def check_line(board, att, k, rule, line, depth) -> None:
    """`line` is a VCF of `depth` fours under the rule: replay it."""
    n = len(board)
    b = [list(map(int, row)) for row in board]
    moves = [int(x) for x in line[:2 * depth + 1]]
    assert all(int(x) == -1 for x in line[2 * depth + 1:])
    cell = lambda a: divmod(a, n)  # noqa: E731
    if depth == 0:
        assert cell(moves[0]) in fives(b, att, k, rule)
        return
    for i in range(depth):
        a, d = moves[2 * i], moves[2 * i + 1]
        assert legal_for(b, cell(a), att, rule), (i, a)
        b = ref.place(b, *cell(a), att)
        answer = answers(b, att, k, rule)
        if i < depth - 1:
            assert answer == [cell(d)], (i, answer, d)
        else:
            assert not answer, answer
            if d >= 0:  # the defender's block the line shows (-1: renju, none legal)
                b = ref.place(b, *cell(d), -att)
            else:
                assert rule == "renju" and att == WHITE
        if i < depth - 1:
            b = ref.place(b, *cell(d), -att)
    assert cell(moves[-1]) in fives(b, att, k, rule)


def random_boards(seed, count, n, k, rule, stones):
    return vcf_boards(seed, count, n, k, stones,
                      won=lambda b: bool(ref.winners(b.tolist(), k, rule)))


SHORTEST = VCFConfig(max_depth=3, max_nodes=2048, shortest=True)
BATCH = 8  # boards per search call, hand-made ones too
SMALL = [(7, 4, "caro", (9, 7)), (8, 4, "caro_exact5", (11, 9)),
         (9, 5, "renju", (14, 12))]
# (n, k) of every rule searched here: SMALL's, and exact5 where renju's forbidden four wins.
SIZES = {rule: (n, k) for n, k, rule, _ in SMALL} | {"exact5": (9, 5)}


@functools.lru_cache(maxsize=None)
def _search_all():
    """{rule: (boards int8[BATCH, n, n], attackers)} -> {rule: VCF results}: every rule of
    SIZES in one compiled program."""
    def run(inputs):
        return {rule: jax.vmap(functools.partial(vcf, win_length=SIZES[rule][1], rule=rule,
                                                 config=SHORTEST))(*inputs[rule])
                for rule in SIZES}

    return jax.jit(run)


def search(rule: str, boards, attackers):
    """The VCF of BATCH boards under `rule` (SIZES' n and k), through `_search_all` (the
    other rules search empty boards: no four, nothing to search)."""
    inputs = {r: (np.zeros((BATCH, n, n), np.int8), np.ones(BATCH, np.int8))
              for r, (n, _) in SIZES.items()}
    inputs[rule] = (np.asarray(boards, np.int8), np.asarray(attackers, np.int8))
    return jax.tree.map(np.asarray, _search_all()(inputs)[rule])


@pytest.mark.slow
@pytest.mark.parametrize("n,k,rule,stones", SMALL)
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_matches_brute_force(n, k, rule, stones, seed):
    boards, atts = random_boards(seed, BATCH, n, k, rule, stones)
    res = search(rule, boards, atts)
    for i, (b, att) in enumerate(zip(boards, atts)):
        want = bf_depth(b.tolist(), int(att), k, rule, SHORTEST.max_depth)
        assert not res.exhausted[i]
        assert bool(res.found[i]) == (want is not None), (b.tolist(), att, want)
        if want is not None:
            assert int(res.depth[i]) == want, (b.tolist(), att)
            check_line(b.tolist(), int(att), k, rule, res.line[i], want)


def board_of(rows: list[str]) -> np.ndarray:
    return np.array([[{"X": 1, "O": -1, ".": 0}[ch] for ch in row] for row in rows], np.int8)


def solve(board, att, k, rule):
    assert (board.shape[0], k) == SIZES[rule]
    res = search(rule, np.broadcast_to(board, (BATCH,) + board.shape), np.full(BATCH, att))
    return jax.tree.map(lambda x: x[0], res)


def test_renju_white_four_on_a_forbidden_point_wins():
    # Black X on column 8, rows 0-2 and 4-5: black on (3, 8) makes six, an overline that is
    # no five, so (3, 8) is forbidden for black. White O O O on row 3 (cols 5-7) with a
    # black stone at (3, 3): white's (3, 4) makes a four whose only five cell is (3, 8),
    # which black cannot take: white wins at depth 1 (the line shows -1 for the block).
    board = np.zeros((9, 9), np.int8)
    board[[0, 1, 2, 4, 5], 8] = BLACK
    board[3, 3] = BLACK
    board[3, 5:8] = WHITE
    assert renju_reference.forbidden(board.tolist(), (3, 8))
    res = solve(board, WHITE, 5, "renju")
    assert res.found and int(res.depth) == 1
    assert [int(x) for x in res.line[:3]] == [3 * 9 + 4, -1, 3 * 9 + 8]
    check_line(board.tolist(), WHITE, 5, "renju", res.line, 1)
    assert bf_depth(board.tolist(), WHITE, 5, "renju", 3) == 1


def test_renju_black_never_plays_a_forbidden_four():
    # Black X X X on row 4 (cols 1-3) and on column 4 (rows 1-3), white at their outer
    # ends: black's (4, 4) makes two fours (five cells (4, 5) and (5, 4)): a double four,
    # forbidden under renju. Under exact5 (no forbidden points) it wins at once.
    board = np.zeros((9, 9), np.int8)
    board[4, 1:4] = BLACK
    board[1:4, 4] = BLACK
    board[4, 0] = board[0, 4] = WHITE
    board[8, 0] = board[8, 2] = board[6, 7] = board[7, 5] = WHITE  # spare, no threat
    assert renju_reference.forbidden(board.tolist(), (4, 4))
    res = solve(board, BLACK, 5, "renju")
    want = bf_depth(board.tolist(), BLACK, 5, "renju", 3)
    assert bool(res.found) == (want is not None)
    if res.found:
        assert int(res.depth) == want
        check_line(board.tolist(), BLACK, 5, "renju", res.line, want)
    line = [int(x) for x in res.line]
    assert 4 * 9 + 4 not in line[0::2]
    exact = solve(board, BLACK, 5, "exact5")
    assert exact.found and int(exact.depth) == 1 and int(exact.move) == 4 * 9 + 4


def test_caro_four_with_two_answers_is_not_followed():
    # k = 4 on 7x7, caro: o x x on row 3; black's (3, 3) makes o x x x . . with the five
    # cell (3, 4), which white can meet at (3, 4) or at (3, 5) (the run would then be
    # blocked at both ends): two answers, so the four forces nothing.
    board = np.zeros((7, 7), np.int8)
    board[3, 0] = WHITE
    board[3, 1:3] = BLACK
    after = ref.place(board.tolist(), 3, 3, BLACK)
    assert answers(after, BLACK, 4, "caro") == [(3, 4), (3, 5)]
    assert answers(after, BLACK, 4, "freestyle") == [(3, 4)]
    res = solve(board, BLACK, 4, "caro")
    want = bf_depth(board.tolist(), BLACK, 4, "caro", 3)
    assert bool(res.found) == (want is not None)
    if want is not None:
        assert int(res.depth) == want
        check_line(board.tolist(), BLACK, 4, "caro", res.line, want)
