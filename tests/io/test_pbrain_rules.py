"""The engine under every Gomocup rule: INFO rule's bitmask table, one scripted game per
rule whose outcome differs by rule (an overline, a five blocked at both ends, a black
double-three), renju's forbidden points never played by the engine (agent, no-search move)
and refused from the opponent, and the `--rule` flag."""

from __future__ import annotations

import dataclasses
import re

import jax.numpy as jnp
import numpy as np
import pytest

from gomoku_jax import cli
from gomoku_jax.agents.base import Agent
from gomoku_jax.cli import pbrain as pbrain_cli
from gomoku_jax.games.gomoku.config import RULES
from gomoku_jax.io.pbrain import OWN, PbrainEngine, rule_from_bitmask

MOVE = re.compile(r"([0-9]{1,2}),([0-9]{1,2})")
MASK = {"freestyle": 0, "exact5": 1, "renju": 4, "caro": 8, "caro_exact5": 9}


class LastCell(Agent):
    """Plays the empty cell with the largest action: deterministic, and far from the
    scenes below (their stones are in the top rows and the centre). It reads no legal mask
    (renju's would cost a compile of the forbidden-point scan per test engine): the engine
    checks its moves."""

    name = "last_cell"

    def act(self, params, agent_state, state, key):
        empty = state.board.reshape(-1) == 0
        action = jnp.argmax(jnp.where(empty, jnp.arange(empty.size), -1)).astype(jnp.int32)
        return action, agent_state, {"policy": empty / jnp.sum(empty),
                                     "value": jnp.float32(0.0)}


@dataclasses.dataclass(frozen=True)
class FixedCell(Agent):
    """Always answers `cell`, legal or not (its policy is uniform: reading the legal mask
    would compile renju's forbidden points once more)."""

    name = "fixed_cell"
    cell: int = 0

    def act(self, params, agent_state, state, key):
        n = state.board.size
        return jnp.int32(self.cell), agent_state, {"policy": jnp.full(n, 1.0 / n),
                                                   "value": jnp.float32(0.0)}


def outcome(out: list[str]) -> str:
    """"move", "over" (the game is over: no move), "forbidden" (renju) or the line."""
    if len(out) == 1 and MOVE.fullmatch(out[0]):
        return "move"
    if len(out) == 1 and out[0].startswith("ERROR") and "the game is over" in out[0]:
        return "over"
    if len(out) == 1 and out[0].startswith("ERROR") and "forbidden point under renju" in out[0]:
        return "forbidden"
    return " | ".join(out)


def board(*stones: tuple[int, int, int]) -> list[str]:
    """A BOARD block: (x, y, field) with field 1 ours, 2 the opponent's."""
    return ["BOARD", *(f"{x},{y},{f}" for x, y, f in stones), "DONE"]


ROW0 = [(x, 0, 2) for x in range(6)]  # the opponent's six on row 0
DOTS = [(0, 2, 1), (2, 2, 1), (4, 2, 1), (6, 2, 1), (0, 4, 1), (2, 4, 1)]  # ours: no line
# Black's (the opponent's) open twos crossing at 4,4: a double-three there.
CROSS = [(2, 4, 2), (3, 4, 2), (4, 2, 2), (4, 3, 2), (7, 0, 2)]
WHITE4 = [(0, 0, 1), (2, 0, 1), (0, 8, 1), (2, 8, 1)]

# Each scene on 9x9: lines, and the last line's outcome under each rule.
SCENES = {
    # The opponent (white: we are black) has six in a row.
    "white overline": (board(*ROW0, *DOTS), {
        "freestyle": "over", "exact5": "move", "renju": "over", "caro": "over",
        "caro_exact5": "move"}),
    # The opponent's (white's) five, blocked by our stones at both ends.
    "blocked five": (board(*ROW0[1:], (0, 0, 1), (6, 0, 1), *DOTS[:3]), {
        "freestyle": "over", "exact5": "over", "renju": "over", "caro": "move",
        "caro_exact5": "move"}),
    # The opponent (black: we are white) fills x,x,x,_,x,x with TURN 3,4: an overline.
    "black overline": (board((0, 4, 2), (1, 4, 2), (2, 4, 2), (4, 4, 2), (5, 4, 2),
                             *WHITE4) + ["TURN 3,4"], {
        "freestyle": "over", "exact5": "move", "renju": "forbidden", "caro": "over",
        "caro_exact5": "move"}),
    # Black's double-three by TURN, then the same stone as BOARD's last listed.
    "black double-three": (board(*CROSS, *WHITE4) + ["TURN 4,4"], {
        "freestyle": "move", "exact5": "move", "renju": "forbidden", "caro": "move",
        "caro_exact5": "move"}),
    "black double-three listed": (board(*CROSS, (4, 4, 2), *WHITE4, (8, 7, 1)), {
        "freestyle": "move", "exact5": "move", "renju": "forbidden", "caro": "move",
        "caro_exact5": "move"}),
}


@pytest.fixture(scope="module")
def engine():
    engine = PbrainEngine(LastCell())
    assert engine.handle("START 9") == ["OK"]
    return engine


# ------------------------------------------------------------------ INFO rule

@pytest.mark.parametrize("mask, rule, note", [
    (0, "freestyle", None), (1, "exact5", None), (4, "renju", None), (5, "renju", None),
    (8, "caro", None), (9, "caro_exact5", None),
    (2, "freestyle", "continuous game (2) not supported"),
    (3, "exact5", "continuous game (2) not supported"),
    (6, "renju", "continuous game (2) not supported"),
    (11, "caro_exact5", "continuous game (2) not supported"),
    (12, "renju", "renju (4) with caro (8) is not a defined combination"),
    (13, "renju", "renju (4) with caro (8) is not a defined combination"),
    (16, "freestyle", "unknown bits 16 ignored"),
    (41, "caro_exact5", "unknown bits 32 ignored"),
    (2**40 + 4, "renju", f"unknown bits {2**40} ignored"),
])
def test_info_rule_bitmask_table(engine, mask, rule, note):
    assert rule_from_bitmask(mask) == (rule, None if note is None else
                                       f"rule {mask}: {note}; playing {rule}")
    out = engine.handle(f"INFO rule {mask}")
    assert out == ([] if note is None else [f"MESSAGE rule {mask}: {note}; playing {rule}"])
    assert engine.rule == rule and engine.env.config.rule == rule
    assert engine.player.prepared(engine.env)  # compiled when the INFO came, not on a move


def test_every_bit_combination_maps_to_a_rule():
    for mask in range(32):
        rule, note = rule_from_bitmask(mask)
        assert rule in RULES
        assert (note is None) == (mask in (0, 1, 4, 5, 8, 9)), mask


# ------------------------------------------------------------------ one game per rule

@pytest.mark.parametrize("rule", RULES)
def test_scripted_games_differ_by_rule(engine, rule):
    assert engine.handle(f"INFO rule {MASK[rule]}") == []
    assert engine.env.config.rule == rule
    for name, (lines, expected) in SCENES.items():
        assert engine.handle("RESTART") == ["OK"]
        for line in lines[:-1]:
            out = engine.handle(line)
        before = (engine.board.copy(), list(engine.moves))
        out = engine.handle(lines[-1])
        assert outcome(out) == expected[rule], (name, out)
        if expected[rule] != "move":  # refused: nothing changed
            assert np.array_equal(engine.board, before[0]) and engine.moves == before[1]
        if expected[rule] == "forbidden":
            assert "renju" in out[0] and "black has lost by the rule" in out[0]


# ------------------------------------------------------------------ renju: black's moves

OWN_CROSS = [(x, y, 1) for x, y, _ in CROSS[:4]] + [(0, 0, 2), (2, 0, 2), (0, 8, 2),
                                                     (2, 8, 2)]  # we are black


def test_engine_as_black_never_plays_a_forbidden_point():
    e = PbrainEngine(FixedCell(cell=4 * 9 + 4), rule="renju")
    assert e.handle("START 9") == ["OK"]
    out = e.handle("BOARD")
    for line in board(*OWN_CROSS)[1:]:
        out = e.handle(line)
    assert out[0].startswith("MESSAGE agent fixed_cell chose illegal action 40 (a forbidden "
                             "point for black under renju)"), out
    x, y = map(int, MOVE.fullmatch(out[-1]).groups())
    assert (x, y) != (4, 4) and e.board[y, x] == OWN and e.board[4, 4] == 0
    # The same agent under freestyle plays it.
    assert e.handle("INFO rule 0") == []
    out = e.handle("BOARD")
    for line in board(*OWN_CROSS)[1:]:
        out = e.handle(line)
    assert out == ["4,4"]


@pytest.mark.parametrize("rule, forbidden_played", [("renju", False), ("freestyle", True)])
def test_the_no_search_move_skips_forbidden_points(rule, forbidden_played):
    """With no time left the move is `quick_move`'s, which likes 4,4 best here (two runs
    of three, the centre); under renju that is black's double-three."""
    e = PbrainEngine(LastCell(), rule=rule)
    assert e.handle("START 9") == ["OK"]
    for line in ["INFO timeout_match 100000", "INFO time_left 0"]:
        assert e.handle(line) == []
    out = e.handle("BOARD")
    for line in board(*OWN_CROSS)[1:]:
        out = e.handle(line)
    assert e.last_move["quick"] and len(out) == 1
    assert (out[0] == "4,4") == forbidden_played, out


def test_renju_opening_is_the_centre():
    e = PbrainEngine(LastCell(), rule="renju")
    assert e.handle("START 9") == ["OK"] and e.handle("BEGIN") == ["4,4"]


# ------------------------------------------------------------------ rules the game refuses

def test_renju_needs_win_length_5():
    with pytest.raises(ValueError, match="rule 'renju' is defined for win_length 5"):
        PbrainEngine("random", rule="renju", win_length=4)
    e = PbrainEngine("random", win_length=4)
    assert e.handle("START 7") == ["OK"]
    out = e.handle("INFO rule 4")
    assert out == ["ERROR INFO rule 4 (renju): rule 'renju' is defined for win_length 5, got "
                   "4; the rule stays freestyle"]
    assert e.rule == "freestyle" and e.env.config.rule == "freestyle"
    assert "rule" not in e.info
    assert e.handle("INFO rule 8") == [] and e.env.config.rule == "caro"


# ------------------------------------------------------------------ the command line

def test_rule_flag_takes_every_rule(capsys):
    parser = cli.build_parser()
    for rule in RULES:
        e = pbrain_cli.engine_from_args(parser.parse_args(["pbrain", "--agent", "random",
                                                           "--rule", rule]))
        assert e.rule == rule
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["pbrain", "--rule", "gomoku"])
    assert exc.value.code == 2 and "invalid choice: 'gomoku'" in capsys.readouterr().err


def test_the_default_network_plays_any_rule_with_a_message(capsys):
    e = pbrain_cli.engine_from_args(cli.build_parser().parse_args(["pbrain", "--rule",
                                                                   "caro"]))
    assert e.game.rule == "freestyle" and e.rule == "caro"
    assert "the network was trained for freestyle; playing caro" in capsys.readouterr().err
    assert e.handle("INFO rule 4") == [
        "MESSAGE the network was trained for freestyle; playing renju with it"]
    assert e.rule == "renju"
