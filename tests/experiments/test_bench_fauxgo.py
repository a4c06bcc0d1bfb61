"""experiments/bench_fauxgo.py: the smallest run end to end, with pgx's go_9x9 beside Faux
Go in one table (no timed asserts), and a bad board size refused."""

import json

import pytest
from experiment_scripts import load_script

bf = load_script("bench_fauxgo")


def test_smallest_run_end_to_end(tmp_path, capsys):
    # Both playouts (9x9, batch 2, 4 moves) are programs of gpu_check.py's tiny run too
    # (test_gpu_check.py): one compile each per cache.
    out, js = tmp_path / "fauxgo.md", tmp_path / "fauxgo.json"
    assert bf.main(["--board-size", "9", "--batch-sizes", "2", "--steps", "4", "--repeats",
                    "1", "--out", str(out), "--json", str(js)]) == 0
    report = out.read_text()
    assert report.strip() in capsys.readouterr().out
    assert "| gomoku_jax fauxgo 9x9 | 2 |" in report and "| pgx go_9x9 | 2 |" in report
    assert report.count("x |") == 2 and "| 1.0x |" in report
    rows = json.loads(js.read_text())
    assert [r["system"] for r in rows] == ["gomoku_jax fauxgo 9x9", "pgx go_9x9"]
    assert all(r["steps_per_cpu_s"] > 0 for r in rows)


def test_a_bad_board_size_is_refused(capsys):
    with pytest.raises(SystemExit):
        bf.main(["--board-size", "4"])
    assert "board_size must be an int in 5..19" in capsys.readouterr().err
