"""Faux Go's rules on hand-made positions: captures in the middle, at the edge and in a
corner, a fort, a self-sealing move, a capture that frees a sealed own group, two passes,
the ply cap, illegal moves; and bad positions at the boundary."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax.games.fauxgo import BLACK, WHITE

ENV5 = gomoku_jax.make("fauxgo", board_size=5)
ENV7 = gomoku_jax.make("fauxgo", board_size=7)


@functools.lru_cache(maxsize=None)
def step_fn(env):
    return jax.jit(env.step)


def cell(env, row, col):
    return row * env.board_size + col


def play(env, moves, state=None):
    """Plays (row, col) pairs or "pass" from `state` (default: the start, black player 0)."""
    state = env.from_board(np.zeros((env.board_size,) * 2)) if state is None else state
    for m in moves:
        action = env.pass_action if m == "pass" else cell(env, *m)
        assert bool(state.legal_action_mask[action]), (m, env.to_text(state))
        state = step_fn(env)(state, jnp.int32(action))
    return state


def parse(rows):
    """Board and owner from text: X / O stones, x / o owned empty cells, . empty."""
    stones = {"X": 1, "O": -1}
    owned = {"x": 1, "o": -1}
    board = np.array([[stones.get(ch, 0) for ch in r.split()] for r in rows])
    owner = np.array([[owned.get(ch, 0) for ch in r.split()] for r in rows])
    return board, owner


def assert_position(state, rows):
    board, owner = parse(rows)
    np.testing.assert_array_equal(np.asarray(state.board), board, err_msg=str(state))
    np.testing.assert_array_equal(np.asarray(state.owner), owner, err_msg=str(state))


def test_capture_in_the_middle():
    s = play(ENV7, [(2, 3), (3, 3), (3, 2), "pass", (4, 3), "pass", (3, 4)])
    assert s.captures.tolist() == [1, 0]
    assert int(s.board[3, 3]) == 0 and int(s.owner[3, 3]) == BLACK
    # white may not play inside black's enclosure, black may
    assert not bool(s.legal_action_mask[cell(ENV7, 3, 3)]) and int(s.color) == WHITE
    s2 = play(ENV7, ["pass", (3, 3)], s)
    assert int(s2.board[3, 3]) == BLACK and int(s2.owner[3, 3]) == 0


def test_capture_at_the_edge_and_in_a_corner():
    s = play(ENV5, [(0, 2), (0, 3), (1, 3), "pass", (0, 4)])
    assert s.captures.tolist() == [1, 0] and int(s.owner[0, 3]) == BLACK
    s = play(ENV5, [(0, 1), (0, 0), (1, 0)])
    assert s.captures.tolist() == [1, 0] and int(s.owner[0, 0]) == BLACK


def test_a_walled_off_empty_pocket_becomes_a_fort():
    s = play(ENV7, [(2, 3), "pass", (3, 2), "pass", (4, 3), "pass", (3, 4)])
    assert s.captures.tolist() == [0, 0] and int(s.owner[3, 3]) == BLACK
    assert not bool(s.legal_action_mask[cell(ENV7, 3, 3)])
    assert ENV7.scores(s).tolist() == [5.0, 0.0]  # 4 stones and 1 owned cell


def test_a_self_sealing_move_loses_its_stones():
    board, _ = parse([". X . . .",
                      "X . . . .",
                      ". . . . .",
                      ". O . . .",
                      ". . . . ."])
    s = play(ENV5, [(0, 0)], ENV5.from_board(board, to_move=WHITE))
    assert_position(s, ["x X . . .",
                        "X . . . .",
                        ". . . . .",
                        ". O . . .",
                        ". . . . ."])
    assert s.captures.tolist() == [1, 0]  # the white stone counts for black


def test_a_capture_frees_the_group_the_move_would_have_sealed():
    """Black's corner stone has no way out once placed, but it first captures the white
    stone beside it, whose cell (now black's, on the edge) lets it escape."""
    board, _ = parse([". . . . X",
                      ". O . . .",
                      "X . . . .",
                      "O X . . .",
                      ". O O X ."])
    s = play(ENV5, [(4, 0)], ENV5.from_board(board))
    assert_position(s, [". . . . X",
                        ". O . . .",
                        "X . . . .",
                        "x X . . .",
                        "X O O X ."])
    assert s.captures.tolist() == [1, 0]


def test_two_passes_end_the_game_by_score():
    s = play(ENV5, [(2, 2), "pass"])
    assert not bool(s.terminated) and int(s.passes) == 1
    s = play(ENV5, ["pass"], s)
    assert bool(s.terminated) and not bool(s.truncated) and int(s.winner) == BLACK
    assert s.rewards.tolist() == [1.0, -1.0]  # black is player 0 here
    again = step_fn(ENV5)(s, jnp.int32(0))
    assert again.rewards.tolist() == [0.0, 0.0] and bool(again.terminated)
    # komi decides an even count; a draw is zero for both
    for komi, winner in ((1.5, WHITE), (1.0, 0)):
        env = gomoku_jax.make("fauxgo", board_size=5, komi=komi)
        s = play(env, [(2, 2), "pass", "pass"])
        assert int(s.winner) == winner and s.rewards.tolist() == [winner, -winner]


def test_komi_is_a_traced_leaf_one_compiled_step_scores_every_komi():
    """Komi is the state's float32[] leaf (set by `init` from the config), not part of the
    compiled program: one jitted step, traced once, decides the same position three ways."""
    traces = []

    def counted(state, action):
        traces.append(None)  # runs once per trace
        return ENV5.step(state, action)

    step = jax.jit(counted)
    s = play(ENV5, [(2, 2), "pass"])  # one black stone; white's pass ends the game
    for komi, winner in ((0.5, BLACK), (1.5, WHITE), (1.0, 0)):
        end = step(s.replace(komi=jnp.float32(komi)), jnp.int32(ENV5.pass_action))
        assert bool(end.terminated) and int(end.winner) == winner, komi
        assert ENV5.scores(end).tolist() == [1.0, komi]
    assert len(traces) == 1
    for komi in (0.0, -2.5, 7.5):
        state = gomoku_jax.make("fauxgo", board_size=5, komi=komi).init(jax.random.key(0))
        assert state.komi.dtype == jnp.float32 and float(state.komi) == komi
        assert jax.tree.structure(state) == jax.tree.structure(ENV5.init(jax.random.key(0)))
    assert float(ENV5.from_board(np.zeros((5, 5))).komi) == 0.0
    assert "white 3.5" in ENV5.to_text(s.replace(komi=jnp.float32(3.5)))


def test_a_placement_between_passes_resets_the_count():
    s = play(ENV5, ["pass", (1, 1), "pass"])
    assert not bool(s.terminated) and int(s.passes) == 1


def test_the_ply_cap_scores_the_game():
    env = ENV5
    s = env.from_board(np.zeros((5, 5))).replace(ply=jnp.int32(2 * 25 - 1))
    s = play(env, [(2, 2)], s)
    assert bool(s.terminated) and not bool(s.truncated) and int(s.winner) == BLACK
    assert env.max_game_length == 50


@pytest.mark.parametrize("action", [-1, 26, 100])
def test_an_out_of_range_action_loses(action):
    s = step_fn(ENV5)(ENV5.from_board(np.zeros((5, 5))), jnp.int32(action))
    assert bool(s.terminated) and s.rewards.tolist() == [-1.0, 1.0] and int(s.winner) == WHITE


def test_occupied_cells_and_opponent_enclosures_are_illegal_and_lose():
    s = play(ENV7, [(2, 3), (3, 3), (3, 2), "pass", (4, 3), "pass", (3, 4)])  # black's enclosure
    for target in ((2, 3), (3, 3)):
        lost = step_fn(ENV7)(s, jnp.int32(cell(ENV7, *target)))
        assert bool(lost.terminated) and int(lost.winner) == BLACK
        np.testing.assert_array_equal(lost.board, s.board)


@pytest.mark.parametrize("kwargs, message", [
    (dict(board=np.zeros((4, 4))), "board must have shape"),
    (dict(board=np.full((5, 5), 2)), "board values must be"),
    (dict(board=np.eye(5), owner=np.eye(5)), "owner must be 0 under every stone"),
    (dict(board=np.zeros((5, 5)), to_move=0), "to_move must be"),
])
def test_from_board_refuses_bad_positions(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ENV5.from_board(**kwargs)


@pytest.mark.parametrize("options, message", [
    (dict(board_size=4), "board_size must be an int in 5..19"),
    (dict(board_size=20), "board_size must be an int in 5..19"),
    (dict(komi=float("nan")), r"komi must be in \[-1000, 1000\]"),
    (dict(komi=1e308), r"komi must be in \[-1000, 1000\]"),  # float32 would make it inf
    (dict(komi="lots"), "field 'komi' takes a float, got 'lots'"),
])
def test_make_refuses_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        gomoku_jax.make("fauxgo", **options)


def test_text_and_svg_show_enclosures():
    s = play(ENV7, [(2, 3), (3, 3), (3, 2), "pass", (4, 3), "pass", (3, 4)])
    text = ENV7.to_text(s)
    assert " x " in text and "score black 5, white 0" in text
    svg = ENV7.to_svg(s)
    assert svg.startswith("<svg") and "rgba(0,0,0,0.28)" in svg
    assert s._repr_html_() == svg and str(s) == text  # Jupyter and print show the same
    assert ENV7.action_to_text(ENV7.pass_action) == "pass"
    assert ENV7.action_to_text(cell(ENV7, 3, 4)) == "(3, 4)"
