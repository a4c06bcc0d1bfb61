"""experiments/bench_search.py: the smallest configuration runs end to end through the
command line (grid with both loops, curve and a jax.profiler trace, PUCT's config changed by
`--set`), with the tables and JSON it promises. No timed asserts."""

import json

import numpy as np
import pytest
from experiment_scripts import load_script
from search_helpers import random_tree

bs = load_script("bench_search")


def test_node_depths_counts_edges_from_the_root():
    """(path_backward against mctx's backward on random trees:
    tests/search/test_tree_loop.py.)"""
    tree = random_tree(0, batch=3, num_nodes=12, num_actions=5)
    depth = np.asarray(bs.node_depths(tree))
    parents = np.asarray(tree.parents)
    assert (depth[:, 0] == 0).all()
    assert all(depth[b, i] == depth[b, parents[b, i]] + 1 for b in range(3) for i in range(1, 12))


@pytest.mark.slow
def test_smallest_run_end_to_end(tmp_path, capsys):
    out, js, trace = tmp_path / "search.md", tmp_path / "search.json", tmp_path / "trace"
    args = bs.build_parser().parse_args(
        ["--board-size", "7", "--batch-sizes", "2,4", "--simulations", "4",
         "--algorithms", "puct", "--evaluators", "uniform", "--curve-batch", "2",
         "--curve-simulations", "4", "--curve-evaluator", "uniform", "--repeats", "1",
         # no root noise, no symmetry: the searches compile in less than half the time
         "--set", "dirichlet_fraction=0", "--set", "symmetry=none",
         # every measurement is over this: its repeats are cut, and the B=4 cell skipped
         "--max-seconds-per-cell", "1e-9",
         "--profile", str(trace), "--out", str(out), "--json", str(js)])
    assert bs.main(args) == 0
    report = out.read_text()
    assert report.strip() in capsys.readouterr().out
    assert "| evaluator | algorithm | loop | batch | simulations |" in report
    assert report.count("default config with dirichlet_fraction=0, symmetry=none") == 2
    assert "vs mctx loop (CPU)" in report and "vs puct (CPU)" in report
    assert "| uniform | puct | gomoku_jax | 2 | 4 |" in report and "1.00x" in report
    assert "| uniform | puct | mctx | 2 | 4 |" in report
    assert "| uniform | puct | gomoku_jax | 4 | 4 | - |" in report
    assert "skipped (B=2, S=4 was over" in report
    assert "| S | (i) search, uniform | (i') search, uniform, mctx loop |" in report
    assert "(iv) mctx backward" in report and "one backward step" in report
    assert "| (i') / (i) |" in report
    assert f"tensorboard --logdir {trace}" in report

    data = json.loads(js.read_text())
    assert data["fields"] == {"dirichlet_fraction": "0", "symmetry": "none"}
    cell, skipped, mctx_cell, _ = data["grid"]
    assert (cell["evaluator"], cell["algorithm"], cell["loop"], cell["batch"],
            cell["simulations"]) == ("uniform", "puct", "gomoku_jax", 2, 4) and not cell["skipped"]
    assert mctx_cell["loop"] == "mctx" and not mctx_cell["skipped"]
    assert {"compile_s", "ms_per_move", "sims_per_wall_s", "sims_per_cpu_s"} <= set(cell)
    assert cell["note"] == "median of 1 (--max-seconds-per-cell)"
    assert skipped["batch"] == 4 and skipped["skipped"] and "wall_s" not in skipped
    (row,) = data["curve"]
    assert len(data["grid"]) + 1 == bs.count_rows(  # the progress bar's total
        [2, 4], [4], ["puct"], ["uniform"], bs.LOOPS, [2], [4], ["grid", "curve"])
    assert set(row["parts"]) == set(bs.CURVE_PARTS) and not row["skipped"]
    assert row["depth_mean"] >= 1 and row["depth_mean"] <= row["depth_max"] <= 4
    assert row["backward_steps"] >= 1
    assert all(p["us_per_sim"] is not None for p in row["parts"].values())
    profile = data["profile"]
    assert profile["simulations"] == 4 and profile["files"]
    assert all(f.startswith(str(trace)) for f in profile["files"])
    assert any(f.endswith("perfetto_trace.json.gz") for f in profile["files"])


def test_algorithm_names_come_from_the_registry():
    assert bs._names("puct,gumbel,pure_mcts", tuple(bs.search.ALGORITHMS), "--algorithms") == [
        "puct", "gumbel", "pure_mcts"]
    parser = bs.build_parser()
    for argv in (["--algorithms", "muzero"], ["--evaluators", "tiny"], ["--parts", "profile"],
                 ["--repeats", "0"], ["--loops", "fast"], ["--set", "dirichlet_fraction"],
                 ["--set", "dirichlet_fraction=x"],
                 ["--algorithms", "gumbel", "--set", "dirichlet_fraction=0"]):
        with pytest.raises(SystemExit, match="error"):
            bs.main(parser.parse_args(argv))
