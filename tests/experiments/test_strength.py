"""experiments/strength.py: the calibration search finds the most simulations within a
budget, and the smallest round robin writes a report whose paired counts add up."""

import json
import math

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


@pytest.mark.parametrize("budget", [1000.0, 5000.0, 30000.0])
def test_calibrate_a_cost_that_grows_with_the_tree(budget):
    # PUCT on the heuristic evaluator, 15x15, as measured: 0.1 ms a simulation at 1,000
    # simulations, 0.5 ms at 50,000 (t = 0.1 s + 8e-6 s^2 ms). A line through small
    # counts would guess many times the answer; the guesses grow at most GROWTH-fold.
    calls = []

    def measure(sims):
        calls.append(sims)
        return 0.1 * sims + 8e-6 * sims * sims

    sims, ms, tried = st.calibrate(budget, 1, measure)
    best = int((-0.1 + math.sqrt(0.01 + 4 * 8e-6 * budget)) / (2 * 8e-6))
    assert ms <= budget and 0.95 * best <= sims <= best
    assert all(b <= st.GROWTH * max(calls[:i + 1]) for i, b in enumerate(calls[1:]))
    assert max(calls) <= 2 * best  # never a measurement far past the budget


def test_calibrate_over_budget_and_capped():
    sims, ms, _ = st.calibrate(10.0, 1, lambda s: 50.0 + s)
    assert sims == 1 and ms == 51.0  # even one simulation is too slow: the fewest
    sims, ms, tried = st.calibrate(10.0, 1, lambda s: 1.0, max_simulations=500)
    assert sims == 500 and ms == 1.0 and len(tried) <= 6


@pytest.mark.slow
def test_smallest_run_end_to_end(tmp_path, capsys):
    md, js = tmp_path / "s.md", tmp_path / "s.json"
    # 7x7, k=4, 2 openings: random against PUCT with a uniform evaluator, calibrated at a
    # budget it cannot reach within --max-simulations 8 (one compilation); no threat search
    # at its root, no symmetry, no prior shaping (they only make the compiles longer).
    assert st.main(["--board-size", "7", "--win-length", "4", "--openings", "2",
                    "--agents", "random,mcts:evaluator=uniform,threat_search=0,symmetry=none,"
                                "prior_shaping=off",
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


def test_ladder_against_fake_engines(tmp_path, capsys):
    """--ladder: 7x7, 2 rungs x 1 opening x 2 colours, our side and the outside engine both
    tests/fake_pbrain.py; the rung at 10 nodes refuses START and is skipped."""
    from fake_pbrain import command

    md, js, gl = tmp_path / "l.md", tmp_path / "l.json", tmp_path / "games.jsonl"
    assert st.main(["--ladder", command("--refuse-start-when", "r10"),
                    "--rung-args", "--name r{nodes}", "--rungs", "10,20,30",
                    "--ours", command("--name", "us", "--ms", "5"), "--board-size", "7",
                    "--openings", "1", "--ms-per-move", "200", "--rung-ms", "300",
                    "--margin-ms", "500", "--start-timeout-s", "30",
                    "--out", str(md), "--json", str(js), "--games-out", str(gl)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == md.read_text().strip()
    d = json.loads(js.read_text())
    # --games-out: one line a game in the loss analysis's format, which it reads back
    lines = load_script("loss_analysis").read_games(str(gl))
    played_games = [g for r in d["rungs"] if "games" in r for g in r["games"]]
    assert [g["game"] for g in lines] == list(range(1, len(played_games) + 1)) == [1, 2, 3, 4]
    for line, g in zip(lines, played_games):
        ours = "black" if g["a_black"] else "white"
        assert line[ours] == "ours" and line["nodes"] in (20, 30)
        assert line["moves"] == g["moves"] and line["reason"] == g["reason"]
        assert line["winner"] == {1.0: ours, 0.5: None}.get(
            g["result"], "white" if ours == "black" else "black")
        assert line["opening_stones"] == len(d["openings"][0]) and line["board_size"] == 7
    assert d["mode"] == "ladder" and d["config"] == {"board_size": 7, "rule": "freestyle"}
    skipped, *played = d["rungs"]
    assert skipped["nodes"] == 10 and "answered 'ERROR no thanks' to START" in skipped["failed"]
    assert "games" not in skipped and "| 10 |" in out and "not played" in out
    for rung, nodes in zip(played, (20, 30)):
        assert rung["name"] == f"r{nodes}" and rung["info"] == [["max_node", str(nodes)]]
        games = rung["games"]
        assert [g["a_black"] for g in games] == [True, False]
        # the rung's engine got its budget (it echoes INFO max_node); ours got none
        assert {m for g in games for m in g["messages"]["b"]} == {f"MESSAGE max_node={nodes}"}
        assert all(g["messages"]["a"] == [] for g in games)
        results = [g["result"] for g in games]
        assert (rung["wins"], rung["draws"], rung["losses"]) == (
            results.count(1.0), results.count(0.5), results.count(0.0))
        pair = sum(results)
        assert rung["pairs"] == [int(pair * 2 == i) for i in range(5)]
        assert rung["elo_paired"]["pairs"] == 1
        assert rung["time_losses"] == {"a": 0, "b": 0} and rung["errors"] == {"a": 0, "b": 0}
        # ours sleeps 5 ms before each move: its mean time shows it
        assert rung["mean_ms"]["a"] >= 5.0
        row = next(line for line in out.splitlines() if line.startswith(f"| {nodes} |"))
        assert f"| r{nodes} | {rung['wins']}-{rung['draws']}-{rung['losses']} |" in row


def test_ladder_bad_flags():
    with pytest.raises(SystemExit, match="--agents is not an option of --ladder"):
        st.main(["--ladder", "x", "--agents", "random,heuristic"])
    with pytest.raises(SystemExit, match="'no-such-engine' is neither a command on PATH"):
        st.main(["--ladder", "no-such-engine", "--board-size", "7"])
    with pytest.raises(SystemExit, match="--rungs takes"):
        st.main(["--ladder", "python3", "--rungs", "0", "--board-size", "7"])
    with pytest.raises(SystemExit, match="one --ms-per-move"):
        st.main(["--ladder", "python3", "--ms-per-move", "100,1000", "--board-size", "7"])
    with pytest.raises(SystemExit, match="expected KEY=VALUE"):
        st.main(["--ladder", "python3", "--rung-info", "max_node", "--board-size", "7"])
    with pytest.raises(SystemExit, match="five in a row"):
        st.main(["--ladder", "python3", "--board-size", "7", "--win-length", "4"])
