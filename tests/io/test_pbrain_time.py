"""The engine's match clock (`io.pbrain.plan_move`) over whole games, and its no-search move
(`io.quick_move`) against a brute-force reference (experiments/engine_soak.py is the long
run under a real clock)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.gomoku.positions import winning_colours
from gomoku_jax.io.pbrain import PbrainEngine, plan_move
from gomoku_jax.io.quick_move import quick_move

QUICK_S = 0.005  # pbrain's default reserve per move to come


@pytest.mark.parametrize("board_size, match_ms, floor_s", [
    (15, 5000, 0.015), (15, 5000, 0.05), (20, 5000, 0.03), (15, 2000, 0.05)])
def test_a_full_board_game_never_runs_out_of_time(board_size, match_ms, floor_s):
    """A game that fills the board (113 moves of ours on 15x15) under a short match clock,
    with the move costs of the soak that lost 23 games in 200 on time: a search move costs
    its budget, and never less than `floor_s` (the reroot and one short chunk: 15-50 ms);
    the no-search move costs the reserve's `QUICK_S`. The rule before (time_left /
    max(10, 20 - own) * 0.8 - 50 ms, no reserve, always a search) ran out after 38-95
    moves."""
    cheapest = 1.5 * floor_s + QUICK_S  # what the engine predicts (floor_safety 1.5)
    limits = {"timeout_match": match_ms, "timeout_turn": 1000, "time_left": match_ms}
    empty, own, left_s, budgets, quick = board_size ** 2, 0, match_ms / 1000, [], []
    while empty > 0:  # we play black: our move, then the opponent's (free)
        budget, no_search = plan_move(limits, own, empty, cheapest, QUICK_S)
        cost = QUICK_S if no_search else max(budget, floor_s)
        left_s -= cost
        assert left_s >= 0, (own, budgets[-5:], quick[-5:])
        limits["time_left"] = int(left_s * 1000)
        budgets.append(budget)
        quick.append(no_search)
        own, empty = own + 1, empty - 2
    assert len(budgets) == (board_size ** 2 + 1) // 2
    if match_ms == 5000 and floor_s <= 0.03:  # the opening still searches, for some time
        assert min(budgets[:5]) > 0.05 and not any(quick[:20])


def test_plan_without_a_match_clock_or_a_reserve():
    assert plan_move({}, 0, 225) == (None, False)
    assert plan_move({"timeout_turn": 1000}, 0, 225, 1.0, QUICK_S) == (0.75, False)
    limits = {"timeout_match": 5000, "timeout_turn": 1000, "time_left": 5000}
    # No reserve and no floor: the share of time_left (an upper bound, engine_soak's check)
    assert plan_move(limits, 0, 225) == (pytest.approx(5.0 / 20 * 0.8 - 0.05), False)
    budget, quick = plan_move(limits, 0, 225, 0.05, QUICK_S)
    assert budget == pytest.approx((5.0 - 113 * QUICK_S) / 20 * 0.8 - 0.05) and not quick
    limits["time_left"] = 113 * 5 + 50  # the reserve + 50 ms: under the cheapest search
    assert plan_move(limits, 0, 225, 0.051, QUICK_S) == (0.0, True)
    limits["time_left"] = -300  # a manager's clock below zero
    assert plan_move(limits, 10, 100, 0.05, QUICK_S) == (0.0, True)


@pytest.fixture(scope="module")
def random7():
    engine = PbrainEngine("random", seed=1)
    assert engine.handle("START 7") == ["OK"]
    return engine


def test_engine_blocks_with_the_no_search_move_when_the_clock_is_short(random7):
    e = random7
    stones = [f"{x},1,2" for x in range(1, 5)] + [f"{x},5,1" for x in (0, 2, 4, 6)]
    assert e.handle("INFO timeout_match 5000") == [] and e.handle("INFO time_left 20") == []
    calls = e.moves_computed
    out = [o for line in ["BOARD", *stones, "DONE"] for o in e.handle(line)]
    assert out[-1] in ("0,1", "5,1") and e.last_move["quick"]  # the four is blocked
    assert e.moves_computed == calls  # the agent was not called
    e.handle("RESTART")
    e.handle("INFO time_left 5000")
    out = e.handle("BEGIN")
    assert not e.last_move["quick"] and e.moves_computed == calls + 1


def test_the_time_control_sizes_the_tree_and_time_left_does_not(random7, monkeypatch):
    """INFO timeout_turn / timeout_match (and START once they are known) ask the player
    for a tree that holds the longest move; time_left, sent before every move, does not
    (it would resize the tree every move)."""
    e = random7
    calls = []
    monkeypatch.setattr(e.player, "grow_for", lambda env, budget, key: calls.append(
        (env, budget)))
    e.limits.clear()
    e.handle("INFO timeout_turn 5000")
    assert calls == [(e.env, pytest.approx(5.0 * 0.8 - 0.05))]
    e.handle("INFO time_left 3000")
    assert len(calls) == 1
    e.handle("INFO timeout_match 100000")  # the first move's share: 100 s / 20
    assert calls[-1][1] == pytest.approx(min(5.0, 100.0 / 20) * 0.8 - 0.05)
    e.handle("START 7")
    assert len(calls) == 3 and calls[-1][0] == e.env
    e.limits.clear()


def _cells_winning(board: np.ndarray, side: int, config: GameConfig) -> set[int]:
    out = set()
    for a in np.flatnonzero(board.reshape(-1) == 0):
        after = board.copy().reshape(-1)
        after[a] = side
        if side in winning_colours(after.reshape(board.shape), config):
            out.add(int(a))
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(5, 9), st.sampled_from(["freestyle", "exact5"]), st.data())
def test_quick_move_wins_or_blocks_like_a_brute_force_scan(n, rule, data):
    cells = data.draw(st.lists(st.sampled_from([0, 0, 1, -1]), min_size=n * n,
                               max_size=n * n))
    board = np.asarray(cells, np.int8).reshape(n, n)
    config = GameConfig(board_size=n, win_length=5, rule=rule)
    if not (board == 0).any() or winning_colours(board, config):
        return
    action = quick_move(board, 5, rule == "exact5")
    assert board.reshape(-1)[action] == 0
    wins, blocks = _cells_winning(board, 1, config), _cells_winning(board, -1, config)
    if wins:
        assert action in wins
    elif blocks:
        assert action in blocks


def test_quick_move_keeps_to_allowed_cells_and_the_centre():
    board = np.zeros((9, 9), np.int8)
    assert quick_move(board) == 4 * 9 + 4
    allowed = np.zeros(81, bool)
    allowed[[0, 80]] = True
    board[0, 1] = 1  # next to cell 0
    assert quick_move(board, allowed=allowed) == 0
    with pytest.raises(ValueError, match="no empty"):
        quick_move(np.ones((5, 5), np.int8))
