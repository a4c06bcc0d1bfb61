"""Openings: the default set, offsets from the centre, validation and the file formats."""

from __future__ import annotations

import numpy as np
import pytest

import gomoku_jax
from gomoku_jax.eval.arena import opening_states
from gomoku_jax.games.gomoku import openings
from gomoku_jax.games.gomoku.openings import DEFAULT_OPENINGS, opening_actions
from gomoku_jax.games.gomoku.state import BLACK, WHITE

ENV7 = gomoku_jax.make("gomoku", board_size=7)


def states_of(env, offsets):
    """The positions after openings given as centre offsets, as the arena builds them."""
    return opening_states(env, opening_actions(offsets, env.board_size))


def test_the_default_set_is_three_stones_near_the_centre():
    assert len(DEFAULT_OPENINGS) == 8 and len(set(DEFAULT_OPENINGS)) == 8
    for o in DEFAULT_OPENINGS:
        assert len(o) == 3 and o[0] == (0, 0)
        assert all(max(abs(dr), abs(dc)) <= 2 for dr, dc in o)
    assert openings.normalize(DEFAULT_OPENINGS) == DEFAULT_OPENINGS


@pytest.mark.parametrize("n", [5, 7, 9, 15, 19])
def test_the_default_set_fits_every_board_size(n):
    env = gomoku_jax.make("gomoku", board_size=n)
    actions = env.default_openings()
    assert actions == opening_actions(DEFAULT_OPENINGS, n)
    assert len(actions) == 8 and all(len(a) == 3 for a in actions)
    assert all(isinstance(a, int) and 0 <= a < n * n for o in actions for a in o)
    states = opening_states(env, actions)
    assert states.board.shape == (8, n, n)
    np.testing.assert_array_equal(states.move_count, 3)
    np.testing.assert_array_equal(states.color, WHITE)  # three stones: white to move
    assert not states.terminated.any() and not states.truncated.any()
    c = n // 2
    assert (states.board[:, c, c] == BLACK).all()
    # Two black stones and one white on every board, all distinct positions.
    assert ((states.board == BLACK).sum(axis=(1, 2)) == 2).all()
    assert ((states.board == WHITE).sum(axis=(1, 2)) == 1).all()
    assert len({b.tobytes() for b in np.asarray(states.board)}) == 8
    # each action sequence puts its stones where the offsets say
    for o, acts in zip(DEFAULT_OPENINGS, actions):
        assert acts == tuple((c + dr) * n + (c + dc) for dr, dc in o)


def test_offsets_are_from_the_centre():
    assert openings.absolute_moves([[(0, 0), (-1, 0), (1, 2)]], 7) == [[(3, 3), (2, 3), (4, 5)]]
    assert openings.absolute_moves([[(0, 0)]], 8) == [[(4, 4)]]
    assert opening_actions([[(0, 0), (-1, 0), (1, 2)]], 7) == ((3 * 7 + 3, 2 * 7 + 3,
                                                                4 * 7 + 5),)
    assert opening_actions([[(0, 0)]], 8) == ((4 * 8 + 4,),)
    state = states_of(ENV7, [[(0, 0), (-1, 0), (1, 2)]])
    board = np.asarray(state.board[0])
    assert board[3, 3] == BLACK and board[2, 3] == WHITE and board[4, 5] == BLACK
    assert (board != 0).sum() == 3
    # last_moves come from the move list: black's last is (4, 5), white's (2, 3).
    np.testing.assert_array_equal(state.last_moves[0], [4 * 7 + 5, 2 * 7 + 3])


def test_an_even_opening_leaves_black_to_move():
    two = [[(0, 0), (0, 1)], [(0, 0), (1, 1)]]
    np.testing.assert_array_equal(states_of(ENV7, two).color, BLACK)


@pytest.mark.parametrize("bad, message", [
    ([], "the opening set is empty"),
    ([[(0, 0), (0, 1)], [(0, 0), (1, 1), (2, 2)]],
     "same number of stones.*opening 0 has 2, opening 1 has 3"),
    ([[(0, 0, 1)]], r"opening 0, move 0: expected a \(row, col\) offset pair"),
    ([[(0, 0), "ab"]], r"opening 0, move 1: expected a \(row, col\) offset pair"),
    ([[(0, 0), (True, 1)]], "opening 0, move 1: an offset must be an int, got True"),
    ([[(0, 0), (0.5, 1)]], "an offset must be an int, got 0.5"),
    ([5], r"opening 0: expected a list of \(row, col\) pairs"),
    ("0,0", "not a string"),
])
def test_malformed_sets_are_rejected(bad, message):
    with pytest.raises(ValueError, match=message):
        openings.normalize(bad)
    with pytest.raises(ValueError, match=message):
        opening_actions(bad, 7)


def test_off_board_stones_are_rejected():
    with pytest.raises(ValueError, match=r"opening 1, move 2: offset \(0, 3\) from the centre "
                                         r"\(2, 2\) is cell \(2, 5\), off the 5x5 board"):
        opening_actions([[(0, 0), (1, 0), (0, 2)], [(0, 0), (1, 0), (0, 3)]], 5)


def test_two_stones_on_one_cell_are_rejected():
    with pytest.raises(ValueError, match=r"opening 0 .*two stones on cell \(3, 3\) of the "
                                         r"7x7 board"):
        opening_actions([[(0, 0), (1, 0), (0, 0)]], 7)


def test_the_arena_rejects_illegal_action_openings():
    """Action sequences that skip `opening_actions`' checks are refused when replayed."""
    with pytest.raises(ValueError, match=r"opening 1 .*move 2: .*action 24 is occupied"):
        opening_states(ENV7, [(24, 17, 25), (24, 17, 24)])
    with pytest.raises(ValueError, match=r"opening 0 .*move 1: action 49 is off the board"):
        opening_states(ENV7, [(24, 49, 25)])


def test_an_opening_that_already_won_is_rejected():
    env = gomoku_jax.make("gomoku", board_size=7, win_length=3)
    won = [(0, -1), (1, -1), (0, 0), (1, 0), (0, 1)]  # black's three in a row
    with pytest.raises(ValueError, match="opening 1 .*the game is over \\(black won\\)"):
        states_of(env, [[(2, 2), (1, 1), (-2, 2), (-1, -1), (2, -2)], won])
    # The same stones are fine when five are needed.
    assert states_of(ENV7, [won]).board.shape == (1, 7, 7)


def test_parse_text_with_comments_and_separators():
    text = """
    # direct openings
    0,0  -1,0  1,2     # a trailing comment
    (0, 0) (-1, 1) (2, -2)

    0 0 ; 1 1 ; -2 -1
    """
    assert openings.parse_openings(text) == (((0, 0), (-1, 0), (1, 2)),
                                            ((0, 0), (-1, 1), (2, -2)),
                                            ((0, 0), (1, 1), (-2, -1)))


@pytest.mark.parametrize("text, message", [
    ("0,0 1,1\n0,0 1,x\n", "line 2: 'x' is not an integer offset"),
    ("0,0 1\n", r"line 1: an odd number of integers \(3\)"),
    ("# nothing\n\n", "the opening set is empty"),
    ("0,0 1,1\n0,0 1,1 2,2\n", "same number of stones"),
    ("[[[0, 0], [1, 1]],", "not valid JSON"),
    ('{"moves": []}', "needs an 'openings' key"),
    ('[[[0, 0], [1]]]', r"opening 0, move 1: expected a \(row, col\) offset pair"),
])
def test_parse_errors(text, message):
    with pytest.raises(ValueError, match=message):
        openings.parse_openings(text)


def test_parse_json_list_and_object():
    expected = (((0, 0), (-1, 0)), ((0, 0), (1, 1)))
    assert openings.parse_openings("[[[0, 0], [-1, 0]], [[0, 0], [1, 1]]]") == expected
    assert openings.parse_openings('{"openings": [[[0, 0], [-1, 0]], [[0, 0], [1, 1]]]}') \
        == expected


def test_load_openings_from_files(tmp_path):
    text = tmp_path / "openings.txt"
    text.write_text("0,0 -1,0 1,2\n0,0 -1,1 2,1\n")
    assert openings.load_openings(text) == (((0, 0), (-1, 0), (1, 2)),
                                            ((0, 0), (-1, 1), (2, 1)))
    js = tmp_path / "openings.json"
    js.write_text("[[[0, 0]], [[1, 1]]]")
    assert openings.load_openings(js) == (((0, 0),), ((1, 1),))
    bad = tmp_path / "bad.txt"
    bad.write_text("0,0 zz\n")
    with pytest.raises(ValueError, match="openings file .*bad.txt.*line 1: 'zz'"):
        openings.load_openings(bad)
    with pytest.raises(ValueError, match="cannot read openings file .*missing.txt"):
        openings.load_openings(tmp_path / "missing.txt")
