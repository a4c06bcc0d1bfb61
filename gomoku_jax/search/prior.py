"""Evaluation inside the search: the game's symmetries around the evaluator, and the prior
shaped by the game's candidate weights with every non-candidate masked.

A masked action's prior logit is `MASKED` (float32 min, not -inf: a softmax over a row
that is all masked stays finite); the selection functions (`selection.py`) read that
sentinel to never pick a masked child at any depth.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.games.symmetry import inverse_permutations

MASKED = float(np.finfo(np.float32).min)


def _take_rows(values: jax.Array, table: np.ndarray, g: jax.Array) -> jax.Array:
    """values [B, A] -> values[b, table[g[b]]] (a per-row gather)."""
    return jnp.take_along_axis(values, jnp.asarray(table)[g], axis=-1)


def evaluate(env, evaluator, mode: str, params: Any, states: Any, key: jax.Array
             ) -> tuple[jax.Array, jax.Array]:
    """(logits float32[B, A], value float32[B]) of a batch of states, evaluated as `mode`
    says: "random" (one random element of the game's symmetry group per state, the policy
    mapped back), "average" (the mean policy and value over the whole group) or "none"."""
    batch = states.legal_action_mask.shape[0]
    count = env.num_symmetries
    if mode == "none" or count == 1:
        return evaluator(env, params, states, key)
    inverse = inverse_permutations(env.action_permutations)
    transform = jax.vmap(env.transform_state)
    k_g, k_eval = jax.random.split(key)
    if mode == "random":
        g = jax.random.randint(k_g, (batch,), 0, count)
        logits, value = evaluator(env, params, transform(states, g), k_eval)
        return _take_rows(logits, inverse, g), value
    probs, values = 0.0, 0.0
    for g in range(count):
        gs = jnp.full((batch,), g)
        logits, value = evaluator(env, params, transform(states, gs),
                                  jax.random.fold_in(k_eval, g))
        probs = probs + jax.nn.softmax(_take_rows(logits, inverse, gs))
        values = values + value
    return jnp.log(probs / count + 1e-30), values / count


def candidates(env, shaping: str, threshold: float, states: Any
               ) -> tuple[jax.Array, jax.Array]:
    """(candidates bool[B, A], weights float32[B, A]): the legal moves, minus those whose
    candidate weight is under `threshold` when `shaping` is "hard" (all legal moves if that
    would leave none); the game's candidate weights."""
    legal = states.legal_action_mask
    if shaping == "off":
        return legal, jnp.ones(legal.shape, jnp.float32)
    weights = jax.vmap(env.candidate_weights)(states)
    if shaping != "hard":
        return legal, weights
    kept = legal & (weights >= threshold)
    return jnp.where(jnp.any(kept, axis=-1, keepdims=True), kept, legal), weights


def shape_prior(env, algorithm, logits: jax.Array, states: Any
                ) -> tuple[jax.Array, jax.Array]:
    """(logits with non-candidates at MASKED and, under "soft" shaping, the candidate
    weights multiplied into the prior; candidates bool[B, A])."""
    allowed, weights = candidates(env, algorithm.prior_shaping, algorithm.candidate_threshold,
                                  states)
    if algorithm.prior_shaping == "soft":
        logits = logits + jnp.log(jnp.maximum(weights, 1e-6))
    return jnp.where(allowed, logits, MASKED), allowed
