"""Our simulation loop (`search/tree_loop.py`) against mctx's: the same trees as `mctx.search`
for every algorithm and a few evaluators, the same visit counts as `mctx.muzero_policy` and
`gumbel_muzero_policy` (mctx's own policies with their search swapped for ours), and its
path-only backward pass against mctx's on random trees."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest
from mctx._src import policies as mctx_policies
from mctx._src import search as mctx_search
from reference_trees import reference_trees
from search_helpers import (
    REFERENCE,
    REFERENCE_SIMS,
    NoisyEvaluator,
    assert_same_tree,
    random_tree,
    reference_positions,
)

from gomoku_jax import search
from gomoku_jax.search import tree_loop
from gomoku_jax.search.env_model import EnvModel
from gomoku_jax.search.evaluators import UniformEvaluator

SIMS = REFERENCE_SIMS


def positions():
    """(env, states [16]): the reference searches' late positions (games end inside the
    tree: absorbing nodes, discount 0)."""
    return reference_positions()


# Few configs (search_helpers.REFERENCE: the heuristic evaluator is left out, it costs most
# of the compile time and adds nothing to what the loops do), all searched by one program
# (reference_trees.py), which tests/search/test_masking.py checks too.
@pytest.mark.parametrize("name", list(REFERENCE))
def test_our_loop_builds_mctx_search_tree(name):
    """Every registered algorithm, through `loop=...` and with a root mask: the same tree,
    array for array, and the same move, policy and value."""
    _, _, ours = reference_trees()[name, "ours"]
    _, _, theirs = reference_trees()[name, "mctx"]
    assert_same_tree(ours.tree, theirs.tree)
    np.testing.assert_array_equal(ours.action, theirs.action)
    np.testing.assert_allclose(ours.policy, theirs.policy, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.value, theirs.value, rtol=1e-5, atol=1e-6)
    assert int(ours.tree.node_visits[:, 0].min()) == SIMS + 1


def test_a_descent_stops_at_a_game_over_node():
    """With `stop_at_terminal` (the algorithms' default) no node hangs below a node whose
    game is over, the tree stays contiguous, and the root is still visited S + 1 times; mctx
    (and our loop without it, the tree above) grows chains under such nodes in these late
    positions."""
    trees = {True: reference_trees()["puct-peaked-alphazero", "stop"][2].tree,
             False: reference_trees()["puct-peaked-alphazero", "ours"][2].tree}

    def below_terminal(tree):
        parents = np.asarray(tree.parents)
        used = np.asarray(tree.node_visits) > 0
        over = np.asarray(tree.embeddings.terminated) | np.asarray(tree.embeddings.truncated)
        return sum(int(used[b, i] and parents[b, i] >= 0 and over[b, parents[b, i]])
                   for b in range(parents.shape[0]) for i in range(parents.shape[1]))

    assert below_terminal(trees[False]) > 0
    stopped = trees[True]
    assert below_terminal(stopped) == 0
    np.testing.assert_array_equal(stopped.node_visits[:, 0], SIMS + 1)
    used = np.asarray(stopped.node_visits) > 0
    count = used.sum(axis=1)
    assert all(used[b, :count[b]].all() for b in range(len(count)))  # no holes
    assert (count < SIMS + 1).any()  # some simulations re-visited a finished game
    with pytest.raises(ValueError, match="stop_at_terminal"):
        search.make("puct", stop_at_terminal=1)


@pytest.fixture(scope="module")
def policy_inputs():
    """(root, recurrent_fn, invalid_actions) of our env model on the late positions, with
    the noisy evaluator and no shaping (mctx's own policies below)."""
    env, states = positions()
    algorithm = search.make("puct", symmetry="none", prior_shaping="off")
    env_model = EnvModel(env, NoisyEvaluator(), algorithm)
    root, allowed = jax.jit(lambda s, k: env_model.root(None, k, s))(states, jax.random.key(0))
    return root, env_model.recurrent_fn, ~allowed


POLICIES = ("muzero", "gumbel_muzero")


@pytest.fixture(scope="module")
def policy_runs(policy_inputs):
    """{policy: (ours, theirs)}: mctx's `muzero_policy` and `gumbel_muzero_policy` run as
    they are (theirs) and with their `search` replaced by ours, for the same key, all four
    in one compiled program (the replacement is in place while its run is traced)."""
    root, fn, invalid = policy_inputs

    def run(root, invalid):
        out = {}
        for policy in POLICIES:
            kwargs = dict(params=None, rng_key=jax.random.key(3), root=root, recurrent_fn=fn,
                          num_simulations=SIMS, invalid_actions=invalid)
            policy_fn = getattr(mctx, f"{policy}_policy")
            theirs = policy_fn(**kwargs)
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(mctx_policies.search, "search", tree_loop.search)
                out[policy] = (policy_fn(**kwargs), theirs)
        return out

    return jax.device_get(jax.jit(run)(root, invalid))


@pytest.mark.parametrize("policy", POLICIES)
def test_mctx_policies_count_the_same_visits_with_our_loop(policy, policy_runs):
    """mctx's `muzero_policy` (its Dirichlet noise and selection) and `gumbel_muzero_policy`,
    run as they are and with their `search` replaced by ours, for the same keys."""
    ours, theirs = policy_runs[policy]
    np.testing.assert_array_equal(ours.search_tree.summary().visit_counts,
                                  theirs.search_tree.summary().visit_counts)
    np.testing.assert_array_equal(ours.action, theirs.action)
    assert_same_tree(ours.search_tree, theirs.search_tree)


def test_a_given_tree_too_small_for_the_simulations_is_refused(policy_inputs):
    root, fn, invalid = policy_inputs
    with pytest.raises(ValueError, match=f"cannot hold {SIMS} simulations"):
        jax.eval_shape(lambda: tree_loop.search(
            None, jax.random.key(0), root=root, recurrent_fn=fn,
            root_action_selection_fn=None, interior_action_selection_fn=None,
            num_simulations=SIMS, invalid_actions=invalid,
            tree=tree_loop.empty_tree(root.embedding, SIMS, root.prior_logits.shape[1])))


def test_the_mctx_loop_cannot_continue_a_tree(policy_inputs):
    env, states = positions()
    root, _, _ = policy_inputs
    algorithm = search.make("puct", loop="mctx")
    with pytest.raises(ValueError, match="mctx issue #51"):
        jax.eval_shape(lambda: algorithm.search(
            env, UniformEvaluator(), None, states, jax.random.key(0), SIMS,
            tree_loop.empty_tree(root.embedding, SIMS + 1, root.prior_logits.shape[1])))
    with pytest.raises(ValueError, match="loop must be one of"):
        search.make("puct", loop="fast")


# ----------------------------------------------------------------- the backward pass

def backward_sweep(backward):
    """sweep(tree): back up from node 1, 2, ..., N-1 on every board in turn."""

    def sweep(tree):
        batch, num_nodes = tree.node_values.shape
        return jax.lax.fori_loop(
            1, num_nodes, lambda i, t: backward(t, jnp.full((batch,), i, jnp.int32)), tree)

    return sweep


def test_path_backward_equals_mctx_backward_on_random_trees():
    """A whole search's worth of updates, node after node, compounds any difference; the
    boards' paths have different depths."""
    both = jax.jit(lambda tree: (backward_sweep(tree_loop.path_backward)(tree),
                                 backward_sweep(mctx_search.backward)(tree)))
    for seed in range(3):
        ours, theirs = both(random_tree(seed, batch=3, num_nodes=12, num_actions=5))
        np.testing.assert_array_equal(ours.node_visits, theirs.node_visits)
        np.testing.assert_array_equal(ours.children_visits, theirs.children_visits)
        np.testing.assert_allclose(ours.node_values, theirs.node_values, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(ours.children_values, theirs.children_values, rtol=1e-6,
                                   atol=1e-6)
