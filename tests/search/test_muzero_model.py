"""The MuZero model (`search/muzero_model.py`): a tiny randomly initialised MuZero network
(`muzero_helpers`) on 5×5 Gomoku (four in a row) searched by PUCT (MuZero) and Gumbel
(Gumbel MuZero) through our loop and mctx's, with equal trees; the root keeps to its
shaped candidates, the interior searches every action on latents, the discount is the
two-player one."""

from __future__ import annotations

import dataclasses
import functools

import jax
import numpy as np
import pytest
from muzero_helpers import tiny_muzero
from search_helpers import assert_same_tree, stack

from gomoku_jax import search
from gomoku_jax.search.model import Model
from gomoku_jax.search.muzero_model import MuZeroModel
from gomoku_jax.search.prior import MASKED, candidates

SIMS = 8
# PUCT for play (no root noise: test_model.py searches a learned model with it) with hard
# shaping, the root's candidates the cells next to a stone; Gumbel with soft shaping and a
# discount.
ALGORITHMS = {
    "puct": search.make("puct", prior_shaping="hard", candidate_threshold=0.6).for_play(),
    "gumbel": search.make("gumbel", max_num_considered_actions=4, value_discount=0.9),
}


@functools.lru_cache(maxsize=None)
def searched():
    """(env, network, variables, states [2], {name: {loop: SearchOutput on the host,
    "allowed": the root's candidates bool[2, A] under the algorithm's shaping}, "latent":
    h's latents of the states}): every search of the module in one compiled program (a
    params pytree through `search_model`)."""
    env, network, variables = tiny_muzero()
    states = stack([env.from_moves([0, 1, 5, 2, 10]), env.from_moves([0, 24, 6, 18, 12, 3])])

    @jax.jit
    def run(params, states, key):
        out = {"latent": network.represent(params, jax.vmap(env.observe)(states))}
        for name, algorithm in ALGORITHMS.items():
            out[name] = {"allowed": candidates(env, algorithm.prior_shaping,
                                               algorithm.candidate_threshold, states)[0]}
            for loop in ("gomoku_jax", "mctx"):
                algorithm = dataclasses.replace(algorithm, loop=loop)
                model = MuZeroModel(env, network, algorithm)
                out[name][loop] = algorithm.search_model(
                    model, params, states, key, SIMS)
        return out

    return env, network, variables, states, jax.device_get(run(variables, states,
                                                               jax.random.key(3)))


def test_the_muzero_model_is_a_model():
    env, network, _, states, _ = searched()
    model = MuZeroModel(env, network, ALGORITHMS["puct"])
    assert isinstance(model, Model) and isinstance(model, search.MuZeroModel)
    assert model.num_actions == 25 and not model.interior_masked
    assert hash(model) == hash(MuZeroModel(env, network, ALGORITHMS["puct"]))  # a jit static
    np.testing.assert_array_equal(model.legal_moves(states), states.legal_action_mask)
    np.testing.assert_array_equal(model.move_number(states), [5, 6])


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_both_loops_build_the_same_tree_on_it(name):
    out = searched()[-1][name]
    ours, theirs = out["gomoku_jax"], out["mctx"]
    assert_same_tree(ours.tree, theirs.tree)
    np.testing.assert_array_equal(ours.action, theirs.action)
    np.testing.assert_allclose(ours.policy, theirs.policy, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_the_root_is_the_real_game_and_the_interior_is_learned(name):
    env, network, variables, states, outputs = searched()
    algorithm, tree = ALGORITHMS[name], outputs[name]["gomoku_jax"].tree
    action = outputs[name]["gomoku_jax"].action
    allowed = outputs[name]["allowed"]
    legal = np.asarray(states.legal_action_mask)
    assert (allowed <= legal).all()
    if algorithm.prior_shaping == "hard":  # the cells next to the stones only
        assert (allowed.sum(-1) < legal.sum(-1)).all() and allowed.sum(-1)[0] == 7
    assert (tree.node_visits[:, 0] == SIMS + 1).all()
    # The root: the prior masked exactly off the candidates, no visit or move outside them.
    np.testing.assert_array_equal(tree.children_prior_logits[:, 0] > MASKED, allowed)
    assert not (tree.children_visits[:, 0] * ~allowed).any()
    assert allowed[np.arange(2), action].all()
    # Below it: latents (h's at the root), unmasked priors, the learned rewards, and the
    # discount -value_discount on every expanded edge.
    latent = tree.embeddings
    assert latent.shape == (2, SIMS + 1, 5, 5, 6) and latent.dtype == np.float32
    np.testing.assert_allclose(latent[:, 0], outputs["latent"], rtol=1e-5, atol=1e-6)
    interior = tree.node_visits[:, 1:] > 0
    assert interior.sum() >= 2 * (SIMS - 1)  # every simulation expanded a node
    assert (tree.children_prior_logits[:, 1:][interior] > MASKED).all()
    expanded = tree.children_index != -1
    np.testing.assert_allclose(tree.children_discounts[expanded], -algorithm.value_discount)
    rewards = tree.children_rewards[expanded]
    assert (np.abs(rewards) <= 1).all() and (rewards != 0).any()
