"""AlphaZero's training step: the loss and one optimiser update.

Loss per sample (seed 001): cross-entropy of the network's policy (illegal moves masked
out) against the search policy, plus `value_weight` × (v − z)², averaged with the samples'
weights; weight decay comes from AdamW (decoupled, optax).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from gomoku_jax.nets.resnet import PolicyValueModel
from gomoku_jax.train import optim

_NEG = -1e9


class LossParts(NamedTuple):
    """Weighted means over a batch (float32[] each)."""

    loss: jax.Array
    policy_loss: jax.Array
    value_loss: jax.Array
    policy_entropy: jax.Array  # of the targets: the floor of policy_loss
    value_accuracy: jax.Array  # sign(v) == sign(z) among decided targets


def losses(model: PolicyValueModel, params: Any, batch_stats: Any, obs: jax.Array,
           legal: jax.Array, policy: jax.Array, value: jax.Array, weight: jax.Array,
           value_weight: jax.Array, value_coef: float) -> tuple[LossParts, Any]:
    """(LossParts, updated batch_stats) of a batch: obs float32[B, *obs], legal bool[B, A],
    policy float32[B, A], value / weight / value_weight float32[B]."""
    (logits, v), new_stats = model.apply_train(params, batch_stats, obs)
    log_p = jax.nn.log_softmax(jnp.where(legal, logits, _NEG))
    xent = -jnp.sum(jnp.where(policy > 0, policy * log_p, 0.0), axis=-1)
    entropy = -jnp.sum(jnp.where(policy > 0, policy * jnp.log(jnp.maximum(policy, 1e-30)),
                                 0.0), axis=-1)
    sq = (v - value) ** 2
    total = jnp.maximum(jnp.sum(weight), 1e-6)
    vw = weight * value_weight
    v_total = jnp.maximum(jnp.sum(vw), 1e-6)
    policy_loss = jnp.sum(weight * xent) / total
    value_loss = jnp.sum(vw * sq) / v_total
    decided = vw * (value != 0)
    accuracy = jnp.sum(decided * (jnp.sign(v) == jnp.sign(value))) / jnp.maximum(
        jnp.sum(decided), 1e-6)
    parts = LossParts(policy_loss + value_coef * value_loss, policy_loss, value_loss,
                      jnp.sum(weight * entropy) / total, accuracy)
    return parts, new_stats


def batch_inputs(env, samples) -> tuple[jax.Array, jax.Array]:
    """(obs float32[B, *obs_shape], legal bool[B, A]) of a batch of `Sample`s."""
    return jax.vmap(env.observe)(samples.state), samples.state.legal_action_mask


def sgd_step(env, model: PolicyValueModel, optimizer: optax.GradientTransformation,
             value_coef: float, params: Any, batch_stats: Any, opt_state: Any, samples
             ) -> tuple[Any, Any, Any, LossParts, jax.Array]:
    """One optimiser update on a batch of samples:
    (params, batch_stats, opt_state, LossParts before the update, gradient norm)."""
    obs, legal = batch_inputs(env, samples)

    def loss_fn(p, s):
        parts, stats = losses(model, p, s, obs, legal, samples.policy, samples.value,
                              samples.weight, samples.value_weight, value_coef)
        return parts.loss, (parts, stats)

    return optim.update(loss_fn, optimizer, params, batch_stats, opt_state)
