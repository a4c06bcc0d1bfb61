"""experiments/engine_soak.py: two tiny games of an engine process against the heuristic."""

from experiment_scripts import load_script

es = load_script("engine_soak")


def test_budget_is_pbrains():
    assert es.pbrain_budget_s(1000, 5000, 0) == 5.0 / 20 * 0.8 - 0.05
    assert es.pbrain_budget_s(100, 5000, 0) == 0.1 * 0.8 - 0.05
    assert es.pbrain_budget_s(1000, 5000, 15) == 5.0 / 10 * 0.8 - 0.05  # never under 10 to go
    assert es.pbrain_budget_s(1000, -300, 3) == 0.0


def test_two_tiny_games(capsys):
    code = es.main(["--games", "2", "--board-size", "7", "--engine-args=--agent heuristic",
                    "--margin-ms", "3000", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    row = next(line for line in out.splitlines() if line.startswith("| 2 |"))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    wins, losses, draws = map(int, cells[1].split(" / "))
    assert wins + losses + draws == 2 and int(cells[3]) >= 6  # engine moves
    assert cells[4] == "0" and cells[5] == "0"  # illegal moves, moves over budget
    assert int(cells[6]) > 0 and int(cells[7]) > 0  # RSS after games 1 and 2
    assert "| first 2 |" in out and "| after game | RSS MiB |" in out
