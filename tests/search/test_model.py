"""The model seam (`search/model.py`): a search algorithm searches any model, not only the
real game. A small fixed random "learned" model (latents, learned-looking dynamics, reward
and value; no rules inside the tree) is searched by PUCT and Gumbel through our loop and
mctx's, with equal trees; the env model is checked against the protocol."""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest
from search_helpers import assert_same_tree

from gomoku_jax import games, search
from gomoku_jax.search.env_model import EnvModel
from gomoku_jax.search.model import Model
from gomoku_jax.search.prior import MASKED

A, D, B, SIMS = 9, 6, 3, 12


@chex.dataclass(frozen=True)
class Observed:
    """What the random model's root starts from: obs float32[B, D], legal bool[B, A],
    moves int32[B]."""

    obs: jax.Array
    legal: jax.Array
    moves: jax.Array


@dataclasses.dataclass(frozen=True)
class RandomDynamics:
    """A fixed random "learned" model: latent float32[D] in [0, 1] (min-max scaled, as
    MuZero's), dynamics latent' = scale(tanh(latent @ W[a])), reward tanh(latent' · r) / 2,
    prior latent' @ P, value tanh(latent' · v). Only the root is masked (by `legal`), and
    every move hands the turn to the other player (discount -1)."""

    num_actions: int = A
    interior_masked: bool = False

    @staticmethod
    def params(seed: int) -> dict:
        k = jax.random.split(jax.random.key(seed), 5)
        return {"h": jax.random.normal(k[0], (D, D)), "g": jax.random.normal(k[1], (A, D, D)),
                "p": 2.0 * jax.random.normal(k[2], (D, A)), "v": jax.random.normal(k[3], (D,)),
                "r": jax.random.normal(k[4], (D,))}

    @staticmethod
    def _scale(x):
        low, high = x.min(-1, keepdims=True), x.max(-1, keepdims=True)
        return (x - low) / jnp.maximum(high - low, 1e-6)

    def _predict(self, params, latent):
        return latent @ params["p"], jnp.tanh(latent @ params["v"])

    def root(self, params, key, states):
        latent = self._scale(jnp.tanh(states.obs @ params["h"]))
        logits, value = self._predict(params, latent)
        logits = jnp.where(states.legal, logits, MASKED)
        return mctx.RootFnOutput(prior_logits=logits, value=value, embedding=latent), \
            states.legal

    def recurrent_fn(self, params, key, action, latent):
        latent = self._scale(jnp.tanh(jnp.einsum("bd,bde->be", latent, params["g"][action])))
        logits, value = self._predict(params, latent)
        return mctx.RecurrentFnOutput(
            reward=0.5 * jnp.tanh(latent @ params["r"]), discount=-jnp.ones(action.shape),
            prior_logits=logits, value=value), latent

    def legal_moves(self, states):
        return states.legal

    def move_number(self, states):
        return states.moves


@pytest.fixture(scope="module")
def observed():
    k_obs, k_legal = jax.random.split(jax.random.key(1))
    legal = jax.random.uniform(k_legal, (B, A)) < 0.6
    legal = legal.at[:, 0].set(True)
    return Observed(obs=jax.random.normal(k_obs, (B, D)), legal=legal,
                    moves=jnp.array([0, 3, 11], jnp.int32))


def _search(algorithm, observed, loop):
    algorithm = dataclasses.replace(algorithm, loop=loop)
    return jax.jit(lambda p, s, k: algorithm.search_model(RandomDynamics(), p, s, k, SIMS))(
        RandomDynamics.params(0), observed, jax.random.key(2))


@pytest.mark.parametrize("name,config", [
    ("puct", {}),  # self-play's: root noise, a sampled move
    ("gumbel", {"gumbel_scale": 1.0, "max_num_considered_actions": 4}),
])
def test_a_learned_model_is_searched_the_same_by_both_loops(name, config, observed):
    """Our loop and `mctx.search` build the same tree on a learned model, and the interior
    is unmasked (a learned model does not know the rules there) while the root is."""
    algorithm = search.make(name, **config)
    ours, theirs = _search(algorithm, observed, "gomoku_jax"), _search(algorithm, observed,
                                                                       "mctx")
    assert_same_tree(ours.tree, theirs.tree)
    np.testing.assert_array_equal(ours.action, theirs.action)
    np.testing.assert_allclose(ours.policy, theirs.policy, rtol=1e-5, atol=1e-6)
    tree = jax.device_get(ours.tree)
    assert (tree.node_visits[:, 0] == SIMS + 1).all()
    legal = np.asarray(observed.legal)
    assert legal[np.arange(B), np.asarray(ours.action)].all()
    assert not (tree.children_visits[:, 0] * ~legal).any()  # the root keeps to its mask
    interior = tree.children_prior_logits[:, 1:][tree.node_visits[:, 1:] > 0]
    assert (interior > MASKED).all()  # no masked child anywhere below it
    assert isinstance(RandomDynamics(), Model)


def test_the_env_model_is_a_model_and_search_is_search_model_over_it():
    """`search(env, evaluator, ...)` is `search_model` over `EnvModel`: the same program
    (jaxpr), so the same trees and speed; compared traced, nothing is compiled."""
    env = games.make("gomoku", board_size=5, win_length=4)
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2))
    evaluator = search.UniformEvaluator()
    for algorithm in (search.make("puct"), search.make("gumbel", sample_plies=2)):
        model = EnvModel(env, evaluator, algorithm, root_mask=states.legal_action_mask)
        assert isinstance(model, Model) and model.num_actions == env.num_actions
        assert model.interior_masked
        direct = jax.make_jaxpr(lambda s, k: algorithm.search(
            env, evaluator, None, s, k, 4, root_mask=s.legal_action_mask))
        via = jax.make_jaxpr(lambda s, k: algorithm.search_model(
            EnvModel(env, evaluator, algorithm, s.legal_action_mask), None, s, k, 4))
        key = jax.random.key(4)
        assert str(direct(states, key)) == str(via(states, key))
    np.testing.assert_array_equal(jax.device_get(model.move_number(states)), [0, 0])


def test_leaf_parallelism_searches_a_learned_model(observed):
    """W = 2 leaves per step on the learned model: every backed-up descent is one root
    visit and one new node, and each node's child visits sum to its visits - 1."""
    algorithm = search.make("puct", leaves_per_step=2, dirichlet_fraction=0.0, greedy=True)
    out = jax.jit(lambda p, s, k: algorithm.search_model(RandomDynamics(), p, s, k, SIMS))(
        RandomDynamics.params(0), observed, jax.random.key(2))
    tree = jax.device_get(out.tree)
    used = (tree.node_visits > 0).sum(axis=1)
    np.testing.assert_array_equal(tree.node_visits[:, 0], used)  # root: 1 + one per node
    assert (used > SIMS // 2).all()
    visited = tree.node_visits > 0
    np.testing.assert_array_equal(tree.children_visits.sum(-1)[visited],
                                  tree.node_visits[visited] - 1)
