"""The rules of `rules.step` / `Gomoku`: wins, overlines, draws, illegal moves, player ids,
the env factory, `auto_reset`, and jit / vmap / scan at scale.

Games run through the session-compiled functions of `conftest.compiled`; batches of games
go through `play` in fixed-shape chunks so that each env config compiles `play` only once.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import compiled, play_moves

import gomoku_jax
from gomoku_jax import auto_reset
from gomoku_jax.games.gomoku import GameConfig, Gomoku, observe, rules
from gomoku_jax.games.gomoku.state import BLACK, WHITE

# The few configs this file compiles (each config compiles its own step / play).
E15 = gomoku_jax.make("gomoku")  # 15x15, k=5, freestyle
E9X = gomoku_jax.make("gomoku", board_size=9, rule="exact5")  # 9x9, exactly 5
E5K3 = gomoku_jax.make("gomoku", board_size=5, win_length=3)  # 5x5, k=3, freestyle
E7K4X = gomoku_jax.make("gomoku", board_size=7, win_length=4, rule="exact5")  # exactly 4
E5K4 = gomoku_jax.make("gomoku", board_size=5, win_length=4)  # 5x5, k=4, freestyle

DIRECTIONS = {"horizontal": (0, 1), "vertical": (1, 0), "diagonal": (1, 1),
              "anti-diagonal": (1, -1)}

CHUNK, T_MIN = 512, 16


# ------------------------------------------------------------------------------- helpers

def to_action(move, n: int) -> int:
    if isinstance(move, (int, np.integer)):
        return int(move)
    r, c = move
    return r * n + c


def interleave(black: list, white: list) -> list:
    """Black's and white's moves in playing order (black first)."""
    moves = []
    for i in range(max(len(black), len(white))):
        if i < len(black):
            moves.append(black[i])
        if i < len(white):
            moves.append(white[i])
    return moves


def filler_cells(n: int, avoid) -> list:
    """Cells with even row and even col (no two of them touch, so they never form a line),
    minus `avoid`: harmless moves for the side that is not building a line."""
    avoid = set(avoid)
    return [(r, c) for r in range(0, n, 2) for c in range(0, n, 2) if (r, c) not in avoid]


def placements(n: int, length: int, direction) -> list:
    """Every run of `length` cells along `direction` that fits on an n x n board."""
    dr, dc = direction
    out = []
    for r in range(n):
        for c in range(n):
            er, ec = r + (length - 1) * dr, c + (length - 1) * dc
            if 0 <= er < n and 0 <= ec < n:
                out.append([(r + i * dr, c + i * dc) for i in range(length)])
    return out


def run_games(env, games):
    """Play `games` (lists of actions or (row, col) pairs) from the empty board with
    black_player 0; returns the host trajectory (State with numpy leaves [T, B, ...]).

    Pads with -1 to fixed [CHUNK, T] chunks so `play` compiles once per config; index the
    state after move i of game b as `[i, b]` and never look past the game's own length."""
    n = env.board_size
    actions = [[to_action(m, n) for m in g] for g in games]
    longest = max(len(a) for a in actions)
    t = T_MIN if longest <= T_MIN else 2 * T_MIN
    assert longest <= t
    b = math.ceil(len(actions) / CHUNK) * CHUNK
    arr = np.full((b, t), -1, np.int32)
    for i, a in enumerate(actions):
        arr[i, :len(a)] = a
    parts = [compiled(env).play(arr[i:i + CHUNK]) for i in range(0, b, CHUNK)]
    return jax.tree.map(lambda *xs: np.concatenate([np.asarray(x) for x in xs], axis=1),
                        *parts)


def final_and_previous(traj, games):
    """(index arrays of the last move, of the move before) per game, for fancy indexing."""
    lengths = np.array([len(g) for g in games])
    b = np.arange(len(games))
    return (lengths - 1, b), (lengths - 2, b)


def host(state) -> dict:
    """Host copy of every field of a single State."""
    return {f: np.asarray(getattr(state, f)) for f in
            ("board", "color", "black_player", "last_moves", "move_count", "winner",
             "rewards", "terminated", "truncated")}


def step_all(env, moves, black_player=0):
    """States after each move from the empty board (compiled step), any black_player."""
    step = compiled(env).step
    state = rules.initial_state(env.config, black_player)
    out = [state]
    for m in moves:
        state = step(state, np.int32(to_action(m, env.board_size)))
        out.append(state)
    return out


def expected_rewards(winner_colour: int, black_player: int) -> np.ndarray:
    rewards = np.zeros(2, np.float32)
    if winner_colour:
        winner_id = black_player if winner_colour == BLACK else 1 - black_player
        rewards[winner_id], rewards[1 - winner_id] = 1.0, -1.0
    return rewards


# ------------------------------------------------------------------- winning lines

@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize("env", [E15, E9X, E5K3, E7K4X], ids=repr)
def test_line_wins_everywhere_in_every_direction(env, direction):
    """Every placement of a k-line (edges and corners included), completed by each of its
    k stones (an end stone or a middle one), by black and by white, wins on that move."""
    n, k = env.board_size, env.config.win_length
    games, colours, corner_games = [], [], 0
    for cells in placements(n, k, DIRECTIONS[direction]):
        fill = filler_cells(n, cells)
        corner_games += any(r in (0, n - 1) and c in (0, n - 1) for r, c in cells)
        for last in range(k):
            line = cells[:last] + cells[last + 1:] + [cells[last]]
            games.append(interleave(line, fill[:k - 1]))
            colours.append(BLACK)
            games.append(interleave(fill[:k], line))
            colours.append(WHITE)
    assert corner_games > 0  # the enumeration does reach the corners
    traj = run_games(env, games)
    last, prev = final_and_previous(traj, games)
    colours = np.array(colours)

    unfinished = [games[i] for i in np.flatnonzero(~traj.terminated[last])]
    assert traj.terminated[last].all(), unfinished[:3]
    np.testing.assert_array_equal(traj.winner[last], colours)
    want = np.where((colours == BLACK)[:, None], [1.0, -1.0], [-1.0, 1.0])
    np.testing.assert_array_equal(traj.rewards[last], want)
    np.testing.assert_array_equal(traj.move_count[last], [len(g) for g in games])
    np.testing.assert_array_equal(
        traj.board[last].reshape(len(games), -1)[np.arange(len(games)),
                                                 [to_action(g[-1], n) for g in games]],
        colours)
    # ... and not one move earlier.
    assert not traj.terminated[prev].any()
    assert (traj.winner[prev] == 0).all()
    assert (traj.rewards[prev] == 0).all()


def test_short_and_broken_lines_do_not_win():
    n = 15
    r = 7
    four = [(r, c) for c in range(3, 7)]  # XXXX
    broken = [(r, 3), (r, 4), (r, 6), (r, 7), (r, 9)]  # XX_XX_X: five stones, no five
    mixed_line = [(r, c) for c in range(3, 8)]  # 5 cells: 3 black + 2 white -> no line
    fill = filler_cells(n, four + broken + mixed_line + [(r + 1, c) for c in range(15)])
    games = [
        interleave(four, fill[:4]),
        interleave(broken, fill[:5]),
        interleave([(r, 3), (r, 5), (r, 7)], [(r, 4), (r, 6)]),
        interleave([(r, c) for c in (0, 1, 2)] + [(r + 1, c) for c in (3, 4)], fill[:5]),
    ]
    traj = run_games(E15, games)
    last, _ = final_and_previous(traj, games)
    assert not traj.terminated[last].any()
    assert (traj.winner[last] == 0).all()
    assert (traj.rewards[last] == 0).all()


def _overline_game(n, start, direction, line_order):
    """Black plays cells `start + i * direction` for i in `line_order` (the last one last);
    white plays harmless fillers."""
    (r0, c0), (dr, dc) = start, direction
    cells = [(r0 + i * dr, c0 + i * dc) for i in line_order]
    fill = filler_cells(n, [(r0 + i * dr, c0 + i * dc) for i in range(-1, 9)])
    return interleave(cells, fill[:len(cells) - 1])


def _start(direction, n, edge):
    """Where a line of up to 7 cells along `direction` starts, at the edge or inside."""
    _, dc = direction
    if edge:
        return (0, n - 1) if dc == -1 else (0, 0)
    return (1, n - 2) if dc == -1 else (1, 1)


@pytest.mark.parametrize("edge", [True, False], ids=["edge", "inner"])
@pytest.mark.parametrize("direction", list(DIRECTIONS))
def test_overline_wins_in_freestyle_but_not_in_exact5(direction, edge):
    d = DIRECTIONS[direction]
    start = _start(d, 9, edge)  # a 9x9 region: valid on both the 9x9 and the 15x15 board
    games = [
        _overline_game(9, start, d, [0, 1, 2, 4, 5, 3]),  # six: XXX_XX + middle
        _overline_game(9, start, d, [0, 1, 2, 4, 5, 6, 3]),  # seven: XXX_XXX + middle
        _overline_game(9, start, d, [0, 2, 3, 4, 5, 1]),  # six: X_XXXX + the gap
    ]
    free, exact = run_games(E15, games), run_games(E9X, games)
    last, prev = final_and_previous(free, games)
    assert free.terminated[last].all() and (free.winner[last] == BLACK).all()
    np.testing.assert_array_equal(free.rewards[last], [[1.0, -1.0]] * len(games))
    assert not free.terminated[prev].any()

    assert not exact.terminated[last].any()
    assert (exact.winner[last] == 0).all() and (exact.rewards[last] == 0).all()
    # the overline stone is on the board, and it is white's turn
    assert (exact.color[last] == WHITE).all()
    np.testing.assert_array_equal(exact.move_count[last], [len(g) for g in games])


@pytest.mark.parametrize("edge", [True, False], ids=["edge", "inner"])
@pytest.mark.parametrize("direction", list(DIRECTIONS))
def test_exact5_five_next_to_a_gap_wins(direction, edge):
    """XXXX_X: closing the far end (.XXXXX_X -> exactly five) wins; filling the gap
    (XXXXXX) does not; and a six elsewhere does not stop a five in another direction."""
    d = DIRECTIONS[direction]
    start = _start(d, 9, edge)
    games_win = [_overline_game(9, start, d, [1, 2, 3, 4, 6, 0])]  # XXXXX_X
    games_six = [_overline_game(9, start, d, [1, 2, 3, 4, 6, 5])]  # _XXXXXX
    games_gap_five = [_overline_game(9, start, d, [0, 1, 3, 4, 6, 2])]  # XXXXX_X via middle
    games = games_win + games_six + games_gap_five
    traj = run_games(E9X, games)
    last, prev = final_and_previous(traj, games)
    np.testing.assert_array_equal(traj.terminated[last], [True, False, True])
    np.testing.assert_array_equal(traj.winner[last], [BLACK, 0, BLACK])
    np.testing.assert_array_equal(traj.rewards[last], [[1, -1], [0, 0], [1, -1]])
    assert not traj.terminated[prev].any()


def test_exact5_overline_in_one_direction_five_in_another_wins():
    # Black: a six on row 4 (cols 1..6) built with col 4 last; col 4 also completes a
    # vertical five (rows 0..4 of col 4 -> rows 0,1,2,3 + the stone at (4, 4)).
    six = [(4, 1), (4, 2), (4, 3), (4, 5), (4, 6)]
    column = [(0, 4), (1, 4), (2, 4), (3, 4)]
    black = six + column + [(4, 4)]
    white = [(8, 0), (8, 2), (8, 4), (8, 6), (6, 0), (6, 2), (6, 4), (6, 8), (0, 0)]
    games = [interleave(black, white)]
    # Sanity: without the column the same horizontal six does not win under exact5.
    games.append(interleave(six + [(4, 4)], white[:5]))
    traj = run_games(E9X, games)
    last, prev = final_and_previous(traj, games)
    np.testing.assert_array_equal(traj.terminated[last], [True, False])
    np.testing.assert_array_equal(traj.winner[last], [BLACK, 0])
    assert not traj.terminated[prev].any()


def test_exact_k4_overline_on_7x7():
    # k=4 exact: XX_XX filled in the middle is a five (overline) -> no win; XXX_X closing
    # the far end of XXX is exactly four -> win.
    over = interleave([(3, 0), (3, 1), (3, 3), (3, 4), (3, 2)], [(0, 0), (0, 2), (0, 4), (0, 6)])
    four = interleave([(3, 1), (3, 2), (3, 3), (3, 5), (3, 0)], [(0, 0), (0, 2), (0, 4), (0, 6)])
    traj = run_games(E7K4X, [over, four])
    last, _ = final_and_previous(traj, [over, four])
    np.testing.assert_array_equal(traj.terminated[last], [False, True])
    np.testing.assert_array_equal(traj.winner[last], [0, BLACK])


def test_game_goes_on_after_an_exact5_overline():
    # After the (non-winning) six, white makes an exact five of its own and wins.
    black = [(4, 0), (4, 1), (4, 2), (4, 4), (4, 5), (4, 3)]
    white = [(0, 0), (0, 1), (0, 2), (0, 3), (8, 0), (0, 4)]
    game = interleave(black, white)
    states = play_moves(E9X, [to_action(m, 9) for m in game])
    assert not bool(states[10].terminated)  # the six (move 11 is index 10)
    assert int(states[10].move_count) == 11
    assert bool(states[-1].terminated) and int(states[-1].winner) == WHITE
    np.testing.assert_array_equal(states[-1].rewards, [-1.0, 1.0])


# ---------------------------------------------------------------------- full board

DRAWN_5X5_K4 = np.array([  # 13 black, 12 white, no four in a row for either colour
    [-1, -1, 1, 1, -1],
    [-1, 1, -1, -1, -1],
    [1, 1, 1, -1, 1],
    [1, -1, 1, 1, 1],
    [-1, 1, -1, 1, -1]])

FILL_AND_WIN_5X5_K4 = np.array([  # black's stone at (3, 1) makes (3, 1..4) and fills
    [1, -1, -1, -1, 1],
    [1, -1, -1, 1, -1],
    [-1, 1, -1, 1, 1],
    [-1, 1, 1, 1, 1],
    [-1, 1, -1, -1, 1]])


def _fill_order(board, last_black):
    black = [tuple(map(int, rc)) for rc in np.argwhere(board == BLACK) if tuple(rc) != last_black]
    white = [tuple(map(int, rc)) for rc in np.argwhere(board == WHITE)]
    return interleave(black + [last_black], white)


@pytest.mark.parametrize("black_player", [0, 1])
def test_full_board_without_line_is_a_draw(black_player):
    moves = _fill_order(DRAWN_5X5_K4, (4, 3))
    assert len(moves) == 25
    states = step_all(E5K4, moves, black_player)
    assert not any(bool(s.terminated) for s in states[:-1])
    end = host(states[-1])
    assert end["terminated"] and end["winner"] == 0
    np.testing.assert_array_equal(end["rewards"], [0.0, 0.0])
    np.testing.assert_array_equal(end["board"], DRAWN_5X5_K4)
    assert end["move_count"] == 25
    assert int(states[-1].last_action) == 4 * 5 + 3  # the move that filled the board
    assert bool(states[-1].legal_action_mask.all())
    assert not bool(states[-1].truncated)


def test_filling_the_board_with_a_winning_line_is_a_win():
    moves = _fill_order(FILL_AND_WIN_5X5_K4, (3, 1))
    states = step_all(E5K4, moves, black_player=1)
    assert not bool(states[-2].terminated)
    end = host(states[-1])
    assert end["terminated"] and end["winner"] == BLACK and end["move_count"] == 25
    np.testing.assert_array_equal(end["rewards"], [-1.0, 1.0])  # black is player 1


# --------------------------------------------------------------------- illegal moves

ILLEGAL = {
    "occupied_own": None, "occupied_opponent": None,
    "minus_one": -1, "num_actions": 225, "large": 10**6,
    "int32_max": 2**31 - 1, "int32_min": -2**31,
}


@pytest.mark.parametrize("kind", list(ILLEGAL))
@pytest.mark.parametrize("mover", [BLACK, WHITE], ids=["black", "white"])
@pytest.mark.parametrize("black_player", [0, 1])
def test_illegal_action_ends_game_and_mover_loses(kind, mover, black_player):
    opening = [(7, 7), (7, 8), (8, 8)] if mover == WHITE else [(7, 7), (7, 8)]
    before = step_all(E15, opening, black_player)[-1]
    assert int(before.color) == mover
    mover_id = int(before.current_player)
    assert mover_id == (black_player if mover == BLACK else 1 - black_player)
    own = [m for i, m in enumerate(opening) if (i % 2 == 0) == (mover == BLACK)][0]
    opp = [m for i, m in enumerate(opening) if (i % 2 == 0) != (mover == BLACK)][0]
    action = {"occupied_own": to_action(own, 15),
              "occupied_opponent": to_action(opp, 15)}.get(kind, ILLEGAL[kind])

    after = compiled(E15).step(before, np.int32(action))
    b, a = host(before), host(after)
    np.testing.assert_array_equal(a["board"], b["board"])
    assert a["terminated"]
    assert a["winner"] == -mover
    assert a["rewards"][mover_id] == -1.0 and a["rewards"][1 - mover_id] == 1.0
    assert a["move_count"] == b["move_count"]
    assert int(after.last_action) == action  # documented: the illegal action itself
    assert bool(after.legal_action_mask.all())


def test_illegal_action_on_the_first_move():
    state = compiled(E5K3).step(rules.initial_state(E5K3.config, 1), np.int32(-1))
    assert bool(state.terminated) and int(state.winner) == WHITE
    np.testing.assert_array_equal(state.rewards, [1.0, -1.0])  # black (player 1) lost
    assert int(state.move_count) == 0 and not np.asarray(state.board).any()


# ------------------------------------------------------------------ terminated states

def _terminal_states():
    won = step_all(E5K3, [(0, 0), (4, 4), (0, 1), (4, 2), (0, 2)])[-1]
    illegal = compiled(E5K3).step(step_all(E5K3, [(2, 2)])[-1], np.int32(12))
    return {"won": won, "illegal": illegal}


@pytest.mark.parametrize("action", [3, 0, -1, 25, 24])
def test_stepping_a_terminated_state_changes_nothing(action):
    for name, state in _terminal_states().items():
        assert bool(state.terminated), name
        assert np.abs(np.asarray(state.rewards)).sum() == 2.0, name
        after = compiled(E5K3).step(state, np.int32(action))
        b, a = host(state), host(after)
        for field in b:
            if field == "rewards":
                np.testing.assert_array_equal(a[field], [0.0, 0.0], err_msg=name)
            else:
                np.testing.assert_array_equal(a[field], b[field], err_msg=f"{name}.{field}")
        again = compiled(E5K3).step(after, np.int32(action))
        np.testing.assert_array_equal(again.rewards, [0.0, 0.0])


def test_legal_action_mask_and_truncated():
    states = step_all(E5K3, [(0, 0), (4, 4), (0, 1), (4, 2), (0, 2)])
    mask = np.asarray(states[2].legal_action_mask)
    assert mask.shape == (25,) and mask.dtype == bool
    assert mask.sum() == 23 and not mask[0] and not mask[24]
    assert bool(states[-1].terminated)
    assert np.asarray(states[-1].legal_action_mask).all()  # pgx: all True when over
    assert not any(bool(s.truncated) for s in states)


# ------------------------------------------------------------- player ids and history

def test_init_draws_both_black_player_ids_deterministically():
    init = compiled(E15).init
    ids = [int(init(jax.random.key(i)).black_player) for i in range(32)]
    assert set(ids) == {0, 1}
    assert ids == [int(init(jax.random.key(i)).black_player) for i in range(32)]
    s = host(init(jax.random.key(0)))
    assert not s["board"].any() and s["board"].shape == (15, 15) and s["board"].dtype == np.int8
    assert s["color"] == BLACK and s["move_count"] == 0 and s["winner"] == 0
    np.testing.assert_array_equal(s["last_moves"], [-1, -1])
    np.testing.assert_array_equal(s["rewards"], [0.0, 0.0])
    assert not s["terminated"] and not s["truncated"] and s["truncated"].dtype == np.bool_


@pytest.mark.parametrize("black_player", [0, 1])
def test_current_player_follows_colour_and_black_player(black_player):
    states = step_all(E5K3, [(2, 2), (0, 0), (2, 3)], black_player)
    white_player = 1 - black_player
    assert [int(s.current_player) for s in states] == [black_player, white_player,
                                                       black_player, white_player]
    assert [int(s.color) for s in states] == [BLACK, WHITE, BLACK, WHITE]


@pytest.mark.parametrize("black_player", [0, 1])
def test_rewards_land_on_the_winners_player_id(black_player):
    # white wins (row 0) on 5x5 with k=3
    game = interleave([(4, 4), (4, 2), (2, 4)], [(0, 0), (0, 1), (0, 2)])
    states = step_all(E5K3, game, black_player)
    assert not bool(states[-2].terminated)
    end = states[-1]
    assert bool(end.terminated) and int(end.winner) == WHITE
    np.testing.assert_array_equal(end.rewards, expected_rewards(WHITE, black_player))
    # black wins
    game = interleave([(4, 4), (3, 3), (2, 2)], [(0, 0), (0, 1)])
    end = step_all(E5K3, game, black_player)[-1]
    assert int(end.winner) == BLACK
    np.testing.assert_array_equal(end.rewards, expected_rewards(BLACK, black_player))


def test_last_action_last_moves_and_move_count():
    moves = [(7, 7), (7, 8), (6, 6), (0, 14), (14, 0)]
    states = step_all(E15, moves)
    assert int(states[0].last_action) == -1
    black_last, white_last = -1, -1
    for i, (m, s) in enumerate(zip(moves, states[1:])):
        a = to_action(m, 15)
        if i % 2 == 0:
            black_last = a
        else:
            white_last = a
        assert int(s.last_action) == a
        np.testing.assert_array_equal(s.last_moves, [black_last, white_last])
        assert int(s.move_count) == i + 1
        assert int(np.count_nonzero(np.asarray(s.board))) == i + 1
        assert int(np.asarray(s.board).reshape(-1)[a]) == (BLACK if i % 2 == 0 else WHITE)


def test_play_trajectory_matches_stepwise_play():
    moves = [112, 113, 98, 0, 84, 224, 70, 14, 56]  # black wins on a diagonal at the end
    traj = run_games(E15, [moves])
    states = play_moves(E15, moves)
    for t, s in enumerate(states):
        for field, value in host(s).items():
            np.testing.assert_array_equal(getattr(traj, field)[t, 0], value, err_msg=field)
    assert bool(states[-1].terminated) and int(states[-1].winner) == BLACK


# --------------------------------------------------------------- make / env identity

@pytest.mark.parametrize("env_id, kwargs, match", [
    ("gomoku", {"board_size": 4}, "board_size"),
    ("gomoku", {"board_size": 21}, "board_size"),
    ("gomoku", {"board_size": 15.0}, "board_size"),
    ("gomoku", {"board_size": True}, "board_size"),
    ("gomoku", {"win_length": 2}, "win_length"),
    ("gomoku", {"board_size": 7, "win_length": 8}, "win_length"),
    ("gomoku", {"rule": "swap2"}, "rule"),
    ("gomoku", {"rule": "renju", "win_length": 6}, "renju"),
    ("gomoku", {"observation": "relative"}, "observation"),
    ("gomoku", {"feature_plane": 3}, "feature_plane"),
    ("go", {}, "unknown game"),
    ("gomoku", {"size": 15}, "size"),
])
def test_make_rejects_bad_arguments(env_id, kwargs, match):
    with pytest.raises(ValueError, match=match):
        gomoku_jax.make(env_id, **kwargs)


def test_make_accepts_the_extremes():
    for n in (5, 19):
        env = gomoku_jax.make("gomoku", board_size=n, win_length=n if n == 5 else 3)
        assert env.num_actions == n * n and env.observation_shape == (n, n, 5)


def test_env_equality_and_hash():
    a = gomoku_jax.make("gomoku")
    b = Gomoku(board_size=15, win_length=5, rule="freestyle")
    c = Gomoku.from_config(GameConfig())
    assert a == b == c and hash(a) == hash(b) == hash(c)
    assert len({a, b, c}) == 1
    others = [Gomoku(board_size=9), Gomoku(win_length=4), Gomoku(rule="exact5"),
              Gomoku(observation="canonical")]
    for o in others:
        assert o != a
    assert len({a, *others}) == 5
    assert a != "gomoku" and a != a.config
    assert "board_size=15" in repr(a)
    assert (a.id, a.num_players, a.board_size) == ("gomoku", 2, 15)


def test_the_env_is_a_protocol_env_with_its_config_as_spec():
    env = gomoku_jax.make("gomoku", board_size=9, rule="exact5")
    assert gomoku_jax.make is gomoku_jax.games.make
    assert isinstance(env, gomoku_jax.Env) and isinstance(env, Gomoku)
    assert env.spec is env.config and env.config == GameConfig(9, rule="exact5")
    assert Gomoku.from_config(env.config) == env == gomoku_jax.games.from_spec(env.spec)
    assert env.describe() == {"id": "gomoku", "version": env.version, "board_size": 9,
                              "win_length": 5, "rule": "exact5", "observation": "absolute",
                              "feature_plane": "none"}


def test_gomoku_hooks():
    env = E9X
    state = env.from_moves([(4, 4), (4, 5), (3, 3), (0, 0), (8, 8), (2, 6)])
    assert env.max_game_length == env.num_actions == 81
    assert int(env.move_number(state)) == 6 == int(state.move_count)
    assert env.action_to_text(4 * 9 + 5) == "(4, 5)"
    assert env.to_text(state) == str(state)
    assert env.pass_action is None
    # candidate weights: the proximity mask, flat: 0 on stones, 1 next to a stone, 0.5 two
    # cells away, 0.2 three, 0.05 farther; all ones in the opening (fewer than 5 stones)
    weights = np.asarray(env.candidate_weights(state))
    assert weights.shape == (81,) and weights.dtype == np.float32
    board = np.asarray(state.board)
    rows, cols = np.divmod(np.arange(81), 9)
    stones = np.argwhere(board != 0)
    distance = np.max(np.abs(np.stack([rows, cols], -1)[:, None] - stones[None]), -1).min(1)
    want = np.where(board.reshape(-1) != 0, 0.0,
                    np.select([distance == 1, distance == 2, distance == 3],
                              [1.0, 0.5, 0.2], 0.05))
    np.testing.assert_allclose(weights, want, rtol=1e-6)
    opening = env.from_moves([(4, 4), (4, 5)])
    np.testing.assert_array_equal(np.asarray(env.candidate_weights(opening)), 1.0)


# ------------------------------------------------------------------------ auto_reset

AUTO_RESET_STEP = jax.jit(auto_reset(E5K3.step, E5K3.init))  # compiled on first use


def test_auto_reset_restarts_finished_games():
    env = E5K3
    step = AUTO_RESET_STEP
    state = rules.initial_state(env.config, 0)
    win = interleave([(0, 0), (0, 1), (0, 2)], [(4, 4), (4, 2)])
    keys = jax.random.split(jax.random.key(3), len(win) + 2)
    for i, m in enumerate(win[:-1]):
        state = step(state, np.int32(to_action(m, 5)), keys[i])
        assert not bool(state.terminated)
    assert int(state.move_count) == 4
    # the fresh game is `init` with the second half of the step's key (as pgx's auto_reset)
    fresh = env.init(jax.random.split(keys[len(win) - 1])[1])
    state = step(state, np.int32(to_action(win[-1], 5)), keys[len(win) - 1])
    # the outcome is reported ...
    assert bool(state.terminated) and not bool(state.truncated)
    np.testing.assert_array_equal(state.rewards, [1.0, -1.0])
    # ... on a fresh board from the key
    assert not np.asarray(state.board).any()
    assert int(state.move_count) == 0 and int(state.color) == BLACK
    assert int(state.winner) == 0
    np.testing.assert_array_equal(state.last_moves, [-1, -1])
    assert int(state.black_player) == int(fresh.black_player)
    # The next step un-terminates and plays on the fresh board.
    state = step(state, np.int32(12), keys[-1])
    assert not bool(state.terminated)
    np.testing.assert_array_equal(state.rewards, [0.0, 0.0])
    assert int(state.move_count) == 1 and int(np.asarray(state.board).reshape(-1)[12]) == BLACK


def test_auto_reset_reports_illegal_losses_and_needs_a_key():
    env = E5K3
    step = AUTO_RESET_STEP
    state = rules.initial_state(env.config, 1)
    state = step(state, jnp.int32(6), jax.random.key(0))
    state = step(state, jnp.int32(6), jax.random.key(1))  # white plays onto black's stone
    assert bool(state.terminated) and not np.asarray(state.board).any()
    np.testing.assert_array_equal(state.rewards, [-1.0, 1.0])  # white is player 0
    with pytest.raises(ValueError, match="key"):
        step(state, jnp.int32(0), None)
    with pytest.raises(ValueError, match="key"):
        auto_reset(env.step, env.init)(state, jnp.int32(0), None)  # unjitted too
    with pytest.raises(TypeError):
        auto_reset(env.step, env.init)(state, jnp.int32(0))  # noqa


def test_auto_reset_vmapped():
    env = E5K3
    step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))
    states = jax.vmap(lambda _: rules.initial_state(env.config, 0))(jnp.arange(4))
    # game 0 wins on move 5 (row 0); games 1..3 keep playing distinct cells
    moves = np.array([[0, 24, 1, 22, 2],
                      [5, 6, 7, 8, 9],
                      [10, 11, 12, 13, 14],
                      [15, 16, 17, 18, 19]], np.int32)
    # rows 1..3: black 5,7,9 / 10,12,14 / 15,17,19 have no line of 3 ... check row 2: 10,12,14
    # are (2,0),(2,2),(2,4) -> no three in a row; row 3 likewise.
    for t in range(5):
        keys = jax.random.split(jax.random.key(t), 4)
        states = step(states, jnp.asarray(moves[:, t]), keys)
    np.testing.assert_array_equal(states.terminated, [True, False, False, False])
    np.testing.assert_array_equal(states.rewards[0], [1.0, -1.0])
    np.testing.assert_array_equal(states.move_count, [0, 5, 5, 5])


# ---------------------------------------------------------------- jit / vmap / scan

def test_jit_vmap_scan_at_scale():
    b, t = 4096, 4
    keys = jax.random.split(jax.random.key(0), b)
    init = jax.jit(jax.vmap(E15.init))(keys)
    assert init.board.shape == (b, 15, 15)
    assert 0.4 < float(jnp.mean(init.black_player)) < 0.6
    assert not bool(init.terminated.any())

    rng = np.random.default_rng(0)
    actions = np.stack([rng.choice(225, t, replace=False) for _ in range(b)]).astype(np.int32)
    traj = compiled(E15).play(actions)
    assert traj.board.shape == (t, b, 15, 15)
    final = jax.tree.map(lambda x: x[-1], traj)
    assert not bool(final.terminated.any())
    np.testing.assert_array_equal(final.move_count, np.full(b, t))
    flat = np.asarray(final.board).reshape(b, -1)
    rows = np.arange(b)[:, None]
    np.testing.assert_array_equal(flat[rows, actions], np.tile([1, -1, 1, -1], (b, 1)))
    assert (np.count_nonzero(flat, axis=1) == t).all()

    obs = jax.jit(jax.vmap(E15.observe))(final)
    assert obs.shape == (b, 15, 15, 5) and obs.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(obs[..., 0]).reshape(b, -1).sum(1), 2)
    np.testing.assert_array_equal(np.asarray(obs[..., 1]).reshape(b, -1).sum(1), 2)
    np.testing.assert_array_equal(np.asarray(obs[..., 4]), 1.0)  # black to move everywhere
    np.testing.assert_array_equal(np.asarray(observe(final)), np.asarray(obs))
