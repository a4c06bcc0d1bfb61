"""experiments/loss_analysis.py: the labels on hand-built 9x9 positions whose answers are
known (a missed open three, an open three left to the opponent with exactly its two
blocks as defences, a double four against us, a quiet move), the Gomocup coordinates of a
game of the shared file, and a small report end to end."""

import json

import numpy as np
import pytest
from experiment_scripts import load_script

la = load_script("loss_analysis")

N = 9
# Small budgets, one compiled search for the whole file (the recheck's budgets are these).
BUDGETS = la.Budgets(vcf_depth=4, vcf_nodes=256, vct_depth=4, vct_nodes=2048, solver_plies=5,
                     recheck=1)
# The first line of the shared games (data/outside_engine_games/games_10k.jsonl, which is
# not in the repository): ours black, white won by a five.
SHARED_GAME = {"game": 1, "black": "ours", "white": "ext-10k", "board_size": 15,
               "rule": "freestyle", "opening_stones": 8, "winner": "white",
               "reason": "five", "moves": [
    [6, 9], [6, 11], [6, 13], [7, 10], [10, 8], [5, 8], [5, 11], [9, 8], [8, 9], [7, 9],
    [7, 8], [8, 7], [10, 9], [6, 7], [9, 7], [7, 6], [8, 5], [5, 7], [6, 5], [4, 6], [6, 8],
    [5, 6], [5, 5], [6, 6], [8, 6], [3, 6]]}


@pytest.fixture(scope="module")
def prover():
    return la.Prover(N, BUDGETS)


def board(black=(), white=()):
    """int8[9, 9] with stones at (row, col) cells."""
    b = np.zeros((N, N), np.int8)
    for r, c in black:
        b[r, c] = 1
    for r, c in white:
        b[r, c] = -1
    return b


def turn(b, colour, row, col):
    return la.Turn(ply=20, colour=colour, action=row * N + col, board=b)


# Black's open three on row 4 (cols 3-5, cols 1-2 and 6-7 empty); white's stones apart.
OPEN_THREE = board(black=[(4, 3), (4, 4), (4, 5), (7, 1)],
                   white=[(1, 1), (1, 7), (7, 7)])


def test_an_open_three_played_past_is_a_missed_win(prover):
    out = la.label_move(prover, turn(OPEN_THREE, 1, 8, 8))  # a far corner
    assert out["own"].found and out["own"].kind == "vcf" and out["own"].plies == 3
    assert out["label"] == "missed_win" and out["keeps"] is None


@pytest.mark.parametrize("col", [2, 6])
def test_the_open_four_keeps_the_win(prover, col):
    out = la.label_move(prover, turn(OPEN_THREE, 1, 4, col))
    assert out["label"] == "winning" and out["keeps"] in ("proof", "every reply")
    assert not out["theirs"].found


def test_an_open_three_left_to_the_opponent_is_an_allowed_win(prover):
    # the same three is white's now, and black (we) plays a far corner
    b = -OPEN_THREE
    out = la.label_move(prover, turn(b, 1, 8, 8))
    assert out["theirs"].found and out["theirs"].plies == 3  # an open four next
    assert out["label"] == "allowed_win"
    assert sorted(out["defences"]) == [4 * N + 2, 4 * N + 6]  # exactly its two ends
    assert out["unresolved"] == [] and out["checked"] > 20


def test_defences_the_searches_ran_out_on_are_searched_again(prover):
    b = -OPEN_THREE
    small = la.Prover(N, la.Budgets(vcf_depth=4, vcf_nodes=16, vct_depth=4, vct_nodes=128,
                                    recheck=1))
    again = la.Prover(N, la.Budgets(vcf_depth=4, vcf_nodes=16, vct_depth=4, vct_nodes=128,
                                    recheck=16))  # 256 and 2048 nodes: BUDGETS
    unresolved = la.label_move(small, turn(b, 1, 8, 8))
    out = la.label_move(again, turn(b, 1, 8, 8))
    # with too few nodes the two blocks are defences the searches did not finish on;
    # searched again with 16x the nodes, they are proven
    assert unresolved["label"] == "allowed_win"
    assert sorted(unresolved["unresolved"]) == [4 * N + 2, 4 * N + 6]
    assert sorted(out["defences"]) == [4 * N + 2, 4 * N + 6] and out["unresolved"] == []
    assert again.rechecked >= 2 and small.rechecked == 0


def test_a_double_four_against_us_is_already_lost(prover):
    # white: a four on row 2 (cols 1-4, col 5 open, col 0 blocked) and one on col 7
    # (rows 4-7, row 8 open, row 3 blocked): two five cells, black has none
    b = board(black=[(2, 0), (3, 7), (6, 2), (5, 4)],
              white=[(2, 1), (2, 2), (2, 3), (2, 4), (4, 7), (5, 7), (6, 7), (7, 7)])
    out = la.label_move(prover, turn(b, 1, 2, 5))  # blocks one of them
    assert out["theirs"].found and out["theirs"].plies == 1
    assert out["label"] == "already_lost" and out["defences"] == []


def test_a_quiet_move_is_positional(prover):
    b = board(black=[(4, 4), (3, 5)], white=[(4, 5), (5, 5)])
    out = la.label_move(prover, turn(b, 1, 3, 3))
    assert out["label"] == "positional"
    assert not out["own"].found and not out["theirs"].found


def test_gomocup_coordinates_and_replay_of_a_shared_game():
    assert la.to_action([6, 9], 15) == 9 * 15 + 6 and la.to_xy(9 * 15 + 6, 15) == "6,9"
    with pytest.raises(ValueError, match="off the"):
        la.to_action([15, 0], 15)
    game = SHARED_GAME
    assert game["black"] == "ours" and game["opening_stones"] == 8
    turns = la.replay(game)
    assert len(turns) == len(game["moves"])
    x, y = game["moves"][0]
    assert turns[1].board[y, x] == 1 and turns[1].board.sum() == 1  # black's first stone
    ours = la.our_turns(game)
    assert [t.ply for t in ours] == list(range(9, len(game["moves"]) + 1, 2))
    x, y = game["moves"][8]
    assert ours[0].action == y * 15 + x and np.count_nonzero(ours[0].board) == 8
    # the last move (white's) completes white's five on the board before it
    last = turns[-1]
    solver = la.Solver(15)
    assert last.colour == -1 and game["winner"] == "white"
    assert la.completes_five(last.board, last.action, -1, solver)
    assert la.result(game) == "lost"


def test_report_end_to_end(tmp_path, capsys):
    # 9x9, we are white: black makes an open three on row 4, we play elsewhere, black
    # makes an open four, we block one end, black completes five.
    moves = [[4, 4], [0, 0], [3, 4], [8, 0], [5, 4], [0, 8], [6, 4], [2, 4], [7, 4]]
    game = {"game": 1, "black": "ext", "white": "ours", "board_size": N,
            "rule": "freestyle", "opening_stones": 2, "moves": moves, "winner": "black",
            "reason": "five"}
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(game) + "\n")
    out_json = tmp_path / "out.json"
    args = [str(path), "--sims", "0", "--json", str(out_json), "--no-progress"]
    for name in ("vcf_depth", "vcf_nodes", "vct_depth", "vct_nodes", "solver_plies",
                 "recheck"):
        args += ["--" + name.replace("_", "-"), str(getattr(BUDGETS, name))]
    assert la.main(args) == 0
    text = capsys.readouterr().out
    d = json.loads(out_json.read_text())
    labels = [(m["ply"], m["label"]) for m in d["games"][0]["moves"]]
    # ply 4: the three is two stones; ply 6 leaves the open three (blockable): allowed;
    # ply 8: the open four, nothing saves it
    assert labels == [(4, "positional"), (6, "allowed_win"), (8, "already_lost")]
    assert d["games"][0]["first_decisive"] == {"ply": 6, "kind": "allowed_win"}
    sixth = d["games"][0]["moves"][1]
    assert sorted(sixth["defences"]) == ["2,4", "6,4"]  # x,y: the three's two ends
    assert "| `allowed_win` | 1 | 1 | 0 |" in text
    assert "| 1 | white | 9 | move 6 0,8: `allowed_win`" in text


def test_a_missing_checkpoint_is_a_clear_error(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"game": 1, "black": "ext", "white": "ours", "board_size": 15,
                                "rule": "freestyle", "opening_stones": 1,
                                "moves": [[7, 7], [7, 8]], "winner": "black"}) + "\n")
    with pytest.raises(SystemExit, match="--checkpoint: .*nothing"):
        la.main([str(path), "--checkpoint", str(tmp_path / "nothing"), "--no-progress"])
    with pytest.raises(SystemExit, match="needs --sims > 0"):
        la.main([str(path), "--checkpoint", str(tmp_path), "--sims", "0"])


def record(labels, values, proven):
    """A game record as `analyse_game` makes it: our moves at plies 10, 12, ..."""
    moves = [{"ply": 10 + 2 * i, "label": lab, "engine": {"value": v},
              "theirs_after": {"found": p}}
             for i, (lab, v, p) in enumerate(zip(labels, values, proven))]
    return {"result": "lost", "moves": moves}


def test_first_decisive_mistake_and_where_the_value_stays_low():
    r = record(["positional", "already_lost", "allowed_win", "already_lost"],
               [0.2, -0.6, 0.1, -0.9], [False, True, True, True])
    # a mistake after an already-lost move (the opponent let us back) still counts first
    assert la.first_decisive(r) == {"ply": 14, "kind": "allowed_win", "index": 2}
    assert la.first_proven_loss(r) == 12
    assert la.value_low_from(r, 0.5) == 16  # -0.6 at 12 did not last
    r = record(["positional", "already_lost", "already_lost"], [0.0, -0.5, -0.7],
               [False, True, True])
    assert la.first_decisive(r) == {"ply": 12, "kind": "already_lost", "index": 1}
    assert la.value_low_from(r, 0.5) == 12 and la.value_low_from(r, 0.8) is None


def test_marked_board_brackets_the_move_and_stars_the_defences():
    b = board(black=[(4, 4)], white=[(4, 5)])
    text = la.marked_board(b, 4 * N + 5, [3 * N + 2, 8 * N + 8])
    rows = text.split("\n")
    assert rows[5].split() == ["4", ".", ".", ".", ".", "X", "[O]", ".", ".", "."]
    assert rows[4].split()[3] == "*" and rows[9].split()[-1] == "*"
