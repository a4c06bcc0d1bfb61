"""The Gomocup (piskvork) engine: scripted sessions, malformed lines, time-control hook,
a seeded fuzz run, the command line and an end-to-end subprocess session."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import io
import itertools
import random
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from engine_search import SEARCH, SMALL_TREE, search_agent

from gomoku_jax import agents, cli
from gomoku_jax.agents.anytime import AnytimeSearch, node_bytes
from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.specs import build_agent
from gomoku_jax.cli import pbrain as pbrain_cli
from gomoku_jax.games.gomoku.config import MAX_BOARD_SIZE, GameConfig
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.features.proximity import proximity_mask
from gomoku_jax.games.gomoku.positions import winning_colours
from gomoku_jax.games.random_play import random_legal_action
from gomoku_jax.io import pbrain
from gomoku_jax.io.pbrain import OPPONENT, OWN, PbrainEngine, rule_from_bitmask
from gomoku_jax.io.player import (
    DEFAULT_MAX_NODES,
    TimedPlayer,
    choose_variant,
    jitted_act,
    simulations,
    variants,
)

MOVE = re.compile(r"([0-9]{1,2}),([0-9]{1,2})")
ALLOWED = re.compile(r'OK|[0-9]{1,2},[0-9]{1,2}|(ERROR|UNKNOWN|MESSAGE|DEBUG) [!-~][ -~]*'
                     r'|name="gomoku-jax", [ -~]*')


def send(engine: PbrainEngine, *lines: str) -> list[str]:
    """All output lines for `lines`, each checked to be one of the protocol's forms."""
    out = []
    for line in lines:
        for o in engine.handle(line):
            assert ALLOWED.fullmatch(o), (line, o)
            out.append(o)
    return out


def move_of(out: list[str]) -> tuple[int, int]:
    assert out and MOVE.fullmatch(out[-1]), out
    x, y = map(int, out[-1].split(","))
    return x, y


def free_cell(engine: PbrainEngine) -> tuple[int, int]:
    """(x, y) of the first empty cell in reading order."""
    y, x = map(int, np.argwhere(engine.board == 0)[0])
    return x, y


def board_from(n: int, stones) -> np.ndarray:
    board = np.zeros((n, n), np.int8)
    for x, y, field in stones:
        board[y, x] = OWN if field == 1 else OPPONENT
    return board


def assert_fair_position(board: np.ndarray, rule: str) -> None:
    """`board` (ours +1, theirs -1, us to move) is one where moving is legal: counts fit
    alternating play, nobody has a winning line, and a cell is empty."""
    own, opp = int(np.sum(board == OWN)), int(np.sum(board == OPPONENT))
    assert own == opp or opp == own + 1, (own, opp)
    colour = 1 if own == opp else -1
    config = GameConfig(board.shape[0], 5, rule)
    assert not winning_colours((board * colour).astype(np.int8), config)
    assert own + opp < board.size


@pytest.fixture()
def heuristic15():
    engine = PbrainEngine("heuristic")
    assert send(engine, "START 15") == ["OK"]
    return engine


@pytest.fixture()
def random7():
    engine = PbrainEngine("random", seed=1)
    assert send(engine, "START 7") == ["OK"]
    return engine


# ------------------------------------------------------------------ scripted sessions

def test_begin_turn_session(heuristic15):
    e = heuristic15
    x, y = move_of(send(e, "BEGIN"))
    assert e.board[y, x] == OWN and np.count_nonzero(e.board) == 1
    opponent = [(a, b) for a in (6, 7, 8) for b in (6, 7, 8)]
    for tx, ty in opponent[:4]:
        if e.board[ty, tx]:
            continue
        before = e.board.copy()
        x, y = move_of(send(e, f"TURN {tx},{ty}"))
        assert before[y, x] == 0 and (x, y) != (tx, ty)
        assert e.board[ty, tx] == OPPONENT and e.board[y, x] == OWN
        assert np.count_nonzero(e.board) == np.count_nonzero(before) + 2
    about = send(e, "ABOUT")
    assert len(about) == 1 and about[0].startswith('name="gomoku-jax", version="')
    assert send(e, "END") == [] and e.ended
    assert send(e, "BEGIN") == []  # nothing after END


def test_heuristic_completes_five_with_x_as_column(heuristic15):
    """Own four in row y=2 (x = 3..6): the only wins are x=2 or x=7 on that row."""
    e = heuristic15
    stones = [(x, 2, 1) for x in range(3, 7)] + [(10, 10, 2), (10, 12, 2), (12, 10, 2),
                                                   (12, 12, 2)]
    out = send(e, "BOARD", *(f"{x},{y},{f}" for x, y, f in stones), "DONE")
    assert move_of(out) in {(2, 2), (7, 2)}
    err = send(e, "TURN 0,0")
    assert len(err) == 1 and err[0].startswith("ERROR the game is over: we have")
    assert e.board[0, 0] == 0  # the erroneous TURN left no stone


def test_heuristic_blocks_opponent_four_with_fields_mapped(heuristic15):
    """Opponent (field 2) four in column x=9 (y = 5..8), we are white to move: block it."""
    e = heuristic15
    stones = [(9, y, 2) for y in range(5, 9)] + [(0, 14, 1), (2, 14, 1), (4, 14, 1)]
    out = send(e, "BOARD", *(f"{x},{y},{f}" for x, y, f in stones), "DONE")
    assert move_of(out) in {(9, 4), (9, 9)}


def test_board_near_edges_and_corners():
    e = PbrainEngine("random")
    assert send(e, "START 19") == ["OK"]
    stones = [(0, 0, 1), (18, 0, 2), (0, 18, 2), (18, 18, 1), (9, 0, 1), (0, 9, 2),
              (18, 9, 1), (9, 18, 2)]
    out = send(e, "BOARD", *(f"{x},{y},{f}" for x, y, f in stones), "DONE")
    x, y = move_of(out)
    expected = board_from(19, stones)
    assert expected[y, x] == 0
    expected[y, x] = OWN
    np.testing.assert_array_equal(e.board, expected)  # [y, x]: x is the column
    assert e.board[0, 18] == OPPONENT and e.board[18, 0] == OPPONENT


def test_board_size_5_game_to_the_end():
    e = PbrainEngine("random", seed=3)
    assert send(e, "START 5") == ["OK"]
    rng = random.Random(0)
    x, y = move_of(send(e, "BEGIN"))
    moves = 1
    while True:
        empty = [(c, r) for r in range(5) for c in range(5) if e.board[r, c] == 0]
        if not empty:
            break
        tx, ty = rng.choice(empty)
        before = e.board.copy()
        out = send(e, f"TURN {tx},{ty}")
        if out[0].startswith("ERROR"):  # the game is over (a five, or a full board)
            assert "over" in out[0] or "full" in out[0]
            np.testing.assert_array_equal(e.board, before)
            break
        x, y = move_of(out)
        position = e.board.copy()
        position[y, x] = 0
        assert before[y, x] == 0 and (x, y) != (tx, ty)
        assert_fair_position(position, "freestyle")
        moves += 1
    assert moves >= 3


def test_takeback_restart_and_turn_again(random7):
    e = random7
    x, y = move_of(send(e, "TURN 3,3"))
    assert send(e, "TAKEBACK 3,3") == ["OK"] and e.board[3, 3] == 0
    assert send(e, f"TAKEBACK {x},{y}") == ["OK"] and not e.board.any()
    out = send(e, "TAKEBACK 3,3")
    assert len(out) == 1 and out[0].startswith("ERROR TAKEBACK 3,3: that cell is empty")
    x2, y2 = move_of(send(e, "TURN 3,3"))
    assert e.board[3, 3] == OPPONENT and e.board[y2, x2] == OWN
    assert send(e, "RESTART") == ["OK"] and not e.board.any()
    move_of(send(e, "BEGIN"))


def test_info_lines_are_stored_silently(random7):
    e = random7
    assert send(e, "INFO timeout_turn 5000", "INFO timeout_match 180000",
                "INFO time_left 90000", "INFO max_memory 83886080", "INFO game_type 1",
                "INFO folder C:\\tmp", "INFO some_future_key 42", "info TIMEOUT_TURN 4000") == []
    assert e.limits["timeout_turn"] == 4000 and e.limits["time_left"] == 90000
    assert e.info["folder"] == "C:\\tmp" and e.info["some_future_key"] == "42"
    assert e.move_budget_s() == pytest.approx(min(4.0, 90.0 / 20) * 0.8 - 0.05)
    out = send(e, "INFO timeout_turn soon")
    assert len(out) == 1 and out[0].startswith("ERROR INFO timeout_turn expects an integer")
    assert e.limits["timeout_turn"] == 4000
    assert send(e, "INFO timeout_match 0") == []
    assert e.move_budget_s() == pytest.approx(4.0 * 0.8 - 0.05)  # no match clock any more
    assert send(e, "INFO time_left -300") == [] and e.limits["time_left"] == 0


def test_rule_exact5_via_info(random7):
    """An opponent six in a row ends a freestyle game but not an exact-five one."""
    e = random7
    stones = [(x, 0, 2) for x in range(6)] + [(0, 2, 1), (2, 2, 1), (4, 2, 1), (6, 2, 1),
                                                (0, 4, 1), (2, 4, 1)]
    lines = ["BOARD", *(f"{x},{y},{f}" for x, y, f in stones), "DONE"]
    out = send(e, *lines)
    assert len(out) == 1 and "the game is over: the opponent has a winning line" in out[0]
    assert not e.board.any()  # the refused BOARD left the previous (empty) position
    assert send(e, "INFO rule 1") == [] and e.rule == "exact5"
    assert e.player.prepared(pbrain.OpeningGomoku(7, 5, "exact5"))  # compiled when the INFO came
    x, y = move_of(send(e, *lines))
    assert board_from(7, stones)[y, x] == 0
    assert send(e, "INFO rule 0") == [] and e.rule == "freestyle"
    out = send(e, "INFO rule 6")
    assert e.rule == "renju" and out[0].startswith("MESSAGE rule 6: continuous game")


def test_rule_bitmask_mapping():  # every mask: tests/io/test_pbrain_rules.py
    assert rule_from_bitmask(0) == ("freestyle", None)
    assert rule_from_bitmask(1) == ("exact5", None)
    assert rule_from_bitmask(4) == ("renju", None)
    rule, note = rule_from_bitmask(2 | 8)
    assert rule == "caro" and "continuous" in note
    assert "unknown bits 16" in rule_from_bitmask(17)[1]


def test_lowercase_whitespace_and_windows_line_endings(random7):
    e = random7
    assert send(e, "", "   ", "\r\n", "\t") == []
    x, y = move_of(send(e, "  turn   3 , 4 \r\n"))
    assert e.board[4, 3] == OPPONENT and e.board[y, x] == OWN
    assert send(e, "restart\r\n") == ["OK"]
    move_of(send(e, "board\r\n", " 1,1,1 \r\n", "2, 2, 2\r\n", "done\r\n"))
    assert e.board[1, 1] == OWN and e.board[2, 2] == OPPONENT


# ------------------------------------------------------------------ malformed lines

@pytest.mark.parametrize("lines, reason", [
    (["TURN a,b"], "TURN expects X,Y"),
    (["TURN 99,99"], "off the 7x7 board"),
    (["TURN 7,0"], "off the 7x7 board"),
    (["TURN -1,3"], "TURN expects X,Y"),
    (["TURN 3,4,5"], "TURN expects X,Y"),
    (["TURN"], "TURN expects X,Y"),
    (["TURN 1,1", "TURN 1,1"], "that cell is occupied"),
    (["START 4"], "board size 4 is not supported"),
    (["START 21"], "board size 21 is not supported"),
    (["START x"], "START expects a board size"),
    (["START"], "START expects a board size"),
    (["RECTSTART 7,9"], "rectangular boards"),
    (["BOARD", "1,1,1", "TURN 2,2"], "after BOARD: expected X,Y,FIELD or DONE"),
    (["BOARD", "1,1,1", "1,1,2"], "BOARD lists 1,1 twice"),
    (["BOARD", "9,1,1"], "off the 7x7 board"),
    (["BOARD", "1,1,3"], "field 3 (continuous games) is not supported"),
    (["BOARD", "1,1,1", "2,2,1", "DONE"], "stone counts don't fit"),
    (["DONE"], "DONE without BOARD"),
    (["1,2,1"], "outside BOARD"),
    (["TURN 3,3", "BEGIN"], "BEGIN needs an empty board"),
    (["RESTART now"], "RESTART takes no argument"),
    (["TAKEBACK 2"], "TAKEBACK expects X,Y"),
    (["INFO"], "INFO expects a key and a value"),
    (["INFO rule -1"], "must be >= 0"),
])
def test_malformed_lines_answer_error_and_engine_keeps_working(random7, lines, reason):
    e = random7
    outputs = [e.handle(line) for line in lines]
    last = outputs[-1]
    assert len(last) == 1 and last[0].startswith("ERROR ") and reason in last[0], last
    assert ALLOWED.fullmatch(last[0])
    # still working: a fresh game plays normally
    assert send(e, "RESTART") == ["OK"]
    x, y = move_of(send(e, "TURN 0,0"))
    assert (x, y) != (0, 0) and e.board[y, x] == OWN


def test_an_error_changes_nothing(random7):
    e = random7
    move_of(send(e, "TURN 3,3"))
    board = e.board.copy()
    ex, ey = free_cell(e)
    for line in ["TURN 3,3", "TURN a,b", "BEGIN", f"TAKEBACK {ex},{ey}", "START 30", "DONE",
                 "BOARD", "0,0,1", "oops", "BOARD", "0,0,1", "0,0,2"]:
        send(e, line)
        np.testing.assert_array_equal(e.board, board)
    assert e.size == 7 and e._pending is None


def test_board_without_done_then_command_is_error_and_not_executed(random7):
    e = random7
    out = send(e, "BOARD", "0,0,2", "TURN 3,3")
    assert len(out) == 1 and out[0].startswith("ERROR after BOARD") and "not executed" in out[0]
    assert not e.board.any()  # neither the BOARD nor the TURN took effect
    assert send(e, "5,5,1")[0].startswith("ERROR")  # board mode was left
    move_of(send(e, "TURN 3,3"))


def test_info_inside_board_keeps_board_mode(random7):
    e = random7
    out = send(e, "BOARD", "0,0,2", "INFO time_left 1000", "INFO timeout_turn x", "1,1,1",
               "2,2,2", "DONE")
    assert out[0].startswith("ERROR INFO timeout_turn")
    x, y = move_of(out)
    assert e.board[0, 0] == OPPONENT and e.board[1, 1] == OWN and e.board[2, 2] == OPPONENT
    assert e.limits["time_left"] == 1000


@pytest.mark.parametrize("line", ["TURN 3,3", "BEGIN", "BOARD", "RESTART", "TAKEBACK 1,1"])
def test_commands_before_start(line):
    e = PbrainEngine("random")
    out = send(e, line)
    assert len(out) == 1 and "before START" in out[0] and out[0].startswith("ERROR")
    assert send(e, "ABOUT")[0].startswith('name="gomoku-jax"')
    assert send(e, "FOO 1,2") == ["UNKNOWN command 'FOO'"]


def test_run_loop_reads_until_end():
    stdin = io.StringIO("START 7\r\nBEGIN\r\nFOO\r\nEND\r\nBEGIN\r\n")
    stdout = io.StringIO()
    e = PbrainEngine("random")
    assert e.run(stdin, stdout) == 0
    lines = stdout.getvalue().splitlines()
    assert lines[0] == "OK" and MOVE.fullmatch(lines[1]) and lines[2].startswith("UNKNOWN")
    assert len(lines) == 3 and stdin.readline() == "BEGIN\r\n"  # END stopped the loop


# ------------------------------------------------------------------ time control hook

@dataclasses.dataclass(frozen=True)
class SimulatingAgent(Agent):
    """A stand-in for a search agent: `num_simulations` rounds of busy work, a random legal
    move, and its simulation count reported as `value` so tests see which variant ran."""

    name = "simulating"
    num_simulations: int = 64

    def act(self, params, agent_state, state, key):
        legal = state.legal_action_mask
        work = jax.lax.fori_loop(0, self.num_simulations, lambda i, a: a + jnp.sin(a),
                                 jnp.float32(1.0))
        value = jnp.where(jnp.isfinite(work), jnp.float32(self.num_simulations), 0.0)
        return random_legal_action(key, legal), agent_state, {
            "policy": legal / jnp.sum(legal), "value": value}


@dataclasses.dataclass(frozen=True)
class CornerAgent(Agent):
    """Always answers action 0 (the corner), legal or not."""

    name = "corner"

    def act(self, params, agent_state, state, key):
        legal = state.legal_action_mask
        return jnp.int32(0), agent_state, {"policy": legal / jnp.sum(legal),
                                           "value": jnp.float32(0.0)}


def test_variants_and_choice():
    sims = lambda agent, **kw: [v.num_simulations for v in variants(agent, **kw)]
    assert sims(SimulatingAgent(num_simulations=64)) == [64, 16, 4]
    assert sims(SimulatingAgent(num_simulations=5)) == [5, 1]
    assert sims(SimulatingAgent(num_simulations=64), levels=1) == [64]
    # the copies differ only in num_simulations (a bound agent stays bound)
    bound = SimulatingAgent(num_simulations=64).bind(Gomoku(5, 4))
    assert variants(bound)[1] == SimulatingAgent(Gomoku(5, 4), num_simulations=16)
    assert variants(CornerAgent()) == (CornerAgent(),)
    assert choose_variant([3.0, 1.0, 0.2], None) == 0
    assert choose_variant([3.0, 1.0, 0.2], 5.0) == 0
    assert choose_variant([3.0, 1.0, 0.2], 1.5) == 1
    assert choose_variant([3.0, 1.0, 0.2], 0.0) == 2


def test_timed_player_keeps_compilations_and_estimates_per_env():
    ticks = itertools.count()  # every clock reading is one second later
    player = TimedPlayer(SimulatingAgent(num_simulations=8), levels=2,
                         clock=lambda: float(next(ticks)))
    assert [simulations(v) for v in player.variants] == [8, 2]
    small, large = Gomoku(5, 4), Gomoku(6, 4)
    key = jax.random.key(0)
    assert player.prepare(small, key) == [1.0, 1.0] and player.prepared(small)
    assert not player.prepared(large) and player.prepared(Gomoku(5, 4))  # equal envs: one
    state = small.init(key)
    played = player.move(small, state, None, key, budget_s=0.5)  # nothing fits: the cheapest
    assert played.variant == 1 and played.seconds == 1.0 and played.info["value"] == 2
    assert state.legal_action_mask[played.action]
    played = player.move(small, state, None, key)  # no budget: the strongest
    assert played.variant == 0 and played.info["value"] == 8
    player._estimates[small][0] = 3.0
    played = player.move(small, state, None, key, budget_s=2.5)
    assert played.variant == 1 and player.estimates(small) == [3.0, 1.0]
    # an env that was not prepared is prepared (compiled) by its first move
    played = player.move(large, large.init(key), None, key, budget_s=None)
    assert played.variant == 0 and player.prepared(large) and len(player.estimates(large)) == 2
    assert player.estimates(small) == [3.0, 1.0]  # untouched by the other env
    assert jitted_act(player.variants[0].bind(small)) is jitted_act(
        SimulatingAgent(num_simulations=8).bind(Gomoku(5, 4)))  # shared between equal agents


def test_time_budget_picks_cheaper_variants_without_compiling_on_the_clock():
    ticks = itertools.count()  # a clock on which every move takes one second
    e = PbrainEngine(SimulatingAgent(num_simulations=64), clock=lambda: float(next(ticks)))
    assert send(e, "START 7") == ["OK"]
    player: TimedPlayer = e.player
    assert [v.num_simulations for v in player.variants] == [64, 16, 4]
    assert player.prepared(e.env) and len(player.estimates(e.env)) == 3
    acts = player._acts[e.env]
    compiled = [act._cache_size() for act in acts]
    assert len(acts) == 3 and all(c >= 1 for c in compiled)
    move_of(send(e, "BEGIN"))  # no limits known: full strength
    assert e.last_move["num_simulations"] == 64 and e.last_move["value"] == 64
    assert e.last_move["budget_s"] is None
    send(e, "INFO timeout_turn 0")  # as fast as possible
    move_of(send(e, "TURN {},{}".format(*free_cell(e))))
    assert e.last_move["num_simulations"] == 4 and e.last_move["value"] == 4
    send(e, "INFO timeout_turn 100000000")
    move_of(send(e, "TURN {},{}".format(*free_cell(e))))
    assert e.last_move["num_simulations"] == 64
    send(e, "INFO timeout_match 1000000", "INFO time_left 10")  # the match clock is short
    calls = e.moves_computed
    move_of(send(e, "TURN {},{}".format(*free_cell(e))))  # no time for any variant
    assert e.last_move["quick"] and e.last_move["budget_s"] == 0.0 and e.moves_computed == calls
    assert [act._cache_size() for act in acts] == compiled and list(player._acts) == [e.env]


@dataclasses.dataclass(frozen=True)
class ConnectFourAgent(CornerAgent):
    """An agent that plays another game only."""

    name = "connect_four_only"
    games = ("pgx/connect_four",)


def test_engine_checks_the_agent_plays_gomoku():
    with pytest.raises(ValueError, match=r"agent 'connect_four_only' plays "
                                         r"\['pgx/connect_four'\], not 'gomoku'"):
        PbrainEngine(ConnectFourAgent())
    with pytest.raises(ValueError, match="rule must be one of"):
        PbrainEngine("random", rule="gomoku")
    with pytest.raises(ValueError, match="agent_config goes with an agent name"):
        PbrainEngine(CornerAgent(), {"x": "1"})


def test_illegal_agent_move_is_never_played():
    e = PbrainEngine(CornerAgent())
    assert send(e, "START 5") == ["OK"]
    out = send(e, "BOARD", "0,0,2", "4,4,1", "4,0,2", "0,4,1", "DONE")
    assert out[0].startswith("MESSAGE agent corner chose illegal action 0")
    assert out[-1] == "2,2" and e.board[2, 2] == OWN  # the empty cell nearest the centre
    out = send(e, "TURN 1,1")  # 6 stones: past the opening rule, the corner is taken still
    assert out[0].startswith("MESSAGE agent corner chose illegal action 0")
    x, y = move_of(out)
    assert e.board[y, x] == OWN and max(abs(x - 2), abs(y - 2)) == 1


# ------------------------------------------------------------------ fuzzing

INFO_KEYS = ("timeout_turn", "timeout_match", "time_left", "rule", "max_memory", "game_type",
             "folder", "evaluate", "zzz", "")


def _fuzz_lines(rng: random.Random, sizes: list[int], info_keys=INFO_KEYS) -> list[str]:
    """One random line, or a BOARD block (sometimes corrupted by a random line)."""
    n = rng.choice(sizes)
    if rng.random() < 0.06:
        cells = rng.sample([(x, y) for x in range(n) for y in range(n)], rng.randrange(2 * n))
        lines = ["BOARD"] + [f"{x},{y},{1 + i % 2 if rng.random() < 0.95 else 2 - i % 2}"
                             for i, (x, y) in enumerate(cells)] + ["DONE"]
        if rng.random() < 0.3:
            lines.insert(rng.randrange(1, len(lines)), _fuzz_line(rng, sizes, info_keys))
        return lines
    return [_fuzz_line(rng, sizes, info_keys)]


def _fuzz_line(rng: random.Random, sizes: list[int], info_keys=INFO_KEYS) -> str:
    n = rng.choice(sizes)
    coord = lambda: (rng.randrange(n) if rng.random() < 0.8 else
                     rng.choice([rng.randrange(n + 3), -1, 99, "a", "", " 1"]))
    kind = rng.random()
    if kind < 0.30:
        line = f"TURN {coord()},{coord()}"
    elif kind < 0.45:
        line = f"{coord()},{coord()},{rng.choice([1, 2, 2, 1, 3, 0, 'x'])}"
    elif kind < 0.50:
        line = rng.choice(["BOARD", "DONE"])
    elif kind < 0.55:
        line = rng.choice(["RESTART", "BEGIN", "ABOUT"])
    elif kind < 0.58:
        line = f"START {rng.choice(sizes + [4, 20, 0, 'x', '', '15 15', '-5'])}"
    elif kind < 0.63:
        line = f"TAKEBACK {coord()},{coord()}"
    elif kind < 0.70:
        key = rng.choice(info_keys)
        value = rng.choice(["0", "1", "4", "1000", "-7", "abc", "", "99999999999999999999"])
        line = f"INFO {key} {value}"
    elif kind < 0.75:
        line = rng.choice(["RECTSTART 7,7", "RECTSTART 5,9", "SWAP2BOARD", "PLAY 1,1",
                           "SUGGEST 1,1", "TURN", "BOARD 1", "DONE DONE"])
    elif kind < 0.90:
        alphabet = "TURNBOADESI,0123456789 \t-xé\x00\x7f"
        line = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 20)))
    else:
        line = rng.choice(["", "   ", "x" * 5000, "TURN " + "9" * 300 + ",1", "\u2603",
                           "turn 1,1", "Begin", "  restart  "])
    if rng.random() < 0.3:
        line = line.lower()
    if line.split() and line.split()[0].upper() == "END":  # END would end the run
        line = "N" + line
    return line + rng.choice(["", "\n", "\r\n", "  "])


def fuzz(engine: PbrainEngine, sizes: list[int], steps: int, seed: int,
         info_keys=INFO_KEYS) -> dict:
    rng = random.Random(seed)
    counts = {"move": 0, "ERROR": 0, "UNKNOWN": 0, "OK": 0}
    board_lines: list[tuple[int, int, int]] = []
    lines: list[str] = []
    for step in range(steps):
        if not lines:
            lines = _fuzz_lines(rng, sizes, info_keys) if step % 200 else [f"START {sizes[0]}"]
        line = lines.pop(0)
        before = None if engine.board is None else engine.board.copy()
        calls = engine.moves_computed
        out = engine.handle(line)  # must not raise
        text = line.strip()
        word = text.split()[0].upper() if text else ""
        if word == "BOARD" and not out:
            board_lines = []
        elif engine._pending is not None and pbrain._XY_FIELD.fullmatch(text):
            board_lines.append(tuple(map(int, re.findall(r"[0-9]+", text))))
        assert len(out) <= 2 and engine.moves_computed - calls <= 1, (line, out)
        for o in out:
            assert ALLOWED.fullmatch(o), (line, o)
            assert "internal error" not in o, (line, o)
        moves = [o for o in out if MOVE.fullmatch(o)]
        if moves:
            assert out[-1] == moves[0] and len(moves) == 1
            x, y = map(int, moves[0].split(","))
            after = engine.board
            assert after[y, x] == OWN
            position = after.copy()
            position[y, x] = 0
            if word == "TURN":
                tx, ty = map(int, re.findall(r"[0-9]+", text))
                expected = before.copy()
                assert expected[ty, tx] == 0
                expected[ty, tx] = OPPONENT
            elif word == "BEGIN":
                expected = np.zeros_like(before)
            else:
                assert word == "DONE", line
                expected = board_from(engine.size, board_lines)
            np.testing.assert_array_equal(position, expected)
            assert_fair_position(position, engine.rule)
            counts["move"] += 1
            counts[word] = counts.get(word, 0) + 1
        elif out and out[-1].split()[0] in ("ERROR", "UNKNOWN"):
            counts[out[-1].split()[0]] += 1
            if before is not None and engine.board is not None and word != "START":
                np.testing.assert_array_equal(engine.board, before)
        elif out and out[-1] == "OK":
            counts["OK"] += 1
        assert not engine.ended
    return counts


@pytest.mark.slow
def test_fuzz_random_agent():
    engine = PbrainEngine("random", seed=5)
    counts = fuzz(engine, [5, 6, 7], steps=4000, seed=11)
    assert counts["move"] > 300 and counts["ERROR"] > 500 and counts["UNKNOWN"] > 50, counts
    assert counts["OK"] > 50 and counts["DONE"] > 30 and counts["BEGIN"] > 10, counts
    assert engine.handle("END") == [] and engine.ended


def test_fuzz_heuristic_agent():
    """An agent that reads the position, on one rule: every rule is a compile of the
    heuristic (test_fuzz_random_agent fuzzes INFO rule)."""
    engine = PbrainEngine("heuristic", seed=6)
    counts = fuzz(engine, [7], steps=500, seed=12,
                  info_keys=tuple(k for k in INFO_KEYS if k != "rule"))
    assert engine.rule == "freestyle"
    assert counts["move"] > 30 and counts["DONE"] > 3 and counts["ERROR"] > 50, counts


# ------------------------------------------------------------------ command line

def test_trained_without_a_checkpoint_is_the_shipped_network():
    from gomoku_jax.cli import pbrain as pbrain_cli
    engine = pbrain_cli.engine_from_args(cli.build_parser().parse_args(
        ["pbrain", "--agent", "trained"]))
    assert engine.game.board_size == 15 and engine.agent.evaluator == "network"
    assert not engine.agent.search.solver  # the network's own agent, as asked
    assert send(engine, "START 9")[0].startswith("ERROR")


def test_a_muzero_run_plays_its_own_game(tmp_path):
    """`--checkpoint` of a MuZero run: the engine searches the run's learned model on the
    run's board (5×5 here) and refuses another size."""
    from muzero_run import write_run

    from gomoku_jax.agents.muzero import MuZeroAgent
    from gomoku_jax.cli import pbrain as pbrain_cli
    engine = pbrain_cli.engine_from_args(cli.build_parser().parse_args(
        ["pbrain", "--checkpoint", str(write_run(tmp_path / "mz")),
         "--agent-config", "num_simulations=2"]))
    assert isinstance(engine.agent, MuZeroAgent) and engine.game.board_size == 5
    assert send(engine, "START 5") == ["OK"]
    x, y = move_of(send(engine, "BEGIN"))
    assert engine.board[y, x] == OWN
    tx, ty = free_cell(engine)
    x2, y2 = move_of(send(engine, f"TURN {tx},{ty}"))
    assert engine.board[ty, tx] == OPPONENT and engine.board[y2, x2] == OWN
    assert send(engine, "START 7")[0].startswith("ERROR")
    # A network of another board and observation: checked against its own game, not a
    # 5×5 stand-in.
    from muzero_helpers import TINY

    from gomoku_jax.nets.muzero import MuZeroNetwork
    game = GameConfig(9, 4, observation="canonical", feature_plane="patterns")
    network = MuZeroNetwork.for_env(TINY, Gomoku.from_config(game))
    assert PbrainEngine(MuZeroAgent(network=network), game=game).game == game


def test_cli_help_and_bad_flags(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        cli.main(["pbrain", "--help"])
    assert e.value.code == 0
    assert "--agent" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        cli.main(["pbrain", "--agent", "nobody"])
    assert e.value.code == 2 and "invalid choice: 'nobody'" in capsys.readouterr().err
    for argv, message in [
        (["--checkpoint", str(tmp_path / "missing.ckpt")], "missing.ckpt does not exist"),
        (["--checkpoint", str(tmp_path)], "is not a run directory"),
        (["--agent", "mcts", "--agent-config", "evaluator=network"],
         "uses evaluator=network, which needs a trained network"),
        (["--agent-config", "nonsense=1"], "unknown field 'nonsense' for agent 'mcts'"),
        (["--agent", "heuristic", "--agent-config", "nonsense=1"],
         "unknown field 'nonsense' for agent 'heuristic'; valid fields: ['attack', 'defence',"),
        (["--agent-config", "defence"], "--agent-config: 'defence' is not field=value"),
        (["--agent-config", "defence=1", "--agent-config", "defence=2"],
         "--agent-config: field 'defence' is given twice"),
        (["--agent", "heuristic", "--agent-config", "defence=strong"],
         "agent 'heuristic' field 'defence' takes a float, got 'strong'"),
        (["--agent", "heuristic", "--agent-config", "patterns=1"],
         "'patterns' is a nested config"),
        (["--agent", "mcts", "--agent-config", "greedy=maybe"],
         "field 'greedy' takes a bool, got 'maybe'"),
        (["--agent", "proximity_random", "--agent-config", "threshold=2"],
         "threshold must be in [0, 1], got 2.0"),
        (["--levels", "0"], "--levels must be >= 1"),
    ]:
        with pytest.raises(SystemExit) as e:
            cli.main(["pbrain", *argv])
        text = str(e.value.code)
        assert text.startswith("error: "), (argv, text)
        for part in (message,) if isinstance(message, str) else message:
            assert part in text, (argv, text)


def test_agent_config():
    config = pbrain_cli.agent_config(["defence=1.25", "attack = 2"])
    assert config == {"defence": "1.25", "attack": "2"}  # text: the agent's fields convert it
    engine = PbrainEngine("heuristic", config)
    assert engine.agent.defence == 1.25 and engine.agent.attack == 2.0
    assert isinstance(engine.agent.attack, float)
    # a field of the agent's search config, by its bare name
    agent = build_agent("mcts", pbrain_cli.agent_config(["greedy=false", "num_simulations=3"]))
    assert agent.search.greedy is False and agent.num_simulations == 3
    assert PbrainEngine(agent).agent is agent
    for pairs, message in [(["defence"], "--agent-config: 'defence' is not field=value"),
                           (["=1"], "--agent-config: '=1' is not field=value"),
                           (["defence=1", " defence = 2"],
                            "--agent-config: field 'defence' is given twice")]:
        with pytest.raises(ValueError, match=message):
            pbrain_cli.agent_config(pairs)


def test_python_dash_m_pbrain_session():
    script = ("START 7\nABOUT\nINFO timeout_turn 1000\nINFO rule 1\nBOARD\n0,0,2\n6,6,1\n"
              "3,3,2\nDONE\nTURN a,b\nFOO\nEND\nSTART 9\n")
    proc = subprocess.run([sys.executable, "-m", "gomoku_jax", "pbrain", "--agent", "random"],
                          input=script, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 5, lines
    assert lines[0] == "OK" and lines[1].startswith('name="gomoku-jax"')
    x, y = map(int, MOVE.fullmatch(lines[2]).groups())
    assert 0 <= x < 7 and 0 <= y < 7 and (x, y) not in {(0, 0), (6, 6), (3, 3)}
    assert lines[3].startswith("ERROR TURN expects X,Y")
    assert lines[4] == "UNKNOWN command 'FOO'"


def test_gmo_plays_and_carries_its_novelty_memory_across_turns():
    tiny = dict(state_dim=16, move_dim=16, hidden_dim=32, part_dim=8, mc_samples=2)
    e = PbrainEngine("gmo", tiny, seed=1)
    assert send(e, "START 7") == ["OK"]
    x, y = move_of(send(e, "BEGIN"))
    assert e.board[y, x] == OWN
    tx, ty = free_cell(e)
    x2, y2 = move_of(send(e, f"TURN {tx},{ty}"))
    assert e.board[ty, tx] == OPPONENT and e.board[y2, x2] == OWN
    assert int(e._agent_state.count) == 2  # one embedding per own move
    send(e, "RESTART")
    assert int(e._agent_state.count) == 0  # a new game, an empty memory


# A search agent without anytime search, in two variants (8 and 2 simulations); the tests
# that use it share its compiled variants (`jitted_act`). No threat search at the root: it
# only makes the variants' compiles longer.
VARIANTS_AGENT = agents.make("mcts", num_simulations=8, reuse_tree=True, evaluator="uniform",
                             threat_search=0)


def test_a_search_that_reuses_its_tree_keeps_it_across_turns_and_variants():
    """Without anytime search, every time-control variant takes the same tree (the cheaper
    ones keep the full capacity), and two TURNs on, the reply's subtree is the next root."""
    agent = VARIANTS_AGENT
    shapes = {jax.tree.map(lambda x: x.shape, v.bind(Gomoku(7, 4)).init(jax.random.key(0)))
              .node_visits for v in variants(agent, levels=2)}
    assert shapes == {(agent.capacity,)}
    e = PbrainEngine(agent, seed=1, levels=2, anytime=False)
    assert send(e, "START 7") == ["OK"]
    move_of(send(e, "BEGIN"))
    assert int(e._agent_state.node_visits[0]) == 9  # a fresh tree: 8 simulations
    send(e, "INFO timeout_turn 1")  # 1 ms: the cheapest variant (2 simulations) from here
    for _ in range(2):
        tx, ty = free_cell(e)
        x, y = move_of(send(e, f"TURN {tx},{ty}"))
        assert e.board[ty, tx] == OPPONENT and e.board[y, x] == OWN
        assert e._agent_state.node_visits.shape == (agent.capacity,)
        assert int(e._agent_state.node_visits[0]) >= 3


# ------------------------------------------------------------------ anytime search

class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def slow_anytime(engine: PbrainEngine, clock: FakeClock, seconds: dict) -> None:
    """Every compiled call of the engine's anytime search takes `seconds[kind]` on `clock`
    (a chunk 0.2 % longer each time: the search must keep predicting)."""
    searcher = engine.player.anytime
    real = AnytimeSearch._call.__get__(searcher)
    growth = itertools.count()

    def call(kind, fn, *args):
        out = real(kind, fn, *args)
        clock.now += seconds[kind] * (1.0 if kind == "start" else 1.002 ** next(growth))
        return out

    searcher._call = call
    searcher._compiled_for(engine.env).estimates.update(seconds)


def mcts_engine(config: dict = SEARCH, **kwargs) -> PbrainEngine:
    """The anytime search of the clock, memory and RESTART tests (`engine_search`: the
    engine tests' one configuration, without the threat search, which is tested with
    anytime in test_anytime.py and below)."""
    return PbrainEngine("mcts", config, seed=1, **kwargs)


def test_anytime_moves_stay_within_budget_and_reuse_the_tree():
    clock = FakeClock()
    # One chunk size (one simulation): the programs of the other engine tests. Two sizes,
    # the short chunk filling a budget's end, are test_anytime.py's (the same AnytimeSearch).
    e = mcts_engine(clock=clock)
    assert send(e, "START 7") == ["OK"]
    assert e.player.anytime is not None and e.player.variants == (e.agent,)
    assert e.player.anytime.sizes() == (1,)
    slow_anytime(e, clock, {"start": 0.004, 1: 0.01})
    send(e, "INFO timeout_turn 1000")  # 1000 * 0.8 - 50 = 750 ms a move
    assert send(e, "BEGIN") == ["3,3"] and e.moves_computed == 0  # the centre, unsearched
    reused = []
    for turn in range(5):
        tree = jax.tree.map(lambda x: x[0], e._agent_state)
        node = int(tree.children_index[0, e.last_move["action"]]) if turn else -1
        if node > 0 and np.asarray(tree.children_visits[node]).max() > 0:
            reply = int(np.argmax(np.where(np.asarray(e.board).reshape(-1) == 0,
                                           np.asarray(tree.children_visits[node]), -1)))
            tx, ty = reply % 7, reply // 7  # the reply the search expected most
        else:
            tx, ty = free_cell(e)
        move_of(send(e, f"TURN {tx},{ty}"))
        m = e.last_move
        assert m["budget_s"] == pytest.approx(0.75)
        assert m["total_seconds"] <= m["budget_s"], m
        assert m["total_seconds"] > 0.5 * m["budget_s"]
        assert m["num_simulations"] >= 8 and m["anytime"].chunks
        reused.append(m["anytime"].reused)
    assert max(reused[1:]) > 1  # the expected reply's subtree carried over


def test_anytime_match_clock_share():
    # A clock that stands still while the time control comes: with measured move times a
    # 30 s turn would grow the tree (`AnytimeSearch.grow_for`), compiled on a thread that
    # outlives the test. The move below then takes the chunk times of `slow_anytime`.
    clock = FakeClock()
    e = mcts_engine(clock=clock)
    assert send(e, "START 7") == ["OK"]
    send(e, "INFO timeout_match 100000", "INFO time_left 40000", "INFO timeout_turn 0")
    assert e.move_budget_s() == 0.0
    send(e, "INFO timeout_turn 30000")
    assert e.player.anytime.capacity(e.env) == DEFAULT_MAX_NODES
    slow_anytime(e, clock, {"start": 0.004, 1: 0.03})
    reserve = 25 * 0.005  # 49 empty cells: 25 moves of ours may come, 5 ms each
    assert e.move_budget_s() == pytest.approx((40.0 - reserve) / 20 * 0.8 - 0.05)
    send(e, "BOARD", *(f"{x},{y},1" for x, y in [(0, 0), (2, 0), (4, 0), (6, 0)]),
         *(f"{x},{y},2" for x, y in [(0, 6), (2, 6), (4, 6), (6, 6)]), "DONE")
    reserve = 20 * 0.005  # 5 own stones, 39 empty cells (after our move)
    assert e.move_budget_s() == pytest.approx((40.0 - reserve) / 15 * 0.8 - 0.05)
    e.board[:, :] = OWN  # (no move follows) with many stones: never under 10 to go
    assert e.move_budget_s() == pytest.approx(40.0 / 10 * 0.8 - 0.05)


def test_search_agents_without_anytime_keep_variants():
    e = PbrainEngine(VARIANTS_AGENT, anytime=False, levels=2)
    assert e.player.anytime is None and [v.num_simulations for v in e.player.variants] == [8, 2]
    assert send(e, "START 7") == ["OK"] and e.player.prepared(e.env)
    move_of(send(e, "TURN 3,3"))
    assert e.last_move["num_simulations"] == 8 and e.last_move["anytime"] is None


# ------------------------------------------------------------------ openings

def chebyshev_to_stones(board: np.ndarray, x: int, y: int) -> int:
    ys, xs = np.nonzero(board)
    return int(np.min(np.maximum(abs(ys - y), abs(xs - x))))


@pytest.mark.parametrize("name, n", [("random", 15), ("heuristic", 15), ("corner", 9),
                                     ("mcts", 7)])
def test_openings_play_the_centre_then_near_the_stones(name, n):
    agent = (CornerAgent() if name == "corner" else search_agent() if name == "mcts"
             else name)
    e = PbrainEngine(agent, seed=2)
    assert send(e, f"START {n}") == ["OK"]
    assert move_of(send(e, "BEGIN")) == (n // 2, n // 2)
    for tx, ty in [(0, 0), (n - 1, n - 1), (0, n - 1)]:  # the opponent plays at the edges
        before = e.board.copy()
        before[ty, tx] = OPPONENT
        x, y = move_of(send(e, f"TURN {tx},{ty}"))
        if np.count_nonzero(before) < 5:
            assert chebyshev_to_stones(before, x, y) <= 2, (x, y, np.count_nonzero(before))
    # white on a board with one stone: next to it
    send(e, "RESTART")
    x, y = move_of(send(e, "BOARD", f"{n - 1},0,2", "DONE"))
    assert max(abs(x - (n - 1)), y) <= 2


def test_opening_weights_shape_the_search_prior():
    n = 9
    board = jnp.zeros((n, n), jnp.int8)
    w = np.asarray(pbrain.opening_weights(board))
    assert np.unravel_index(np.argmax(w), w.shape) == (4, 4) and w[4, 4] == 1.0
    assert w[0, 0] == pytest.approx(0.2) and w[3, 5] == pytest.approx(0.5)
    board = board.at[0, 0].set(1).at[8, 8].set(-1)
    w = np.asarray(pbrain.opening_weights(board))
    assert w[1, 1] == 1.0 and w[2, 0] == 0.5 and w[3, 3] == 0.0 and w[0, 0] == 0.0
    board = board.at[4, 4].set(1).at[4, 5].set(-1).at[2, 2].set(1)  # 5 stones: the mask's
    np.testing.assert_array_equal(pbrain.opening_weights(board), proximity_mask(board))
    env = pbrain.OpeningGomoku(n)
    assert env.candidate_weights(env.init(jax.random.key(0))).shape == (n * n,)
    allowed = pbrain.opening_cells(np.asarray(board)[:, :] * 0)
    assert allowed.sum() == 1 and allowed[4 * n + 4]


# ------------------------------------------------------------------ boards, TAKEBACK, INFO, ABOUT

def test_board_sizes_up_to_the_games_limit():
    e = PbrainEngine("random")
    assert send(e, f"START {MAX_BOARD_SIZE}") == ["OK"] and e.board.shape == (MAX_BOARD_SIZE,) * 2
    out = send(e, f"START {MAX_BOARD_SIZE + 1}")
    assert out[0].startswith(f"ERROR board size {MAX_BOARD_SIZE + 1} is not supported")
    assert e.size == MAX_BOARD_SIZE
    out = send(e, "RECTSTART 20,19")
    assert out[0].startswith("ERROR rectangular boards (20x19) are not supported")


@pytest.mark.slow
def test_a_search_agent_plays_the_20x20_freestyle_board():
    """The Gomocup freestyle league's board: the default search (with VCF) plays on it.
    A small tree, and one simulation a chunk: then there is one chunk size (no short
    chunk), and one chunk program to compile."""
    e = PbrainEngine("mcts", {"num_simulations": "1"}, levels=1, max_nodes=257)
    assert send(e, "START 20") == ["OK"]
    assert send(e, "BEGIN") == ["10,10"]
    x, y = map(int, send(e, "TURN 11,11")[0].split(","))
    assert 0 <= x < 20 and 0 <= y < 20 and e.board[y, x] == 1 and e.moves_computed >= 1


def test_takeback_restores_the_position_exactly(random7):
    e = random7
    assert move_of(send(e, "BEGIN")) == (3, 3)
    first = move_of(send(e, "TURN 2,2"))
    searched = e.last_move["state"]  # the position after TURN 2,2, us to move
    reference = e.env.from_moves([24, 16])
    assert all(jax.tree.leaves(jax.tree.map(lambda a, b: bool(np.array_equal(a, b)),
                                            searched, reference)))
    second = move_of(send(e, "TURN 4,4"))
    for x, y in [second, (4, 4), first]:
        assert send(e, f"TAKEBACK {x},{y}") == ["OK"]
    state = e.position()
    for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(searched)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(e.env.observe(state), e.env.observe(searched))
    assert e.moves == [(OWN, 24), (OPPONENT, 16)]
    # a stone taken back out of order: its side's last move is its stone before it
    move_of(send(e, "TURN 4,4"))
    assert send(e, "TAKEBACK 3,3") == ["OK"] and e._last[OWN] is not None
    assert e._last[OWN] == [a for s, a in e.moves if s == OWN][-1]


def test_max_memory_bounds_the_tree():
    e = mcts_engine()
    assert send(e, "START 7") == ["OK"]
    assert e._agent_state.node_visits.shape == (1, DEFAULT_MAX_NODES)
    per_node = node_bytes(e.env)
    # a quarter: 130 nodes fit, rounded down to a power of two plus one
    assert send(e, f"INFO max_memory {4 * 130 * per_node}") == []
    assert e._agent_state.node_visits.shape == (1, SMALL_TREE) == (1, 129)
    assert e.player.prepared(e.env)
    move_of(send(e, "TURN 3,3"))
    assert e._agent_state.node_visits.shape == (1, SMALL_TREE)
    assert send(e, "INFO max_memory 0") == []  # no limit
    assert e._agent_state.node_visits.shape == (1, DEFAULT_MAX_NODES)


def test_about_gives_the_package_metadata(random7):
    (about,) = send(random7, "ABOUT")
    fields = dict(re.findall(r'(\w+)="([^"]*)"', about))
    assert fields["name"] == importlib.metadata.metadata("gomoku_jax")["Name"]
    assert fields["version"] == importlib.metadata.version("gomoku_jax")
    assert fields["author"] == "gomoku_jax developers"
    assert {"country", "www", "agent"} <= set(fields)


def test_restart_compiles_nothing():
    e = mcts_engine()
    assert send(e, "START 7") == ["OK"]

    def game():
        move_of(send(e, "BEGIN"))
        for _ in range(3):
            move_of(send(e, "TURN {},{}".format(*free_cell(e))))
        x, y = free_cell(e)
        move_of(send(e, "TURN {},{}".format(x, y)))
        x, y = e.last_move["x"], e.last_move["y"]
        send(e, f"TAKEBACK {x},{y}")

    game()
    compiles = []
    listener = lambda name, *args, **kwargs: compiles.append(name)  # noqa: E731
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        assert send(e, "RESTART") == ["OK"]
        game()
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert [c for c in compiles if "backend_compile" in c] == []
