"""experiments/bench_fauxgo_heuristic.py: the smallest run end to end, the Python reference
beside the batched agent in one table (no timed asserts), and bad flags refused."""

import json

import pytest
from experiment_scripts import load_script

bh = load_script("bench_fauxgo_heuristic")


@pytest.mark.slow
def test_smallest_run_end_to_end(tmp_path, capsys):
    out, js = tmp_path / "h.md", tmp_path / "h.json"
    assert bh.main(["--board-size", "5", "--batch-sizes", "2", "--repeats", "1",
                    "--reference-boards", "1", "--out", str(out), "--json", str(js)]) == 0
    report = out.read_text()
    assert report.strip() in capsys.readouterr().out
    assert "| Python reference (one board at a time) | 1 |" in report
    assert "| gomoku_jax (jit + vmap) | 2 |" in report
    rows = json.loads(js.read_text())
    assert [r["batch"] for r in rows] == [1, 2]
    assert all(r["moves_per_cpu_s"] > 0 and r["ms_per_call"] > 0 for r in rows)


@pytest.mark.parametrize("argv, message", [
    (["--board-size", "4"], "board_size must be an int in 5..19"),
    (["--reference-boards", "-1"], "--reference-boards >= 0"),
])
def test_bad_flags_are_refused(capsys, argv, message):
    with pytest.raises(SystemExit):
        bh.main(argv)
    assert message in capsys.readouterr().err
