"""The search benchmark: the path-only backward pass equals mctx's on random trees, and the
benchmark runs end to end on the smallest configuration."""

import json

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from gomoku_jax.benchmarks import search_throughput as st


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


@pytest.mark.parametrize("seed", [0, 1])
def test_path_backward_equals_mctx_backward(seed):
    tree = random_tree(seed, batch=3, num_nodes=12, num_actions=5)
    ours, theirs = jax.jit(st.path_backward), jax.jit(st.mctx_backward)
    # Different leaf depths per board, and the root itself (nothing to do) on one board.
    for leaf in ([11, 5, 0], [1, 11, 7], [0, 0, 0]):
        leaf = jnp.asarray(leaf, jnp.int32)
        assert_trees_close(ours(tree, leaf), theirs(tree, leaf))
    # A whole search's worth of updates, node after node, compounds any difference.
    assert_trees_close(jax.jit(st.backward_sweep(st.path_backward))(tree),
                       jax.jit(st.backward_sweep(st.mctx_backward))(tree))


def test_node_depths_follow_parents():
    tree = random_tree(2, batch=2, num_nodes=9, num_actions=4)
    depth = np.asarray(st.node_depths(tree))
    parents = np.asarray(tree.parents)
    assert (depth[:, 0] == 0).all()
    for b in range(2):
        for i in range(1, 9):
            assert depth[b, i] == depth[b, parents[b, i]] + 1


def test_power_estimate():
    assert st.power_estimate([], 10, 1.0, 0.5, 2.0) is None
    assert st.power_estimate([(2, 1.0)], 8, 1.0, 0.5, 2.0) == pytest.approx(4.0)
    # fitted exponent 2 from (1, 1) and (2, 4), clamped to at most 1.5
    assert st.power_estimate([(1, 1.0), (2, 4.0)], 4, 1.0, 0.5, 1.5) == pytest.approx(
        4.0 * 2 ** 1.5)


def test_smallest_run_end_to_end():
    # The tiny network compiles faster than the heuristic evaluator; each mctx search still
    # takes seconds to compile, so the grid has one algorithm (the curve reuses its search).
    lines = []
    results = st.run_benchmark(board_size=7, batches=[2], sims_list=[4], algorithms=["muzero"],
                               evaluator_names=["network"], curve_batch=2, curve_sims=[4],
                               repeats=1, max_seconds=1e9, curve_evaluator="network",
                               log=lines.append)
    (cell,) = results["grid"]
    m = cell.result
    assert (cell.evaluator, cell.algorithm) == ("network", "muzero") and not cell.skipped
    assert m.work == 2 * 4 and m.wall_s > 0 and m.per_cpu_s > 0 and m.compile_s > 0
    (row,) = results["curve"]
    assert set(row.wall) == set(st.CURVE_PARTS) and not row.skipped
    assert row.depth_mean >= 1 and row.depth_mean <= row.depth_max <= 4
    report = st.render_report(results, 7, 1, 2)
    assert "| network | muzero | 2 | 4 |" in report
    assert "(iv) mctx backward" in report and "one backward step" in report
    assert json.dumps([cell.as_dict(), row.as_dict()])
    assert len(lines) == 4  # two headings, one line per measurement


def test_profile_attributes_time_to_mctx_backward(tmp_path):
    tree = random_tree(3, batch=2, num_nodes=16, num_actions=9)
    profile = st.profile_breakdown(st.backward_sweep(st.mctx_backward), (tree,),
                                   str(tmp_path))
    assert profile["parts"][0][0] == "mctx backward" and profile["parts"][0][2] > 0
    assert profile["traced_s"] > 0 and profile["untraced_s"] > 0
    assert "op runs" in st.render_profile(profile)
    assert st.categorize("/x/gomoku_jax/game/rules.py", "step") == "env step"
    assert st.categorize("/x/mctx/_src/search.py", "update") is None  # enclosing op decides
    assert st.categorize("/x/gomoku_jax/features/patterns.py", "threats") == "evaluator"
    assert st.categorize("/x/mctx/_src/action_selection.py", "muzero_action_selection",
                         "jit(run)/while/body/jit(_uniform)/add") == "random numbers (threefry)"


def test_budget_skips_and_memory_refusals():
    env = st.gomoku_jax.make("gomoku", board_size=7)
    pool = st.start_positions(env, 2, jax.random.key(0))
    counts = np.asarray(pool.move_count)
    assert ((counts >= 6) & (counts <= 16)).all() and not np.asarray(pool.terminated).any()
    config = st.mcts.SearchConfig(max_tree_bytes=1)
    assert st.tree_refusal(pool, 4, config).startswith("refused by check_tree_memory")
    measured = st.GridCell("network", "muzero", 1, 4,
                           st.Measurement("muzero", "network", 1, 4, 1.0, 2.0, 2.0))
    nxt = st.GridCell("network", "muzero", 16, 4)
    assert st.estimate_cell([measured], nxt) == pytest.approx(32.0)
    deeper = st.GridCell("network", "muzero", 1, 8)
    assert st.estimate_cell([measured], deeper) == pytest.approx(8.0)
    # compile 1 s + (3 repeats + 1 warm-up) x 32 s
    assert st._over_budget([measured], nxt, 3, 60.0) == "skipped (est. 129 s)"
    assert nxt.estimate_s == pytest.approx(32.0)
    assert st._over_budget([measured], deeper, 3, 60.0) == ""
    skipped = st.GridCell("network", "muzero", 16, 8, estimate_s=30.0,
                          skipped="skipped (est. 121 s)")
    table = st.render_grid([measured, skipped])
    assert "| network | muzero | 1 | 4 | 1.0 | 2000 | 2 | 2 |  |" in table
    assert "| network | muzero | 16 | 8 | - | - | - | - | skipped (est. 121 s) |" in table
