"""experiments/bench_search.py: its path-only backward pass equals mctx's on random trees,
and the smallest configuration runs end to end through the command line (grid, curve and a
jax.profiler trace), with the tables and JSON it promises. No timed asserts."""

import json

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from experiment_scripts import load_script

bs = load_script("bench_search")


def random_tree(seed: int, batch: int, num_nodes: int, num_actions: int) -> mctx.Tree:
    """A random mctx tree: node i's parent is i-1 (half the time, for deep paths) or any
    earlier node, random statistics everywhere (float32 values, int32 visits)."""
    rng = np.random.default_rng(seed)
    idx = np.arange(num_nodes)
    chain = rng.random((batch, num_nodes)) < 0.5
    anywhere = (rng.random((batch, num_nodes)) * np.maximum(idx, 1)).astype(np.int32)
    parents = np.where(chain, idx - 1, anywhere).astype(np.int32)
    parents[:, 0] = mctx.Tree.NO_PARENT
    actions = rng.integers(0, num_actions, (batch, num_nodes)).astype(np.int32)
    actions[:, 0] = mctx.Tree.NO_PARENT
    edges = (batch, num_nodes, num_actions)

    def f32(shape, low=-1.0, high=1.0):
        return jnp.asarray(rng.uniform(low, high, shape), jnp.float32)

    def i32(shape):
        return jnp.asarray(rng.integers(0, 20, shape), jnp.int32)

    return mctx.Tree(
        node_visits=i32((batch, num_nodes)), raw_values=f32((batch, num_nodes)),
        node_values=f32((batch, num_nodes)), parents=jnp.asarray(parents),
        action_from_parent=jnp.asarray(actions),
        children_index=jnp.full(edges, mctx.Tree.UNVISITED, jnp.int32),
        children_prior_logits=f32(edges), children_visits=i32(edges),
        children_rewards=f32(edges), children_discounts=f32(edges, -1.0, 0.0),
        children_values=f32(edges), embeddings=jnp.zeros((batch, num_nodes, 3)),
        root_invalid_actions=jnp.zeros((batch, num_actions)), extra_data=None)


def assert_trees_close(a: mctx.Tree, b: mctx.Tree):
    np.testing.assert_array_equal(a.node_visits, b.node_visits)
    np.testing.assert_array_equal(a.children_visits, b.children_visits)
    np.testing.assert_allclose(a.node_values, b.node_values, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(a.children_values, b.children_values, rtol=1e-6, atol=1e-6)


def test_path_backward_equals_mctx_backward():
    """The curve's (v) is a fair stand-in for (iv): the same updates, the same tree."""
    tree = random_tree(0, batch=3, num_nodes=12, num_actions=5)
    # A whole search's worth of updates, node after node, compounds any difference; the
    # boards' paths have different depths.
    assert_trees_close(jax.jit(bs.backward_sweep(bs.path_backward))(tree),
                       jax.jit(bs.backward_sweep(bs.mctx_backward))(tree))
    depth = np.asarray(bs.node_depths(tree))
    parents = np.asarray(tree.parents)
    assert (depth[:, 0] == 0).all()
    assert all(depth[b, i] == depth[b, parents[b, i]] + 1 for b in range(3) for i in range(1, 12))


def test_smallest_run_end_to_end(tmp_path, capsys):
    out, js, trace = tmp_path / "search.md", tmp_path / "search.json", tmp_path / "trace"
    args = bs.build_parser().parse_args(
        ["--board-size", "7", "--batch-sizes", "2,4", "--simulations", "4",
         "--algorithms", "puct", "--evaluators", "uniform", "--curve-batch", "2",
         "--curve-simulations", "4", "--curve-evaluator", "uniform", "--repeats", "1",
         # every measurement is over this: its repeats are cut, and the B=4 cell skipped
         "--max-seconds-per-cell", "1e-9",
         "--profile", str(trace), "--out", str(out), "--json", str(js)])
    assert bs.main(args) == 0
    report = out.read_text()
    assert report.strip() in capsys.readouterr().out
    assert "| evaluator | algorithm | batch | simulations |" in report and "vs puct (CPU)" in report
    assert "| uniform | puct | 2 | 4 |" in report and "1.00x" in report
    assert "| uniform | puct | 4 | 4 | - |" in report and "skipped (B=2, S=4 was over" in report
    assert "| S | (i) search, uniform | (ii) search, uniform |" in report
    assert "(iv) mctx backward" in report and "one backward step" in report
    assert f"tensorboard --logdir {trace}" in report

    data = json.loads(js.read_text())
    cell, skipped = data["grid"]
    assert (cell["evaluator"], cell["algorithm"], cell["batch"], cell["simulations"]) == (
        "uniform", "puct", 2, 4) and not cell["skipped"]
    assert {"compile_s", "ms_per_move", "sims_per_wall_s", "sims_per_cpu_s"} <= set(cell)
    assert cell["note"] == "median of 1 (--max-seconds-per-cell)"
    assert skipped["batch"] == 4 and skipped["skipped"] and "wall_s" not in skipped
    (row,) = data["curve"]
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
                 ["--repeats", "0"]):
        with pytest.raises(SystemExit, match="error"):
            bs.main(parser.parse_args(argv))
