"""experiments/leaf_parallel.py: the smallest configuration runs end to end (both parts:
the speed table with W = 1 and 2, and the tactical suite at equal time per move), with the
tables and JSON it promises. No timed asserts."""

import json

import pytest
from experiment_scripts import load_script

lp = load_script("leaf_parallel")


# Part (2)'s agent without the threat search at its root, symmetry or prior shaping, and
# part (1)'s PUCT without symmetry or prior shaping (`--set`): the leaf parallelism under
# test is the tree's, and the rest only makes the compiles longer (the root's VCF would
# take most of each agent's compile).
AGENT = "mcts:evaluator=heuristic,threat_search=0,symmetry=none,prior_shaping=off"
SETS = ["--set", "symmetry=none", "--set", "prior_shaping=off"]


@pytest.mark.slow
def test_smallest_run_end_to_end(tmp_path, capsys):
    # --tactics-batch 1: the batched solve and the one-at-a-time latency samples share
    # one compile per W (a batch of 3 compiled the agent twice per W)
    out, js = tmp_path / "leaf.md", tmp_path / "leaf.json"
    args = lp.build_parser().parse_args(
        ["--board-size", "7", "--leaves", "1,2", "--simulations", "4",
         "--evaluators", "heuristic", "--repeats", "1", "--max-seconds-per-cell", "1e-9",
         "--ms-per-move", "1e-6", "--generate", "1", "--max-puzzles", "3",
         "--tactics-batch", "1", "--agent", AGENT, *SETS, "--out", str(out), "--json",
         str(js)])
    assert lp.main(args) == 0
    report = out.read_text()
    assert report.strip() in capsys.readouterr().out
    assert "(PUCT for play, symmetry=none, prior_shaping=off)" in report
    assert "| evaluator | W | simulations | nodes | ms/move | sims/s (wall) |" in report
    assert "| heuristic | 1 | 4 | 5/5 |" in report and "1.00x" in report
    assert "| heuristic | 2 | 4 |" in report
    assert "| W | simulations | ms/move (batch 1) | solved | rate |" in report
    # at (almost) no time per move each W gets its minimum: W simulations
    assert "| 1 | 1 |" in report and "| 2 | 2 |" in report
    data = json.loads(js.read_text())
    assert [r["leaves"] for r in data["speed"]] == [1, 2]
    assert data["fields"] == {"symmetry": "none", "prior_shaping": "off"}
    assert all(r["per_wall_s"] > 0 and r["nodes"] <= r["simulations"] + 1
               for r in data["speed"])
    assert f"(3 puzzles, {AGENT})" in report and data["tactics"]["agent"] == AGENT
    assert [(r["leaves"], r["total"]) for r in data["tactics"]["results"]] == [(1, 3), (2, 3)]


def test_bad_flags_are_refused():
    with pytest.raises(SystemExit, match="needs heuristic"):
        lp.main(lp.build_parser().parse_args(["--evaluators", "network"]))
    with pytest.raises(SystemExit, match="--leaves takes"):
        lp.main(lp.build_parser().parse_args(["--leaves", "0"]))
    with pytest.raises(SystemExit, match="not field=value"):
        lp.main(lp.build_parser().parse_args(["--set", "symmetry"]))
    with pytest.raises(SystemExit, match="symmetry must be one of"):
        lp.main(lp.build_parser().parse_args(["--set", "symmetry=sideways"]))
