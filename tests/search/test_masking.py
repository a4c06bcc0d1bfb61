"""No search ever visits a child that was illegal (or hard-masked) in its node's state, at any
depth (mctx masks only the root), for every algorithm and Q transform, and a root mask
keeps the root to its moves.

The searches are the reference searches of search_helpers, all in one compiled program
(reference_trees.py; also checked against mctx's loop in test_tree_loop.py): in their lost
positions the unvisited children, illegal ones included, look best to an unmasked
selection (the control below)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest
from reference_trees import reference_trees
from search_helpers import (
    REFERENCE,
    candidates_fn,
    illegal_interior_visits,
    reference_positions,
)

from gomoku_jax.search import puct, selection

# Each reference config with mctx's semantics at a game-over node (test_tree_loop.py's
# trees), and PUCT's with the algorithms' default, `stop_at_terminal`.
SEARCHES = [(name, "ours") for name in REFERENCE] + [("puct-peaked-alphazero", "stop")]


@pytest.mark.parametrize("name, variant", SEARCHES,
                         ids=[n + ("-stop" if v == "stop" else "") for n, v in SEARCHES])
def test_no_visits_on_illegal_or_masked_children_below_the_root(name, variant):
    algorithm, _, out = reference_trees()[name, variant]
    env, _ = reference_positions()
    bad, searched = illegal_interior_visits(env, algorithm, out.tree)
    assert searched > 16 * 8  # the trees went deeper than the roots
    assert bad == 0, f"{bad} of {searched} child visits on illegal or masked moves"


def test_mctx_selection_would_visit_illegal_children():
    """The control: with mctx's own PUCT selection (which masks the root only) the same
    search walks into occupied cells, so the test above would catch the defect."""
    algorithm, _, out = reference_trees()["puct-peaked-alphazero", "unmasked"]
    env, _ = reference_positions()
    bad, searched = illegal_interior_visits(env, algorithm, out.tree)
    assert bad > searched // 10


def _at_every_node(select, keys, trees):
    """select(key, tree, node, depth 1) at every node of a batch of trees: int32[B, N]."""
    def one(key, tree):
        nodes = jnp.arange(tree.node_visits.shape[0])
        node_keys = jax.random.split(key, nodes.shape[0])
        return jax.vmap(lambda k, n: select(k, tree, n, 1))(node_keys, nodes)
    return jax.vmap(one)(keys, trees)


@jax.jit
def _selections(keys, trees) -> dict:
    """{q_transform: (ours, mctx's) PUCT selection at every node int32[B, N]}: every Q
    transform in one compiled program (the same program for both trees searched below:
    they have the same shapes)."""
    out = {}
    for q_transform in puct.Q_TRANSFORMS:
        kwargs = dict(pb_c_init=1.25, pb_c_base=19652.0, qtransform=puct.qtransform(q_transform))
        out[q_transform] = tuple(
            _at_every_node(functools.partial(select, **kwargs), keys, trees)
            for select in (selection.puct_selection, mctx.muzero_action_selection))
    return out


@functools.lru_cache(maxsize=None)
def selections(name: str) -> dict:
    """`_selections` on the tree of `reference_trees()[name, "ours"]` (on the host)."""
    tree = reference_trees()[name, "ours"][2].tree
    keys = jax.random.split(jax.random.key(0), tree.node_visits.shape[0])
    return jax.device_get(_selections(keys, tree))


@pytest.mark.parametrize("q_transform", puct.Q_TRANSFORMS)
def test_puct_selection_never_picks_a_masked_child_with_any_q_transform(q_transform):
    """PUCT's selection with each Q transform at every live expanded node of the reference
    trees (their real statistics) picks a child that is legal and not hard-masked in that
    node's state. The control, with seed 001's Q (unvisited children at 0): mctx's
    selection picks masked children at these nodes."""
    env, _ = reference_positions()
    for name in ("puct-noisy-min_max-hard", "puct-peaked-alphazero"):
        algorithm, _, out = reference_trees()[name, "ours"]
        tree = out.tree
        ours, theirs = map(np.asarray, selections(name)[q_transform])
        states = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), tree.embeddings)
        allowed = candidates_fn(env, algorithm.prior_shaping,
                                algorithm.candidate_threshold)(states)
        allowed = np.asarray(allowed).reshape(tree.children_visits.shape)
        live = (tree.node_visits > 0) & ~np.asarray(states.terminated).reshape(
            tree.node_visits.shape)
        b, n = np.nonzero(live)
        assert len(b) > 16 * 8
        assert allowed[b, n, ours[b, n]].all()
        if name == "puct-peaked-alphazero" and q_transform == "alphazero":
            assert (~allowed[b, n, theirs[b, n]]).sum() > len(b) // 20  # the control


def test_root_mask_restricts_the_root():
    """`root_mask` keeps the root to its moves (where it leaves any), for every algorithm:
    no visit and no move outside it; a board whose mask meets no candidate keeps all of
    them."""
    _, states = reference_positions()
    legal = np.asarray(states.legal_action_mask)
    for name in REFERENCE:
        _, mask, out = reference_trees()[name, "ours"]
        visits = np.asarray(out.tree.children_visits[:, 0])
        action = np.asarray(out.action)
        for b in range(3):  # two candidates each
            assert mask[b].sum() == 2
            assert visits[b][~mask[b]].sum() == 0 and visits[b][mask[b]].sum() > 0, name
            assert mask[b, action[b]]
        assert legal[3, action[3]] and visits[3].sum() > 0
