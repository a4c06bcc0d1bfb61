"""experiments/strength.py: the calibration search finds the most simulations within a
budget, and the smallest round robin writes a report whose paired counts add up."""

import json

import pytest
from experiment_scripts import load_script

st = load_script("strength")


@pytest.mark.parametrize("a, b, step", [(0.5, 0.1, 1), (5.0, 2.0, 1), (3.0, 0.7, 4),
                                        (0.0, 0.013, 8)])
def test_calibrate_finds_the_most_simulations_within_the_budget(a, b, step):
    calls = []

    def measure(sims):
        calls.append(sims)
        return a + b * sims

    sims, ms, tried = st.calibrate(100.0, step, measure)
    best = int((100.0 - a) / b) // step * step  # the exact answer of the line
    assert sims % step == 0 and ms == a + b * sims <= 100.0
    assert sims >= 0.9 * best and len(calls) <= 6 and len(tried) == len(calls)


def test_calibrate_over_budget_and_capped():
    sims, ms, _ = st.calibrate(10.0, 1, lambda s: 50.0 + s)
    assert sims == 1 and ms == 51.0  # even one simulation is too slow: the fewest
    sims, ms, tried = st.calibrate(10.0, 1, lambda s: 1.0, max_simulations=500)
    assert sims == 500 and ms == 1.0 and len(tried) <= 6


def test_smallest_run_end_to_end(tmp_path, capsys):
    md, js = tmp_path / "s.md", tmp_path / "s.json"
    # 7x7, k=4, 2 openings: random against PUCT with a uniform evaluator, calibrated at a
    # budget it cannot reach within --max-simulations 8 (one compilation); no threat search
    # at its root (it only makes the compiles longer).
    assert st.main(["--board-size", "7", "--win-length", "4", "--openings", "2",
                    "--agents", "random,mcts:evaluator=uniform,threat_search=0",
                    "--ms-per-move", "1000",
                    "--max-simulations", "8", "--out", str(md), "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == md.read_text().strip()
    assert "## 1000 ms per move" in out and "2 openings x 2 colours" in out
    calib = [line for line in out.splitlines() if line.startswith("| mcts:evaluator")]
    assert calib[0].split("|")[2].strip() == "8"  # the simulations it was given
    assert "| random | — |" in out and "no simulations" in out
    pairs_table = [t for t in out.split("\n\n") if t.startswith("| A | B |")][0]
    row = [c.strip() for c in pairs_table.splitlines()[2].strip("|").split("|")]
    counts = [int(c) for c in row[6].split("/")]
    wins, draws, losses = (int(x) for x in row[2].split("-"))
    assert sum(counts) == 2 == (wins + draws + losses) // 2  # 2 openings: 2 pairs
    points = sum(c * p for c, p in zip(counts, (0, 0.5, 1, 1.5, 2)))
    assert points == wins + 0.5 * draws
    distinct, games = row[7].split(" of ")
    assert games == "4" and 1 <= int(distinct) <= 4
    d = json.loads(js.read_text())
    (budget,) = d["budgets"]
    assert budget["ms_per_move"] == 1000.0
    assert [c["simulations"] for c in budget["calibration"]] == [None, 8]
    (match,) = budget["matches"]
    assert sum(match["pairs"]) == 2 and match["elo_paired"]["pairs"] == 2


def test_bad_flags():
    with pytest.raises(SystemExit, match="--ms-per-move takes"):
        st.main(["--ms-per-move", "0"])
    with pytest.raises(SystemExit, match="the game has 8 openings"):
        st.main(["--openings", "9", "--board-size", "7"])
    with pytest.raises(SystemExit, match="at least 2 agents"):
        st.main(["--agents", "random", "--board-size", "7"])
