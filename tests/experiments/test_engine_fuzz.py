"""experiments/engine_fuzz.py: its reference model of the protocol, and a short fuzz of an
engine as a subprocess over pipes."""

import sys

import numpy as np
import pytest
from experiment_scripts import load_script

ef = load_script("engine_fuzz")


def test_five_and_move_problems():
    board = np.zeros((9, 9), np.int8)
    board[4, 1:7] = 1  # an overline of six
    assert ef.five(board, 1, "freestyle") and not ef.five(board, 1, "exact5")
    assert not ef.five(board, 1, "renju", black=1) and ef.five(board, 1, "renju", black=-1)
    board[4, 6] = 0
    assert ef.five(board, 1, "exact5") and not ef.five(board, -1, "freestyle")
    board[4, 0] = board[4, 6] = -1  # blocked at both ends: no caro win
    assert ef.five(board, 1, "freestyle") and not ef.five(board, 1, "caro")
    assert not ef.five(board, 1, "caro_exact5")
    board[:] = 0
    board[0:5, 8] = -1  # a column at the edge
    assert ef.five(board, -1, "exact5")
    assert not ef.playable(board, "freestyle")
    board[5, 8] = 1  # the edge is no block under caro
    assert ef.five(board, -1, "caro") and not ef.playable(board, "caro")
    assert [ef.rule_of(m) for m in (0, 1, 2, 4, 5, 8, 9, 12, 16)] == [
        "freestyle", "exact5", "freestyle", "renju", "renju", "caro", "caro_exact5",
        "renju", "freestyle"]
    empty = np.zeros((9, 9), np.int8)
    assert ef.move_problem(empty, 4, 4) is None
    assert "not the centre" in ef.move_problem(empty, 0, 0)
    one = empty.copy()
    one[0, 0] = -1
    assert ef.move_problem(one, 2, 2) is None
    assert "further than 2" in ef.move_problem(one, 3, 0)
    assert "occupied" in ef.move_problem(one, 0, 0) and "off" in ef.move_problem(one, 9, 0)


def double_three() -> np.ndarray:
    """9x9, +1 to move with equal counts (so +1 is black): (4, 4) makes two open threes."""
    board = np.zeros((9, 9), np.int8)
    board[4, 2] = board[4, 3] = board[2, 4] = board[3, 4] = 1
    board[0, 0] = board[0, 8] = board[8, 0] = board[8, 8] = -1
    return board


def test_renju_forbidden_points_in_moves_turns_and_boards():
    board = double_three()
    assert "forbidden" in ef.move_problem(board, 4, 4, "renju")
    assert ef.move_problem(board, 4, 4, "freestyle") is None
    ref = ef.Reference()
    ref.update("START 9", ref.expect("START 9"), "OK")
    ref.update("INFO rule 4", ref.expect("INFO rule 4"), None)
    assert ref.rule == "renju" and ref.compile_due
    ref.board[:] = -board  # the opponent is black, to move
    assert ref.expect("TURN 4,4").kinds == {"ERROR"}
    assert ref.expect("TURN 5,5").kinds == {"move"}
    ref.board[:] = 0
    ref.update("BOARD", ref.expect("BOARD"), None)
    for y, x in list(zip(*np.nonzero(board == 1))) + [(4, 4)]:  # black's stones: theirs
        ref.update(f"{x},{y},2", ref.expect(f"{x},{y},2"), None)
    for y, x in zip(*np.nonzero(board == -1)):
        ref.update(f"{x},{y},1", ref.expect(f"{x},{y},1"), None)
    assert ref.pending_last == (4, 4) and ref.expect("DONE").kinds == {"ERROR"}
    ref.update("INFO rule 0", ref.expect("INFO rule 0"), None)
    assert ref.expect("DONE").kinds == {"move"}


def test_reference_expectations():
    ref = ef.Reference()
    expect = lambda line: ref.expect(line)  # noqa: E731
    assert expect("TURN 3,3").kinds == {"ERROR"}  # before START
    assert not expect("INFO timeout_turn " + "1" + "0" * 30).answer
    for bad in ("INFO timeout_turn -1", "INFO timeout_turn 1e3", "INFO rule x", "INFO"):
        assert expect(bad).kinds == {"ERROR"}, bad
    assert not expect("INFO time_left -5").answer and not expect("INFO folder C:\\x").answer
    assert expect("START 4").kinds == {"ERROR"} and expect("RECTSTART 7,9").kinds == {"ERROR"}
    assert expect("FOO").kinds == {"UNKNOWN"} and expect("1,2,1").kinds == {"ERROR"}
    ref.update("START 7", expect("START 7"), "OK")
    e = expect("BEGIN")
    assert e.kinds == {"move"} and not e.position.any()
    ref.update("BEGIN", e, "3,3")
    assert expect("TURN 3,3").kinds == {"ERROR"}  # occupied
    assert expect("TAKEBACK 3,3").kinds == {"OK"} and expect("TAKEBACK 0,0").kinds == {"ERROR"}
    assert not expect("BOARD").answer
    ref.update("BOARD", expect("BOARD"), None)
    assert not expect("1,1,2").answer
    ref.update("1,1,2", expect("1,1,2"), None)
    assert expect("1,1,1").kinds == {"ERROR"}  # listed twice
    assert expect("DONE").kinds == {"move"}  # one opponent stone: we are white
    ref.update("TURN 1,1", expect("TURN 1,1"), "ERROR after BOARD ...")
    assert ref.pending is None and ref.board[3, 3] == 1  # the BOARD was discarded


@pytest.mark.slow
def test_a_short_fuzz_over_pipes(capsys):
    """The driver, the reference and the CLI's loop on 250 lines; the heuristic engine (the
    default engine's compiles take minutes in the suite: the experiment runs it). Seed 0's
    lines make the engine compile twice (START, then an INFO line that changes what it
    compiles), where other seeds took up to four compiles."""
    code = ef.main(["--lines", "250", "--sizes", "7", "--seed", "0", "--turn-ms", "100,0,50",
                    "--margin-ms", "3000", "--engine-args=--agent heuristic", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    row = next(line for line in out.splitlines() if line.startswith("| 250 |"))
    lines, answered, moves = (int(c) for c in row.split("|")[1:4])
    assert answered > 100 and moves > 30, row
    assert row.split("|")[5:9] == [" 0 ", " 0 ", " 0 ", " 0 "], row  # no crash ... wrong
    assert "| START (compiles) |" in out and "| move: TURN |" in out


@pytest.mark.parametrize("name", ["engine_fuzz", "engine_soak"])
def test_help_offers_no_progress(name, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
    with pytest.raises(SystemExit) as e:
        load_script(name).build_parser().parse_args()
    assert e.value.code == 0 and "--no-progress" in capsys.readouterr().out
