"""experiments/bench_vcf.py: both layouts of the root threat search run on the same
positions, agree, and are reported side by side."""

from experiment_scripts import load_script

bv = load_script("bench_vcf")


def test_smallest_run_end_to_end(capsys):
    assert bv.main(["--board-size", "9", "--batch", "2", "--plies", "8",
                    "--max-nodes", "64"]) == 0
    out = capsys.readouterr().out
    assert "| vmap, batch-level conds |" in out and "| lax.map, one board |" in out
    assert "same moves and masks in both layouts: True" in out
