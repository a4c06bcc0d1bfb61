"""experiments/gmo.py: the smallest run end to end (speed, ascent effect, an arena row per
ablation and opponent), and bad flags refused."""

import json

import pytest
from experiment_scripts import load_script

gx = load_script("gmo")


@pytest.mark.slow
def test_smallest_run_end_to_end(tmp_path, capsys):
    # Gomoku 5x5, four in a row: its programs compile faster than Faux Go's on 5x5
    out, js = tmp_path / "gmo.md", tmp_path / "gmo.json"
    assert gx.main(["--game", "gomoku", "--board-size", "5", "--win-length", "4",
                    "--batch-sizes", "1", "--positions", "4", "--games", "1",
                    "--ablations", "gmo,optim_steps=0", "--opponents", "random",
                    "--out", str(out), "--json", str(js)]) == 0
    report = out.read_text()
    assert report.strip() in capsys.readouterr().out
    assert "| gmo | random |" in report and "| optim_steps=0 | random |" in report
    data = json.loads(js.read_text())
    assert [r["batch"] for r in data["speed"]] == [1]
    assert 0.0 <= data["ascent"]["candidates_moved"] <= 1.0
    assert [r["gmo"] for r in data["arena"]] == ["gmo", "optim_steps=0"]


@pytest.mark.parametrize("argv, message", [
    (["--ablations", "gmo,nope"], "--ablations takes"),
    (["--game", "fauxgo", "--board-size", "4"], "board_size must be an int in 5..19"),
])
def test_bad_flags_are_refused(capsys, argv, message):
    with pytest.raises(SystemExit):
        gx.main(argv)
    assert message in capsys.readouterr().err
