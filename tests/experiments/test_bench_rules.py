"""experiments/bench_rules.py: every rule is measured in one table, and --no-progress is
offered."""

import sys

import pytest
from experiment_scripts import load_script

br = load_script("bench_rules")


def test_smallest_run_end_to_end(capsys):
    assert br.main(["--board-size", "9", "--batch", "2", "--plies", "4", "--repeats", "1",
                    "--rules", "freestyle,caro", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| freestyle |" in out and "| caro |" in out and "1.0x" in out


def test_help_offers_no_progress(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["bench_rules.py", "--help"])
    with pytest.raises(SystemExit) as e:
        br.build_parser().parse_args()
    assert e.value.code == 0 and "--no-progress" in capsys.readouterr().out


def test_unknown_rule_is_refused():
    with pytest.raises(SystemExit, match="--rules"):
        br.main(["--rules", "gomoku"])
