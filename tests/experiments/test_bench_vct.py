"""experiments/bench_vct.py: the three root threat searches run on the same positions and
are reported side by side; the VCT never loses a VCF win."""

import pytest
from experiment_scripts import load_script

bv = load_script("bench_vct")


@pytest.mark.slow
def test_smallest_run_end_to_end(capsys):
    # The VCF and the VCT side by side (the defence, a third compile of the same hook,
    # is the agents' tests' and the experiment's). The positions and the VCF are the same
    # programs as test_bench_vcf.py's (same board, batch and plies; its one-board layout
    # at 512 nodes is this VCF): the persistent cache compiles them once.
    assert bv.main(["--board-size", "7", "--batch", "2", "--plies", "4", "--vct-nodes", "4",
                    "--variants", "vct,vcf", "--no-progress"]) == 0
    out = capsys.readouterr().out
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in out.splitlines()
            if line.startswith("| VCF")]
    assert [r[0] for r in rows] == ["VCF", "VCF + VCT 4"]
    assert rows[0][-1] == rows[1][-1]  # without the defence the VCT narrows no root
    assert [v[0] for v in bv.variants(4)] == ["VCF", "VCF + VCT 4", "VCF + VCT 4 + defence"]


@pytest.mark.parametrize("argv, match", [(["--vct-nodes", "0"], "vct-nodes"),
                                         (["--variants", "vct,vcx"], "variants"),
                                         (["--variants", ","], "variants")])
def test_bad_flags(argv, match):
    with pytest.raises(SystemExit, match=match):
        bv.main(argv)
