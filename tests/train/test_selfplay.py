"""On-device self-play (`gomoku_jax.train.selfplay`): search policies, value targets and
validity checked against an independent NumPy replay of the recorded games."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gomoku_jax.game.positions import winning_colours
from gomoku_jax.game.state import BLACK
from gomoku_jax.nets.resnet import NET_PRESETS, PolicyValueModel
from gomoku_jax.search.evaluators import NetworkEvaluator
from gomoku_jax.search.mcts import SearchConfig
from gomoku_jax.train import selfplay
from gomoku_jax.train.config import GameSection

GAME = GameSection(board_size=7, win_length=4).game_config()
N, B, T, SIMS = GAME.board_size, 8, 30, 8


@pytest.fixture(scope="module")
def run():
    """One `selfplay.play` call (8 games × 30 moves) with a fresh tiny network, on host."""
    model = PolicyValueModel(NET_PRESETS["tiny"], N, GAME.num_planes)
    variables = model.init(jax.random.key(0))
    games = selfplay.new_games(GAME, jax.random.key(1), B)
    play = jax.jit(selfplay.play, static_argnums=(0, 1, 2, 3, 4))
    after, samples, valid, stats = play(NetworkEvaluator(model.apply), SearchConfig(), SIMS,
                                        "muzero", T, variables, games, jax.random.key(2))
    return jax.device_get((after, samples, valid, stats))


def column(samples, b):
    """Column b of the time-major [T*B] record, as a list of per-move dicts."""
    out = []
    for t in range(T):
        i = t * B + b
        out.append(dict(board=samples.state.board[i], color=int(samples.state.color[i]),
                        player=int(samples.state.black_player[i] if samples.state.color[i] == BLACK
                                   else 1 - samples.state.black_player[i]),
                        move_count=int(samples.state.move_count[i]),
                        policy=samples.policy[i], value=float(samples.value[i]), index=i))
    return out


def replay_column(samples, after, b):
    """Split column b into games by the boards alone and decide each finished game's winner
    with a NumPy scan. Returns [(first t, last t, winner colour or 0, finished)]."""
    rec = column(samples, b)
    games, start = [], 0
    for t in range(T):
        nxt = rec[t + 1]["board"] if t + 1 < T else after.board[b]
        diff = nxt.astype(int) - rec[t]["board"].astype(int)
        continues = (np.count_nonzero(diff) == 1 and diff.sum() == rec[t]["color"]
                     and np.count_nonzero(nxt) == rec[t]["move_count"] + 1)
        if continues:
            assert not winning_colours(rec[t]["board"], GAME)
            continue
        # the game ended on move t: the next position is a fresh empty board
        assert np.count_nonzero(nxt) == 0, f"column {b}, move {t}: neither a move nor a reset"
        board, colour = rec[t]["board"], rec[t]["color"]
        empty = np.flatnonzero(board.reshape(-1) == 0)
        wins = []
        for cell in empty:
            trial = board.reshape(-1).copy()
            trial[cell] = colour
            wins.append(colour in winning_colours(trial.reshape(N, N), GAME))
        if len(empty) == 1 and not wins[0]:
            winner = 0  # the last cell, no line: a draw
        else:
            assert any(wins), f"column {b}, move {t}: the game ended but no move wins"
            winner = colour
        games.append((start, t, winner, True))
        start = t + 1
    if start < T:
        games.append((start, T - 1, 0, False))
    return rec, games


def test_policies_are_distributions_over_legal_moves(run):
    _, samples, _, _ = run
    assert samples.policy.shape == (T * B, N * N)
    np.testing.assert_allclose(samples.policy.sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(samples.policy >= 0)
    occupied = samples.state.board.reshape(T * B, -1) != 0
    assert np.all(samples.policy[occupied] == 0)
    np.testing.assert_array_equal(samples.weight, 1.0)
    np.testing.assert_array_equal(samples.value_weight, 1.0)


def test_values_and_validity_match_an_independent_replay(run):
    after, samples, valid, stats = run
    finished, black, white, length = 0, 0, 0, 0
    for b in range(B):
        rec, games = replay_column(samples, after, b)
        for first, last, winner, done in games:
            assert rec[first]["move_count"] == 0 or first == 0
            for t in range(first, last + 1):
                r = rec[t]
                assert bool(valid[r["index"]]) == done, (b, t)
                if done:
                    expected = 0.0 if winner == 0 else (1.0 if r["color"] == winner else -1.0)
                    assert r["value"] == expected, (b, t, r["value"], expected)
                if t < last:  # the move played had search visits
                    move = np.flatnonzero(rec[t + 1]["board"].reshape(-1)
                                          != r["board"].reshape(-1))[0]
                    assert r["policy"][move] > 0
            if done:
                finished += 1
                black += winner == BLACK
                white += winner == -BLACK
                length += rec[last]["move_count"] + 1
        # invalid samples are exactly those after the column's last game end
        ends = [last for _, last, _, done in games if done]
        cut = ends[-1] if ends else -1
        np.testing.assert_array_equal(valid.reshape(T, B)[:, b], np.arange(T) <= cut)
    assert finished > 0, "no game ended: make the window longer"
    assert int(stats.games) == finished
    assert (int(stats.black_wins), int(stats.white_wins)) == (black, white)
    assert int(stats.black_wins) + int(stats.white_wins) <= int(stats.games)
    assert int(stats.total_length) == length
    assert int(stats.moves) == T * B


def test_returned_games_continue_the_last_positions(run):
    after, samples, _, _ = run
    assert after.board.shape == (B, N, N)
    assert not np.any(after.terminated)  # auto-reset: finished games were replaced


def value_targets_reference(mover, done, result):
    """Plain loops: each move takes its game's final result, seen from its own mover."""
    t_len, b_len = mover.shape
    value = np.zeros((t_len, b_len), np.float32)
    known = np.zeros((t_len, b_len), bool)
    for b in range(b_len):
        start = 0
        for t in range(t_len):
            if done[t, b]:
                end_mover, end_result = mover[t, b], result[t, b]
                for s in range(start, t + 1):
                    value[s, b] = end_result if mover[s, b] == end_mover else -end_result
                    known[s, b] = True
                start = t + 1
    return value, known


_value_targets = jax.jit(selfplay.value_targets)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([(1, 1), (9, 4)]), st.floats(0.0, 1.0), st.randoms(use_true_random=False))
def test_value_targets_match_reference(shape, done_rate, rnd):
    t_len, b_len = shape  # two shapes: two compilations
    mover = np.array([[rnd.randint(0, 1) for _ in range(b_len)] for _ in range(t_len)],
                     np.int32)
    done = np.array([[rnd.random() < done_rate for _ in range(b_len)] for _ in range(t_len)])
    result = np.array([[rnd.choice([-1.0, 0.0, 1.0]) for _ in range(b_len)]
                       for _ in range(t_len)], np.float32)
    value, known = jax.device_get(_value_targets(jnp.asarray(mover), jnp.asarray(done),
                                                 jnp.asarray(result)))
    ref_value, ref_known = value_targets_reference(mover, done, result)
    np.testing.assert_array_equal(known, ref_known)
    np.testing.assert_array_equal(value[ref_known], ref_value[ref_known])
    assert value.dtype == np.float32 and known.dtype == np.bool_
