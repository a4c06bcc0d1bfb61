"""experiments/bench_vct.py: the three root threat searches run on the same positions and
are reported side by side; the VCT never loses a VCF win."""

import pytest
from experiment_scripts import load_script

bv = load_script("bench_vct")


def test_smallest_run_end_to_end(capsys):
    assert bv.main(["--board-size", "9", "--batch", "2", "--plies", "8", "--vct-nodes", "8",
                    "--no-progress"]) == 0
    out = capsys.readouterr().out
    for name in ("| VCF |", "| VCF + VCT 8 |", "| VCF + VCT 8 + defence |"):
        assert name in out


def test_bad_flags():
    with pytest.raises(SystemExit, match="vct-nodes"):
        bv.main(["--vct-nodes", "0"])
