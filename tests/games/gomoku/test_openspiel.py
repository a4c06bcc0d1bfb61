"""Differential test against OpenSpiel's gomoku.

OpenSpiel drives thousands of uniformly random games move by move; we record each game's
moves, OpenSpiel's legal actions before every move, its length, returns and final board, then
replay all games batched in JAX and compare move by move.

OpenSpiel's gomoku (checked in `test_openspiel_gomoku_conventions`): `size` x `size` board,
`connect` in a row, a run of `connect` *or more* wins (freestyle; no `exact5` counterpart),
action = row * size + col, player 0 is black and moves first, a full board without a line is
a draw (returns 0, 0), no wrap-around. Its terminal states have no legal actions, where ours
have an all-True mask (pgx's convention); only the moves before the end are compared.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from conftest import compiled, play_moves  # noqa: E402

import gomoku_jax  # noqa: E402

NUM_GAMES = 4000  # 15 x 15 games compared move by move (at least 2000)
CHUNK = 500  # games per compiled replay call (one compiled shape for all chunks)
SEED = 20240601

# (size, connect, games): other OpenSpiel parameters with the same (freestyle) semantics.
OTHER_PARAMS = [
    pytest.param(9, 4, 400, id="9x9-connect4"),
    pytest.param(6, 5, 400, id="6x6-connect5-draws"),
    pytest.param(7, 3, 400, id="7x7-connect3"),
    pytest.param(19, 5, 100, id="19x19-connect5"),
]


def load_openspiel(size: int = 15, connect: int = 5):
    if (size, connect) == (15, 5):
        return pyspiel.load_game("gomoku")  # the defaults
    return pyspiel.load_game("gomoku", {"size": size, "connect": connect})


@functools.lru_cache(maxsize=None)
def openspiel_games(size: int, connect: int, num_games: int, seed: int) -> dict:
    """Random games played by OpenSpiel, recorded compactly.

    Returns a dict of NumPy arrays over games G and steps T = size**2:
      actions int32[G, T] (-1 after the end), legal uint8[G, T, ceil(T/8)] (packbits of
      the legal-action mask before each move), length int32[G] (moves played), returns
      float32[G, 2] (by player; player 0 is black), board int8[G, T] (final, +1 black).
    """
    game = load_openspiel(size, connect)
    num_actions = game.num_distinct_actions()
    assert num_actions == size * size
    rng = np.random.default_rng(seed)
    actions = np.full((num_games, num_actions), -1, np.int32)
    legal = np.zeros((num_games, num_actions, (num_actions + 7) // 8), np.uint8)
    length = np.zeros(num_games, np.int32)
    returns = np.zeros((num_games, 2), np.float32)
    board = np.zeros((num_games, num_actions), np.int8)
    for i in range(num_games):
        state = game.new_initial_state()
        # one uniform per move: a uniformly random legal move (Python floats: faster to use)
        u = rng.random(num_actions).tolist()
        t = 0
        seen = []  # OpenSpiel's legal actions before each move; packed once per game
        while not state.is_terminal():
            assert state.current_player() == t % 2  # player 0 (black) moves first
            moves = state.legal_actions()
            seen.append(moves)
            action = moves[int(u[t] * len(moves))]
            actions[i, t] = action
            state.apply_action(action)
            t += 1
        mask = np.zeros((t, num_actions), bool)
        counts = [len(m) for m in seen]
        mask[np.repeat(np.arange(t), counts),
             np.fromiter(itertools.chain.from_iterable(seen), np.int64, sum(counts))] = True
        legal[i, :t] = np.packbits(mask, axis=-1)
        length[i] = t
        returns[i] = state.returns()
        planes = np.asarray(state.observation_tensor(0), np.float32).reshape(3, num_actions)
        board[i] = planes[0] - planes[1]  # plane 0 black stones, plane 1 white stones
    return dict(actions=actions, legal=legal, length=length, returns=returns, board=board)


def replay(env: gomoku_jax.Gomoku, actions: np.ndarray, chunk: int) -> dict:
    """Our side of the same games, in chunks of `chunk` games (one compiled shape).

    Returns legal uint8[G, T, ceil(T/8)] (packbits of our legal_action_mask before each
    move), end int32[G] (first step whose state is terminated, -1 if none), winner int8[G],
    rewards float32[G, 2] at the end step, board int8[G, T] (final).
    """
    num_games, num_actions = actions.shape
    assert num_games % chunk == 0
    play = compiled(env).play
    out = {k: [] for k in ("legal", "end", "winner", "rewards", "board")}
    for start in range(0, num_games, chunk):
        traj = play(actions[start:start + chunk])
        terminated = np.asarray(traj.terminated)  # [T, B]
        mask_after = np.asarray(traj.legal_action_mask)  # [T, B, A]: after each move
        # The mask before move t is the one after move t - 1 (the empty board before move 0).
        mask_before = np.concatenate([np.ones_like(mask_after[:1]), mask_after[:-1]])
        out["legal"].append(np.packbits(mask_before.transpose(1, 0, 2), axis=-1))
        end = np.where(terminated.any(0), np.argmax(terminated, axis=0), -1)
        games = np.arange(chunk)
        out["end"].append(end)
        out["winner"].append(np.asarray(traj.winner)[-1])
        out["rewards"].append(np.asarray(traj.rewards)[end, games])
        out["board"].append(np.asarray(traj.board)[-1].reshape(chunk, num_actions))
    return {k: np.concatenate(v) for k, v in out.items()}


@pytest.fixture(scope="module")
def games15():
    """(OpenSpiel's record, ours) for NUM_GAMES random 15 x 15 games."""
    theirs = openspiel_games(15, 5, NUM_GAMES, SEED)
    ours = replay(gomoku_jax.make("gomoku"), theirs["actions"], CHUNK)
    return theirs, ours


def assert_same_games(theirs: dict, ours: dict) -> None:
    num_games = len(theirs["length"])
    length = theirs["length"]

    # Same legal moves before every move that was played.
    played = np.arange(theirs["actions"].shape[1])[None, :] < length[:, None]  # [G, T]
    same_legal = (theirs["legal"] == ours["legal"]).all(-1)  # [G, T]
    bad = np.argwhere(played & ~same_legal)
    assert bad.size == 0, (f"{len(bad)} (game, step) legal-move mismatches, first "
                           f"game {bad[0][0]} step {bad[0][1]}" if bad.size else "")

    # Our `terminated` first becomes True at OpenSpiel's last move.
    mismatch = np.flatnonzero(ours["end"] != length - 1)
    assert mismatch.size == 0, (
        f"{mismatch.size} games end at a different step; game {mismatch[0]}: "
        f"OpenSpiel after {length[mismatch[0]]} moves, ours at step {ours['end'][mismatch[0]]}"
        if mismatch.size else "")

    # Same winner: OpenSpiel player 0 is black; our black is player 0 in `play`.
    their_winner = theirs["returns"][:, 0].astype(np.int8)  # +1 black won, -1 white, 0 draw
    np.testing.assert_array_equal(theirs["returns"].sum(-1), 0)
    np.testing.assert_array_equal(ours["winner"], their_winner)
    np.testing.assert_array_equal(ours["rewards"], theirs["returns"])

    # Same final position.
    np.testing.assert_array_equal(ours["board"], theirs["board"])
    assert num_games == len(ours["end"])


def test_openspiel_gomoku_conventions():
    """The OpenSpiel facts the differential test relies on."""
    game = pyspiel.load_game("gomoku")
    params = game.get_parameters()
    assert (params["size"], params["connect"]) == (15, 5)
    assert params["dims"] == 2 and not params["wrap"] and not params["anti"]
    assert game.num_distinct_actions() == 225 and game.num_players() == 2
    assert game.new_initial_state().current_player() == 0
    assert game.action_to_string(0, 3 * 15 + 7) == "3,7"  # action = row * 15 + col

    def play(moves):
        state = game.new_initial_state()
        for m in moves:
            assert not state.is_terminal()
            state.apply_action(m)
        return state

    white_elsewhere = [200, 202, 204, 206, 208]
    row = [16, 17, 18, 19, 20]  # row 1, cols 1..5
    col = [16, 31, 46, 61, 76]  # col 1, rows 1..5
    diag = [16, 32, 48, 64, 80]  # (1,1) .. (5,5)
    anti = [60, 46, 32, 18, 4]  # (4,0) (3,1) (2,2) (1,3) (0,4)
    for line in (row, col, diag, anti):
        moves = [m for pair in zip(line, white_elsewhere) for m in pair][:9]
        state = play(moves)
        assert state.is_terminal() and state.returns() == [1.0, -1.0]  # black = player 0
        # White's five wins for player 1.
        moves = [m for pair in zip([210, 212, 214, 216, 218, 220], line) for m in pair][:10]
        state = play(moves)
        assert state.is_terminal() and state.returns() == [-1.0, 1.0]

    # No wrap-around: cols 13, 14 of row 0 and cols 0..2 of row 1 are not a line.
    state = play([13, 200, 14, 202, 15, 204, 16, 206, 17])
    assert not state.is_terminal()

    # Freestyle: an overline (six, completed in the middle) wins, for OpenSpiel and for us.
    overline = [0, 200, 1, 202, 2, 204, 4, 206, 5, 208, 3]
    state = play(overline)
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    ours = play_moves(gomoku_jax.make("gomoku"), overline)
    assert [bool(s.terminated) for s in ours] == [False] * 10 + [True]
    assert int(ours[-1].winner) == 1


def test_legal_moves_match_openspiel(games15):
    theirs, ours = games15
    num_games = len(theirs["length"])
    assert num_games >= 2000
    played = np.arange(225)[None, :] < theirs["length"][:, None]
    num_compared = int(played.sum())
    assert num_compared > 100 * num_games  # random 15 x 15 games last ~110 moves
    same = (theirs["legal"] == ours["legal"]).all(-1)
    bad = np.argwhere(played & ~same)
    assert bad.size == 0, f"legal moves differ at (game, step) {bad[:5].tolist()}"
    # Sanity: OpenSpiel's legal sets are the empty cells, one fewer after each move.
    counts = np.unpackbits(theirs["legal"], axis=-1, count=225).sum(-1)
    np.testing.assert_array_equal(counts[played],
                                  np.broadcast_to(225 - np.arange(225), counts.shape)[played])


def test_terminal_step_matches_openspiel(games15):
    theirs, ours = games15
    length = theirs["length"]
    assert (length >= 9).all() and (length <= 225).all()
    mismatch = np.flatnonzero(ours["end"] != length - 1)
    assert mismatch.size == 0, (
        f"{mismatch.size} games end at a different step, e.g. game {mismatch[0]}: "
        f"OpenSpiel after {length[mismatch[0]]} moves, ours at step "
        f"{ours['end'][mismatch[0]]}" if mismatch.size else "")


def test_winner_and_final_board_match_openspiel(games15):
    theirs, ours = games15
    their_winner = theirs["returns"][:, 0].astype(np.int8)  # player 0 = black
    # Both colours win often in random play; the comparison is not trivially one-sided.
    assert (their_winner == 1).sum() > 500 and (their_winner == -1).sum() > 500
    np.testing.assert_array_equal(ours["winner"], their_winner)
    np.testing.assert_array_equal(ours["rewards"], theirs["returns"])
    np.testing.assert_array_equal(ours["board"], theirs["board"])


@pytest.mark.parametrize("size, connect, num_games", OTHER_PARAMS)
def test_other_parameters_match_openspiel(size, connect, num_games):
    game = load_openspiel(size, connect)
    params = game.get_parameters()
    assert (params["size"], params["connect"]) == (size, connect)
    assert not params["wrap"] and not params["anti"]
    theirs = openspiel_games(size, connect, num_games, SEED + size * 100 + connect)
    env = gomoku_jax.make("gomoku", board_size=size, win_length=connect, rule="freestyle")
    ours = replay(env, theirs["actions"], num_games)
    assert_same_games(theirs, ours)
    winner = theirs["returns"][:, 0]
    assert (winner == 1).any() and (winner == -1).any()
    if (size, connect) == (6, 5):  # draws: a full board, zero returns
        draws = winner == 0
        assert draws.sum() > num_games // 10
        assert (theirs["length"][draws] == size * size).all()
