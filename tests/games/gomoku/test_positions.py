"""`Gomoku.from_board` / `from_moves` (host-side construction with validation) and the
full-board `positions.winning_colours`, checked against the incremental `rules.wins_through`.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import compiled, play_moves

import gomoku_jax
from gomoku_jax.games.gomoku import GameConfig, positions, rules
from gomoku_jax.games.gomoku.state import BLACK, WHITE

E15 = gomoku_jax.make("gomoku")
E9X = gomoku_jax.make("gomoku", board_size=9, rule="exact5")
E5K3 = gomoku_jax.make("gomoku", board_size=5, win_length=3)
E7K4X = gomoku_jax.make("gomoku", board_size=7, win_length=4, rule="exact5")

FIELDS = ("board", "color", "black_player", "last_moves", "move_count", "winner", "rewards",
          "terminated", "truncated")


def host(state) -> dict:
    return {f: np.asarray(getattr(state, f)) for f in FIELDS}


def assert_same_state(a, b, skip=()):
    ha, hb = host(a), host(b)
    for f in FIELDS:
        if f not in skip:
            np.testing.assert_array_equal(ha[f], hb[f], err_msg=f)
            assert ha[f].dtype == hb[f].dtype, f
    assert a.config == b.config


def board_from(n, black=(), white=()):
    board = np.zeros((n, n), np.int8)
    for r, c in black:
        board[r, c] = BLACK
    for r, c in white:
        board[r, c] = WHITE
    return board


def test_fields_cover_every_stored_field_of_the_state():
    """`assert_same_state` compares every pytree leaf of a State."""
    stored = {f.name for f in dataclasses.fields(E15.from_moves([]))} - {"config"}
    assert set(FIELDS) == stored


# ------------------------------------------------------------------ from_board: happy

def test_from_board_empty_is_the_initial_state():
    state = E15.from_board(np.zeros((15, 15), int))
    assert_same_state(state, rules.initial_state(E15.config, 0))
    assert bool(state.legal_action_mask.all())


@pytest.mark.parametrize("black_player", [0, 1])
@pytest.mark.parametrize("to_move", [None, 1, "black", "Black", "B", np.int64(1)])
def test_from_board_black_to_move(to_move, black_player):
    board = board_from(15, black=[(7, 7), (3, 4)], white=[(7, 8), (0, 0)])
    state = E15.from_board(board.tolist(), to_move, black_player=black_player)
    s = host(state)
    np.testing.assert_array_equal(s["board"], board)
    assert s["board"].dtype == np.int8
    assert s["color"] == BLACK and s["move_count"] == 4 and s["winner"] == 0
    assert s["black_player"] == black_player
    assert int(state.current_player) == black_player
    np.testing.assert_array_equal(s["last_moves"], [-1, -1])
    assert not s["terminated"] and not s["truncated"] and s["truncated"].dtype == np.bool_
    mask = np.asarray(state.legal_action_mask)
    assert mask.sum() == 225 - 4 and not mask[7 * 15 + 7] and not mask[0]
    obs = np.asarray(E15.observe(state))
    assert obs[..., 2:4].sum() == 0  # a board says nothing about the last move
    assert (obs[..., 4] == 1).all()


@pytest.mark.parametrize("to_move", [None, -1, "white", "WHITE", "w", np.int8(-1)])
def test_from_board_white_to_move(to_move):
    board = board_from(9, black=[(4, 4), (4, 5)], white=[(5, 5)])
    state = E9X.from_board(board, to_move, black_player=1)
    assert int(state.color) == WHITE
    assert int(state.current_player) == 0  # white is player 0 when black is player 1
    assert int(state.move_count) == 3


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8])
def test_from_board_accepts_integer_dtypes(dtype):
    board = board_from(5, black=[(0, 0)]).astype(dtype)
    state = E5K3.from_board(board)
    assert int(state.color) == WHITE and int(np.asarray(state.board)[0, 0]) == BLACK


def test_from_board_terminal_positions_with_allow_terminal():
    # black has five (with white to move): a finished game
    board = board_from(15, black=[(7, c) for c in range(3, 8)],
                       white=[(0, 0), (0, 2), (0, 4), (0, 6)])
    with pytest.raises(ValueError, match="allow_terminal"):
        E15.from_board(board)
    state = E15.from_board(board, allow_terminal=True)
    assert bool(state.terminated) and int(state.winner) == BLACK
    assert int(state.color) == WHITE
    np.testing.assert_array_equal(state.rewards, [0.0, 0.0])
    assert bool(state.legal_action_mask.all())
    # stepping it changes nothing
    after = compiled(E15).step(state, np.int32(100))
    np.testing.assert_array_equal(after.board, state.board)
    # white wins (black to move)
    board = board_from(5, black=[(4, 0), (4, 2), (2, 4)], white=[(0, 0), (1, 1), (2, 2)])
    state = E5K3.from_board(board, allow_terminal=True)
    assert bool(state.terminated) and int(state.winner) == WHITE and int(state.color) == BLACK


def test_from_board_exact5_overline_is_not_over():
    board = board_from(9, black=[(4, c) for c in range(6)],
                       white=[(0, 0), (0, 2), (0, 4), (0, 6), (2, 0)])
    state = E9X.from_board(board)  # no ValueError: a six does not win under exact5
    assert not bool(state.terminated) and int(state.winner) == 0
    with pytest.raises(ValueError, match="black has already won"):
        E15.from_board(np.pad(board, ((0, 6), (0, 6))))  # ... but it does in freestyle


def test_from_board_then_step_completes_a_five():
    # black four on a diagonal, open at both ends; black to move
    board = board_from(15, black=[(3, 3), (4, 4), (5, 5), (6, 6)],
                       white=[(3, 4), (0, 14), (14, 0), (10, 2)])
    for black_player in (0, 1):
        state = E15.from_board(board, "black", black_player=black_player)
        for action, wins in ((7 * 15 + 7, True), (2 * 15 + 2, True), (8 * 15 + 8, False)):
            after = compiled(E15).step(state, np.int32(action))
            assert bool(after.terminated) == wins
            if wins:
                assert int(after.winner) == BLACK
                assert float(after.rewards[black_player]) == 1.0
                assert float(after.rewards[1 - black_player]) == -1.0
            assert int(after.move_count) == 9 and int(after.last_action) == action


def test_from_board_then_step_illegal_on_occupied():
    board = board_from(5, black=[(2, 2)], white=[])
    state = E5K3.from_board(board)
    after = compiled(E5K3).step(state, np.int32(12))
    assert bool(after.terminated) and int(after.winner) == BLACK
    np.testing.assert_array_equal(after.rewards, [1.0, -1.0])


def test_from_board_full_board_draw_with_allow_terminal():
    drawn = np.array([[1, 1, -1, -1, 1],
                      [-1, -1, 1, 1, -1],
                      [1, 1, -1, -1, 1],
                      [-1, -1, 1, 1, -1],
                      [1, 1, -1, -1, 1]])
    # 13 black, 12 white; k=5: no full row, column or diagonal of one colour
    env = gomoku_jax.make("gomoku", board_size=5)
    with pytest.raises(ValueError, match="board is full"):
        env.from_board(drawn)
    state = env.from_board(drawn, allow_terminal=True)
    assert bool(state.terminated) and int(state.winner) == 0
    assert int(state.move_count) == 25


# ------------------------------------------------------------------ from_board: errors

@pytest.mark.parametrize("board, match", [
    (np.zeros((15, 14), int), r"shape \(15, 15\).*\(15, 14\)"),
    (np.zeros((9, 9), int), r"shape \(15, 15\)"),
    (np.zeros((15, 15, 1), int), "shape"),
    (np.zeros(225, int), "shape"),
    (np.zeros((15, 15), float), "integers.*float64"),
    (np.zeros((15, 15), np.float32), "integers.*float32"),
    (np.zeros((15, 15), bool), "integers.*bool"),
    ([[0.5] * 15] * 15, "integers"),
    (np.full((15, 15), "x"), "integers"),
])
def test_from_board_rejects_shape_and_dtype(board, match):
    with pytest.raises(ValueError, match=match):
        E15.from_board(board)


@pytest.mark.parametrize("value", [2, -2, 3, 127, -128])
def test_from_board_rejects_values(value):
    board = np.zeros((15, 15), np.int64)
    board[4, 6] = value
    with pytest.raises(ValueError, match=rf"found {value} at row 4, col 6"):
        E15.from_board(board)


@pytest.mark.parametrize("black, white", [
    ([], [(0, 0)]),  # white first
    ([(0, 0), (0, 2)], []),  # black two ahead
    ([(0, 0)], [(1, 1), (2, 2)]),  # white ahead
])
def test_from_board_rejects_stone_counts(black, white):
    with pytest.raises(ValueError, match="stone counts"):
        E15.from_board(board_from(15, black, white))


def test_from_board_rejects_to_move_contradicting_counts():
    even = board_from(15, black=[(7, 7)], white=[(7, 8)])
    odd = board_from(15, black=[(7, 7)])
    with pytest.raises(ValueError, match="black is to move"):
        E15.from_board(even, "white")
    with pytest.raises(ValueError, match="white is to move"):
        E15.from_board(odd, 1)
    for bad in ("red", "1", 0, 2, 1.5, True):
        with pytest.raises(ValueError, match="to_move"):
            E15.from_board(even, bad)


@pytest.mark.parametrize("black_player", [2, -1, True, "0"])
def test_from_board_rejects_black_player(black_player):
    with pytest.raises(ValueError, match="black_player"):
        E15.from_board(np.zeros((15, 15), int), black_player=black_player)


def test_from_board_rejects_winner_to_move():
    # black has five and black is to move (equal counts): white moved after black won
    board = board_from(15, black=[(7, c) for c in range(3, 8)],
                       white=[(0, 0), (0, 2), (0, 4), (0, 6), (14, 14)])
    for allow in (False, True):
        with pytest.raises(ValueError, match="black has a winning line but is to move"):
            E15.from_board(board, allow_terminal=allow)


def test_from_board_rejects_both_colours_winning():
    board = board_from(15, black=[(7, c) for c in range(3, 8)] + [(14, 14)],
                       white=[(9, c) for c in range(3, 8)])
    for allow in (False, True):
        with pytest.raises(ValueError, match="both colours"):
            E15.from_board(board, allow_terminal=allow)


# ----------------------------------------------------------------------- from_moves

def test_from_moves_matches_stepwise_play():
    moves = [112, 113, 96, 128, 0, 224, 14, 210]
    state = E15.from_moves(moves)
    assert_same_state(state, play_moves(E15, moves)[-1])
    pairs = [divmod(m, 15) for m in moves]
    assert_same_state(E15.from_moves(pairs), state)
    mixed = [m if i % 2 else divmod(m, 15) for i, m in enumerate(moves)]
    assert_same_state(E15.from_moves(mixed), state)
    assert_same_state(E15.from_moves(np.array(moves)), state)  # numpy ints
    assert_same_state(E15.from_moves(np.array(pairs)), state)  # numpy rows
    assert_same_state(E15.from_moves(iter(moves)), state)  # any iterable
    np.testing.assert_array_equal(state.last_moves, [14, 210])
    assert int(state.last_action) == 210


def test_from_moves_empty_and_black_player():
    assert_same_state(E5K3.from_moves([]), rules.initial_state(E5K3.config, 0))
    state = E5K3.from_moves([(2, 2)], black_player=1)
    assert int(state.black_player) == 1 and int(state.current_player) == 0
    with pytest.raises(ValueError, match="black_player"):
        E5K3.from_moves([], black_player=3)


def test_from_moves_sets_last_move_planes():
    state = E9X.from_moves([(4, 4), (4, 5), (3, 3)])
    obs = np.asarray(E9X.observe(state))
    black_last, white_last = obs[..., 2], obs[..., 3]
    assert black_last.sum() == 1 and black_last[3, 3] == 1
    assert white_last.sum() == 1 and white_last[4, 5] == 1
    assert (obs[..., 4] == 0).all()  # white to move
    # the same position from a board has no last-move information
    board_obs = np.asarray(E9X.observe(E9X.from_board(np.asarray(state.board))))
    assert board_obs[..., 2:4].sum() == 0
    np.testing.assert_array_equal(board_obs[..., [0, 1, 4]], obs[..., [0, 1, 4]])


def test_from_moves_terminal_with_allow_terminal():
    moves = [(0, 0), (4, 4), (0, 1), (4, 3), (0, 2)]
    with pytest.raises(ValueError, match="black won.*allow_terminal"):
        E5K3.from_moves(moves)
    state = E5K3.from_moves(moves, allow_terminal=True)
    stepped = play_moves(E5K3, [r * 5 + c for r, c in moves])[-1]
    assert_same_state(state, stepped, skip=("rewards",))  # rewards belong to the step
    assert bool(state.terminated) and int(state.winner) == BLACK


def test_from_moves_exact5_overline_continues():
    black = [(4, 0), (4, 1), (4, 2), (4, 4), (4, 5), (4, 3)]
    white = [(0, 0), (0, 2), (0, 4), (0, 6), (2, 0)]
    moves = [m for pair in zip(black, white + [None]) for m in pair if m is not None]
    state = E9X.from_moves(moves)
    assert not bool(state.terminated) and int(state.move_count) == 11
    assert_same_state(state, play_moves(E9X, [r * 9 + c for r, c in moves])[-1])


def test_from_moves_full_board_draw():
    env = gomoku_jax.make("gomoku", board_size=5, win_length=4)
    drawn = np.array([[-1, -1, 1, 1, -1],  # 13 black, 12 white, no four in a row
                      [-1, 1, -1, -1, -1],
                      [1, 1, 1, -1, 1],
                      [1, -1, 1, 1, 1],
                      [-1, 1, -1, 1, -1]])
    black = [int(a) for a in np.flatnonzero(drawn.reshape(-1) == BLACK)]
    white = [int(a) for a in np.flatnonzero(drawn.reshape(-1) == WHITE)]
    moves = [m for pair in zip(black, white + [None]) for m in pair if m is not None]
    with pytest.raises(ValueError, match="board is full"):
        env.from_moves(moves)
    state = env.from_moves(moves, allow_terminal=True)
    assert bool(state.terminated) and int(state.winner) == 0
    np.testing.assert_array_equal(state.board, drawn)
    assert_same_state(state, play_moves(env, moves)[-1])  # a draw: zero rewards as well
    with pytest.raises(ValueError, match="board is full"):
        env.from_board(drawn)
    assert_same_state(env.from_board(drawn, allow_terminal=True),
                      state.replace(last_moves=jnp.asarray([-1, -1], jnp.int32)))


def test_from_board_accepts_a_jax_array():
    state = E9X.from_moves([(4, 4), (4, 5), (3, 3)])
    again = E9X.from_board(state.board)
    np.testing.assert_array_equal(again.board, state.board)
    assert int(again.color) == WHITE and int(again.move_count) == 3


@pytest.mark.parametrize("moves, match", [
    ([225], r"move 0: action 225 is off the board \(0..224\)"),
    ([0, -1], "move 1: action -1 is off the board"),
    ([(15, 0)], r"move 0: row 15 is not an int in 0..14"),
    ([(0, -1)], "move 0: col -1 is not an int in 0..14"),
    ([(0, 1.5)], "move 0: col 1.5"),
    ([(0, 1, 2)], r"move 0: expected an action index or a \(row, col\) pair"),
    ([(0,)], r"move 0: expected an action index or a \(row, col\) pair"),
    ([1.0], "move 0: expected an action index"),
    ([True], "move 0: expected an action index"),
    ([None], "move 0: expected an action index"),
    ([(True, 0)], "move 0: row True"),
    ([7, 8, 7], r"move 2: cell \(row 0, col 7\) = action 7 is occupied"),
    ([7, 8, (0, 8)], "move 2: .*occupied"),
])
def test_from_moves_rejects_bad_moves(moves, match):
    with pytest.raises(ValueError, match=match):
        E15.from_moves(moves)


def test_from_moves_rejects_moves_after_the_end():
    moves = [(0, 0), (4, 4), (0, 1), (4, 3), (0, 2), (3, 3)]
    for allow in (False, True):
        with pytest.raises(ValueError, match="move 5: the game already ended at move 4"):
            E5K3.from_moves(moves, allow_terminal=allow)


# --------------------------------------- winning_colours vs the incremental wins_through

@functools.lru_cache(maxsize=None)
def _wins_anywhere(config: GameConfig):
    """jit(board batch int8[B, N, N] -> bool[B, 2]): (black, white) has a line through any
    of its own stones, by `rules.wins_through`."""
    n = config.board_size
    cells = jnp.arange(n * n, dtype=jnp.int32)

    def one(board):
        flat = board.reshape(-1)

        def colour_wins(colour):
            through = jax.vmap(lambda c: rules.wins_through(flat, c, colour, config))(cells)
            return jnp.any(through & (flat == colour))

        return jnp.stack([colour_wins(jnp.int8(BLACK)), colour_wins(jnp.int8(WHITE))])

    return jax.jit(jax.vmap(one))


def _reference_wins(board, colour, k, exact):
    """Plain-Python run scan (a third implementation)."""
    n = board.shape[0]
    for r in range(n):
        for c in range(n):
            if board[r, c] != colour:
                continue
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                pr, pc = r - dr, c - dc
                if 0 <= pr < n and 0 <= pc < n and board[pr, pc] == colour:
                    continue  # not the start of a run
                length, rr, cc = 0, r, c
                while 0 <= rr < n and 0 <= cc < n and board[rr, cc] == colour:
                    length, rr, cc = length + 1, rr + dr, cc + dc
                if (length == k) if exact else (length >= k):
                    return True
    return False


@pytest.mark.parametrize("env", [E15, E9X, E5K3, E7K4X], ids=repr)
def test_winning_colours_agrees_with_wins_through(env):
    cfg = env.config
    n, k = cfg.board_size, cfg.win_length
    rng = np.random.default_rng(n * 100 + k)
    num = 256
    # densities from sparse to packed, so that boards with and without lines (and, for
    # exact5, overlines) all occur
    density = rng.uniform(0.2, 1.0, size=(num, 1, 1))
    occupied = rng.uniform(size=(num, n, n)) < density
    colour = np.where(rng.uniform(size=(num, n, n)) < 0.5, BLACK, WHITE)
    boards = np.where(occupied, colour, 0).astype(np.int8)
    got = np.asarray(_wins_anywhere(cfg)(boards))
    want = np.array([[c in positions.winning_colours(b, cfg) for c in (BLACK, WHITE)]
                     for b in boards])
    np.testing.assert_array_equal(got, want)
    exact = cfg.rule == "exact5"
    ref = np.array([[_reference_wins(b, c, k, exact) for c in (BLACK, WHITE)]
                    for b in boards[:64]])
    np.testing.assert_array_equal(want[:64], ref)
    # the sample is informative: both outcomes occur for each colour
    assert want.any(axis=0).all() and (~want).any(axis=0).all()
    if exact:  # ... and some boards have only overlines, which freestyle would count
        free = dataclasses.replace(cfg, rule="freestyle")
        free_wins = np.array([[c in positions.winning_colours(b, free) for c in (BLACK, WHITE)]
                              for b in boards])
        assert (free_wins & ~want).any()
        assert not (want & ~free_wins).any()  # an exact five is also a freestyle win
