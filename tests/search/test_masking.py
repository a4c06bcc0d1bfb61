"""No search ever visits a child that was illegal (or hard-masked) in its node's state, at any
depth (mctx masks only the root), for every Q transform and algorithm."""

from __future__ import annotations

import jax
import mctx
import pytest
from search_helpers import PeakedEvaluator, illegal_interior_visits, late_positions

from gomoku_jax import search
from gomoku_jax.search import selection

# Root noise is on in the first config only: the masking is below the root, and
# compiling the Dirichlet draw costs about a second per search.
QUIET = dict(dirichlet_fraction=0.0)
CONFIGS = {
    "puct-alphazero": ("puct", dict(q_transform="alphazero")),
    "puct-parent": ("puct", dict(q_transform="parent", **QUIET)),
    "puct-parent_and_siblings": ("puct", dict(q_transform="parent_and_siblings", **QUIET)),
    "puct-min_max": ("puct", dict(q_transform="min_max", **QUIET)),
    "puct-hard-shaping": ("puct", dict(prior_shaping="hard", candidate_threshold=0.5,
                                       **QUIET)),
    "gumbel": ("gumbel", dict()),
    "pure_mcts": ("pure_mcts", dict()),
}


def run(name, algorithm, simulations=64):
    env, states = late_positions(7, 4, 16, seed=0)
    out = jax.jit(lambda s, k: algorithm.search(env, PeakedEvaluator(), None, s, k,
                                                simulations))(states, jax.random.key(1))
    return illegal_interior_visits(env, algorithm, out.tree)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_no_visits_on_illegal_or_masked_children_below_the_root(name):
    algorithm_name, fields = CONFIGS[name]
    algorithm = search.make(algorithm_name, symmetry="none", **fields)
    bad, searched = run(name, algorithm)
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
    bad, searched = run("control", search.make("puct", symmetry="none", dirichlet_fraction=0.1))
    assert bad > searched // 10


@pytest.mark.parametrize("name", ["puct", "gumbel", "pure_mcts"])
def test_root_mask_restricts_the_root(name):
    """`root_mask` keeps the root to its moves (where it leaves any): no visit and no move
    outside it; a board whose mask meets no candidate keeps all of them."""
    import jax.numpy as jnp
    import numpy as np
    env, states = late_positions(7, 4, 4, seed=1)
    legal = np.asarray(states.legal_action_mask)
    mask = np.zeros_like(legal)
    for b in range(3):  # boards 0-2: two legal cells each; board 3: no overlap at all
        mask[b, np.flatnonzero(legal[b])[:2]] = True
    mask[3] = ~legal[3]
    algorithm = search.make(name, symmetry="none", **({"dirichlet_fraction": 0.0}
                                                      if name == "puct" else {}))
    out = jax.jit(lambda s, k, m: algorithm.search(env, PeakedEvaluator(), None, s, k, 16,
                                                   root_mask=m))(
        states, jax.random.key(2), jnp.asarray(mask))
    visits = np.asarray(out.tree.children_visits[:, 0])
    action = np.asarray(out.action)
    for b in range(3):
        assert visits[b][~mask[b]].sum() == 0 and visits[b][mask[b]].sum() > 0
        assert mask[b, action[b]]
    assert legal[3, action[3]] and visits[3].sum() > 0
