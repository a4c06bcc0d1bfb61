"""experiments/bench_vcf.py: both layouts of the root threat search run on the same
positions, agree, and are reported side by side."""

import pytest
from experiment_scripts import load_script

bv = load_script("bench_vcf")


@pytest.mark.slow
def test_smallest_run_end_to_end(capsys):
    # The positions and the one-board layout are the same programs as test_bench_vct.py's
    # (same board, batch and plies; its VCF searches 512 nodes): compiled once per cache.
    assert bv.main(["--board-size", "7", "--batch", "2", "--plies", "4",
                    "--max-nodes", "512"]) == 0
    out = capsys.readouterr().out
    assert "| vmap, batch-level conds |" in out and "| lax.map, one board |" in out
    assert "same moves and masks in both layouts: True" in out
