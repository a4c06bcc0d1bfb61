"""No search ever visits a child that was illegal (or hard-masked) in its node's state, at any
depth (mctx masks only the root), for every algorithm and Q transform, and a root mask
keeps the root to its moves.

The searches are the reference searches of search_helpers (also checked against mctx's
loop in test_tree_loop.py): in their lost positions the unvisited children, illegal ones
included, look best to an unmasked selection (the control below)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest
from search_helpers import (
    REFERENCE,
    REFERENCE_SIMS,
    candidates_fn,
    illegal_interior_visits,
    reference_positions,
    reference_search,
)

from gomoku_jax import search
from gomoku_jax.search import puct, selection

# Each reference config with mctx's semantics at a game-over node (test_tree_loop.py's
# trees), and PUCT's with the algorithms' default, `stop_at_terminal`.
SEARCHES = [(name, {}) for name in REFERENCE] + [("puct-peaked-alphazero",
                                                  {"stop_at_terminal": True})]


@pytest.mark.parametrize("name, changes", SEARCHES,
                         ids=[n + ("-stop" if c else "") for n, c in SEARCHES])
def test_no_visits_on_illegal_or_masked_children_below_the_root(name, changes):
    algorithm, _, out = reference_search(name, **changes)
    env, _ = reference_positions()
    bad, searched = illegal_interior_visits(env, algorithm, out.tree)
    assert searched > 16 * 8  # the trees went deeper than the roots
    assert bad == 0, f"{bad} of {searched} child visits on illegal or masked moves"


def test_mctx_selection_would_visit_illegal_children(monkeypatch):
    """The control: with mctx's own PUCT selection (which masks the root only) the same
    search walks into occupied cells, so the test above would catch the defect."""

    def unmasked(rng_key, tree, node_index, depth, *, pb_c_init, pb_c_base, qtransform):
        return mctx.muzero_action_selection(rng_key, tree, node_index, depth,
                                            pb_c_init=pb_c_init, pb_c_base=pb_c_base,
                                            qtransform=qtransform)

    monkeypatch.setattr(selection, "puct_selection", unmasked)
    _, evaluator, fields = REFERENCE["puct-peaked-alphazero"]
    algorithm = search.make("puct", **fields)
    env, states = reference_positions()
    out = jax.jit(lambda s, k: algorithm.search(env, evaluator, None, s, k, REFERENCE_SIMS))(
        states, jax.random.key(7))
    bad, searched = illegal_interior_visits(env, algorithm, out.tree)
    assert bad > searched // 10


@functools.lru_cache(maxsize=None)
def _selections(q_transform: str):
    """(ours, mctx's) PUCT selection at every node of a batch of trees (int32[B, N])."""
    def at_every_node(select):
        def one(key, tree):
            nodes = jnp.arange(tree.node_visits.shape[0])
            keys = jax.random.split(key, nodes.shape[0])
            return jax.vmap(lambda k, n: select(k, tree, n, 1))(keys, nodes)
        return jax.vmap(one)

    kwargs = dict(pb_c_init=1.25, pb_c_base=19652.0, qtransform=puct.qtransform(q_transform))
    ours = functools.partial(selection.puct_selection, **kwargs)
    theirs = functools.partial(mctx.muzero_action_selection, **kwargs)
    return jax.jit(lambda keys, tree: (at_every_node(ours)(keys, tree),
                                       at_every_node(theirs)(keys, tree)))


@pytest.mark.parametrize("q_transform", puct.Q_TRANSFORMS)
def test_puct_selection_never_picks_a_masked_child_with_any_q_transform(q_transform):
    """PUCT's selection with each Q transform at every live expanded node of the reference
    trees (their real statistics) picks a child that is legal and not hard-masked in that
    node's state. The control, with seed 001's Q (unvisited children at 0): mctx's
    selection picks masked children at these nodes."""
    env, _ = reference_positions()
    for name in ("puct-noisy-min_max-hard", "puct-peaked-alphazero"):
        algorithm, _, out = reference_search(name)
        tree = out.tree
        keys = jax.random.split(jax.random.key(0), tree.node_visits.shape[0])
        ours, theirs = map(np.asarray, _selections(q_transform)(keys, tree))
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
        _, mask, out = reference_search(name)
        visits = np.asarray(out.tree.children_visits[:, 0])
        action = np.asarray(out.action)
        for b in range(3):  # two candidates each
            assert mask[b].sum() == 2
            assert visits[b][~mask[b]].sum() == 0 and visits[b][mask[b]].sum() > 0, name
            assert mask[b, action[b]]
        assert legal[3, action[3]] and visits[3].sum() > 0
