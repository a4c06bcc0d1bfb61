"""On-device self-play (`gomoku_jax.train.selfplay`): every position of every finished game
is written, with its game's result from its mover's view and the move played from it,
checked against an independent NumPy replay of the recorded games over several calls
(games longer than one window included); positions of running games wait in the pending
trajectories."""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gomoku_jax
from gomoku_jax.games.gomoku.positions import winning_colours
from gomoku_jax.games.gomoku.state import BLACK
from gomoku_jax.nets.resnet import NET_PRESETS, PolicyValueModel
from gomoku_jax.search import PUCT
from gomoku_jax.search.evaluators import NetworkEvaluator
from gomoku_jax.train.alphazero import selfplay

ENV = gomoku_jax.make("gomoku", board_size=7, win_length=4, observation="canonical")
N, B, T, SIMS, CALLS = 7, 8, 6, 4, 6
L = ENV.max_game_length


@pytest.fixture(scope="module")
def run():
    """CALLS self-play calls of T moves on B boards (games last longer than one call), with
    a fresh tiny network: per call (samples, valid, stats, pending), and the final games."""
    model = PolicyValueModel.for_env(NET_PRESETS["tiny"], ENV)
    variables = model.init(jax.random.key(0))
    games = selfplay.new_games(ENV, jax.random.key(1), B)
    pending = selfplay.empty_pending(ENV, games)
    play = jax.jit(selfplay.play, static_argnums=(0, 1, 2, 3, 4))
    calls = []
    for i in range(CALLS):
        games, pending, samples, valid, stats = play(
            ENV, PUCT(), NetworkEvaluator(model), SIMS, T, variables, games, pending,
            jax.random.key(10 + i))
        calls.append(jax.device_get((samples, valid, stats, pending)))
    return calls, jax.device_get(games)


def positions_of(samples, index):
    s = samples.state
    return dict(board=s.board[index], colour=int(s.color[index]),
                move_count=int(s.move_count[index]), policy=samples.policy[index],
                value=float(samples.value[index]), action=int(samples.action[index]))


def replay(calls, final):
    """Per board, the positions the moves were played from, in order, split into games by
    the boards alone: [(positions, finished, winner colour or 0)]."""
    per_board = [[] for _ in range(B)]
    for samples, _, _, _ in calls:
        for t in range(L, L + T):  # the window's own records follow the L pending slots
            for b in range(B):
                per_board[b].append(positions_of(samples, t * B + b))
    out = []
    for b in range(B):
        seq = per_board[b] + [dict(board=final.board[b], move_count=int(final.move_count[b]))]
        games, start = [], 0
        for t in range(len(seq) - 1):
            if seq[t + 1]["move_count"] != 0:  # the game went on: one more stone
                assert seq[t + 1]["move_count"] == seq[t]["move_count"] + 1
                continue
            board, colour = seq[t]["board"], seq[t]["colour"]
            empty = np.flatnonzero(board.reshape(-1) == 0)
            wins = [colour in winning_colours(np.where(np.arange(N * N).reshape(N, N) == a,
                                                       colour, board), ENV.config)
                    for a in empty]
            winner = colour if any(wins) else 0
            assert any(wins) or len(empty) == 1, f"board {b}: a game ended with no win"
            games.append((seq[start:t + 1], True, winner))
            start = t + 1
        games.append((seq[start:-1], False, 0))
        out.append(games)
    return out


def key_of(board_index, position):
    return (board_index, position["move_count"], position["board"].tobytes())


@pytest.mark.slow
def test_every_position_of_every_finished_game_is_written_once(run):
    calls, final = run
    games = replay(calls, final)
    expected = collections.Counter(key_of(b, p) for b in range(B)
                                   for positions, finished, _ in games[b] if finished
                                   for p in positions)
    written = collections.Counter()
    for samples, valid, _, _ in calls:
        for i in np.flatnonzero(valid):
            written[key_of(i % B, positions_of(samples, i))] += 1
    assert sum(expected.values()) > 0 and max(
        len(p) for g in games for p, done, _ in g if done) > T, \
        "no finished game spans two calls: make the test's games longer than a window"
    assert written == expected
    # The check: the move-number histogram of the samples written equals that of
    # all positions of finished games (the first wave's self-play dropped early moves).
    histogram = lambda counter: collections.Counter(  # noqa: E731
        {m: sum(n for (_, mc, _), n in counter.items() if mc == m)
         for m in {mc for _, mc, _ in counter}})
    assert histogram(written) == histogram(expected)


def test_written_values_are_the_games_results_from_each_movers_view(run):
    calls, final = run
    results = {}
    for b, games in enumerate(replay(calls, final)):
        for positions, finished, winner in games:
            for p in positions:
                if finished:
                    results[key_of(b, p)] = 0.0 if winner == 0 else (
                        1.0 if p["colour"] == winner else -1.0)
    for samples, valid, _, _ in calls:
        for i in np.flatnonzero(valid):
            p = positions_of(samples, i)
            assert p["value"] == results[key_of(i % B, p)]


def test_running_games_wait_in_the_pending_trajectories(run):
    calls, final = run
    games = replay(calls, final)
    _, _, _, pending = calls[-1]
    for b in range(B):
        running, finished, _ = games[b][-1]
        assert not finished
        assert int(pending.length[b]) == len(running)
        for slot, p in enumerate(running):
            np.testing.assert_array_equal(pending.state.board[b, slot], p["board"])
            np.testing.assert_array_equal(pending.policy[b, slot], p["policy"])


def test_the_recorded_move_is_the_stone_between_a_position_and_the_next(run):
    calls, final = run
    games = replay(calls, final)
    for b in range(B):
        for positions, finished, _ in games[b]:
            following = positions[1:] + [None if finished else dict(board=final.board[b])]
            for p, q in zip(positions, following):
                cell = p["action"]
                assert 0 <= cell < N * N and p["board"].reshape(-1)[cell] == 0
                after = p["board"].reshape(-1).copy()
                after[cell] = p["colour"]
                if q is None:  # the game's last move: it ended the game
                    assert p["colour"] in winning_colours(after.reshape(N, N), ENV.config) \
                        or not (after == 0).any()
                else:  # exactly that stone, of the mover's colour, stands in the next one
                    np.testing.assert_array_equal(q["board"].reshape(-1), after)
    # every written sample and pending slot carries the move of its position
    with_move = lambda b, p: key_of(b, p) + (p["action"],)  # noqa: E731
    expected = collections.Counter(with_move(b, p) for b in range(B)
                                   for positions, finished, _ in games[b] if finished
                                   for p in positions)
    written = collections.Counter()
    for samples, valid, _, _ in calls:
        for i in np.flatnonzero(valid):
            written[with_move(i % B, positions_of(samples, i))] += 1
    assert written == expected
    _, _, _, pending = calls[-1]
    for b in range(B):
        running, _, _ = games[b][-1]
        np.testing.assert_array_equal(pending.action[b, :len(running)],
                                      [p["action"] for p in running])


def test_stats_count_the_finished_games(run):
    calls, final = run
    games = replay(calls, final)
    finished = [(positions, winner) for g in games for positions, done, winner in g if done]
    totals = collections.Counter()
    for _, valid, stats, pending in calls:
        totals.update({name: int(getattr(stats, name)) for name in stats._fields})
        assert int(stats.written) == int(valid.sum())
        assert int(stats.pending) == int(pending.length.sum())
    assert totals["games"] == len(finished)
    assert totals["first_wins"] == sum(w == BLACK for _, w in finished)
    assert totals["second_wins"] == sum(w == -BLACK for _, w in finished)
    assert totals["total_length"] == sum(len(p) for p, _ in finished)
    assert totals["written"] == sum(len(p) for p, _ in finished)
    assert totals["moves"] == CALLS * T * B and totals["dropped"] == 0


def test_policies_are_distributions_over_legal_moves(run):
    calls, _ = run
    for samples, valid, _, _ in calls:
        policy = samples.policy[valid]
        np.testing.assert_allclose(policy.sum(axis=1), 1.0, rtol=1e-5)
        occupied = samples.state.board[valid].reshape(len(policy), N * N) != 0
        assert np.all(policy >= 0) and np.all(policy[occupied] == 0)


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
