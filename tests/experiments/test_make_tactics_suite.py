"""experiments/make_tactics_suite.py: appending categories keeps the existing puzzles byte
for byte, and bad requests are refused. 9x9, one puzzle per category."""

import json

import pytest
from experiment_scripts import load_script

from gomoku_jax.games.gomoku import tactics_suite

mk = load_script("make_tactics_suite")


def run(argv):
    return mk.main(mk.build_parser().parse_args(argv))


def test_append_keeps_the_old_puzzles(tmp_path, capsys):
    base = tmp_path / "base.json"
    assert run(["--categories", "five,block_four", "--per-category", "1", "--board-size", "9",
                "--seed", "2", "--out", str(base), "--quiet"]) == 0
    before = base.read_text()
    out = tmp_path / "all.json"
    assert run(["--categories", "fours_7,fours_9", "--per-category", "1", "--board-size", "9",
                "--seed", "3", "--append", str(base), "--out", str(out), "--quiet"]) == 0
    assert "generated 2 puzzles (fours_7 1, fours_9 1)" in capsys.readouterr().out
    after = out.read_text()
    assert base.read_text() == before  # --out elsewhere: the base file is untouched
    head = before[:before.rindex("\n  }") + 4]
    assert after.startswith(head)
    suite = tactics_suite.load(out)
    assert [p.category for p in suite.puzzles] == ["five", "block_four", "fours_7", "fours_9"]
    fresh = tactics_suite.generate(9, per_category=1, seed=3,
                                   categories=tactics_suite.FOURS_CATEGORIES)
    assert json.loads(after)["puzzles"][2:] == tactics_suite.to_json(fresh)["puzzles"]


def test_refuses_bad_requests(tmp_path):
    base = tmp_path / "base.json"
    assert run(["--categories", "five", "--per-category", "1", "--board-size", "9",
                "--out", str(base), "--quiet"]) == 0
    with pytest.raises(SystemExit, match="already has five"):
        run(["--categories", "five", "--board-size", "9", "--append", str(base)])
    with pytest.raises(SystemExit, match="not --board-size 15"):
        run(["--categories", "fours_7", "--append", str(base)])
    with pytest.raises(SystemExit, match="give --out"):
        run(["--categories", "five"])
    with pytest.raises(SystemExit, match="categories must be"):
        run(["--categories", "mate", "--out", str(tmp_path / "x.json")])
    with pytest.raises(SystemExit, match="per-category"):
        run(["--per-category", "0", "--out", str(tmp_path / "x.json")])
