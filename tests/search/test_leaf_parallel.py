"""Leaf parallelism in our loop (`tree_loop.search(..., leaves_per_step=W)`): W = 1 is the loop
as before; with W > 1 the tree is still a tree that a plain backup explains (checked by a
slow pure-Python recomputation over the final tree), free of virtual loss, with no visit
through an illegal move; the virtual loss spreads a step's descents; bad configs are
refused with a clear error."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from search_helpers import (
    NoisyEvaluator,
    PeakedEvaluator,
    illegal_interior_visits,
    late_positions,
    reference_search,
)

from gomoku_jax import agents, search
from gomoku_jax.games.protocol import is_over
from gomoku_jax.search import tree_loop
from gomoku_jax.search.evaluators import UniformEvaluator

SIMS = 16


def assert_same_tree(ours, theirs):
    for name in ("node_visits", "parents", "action_from_parent", "children_index",
                 "children_visits", "raw_values", "node_values", "children_prior_logits",
                 "children_values", "children_rewards", "children_discounts"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name), name)
    for a, b in zip(jax.tree.leaves(ours.embeddings), jax.tree.leaves(theirs.embeddings)):
        np.testing.assert_array_equal(a, b)


def positions():
    return late_positions(7, 4, 4, seed=3)


@functools.lru_cache(maxsize=None)
def searcher(algorithm_name: str, evaluator, given_tree: bool, **fields):
    """(algorithm, fn): its jitted search of SIMS simulations on the late positions,
    `fn(key, tree)` continuing `tree` with `given_tree`, else `fn(key)` from a fresh tree."""
    env, states = positions()
    algorithm = search.make(algorithm_name, **fields)
    if given_tree:
        fn = jax.jit(lambda s, k, t: algorithm.search(env, evaluator, None, s, k, SIMS, tree=t))
    else:
        fn = jax.jit(lambda s, k: algorithm.search(env, evaluator, None, s, k, SIMS))
    return algorithm, functools.partial(fn, states)


@functools.lru_cache(maxsize=None)
def run(algorithm_name: str, evaluator, given_tree: bool = False, **fields):
    """(algorithm, SearchOutput on the host) of a search on the late positions (cached);
    with `given_tree`, continuing an empty tree of 2 S + 1 nodes (a fresh search too)."""
    algorithm, fn = searcher(algorithm_name, evaluator, given_tree, **fields)
    args = (empty_tree(),) if given_tree else ()
    return algorithm, jax.device_get(fn(jax.random.key(5), *args))


def empty_tree():
    env, states = positions()
    return jax.jit(tree_loop.empty_tree, static_argnums=(1, 2))(states, 2 * SIMS + 1,
                                                                 env.num_actions)


# The search of most tests here: PUCT's tree with the virtual loss and its continuation
# (test_the_virtual_loss_spreads_the_descents has why the evaluator is peaked).
PEAKED_W4 = ("puct", PeakedEvaluator(), True)
PEAKED_W4_FIELDS = dict(leaves_per_step=4, dirichlet_fraction=0.0)


def check_tree(env, tree, reused: bool = False):
    """The invariants of a tree built by expansions and plain backups (no virtual loss),
    board by board, against a slow pure-Python recomputation: used nodes 0..U-1, parents
    used and earlier, children_index the inverse of (parents, action_from_parent), one
    child per edge, visits and values the counts and means of the backed-up leaf values
    (each node's own evaluation and every descendant's, discounted up the path), the
    edges' rewards the game's. A node is backed up from once when it is expanded, and again
    at each visit that stopped on it because its game is over (`stop_at_terminal`). With
    `reused` False, the root's visits are the sum of those backups."""
    t = jax.tree.map(np.asarray, tree)
    batch, num_nodes, num_actions = t.children_index.shape
    player = np.asarray(t.embeddings.current_player)
    for b in range(batch):
        visits = t.node_visits[b]
        used = int((visits > 0).sum())
        assert (visits[:used] > 0).all() and (visits[used:] == 0).all()
        parents, afp = t.parents[b], t.action_from_parent[b]
        edges = set()
        for i in range(1, used):
            assert 0 <= parents[i] < i
            assert t.children_index[b, parents[i], afp[i]] == i
            edges.add((int(parents[i]), int(afp[i])))
        assert len(edges) == used - 1  # no two children of one edge
        assert (t.children_index[b, used:] == -1).all()
        child = t.children_index[b, :used]
        assert ((child == -1) | ((child > 0) & (child < used))).all()
        own = visits[:used] - t.children_visits[b, :used].sum(-1)  # backups from the node
        over = is_over(jax.tree.map(lambda x: x[b, :used], t.embeddings))  # NumPy in, out
        assert (own >= 1).all() and (own[~over] == 1).all()
        visited = child >= 0
        np.testing.assert_array_equal(t.children_visits[b, :used][~visited], 0)
        np.testing.assert_array_equal(t.children_rewards[b, :used][~visited], 0)
        np.testing.assert_array_equal(t.children_visits[b, :used][visited],
                                      visits[child[visited]])
        np.testing.assert_allclose(t.children_values[b, :used][visited],
                                   t.node_values[b, child[visited]], rtol=1e-5, atol=1e-5)
        if not reused:
            assert visits[0] == own.sum()

        def returns(n):  # the backed-up values through node n, for n's mover
            out = [float(t.raw_values[b, n])] * int(own[n])
            for a in np.flatnonzero(child[n] >= 0):
                r, d = t.children_rewards[b, n, a], t.children_discounts[b, n, a]
                out += [r + d * v for v in returns(int(child[n, a]))]
            return out

        for n in range(used):
            got = returns(n)
            if not reused:
                assert len(got) == visits[n]
                np.testing.assert_allclose(t.node_values[b, n], np.mean(got), rtol=1e-4,
                                           atol=1e-5)
        # the edges' rewards are the game's for the parent's mover (no virtual loss left in
        # them)
        kids = np.arange(1, used)
        mover = player[b, parents[kids]]
        np.testing.assert_allclose(t.children_rewards[b, parents[kids], afp[kids]],
                                   t.embeddings.rewards[b, kids, mover], atol=1e-6)
    return True


CONFIGS = {
    "puct-peaked-w4": PEAKED_W4 + (PEAKED_W4_FIELDS,),  # a given (empty) tree
    "puct-noisy-w8": ("puct", NoisyEvaluator(), False, dict(leaves_per_step=8, symmetry="none",
                                                            q_transform="parent")),
    "pure_mcts-uniform-w4": ("pure_mcts", UniformEvaluator(), False, dict(leaves_per_step=4)),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_leaf_parallel_trees_are_plain_search_trees(name):
    env, _ = positions()
    algorithm_name, evaluator, given_tree, fields = CONFIGS[name]
    algorithm, out = run(algorithm_name, evaluator, given_tree, **fields)
    assert check_tree(env, out.tree)
    illegal, total = illegal_interior_visits(env, algorithm, out.tree)
    assert illegal == 0 and total > 0
    used = tree_loop.used_nodes(out.tree)
    # most descents find their own leaf (collisions are dropped, never doubled)
    assert (used <= SIMS + 1).all() and int(used.sum()) > 4 * (SIMS + 1) // 2
    assert np.isfinite(out.policy).all() and np.allclose(out.policy.sum(-1), 1.0)


def test_one_leaf_per_step_is_the_loop_as_before():
    """W = 1 with any virtual loss is the default loop, array for array (a reference search
    of search_helpers, which is mctx's loop: tests/search/test_tree_loop.py)."""
    _, _, default = reference_search("puct-peaked-alphazero")
    _, _, one = reference_search("puct-peaked-alphazero", leaves_per_step=1, virtual_loss=3)
    assert_same_tree(one.tree, default.tree)


def test_the_virtual_loss_spreads_the_descents():
    """A peaked evaluator sends every descent down the same line: without the virtual
    loss a step of W = 4 finds one new leaf (the rest collide), with it nearly four."""
    _, spread = run(*PEAKED_W4, **PEAKED_W4_FIELDS)
    _, same = run("puct", PeakedEvaluator(), virtual_loss=0, **PEAKED_W4_FIELDS)
    spread_used, same_used = tree_loop.used_nodes(spread.tree), tree_loop.used_nodes(same.tree)
    np.testing.assert_array_equal(same_used, 1 + SIMS // 4)
    assert int(spread_used.min()) > int(same_used.max())
    assert int(spread_used.sum()) >= 4 * (1 + SIMS * 3 // 4)
    env, _ = positions()
    assert check_tree(env, spread.tree) and check_tree(env, same.tree)


def test_a_leaf_parallel_search_continues_a_given_tree():
    """Two searches of 16 simulations into one tree of 33 nodes: the second continues the
    first (new nodes after the used ones) and the tree stays consistent."""
    env, _ = positions()
    _, fn = searcher(*PEAKED_W4, **PEAKED_W4_FIELDS)
    _, out = run(*PEAKED_W4, **PEAKED_W4_FIELDS)  # the first search (key 5)
    first = out.tree
    second = jax.device_get(fn(jax.random.key(1), first).tree)
    used1, used2 = tree_loop.used_nodes(first), tree_loop.used_nodes(second)
    assert (used2 > used1).all() and (used2 <= 2 * SIMS + 1).all()
    assert check_tree(env, second, reused=True)
    # the first search's nodes are kept as they were linked
    np.testing.assert_array_equal(np.asarray(second.parents)[:, :int(used1.min())],
                                  np.asarray(first.parents)[:, :int(used1.min())])


def test_bad_configs_are_refused():
    env, states = positions()
    with pytest.raises(ValueError, match="multiple of leaves_per_step"):
        jax.eval_shape(lambda: search.make("puct", leaves_per_step=4).search(
            env, UniformEvaluator(), None, states, jax.random.key(0), 6))
    for bad in (0, -1):
        with pytest.raises(ValueError, match="leaves_per_step must be an int >= 1"):
            search.make("puct", leaves_per_step=bad)
    for bad in (True, 2.0):
        with pytest.raises(ValueError, match="field 'leaves_per_step' takes an int"):
            search.make("puct", leaves_per_step=bad)
    with pytest.raises(ValueError, match="virtual_loss must be an int >= 0"):
        search.make("pure_mcts", leaves_per_step=2, virtual_loss=-1)
    with pytest.raises(ValueError, match="needs loop='gomoku_jax'"):
        search.make("puct", loop="mctx", leaves_per_step=2)
    with pytest.raises(ValueError, match="Gumbel search takes leaves_per_step=1 only"):
        search.make("gumbel", leaves_per_step=4)
    with pytest.raises(ValueError, match="Sequential Halving"):
        agents.make("gumbel", leaves_per_step=2)
    with pytest.raises(ValueError, match="must be a multiple of the search's leaves_per_step"):
        agents.make("mcts", num_simulations=10, leaves_per_step=4)
    assert search.make("gumbel", leaves_per_step=1).leaves_per_step == 1


def test_agents_set_leaves_per_step_by_name():
    from gomoku_jax.agents.specs import make_agent
    agent = make_agent("mcts:leaves_per_step=4,num_simulations=16")
    assert agent.search.leaves_per_step == 4 and agent.num_simulations == 16
    assert agents.make("pure_mcts", leaves_per_step=8).search.leaves_per_step == 8
