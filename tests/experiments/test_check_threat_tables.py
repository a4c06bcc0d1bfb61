"""experiments/check_threat_tables.py: a small run compares table and scan and reports each
case; a table that disagrees makes it fail."""

import pytest
from experiment_scripts import load_script

ct = load_script("check_threat_tables")


def test_small_run_reports_every_case(capsys):
    assert ct.main(["--boards", "50", "--win-lengths", "3"]) == 0
    out = capsys.readouterr().out
    assert "k=3 freestyle: 50 boards of 8x8, 0 differing cells" in out
    assert "k=3 exact5: 50 boards of 8x8, 0 differing cells" in out


def test_a_wrong_table_is_caught(monkeypatch):
    monkeypatch.setattr(ct, "threats", lambda b, c, k, rule, method: ct.threats_scan(
        b, c, k, rule) * 0)  # every code NONE
    # the boards of test_small_run_reports_every_case: their programs are compiled already
    assert ct.main(["--boards", "50", "--win-lengths", "3"], log=lambda s: None) == 1


def test_bad_board_count_is_refused():
    with pytest.raises(SystemExit, match="--boards"):
        ct.main(["--boards", "0"])
