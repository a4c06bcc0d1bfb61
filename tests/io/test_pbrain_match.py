"""gomoku_jax.io.pbrain_match: the Gomocup manager runs engine processes over pipes, plays
each opening with both colours, and turns every misbehaviour of an engine (a crash, a hang,
an illegal move, an ERROR, garbage, a refused START, a renju forbidden point) into a lost
game, recorded, with the processes killed at the end. The engines are `tests/fake_pbrain.py`
(a Python script that plays the empty cell nearest the centre)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from conftest import compiled
from fake_pbrain import command

from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.openings import opening_actions
from gomoku_jax.io.pbrain_match import (
    EngineFailed,
    Judge,
    Manager,
    Side,
    engine_argv,
    parse_info,
)

OPENING = ((0, 0), (-1, 0), (1, 2))  # a default 3-stone opening, white to move
N = 7


def judge(config: GameConfig) -> Judge:
    """The manager's judge on the session's compiled step of the config (conftest)."""
    return Judge(config, compiled(Gomoku.from_config(config)).step)


def side(label: str, *flags: str, turn_ms: int = 300, info=()) -> Side:
    return Side(label, engine_argv(command("--name", label, *flags)), turn_ms, info=info)


@pytest.fixture(scope="module")
def manager():
    with Manager(GameConfig(N), margin_ms=300, start_timeout_s=30, end_wait_s=0.5,
                 judge=judge(GameConfig(N))) as m:
        yield m


def fives(moves, n: int) -> set[int]:
    """Colours (1 black, 2 white) with five or more in a row after `moves` (x, y), black
    first: a plain scan, independent of the game's rules code."""
    board = np.zeros((n, n), int)
    for i, (x, y) in enumerate(moves):
        assert board[y, x] == 0, f"move {i} onto an occupied cell"
        board[y, x] = 1 + i % 2
    found = set()
    for y in range(n):
        for x in range(n):
            for dy, dx in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(y + i * dy, x + i * dx) for i in range(5)]
                if all(0 <= r < n and 0 <= c < n for r, c in cells):
                    colours = {board[r, c] for r, c in cells}
                    if len(colours) == 1 and 0 not in colours:
                        found |= colours
    return found


def test_a_pair_of_games_between_two_engines(manager):
    a = side("a")
    b = side("b", info=(("max_node", "1000"),))
    games = manager.play_pairs(a, b, opening_actions([OPENING], N))
    assert [g.a_black for g in games] == [True, False] and all(g.opening == 0 for g in games)
    c = N // 2
    for g in games:
        assert g.moves[:3] == [[c, c], [c, c - 1], [c + 2, c + 1]]  # (x, y) of the opening
        assert g.reason == "five" and g.loser in ("a", "b") and g.detail == ""
        winner_colour = len(g.moves) % 2 or 2  # the last mover: 1 black, 2 white
        assert fives(g.moves, N) == {winner_colour}
        a_colour = 1 if g.a_black else 2
        assert g.result == (1.0 if winner_colour == a_colour else 0.0)
        # each side's moves after the opening were timed, one time per move
        black_moves = (len(g.moves) + 1) // 2 - 2
        white_moves = len(g.moves) // 2 - 1
        assert len(g.ms["a" if g.a_black else "b"]) == black_moves
        assert len(g.ms["b" if g.a_black else "a"]) == white_moves
        # b was told its INFO max_node (it echoes it before each move); a was not
        assert g.messages["b"] and set(g.messages["b"]) == {"MESSAGE max_node=1000"}
        assert g.messages["a"] == []
    # the fakes play the same rule, so both games are one game with the colours swapped
    assert games[0].moves == games[1].moves
    assert games[0].result + games[1].result == 1.0


@pytest.mark.parametrize("flag, reason, detail", [
    ("--crash-at", "crash", "output closed"),
    ("--hang-at", "time", "within 300 ms + the margin 300 ms"),
    ("--illegal-at", "illegal", "is occupied"),
    ("--garbage-at", "garbage", "'thinking...'"),
    ("--error-at", "error", "'ERROR no idea', and no answer to TURN"),
])
def test_a_misbehaving_engine_loses_and_the_next_game_goes_on(manager, flag, reason, detail):
    a, b = side("a"), side(f"b{flag}", flag, "2")
    games = manager.play_pairs(a, b, opening_actions([OPENING], N))
    for g in games:  # the second game is played too: a dead or hung engine is restarted
        assert (g.reason, g.loser, g.result) == (reason, "b", 1.0)
        assert detail in g.detail
        assert len(g.ms["b"]) == (1 if reason in ("crash", "time", "error") else 2)
        assert len(g.moves) == 3 + len(g.ms["a"]) + 1  # b's failed move is not recorded
    manager.release(b)


def test_an_error_line_before_a_move_is_only_kept(manager):
    a, b = side("a"), side("w", "--warn-at", "2")
    games = manager.play_pairs(a, b, opening_actions([OPENING], N))
    assert [g.reason for g in games] == ["five", "five"]
    assert all(g.messages["b"] == ["ERROR just a warning"] for g in games)
    manager.release(b)


def test_a_refused_start_loses_the_game_and_is_reported(manager):
    b = side("r", "--refuse-start")
    with pytest.raises(EngineFailed, match="answered 'ERROR no thanks' to START") as e:
        manager.start(b)
    assert e.value.fault == "start"
    g = manager.play(side("a"), b, opening_actions([OPENING], N)[0], a_black=False)
    assert (g.reason, g.loser, g.result, g.moves) == ("start", "b", 1.0, [[3, 3], [3, 2],
                                                                            [5, 4]])
    manager.release(b)


def test_bad_engine_commands_and_info():
    with pytest.raises(ValueError, match="neither a command on PATH"):
        engine_argv("no-such-engine-here --x")
    with pytest.raises(ValueError, match="empty"):
        engine_argv("  ")
    assert engine_argv("gomoku-jax pbrain")[-1] == "pbrain"
    assert engine_argv(f"{sys.executable} -V") == (sys.executable, "-V")
    assert parse_info("max_node=1000, thread_num=1") == (("max_node", "1000"),
                                                          ("thread_num", "1"))
    assert parse_info("") == ()
    for bad in ("max_node", "max node=1", "=3", "k=a b"):
        with pytest.raises(ValueError, match="expected KEY=VALUE"):
            parse_info(bad)
    with pytest.raises(ValueError, match="five in a row"):
        Manager(GameConfig(7, win_length=4))
    with pytest.raises(ValueError, match="must differ"):
        with Manager(GameConfig(N), judge=judge(GameConfig(N))) as m:
            m.play(side("x"), side("x"), (), True)


def test_every_engine_is_killed_at_the_close():
    with Manager(GameConfig(N), margin_ms=300, end_wait_s=0.2,
                 judge=judge(GameConfig(N))) as m:
        stubborn, polite = side("s", "--ignore-end"), side("p")
        m.start(stubborn), m.start(polite)
        pids = [m.engines[s].proc.pid for s in (stubborn, polite)]
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_renju_forbidden_point_loses():
    # 9x9 renju (tests/games/gomoku/test_rule_variants.py's board, so its compiled step
    # is shared): black has two threes through the centre (4, 4); the fake, black to move,
    # plays the centre: a double-three, forbidden.
    n = 9
    config = GameConfig(n, rule="renju")
    black = [(4, 2), (4, 3), (2, 4), (3, 4)]  # (row, col)
    white = [(0, 0), (0, 8), (8, 0), (8, 8)]
    moves = [m for pair in zip(black, white) for m in pair]
    opening = tuple(r * n + c for r, c in moves)
    with Manager(config, margin_ms=300, end_wait_s=0.5, judge=judge(config)) as m:
        g = m.play(side("a"), side("b"), opening, a_black=False)
    assert (g.reason, g.loser, g.result) == ("forbidden", "b", 1.0)
    assert "4,4 is forbidden under renju" in g.detail and len(g.moves) == 8
