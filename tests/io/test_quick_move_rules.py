"""The no-search move (`io.quick_move`) under every rule: it completes its own five, else
blocks the opponent's, where the rule (`tests/games/gomoku/rules_reference.py`) says a five
is one, for either colour to move."""

import functools
import importlib.util
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_jax.io.quick_move import quick_move

RULES = ("freestyle", "exact5", "renju", "caro", "caro_exact5")


@functools.lru_cache(maxsize=None)
def reference():
    path = pathlib.Path(__file__).parent.parent / "games" / "gomoku" / "rules_reference.py"
    spec = importlib.util.spec_from_file_location("rules_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@settings(max_examples=80, deadline=None)
@given(n=st.integers(6, 9), rule=st.sampled_from(RULES), black=st.booleans(),
       data=st.data())
def test_quick_move_wins_or_blocks_under_every_rule(n, rule, black, data):
    ref = reference()
    cells = data.draw(st.lists(st.sampled_from([0, 0, 1, -1]), min_size=n * n,
                               max_size=n * n))
    board = np.asarray(cells, np.int8).reshape(n, n)  # +1: the side to move
    colour = 1 if black else -1
    absolute = (board * colour).tolist()  # +1 black
    if not (board == 0).any() or ref.winners(absolute, 5, rule):
        return
    action = quick_move(board, 5, rule, black=black)
    assert board.reshape(-1)[action] == 0
    wins = {r * n + c for r, c in ref.five_cells(absolute, colour, 5, rule)}
    blocks = {r * n + c for r, c in ref.five_cells(absolute, -colour, 5, rule)}
    if wins:
        assert action in wins
    elif blocks:
        assert action in blocks


def test_caro_blocked_five_is_neither_a_win_nor_a_threat():
    board = np.zeros((9, 9), np.int8)
    board[4, 0], board[4, 5] = -1, -1
    board[4, 1:4] = 1  # o x x x _ o: (4, 4) would make a five blocked at both ends
    board[0, 0:3] = -1  # |o o o _: the opponent's five cell (0, 3) (the edge is no block)
    assert quick_move(board, 4, "freestyle") == 4 * 9 + 4  # freestyle: our five
    assert quick_move(board, 4, "caro") == 3  # caro: no five of ours, block theirs
    assert quick_move(board, 4, True) == quick_move(board, 4, "exact5")  # the old flag


def test_renju_colours():
    board = np.zeros((9, 9), np.int8)
    board[4, 0:3] = 1
    board[4, 4:6] = 1  # x x x _ x x: an overline point for us
    board[0, 0:4] = -1  # the opponent's o o o o _: a five cell at (0, 4) for either colour
    assert quick_move(board, 5, "renju", black=False) == 4 * 9 + 3  # white: six wins
    assert quick_move(board, 5, "renju", black=True) == 4  # black: no win there, block
    with pytest.raises(ValueError, match="rule must be one of"):
        quick_move(board, 5, "gomoku")
