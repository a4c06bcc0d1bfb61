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
from search_helpers import NoisyEvaluator, PeakedEvaluator, late_positions, random_tree

from gomoku_jax import search
from gomoku_jax.games.protocol import is_over
from gomoku_jax.search import model, tree_loop
from gomoku_jax.search.evaluators import UniformEvaluator

SIMS = 24


def positions():
    """(env, states [4]): live 7x7 four-in-a-row positions, 40-70% filled, so that games
    end inside the tree (absorbing nodes, discount 0)."""
    return late_positions(7, 4, 4, seed=3)


def assert_same_tree(ours: mctx.Tree, theirs: mctx.Tree):
    for name in ("node_visits", "parents", "action_from_parent", "children_index",
                 "children_visits"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name), name)
    for name in ("raw_values", "node_values", "children_prior_logits", "children_values",
                 "children_rewards", "children_discounts"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    for a, b in zip(jax.tree.leaves(ours.embeddings), jax.tree.leaves(theirs.embeddings)):
        np.testing.assert_array_equal(a, b)


# Few configs: each compiles two searches (the heuristic evaluator is left out: it costs
# most of the compile time and adds nothing to what the loops do).
CONFIGS = {
    "puct-noisy-min_max-hard": ("puct", NoisyEvaluator(),  # root noise on
                                dict(q_transform="min_max", symmetry="none",
                                     prior_shaping="hard")),
    "puct-peaked-parent": ("puct", PeakedEvaluator(),
                           dict(q_transform="parent", symmetry="random", dirichlet_fraction=0.0)),
    "gumbel-noisy": ("gumbel", NoisyEvaluator(), dict(symmetry="none")),
    "pure_mcts-uniform": ("pure_mcts", UniformEvaluator(), dict()),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_our_loop_builds_mctx_search_tree(name):
    """Every registered algorithm, through `loop=...`: the same tree, array for array, and
    the same move, policy and value."""
    algorithm_name, evaluator, fields = CONFIGS[name]
    env, states = positions()
    outs = {}
    for which in ("gomoku_jax", "mctx"):
        algorithm = search.make(algorithm_name, loop=which, stop_at_terminal=False, **fields)
        outs[which] = jax.jit(lambda s, k, a=algorithm: a.search(env, evaluator, None, s, k,
                                                                 SIMS))(states, jax.random.key(7))
    ours, theirs = outs["gomoku_jax"], outs["mctx"]
    assert_same_tree(ours.tree, theirs.tree)
    np.testing.assert_array_equal(ours.action, theirs.action)
    np.testing.assert_allclose(ours.policy, theirs.policy, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.value, theirs.value, rtol=1e-5, atol=1e-6)
    assert int(ours.tree.node_visits[:, 0].min()) == SIMS + 1


def test_a_descent_stops_at_a_game_over_node():
    """With `stop_at_terminal` (the algorithms' default) no node hangs below a node whose
    game is over, the tree stays contiguous, and the root is still visited S + 1 times; mctx
    grows chains under such nodes in these late positions."""
    env, states = positions()
    trees = {}
    for stop in (True, False):
        algorithm = search.make("puct", stop_at_terminal=stop, symmetry="none")
        trees[stop] = jax.jit(lambda s, k, a=algorithm: a.search(
            env, PeakedEvaluator(), None, s, k, SIMS).tree)(states, jax.random.key(7))

    def below_terminal(tree):
        parents = np.asarray(tree.parents)
        used = np.asarray(tree.node_visits) > 0
        over = np.asarray(jax.vmap(jax.vmap(is_over))(tree.embeddings))
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
    root, allowed = model.root_output(env, NoisyEvaluator(), algorithm, None, states,
                                      jax.random.key(0))
    return root, model.recurrent_fn(env, NoisyEvaluator(), algorithm), ~allowed


@pytest.mark.parametrize("policy", ["muzero", "gumbel_muzero"])
def test_mctx_policies_count_the_same_visits_with_our_loop(policy, policy_inputs, monkeypatch):
    """mctx's `muzero_policy` (its Dirichlet noise and selection) and `gumbel_muzero_policy`,
    run as they are and with their `search` replaced by ours, for the same keys."""
    root, fn, invalid = policy_inputs
    run = getattr(mctx, f"{policy}_policy")
    kwargs = dict(params=None, rng_key=jax.random.key(3), root=root, recurrent_fn=fn,
                  num_simulations=SIMS, invalid_actions=invalid)
    theirs = jax.jit(lambda: run(**kwargs))()
    monkeypatch.setattr(mctx_policies.search, "search", tree_loop.search)
    ours = jax.jit(lambda: run(**kwargs))()
    np.testing.assert_array_equal(ours.search_tree.summary().visit_counts,
                                  theirs.search_tree.summary().visit_counts)
    np.testing.assert_array_equal(ours.action, theirs.action)
    assert_same_tree(ours.search_tree, theirs.search_tree)


def test_a_given_tree_too_small_for_the_simulations_is_refused(policy_inputs):
    root, fn, invalid = policy_inputs
    tree = tree_loop.empty_tree(root.embedding, SIMS, root.prior_logits.shape[1])
    with pytest.raises(ValueError, match=f"cannot hold {SIMS} simulations"):
        tree_loop.search(None, jax.random.key(0), root=root, recurrent_fn=fn,
                         root_action_selection_fn=None, interior_action_selection_fn=None,
                         num_simulations=SIMS, invalid_actions=invalid, tree=tree)


def test_the_mctx_loop_cannot_continue_a_tree(policy_inputs):
    env, states = positions()
    root, _, _ = policy_inputs
    tree = tree_loop.empty_tree(root.embedding, SIMS + 1, root.prior_logits.shape[1])
    algorithm = search.make("puct", loop="mctx")
    with pytest.raises(ValueError, match="mctx issue #51"):
        jax.eval_shape(lambda: algorithm.search(env, UniformEvaluator(), None, states,
                                                jax.random.key(0), SIMS, tree))
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
    for seed in range(3):
        tree = random_tree(seed, batch=3, num_nodes=12, num_actions=5)
        ours = jax.jit(backward_sweep(tree_loop.path_backward))(tree)
        theirs = jax.jit(backward_sweep(mctx_search.backward))(tree)
        np.testing.assert_array_equal(ours.node_visits, theirs.node_visits)
        np.testing.assert_array_equal(ours.children_visits, theirs.children_visits)
        np.testing.assert_allclose(ours.node_values, theirs.node_values, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(ours.children_values, theirs.children_values, rtol=1e-6,
                                   atol=1e-6)
