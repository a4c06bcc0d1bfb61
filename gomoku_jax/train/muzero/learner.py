"""MuZero's training step: the K-step unrolled loss and one optimiser update.

For an example (a window of `samples.Unroll`), h observes the first position, f predicts
its policy and value, and g then steps the latent by each of the K moves played, f
predicting at every step (all in training mode, BatchNorm on the batch's statistics):

    loss = L_0 + (1 / K) · Σ_{k=1..K} L_k
    L_k  = cross-entropy(policy target_k, softmax(f's logits_k)) · in_game_k
           + value_weight · (v_k − z_k)² + reward_weight · (r_k − u_k)²   (no reward at k = 0)

z_k the game's result for the mover of step k (0 past the end), u_k the real reward of
the k-th move. The gradient into every dynamics step's input latent is scaled by
`dynamics_gradient_scale` (the paper's 1/2); weight decay comes from AdamW. The policy's
logits are not masked to the legal moves: below the root the search takes f's prior over
every action, so f learns to put nothing on illegal ones from the zero targets there.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from gomoku_jax.nets.muzero import MuZeroNetwork
from gomoku_jax.train import optim
from gomoku_jax.train.muzero.config import MuZeroSection
from gomoku_jax.train.muzero.samples import Unroll


class LossParts(NamedTuple):
    """Weighted means over a batch (float32[] each), each summed over the unroll as the
    loss is (step 0 at weight 1, the K steps at 1/K each)."""

    loss: jax.Array
    policy_loss: jax.Array
    value_loss: jax.Array
    reward_loss: jax.Array
    policy_entropy: jax.Array  # of the targets: the floor of policy_loss
    value_accuracy: jax.Array  # sign(v_0) == sign(z_0) among decided first positions


def scale_gradient(x: jax.Array, scale: float) -> jax.Array:
    """x in the forward pass; its gradient multiplied by `scale` in the backward one."""
    return x * scale + jax.lax.stop_gradient(x) * (1.0 - scale)


def unroll(network: MuZeroNetwork, params: Any, batch_stats: Any, obs: jax.Array,
           action: jax.Array, gradient_scale: float
           ) -> tuple[tuple[jax.Array, jax.Array, jax.Array], Any]:
    """h, then K steps of g, f at every step, in training mode: ((logits float32[B, K+1,
    A], value float32[B, K+1], reward float32[B, K]), updated batch_stats) from obs
    float32[B, *obs_shape] and action int32[B, K]."""

    def run(net):
        latent = net.representation(obs, train=True)
        logits, value = net.prediction(latent, train=True)
        all_logits, values, rewards = [logits], [value], []
        for k in range(action.shape[1]):
            latent, reward = net.dynamics(scale_gradient(latent, gradient_scale),
                                          action[:, k], train=True)
            logits, value = net.prediction(latent, train=True)
            all_logits.append(logits)
            values.append(value)
            rewards.append(reward)
        return jnp.stack(all_logits, 1), jnp.stack(values, 1), jnp.stack(rewards, 1)

    return network.apply_train(params, batch_stats, run)


def losses(network: MuZeroNetwork, section: MuZeroSection, params: Any, batch_stats: Any,
           obs: jax.Array, batch: Unroll) -> tuple[LossParts, Any]:
    """(LossParts, updated batch_stats) of a batch of windows whose first positions are
    observed as obs float32[B, *obs_shape]."""
    (logits, value, reward), new_stats = unroll(network, params, batch_stats, obs,
                                                batch.action, section.dynamics_gradient_scale)
    k = batch.action.shape[1]
    step = jnp.concatenate([jnp.ones((1,)), jnp.full((k,), 1.0 / k)])  # [K + 1]
    weight = batch.weight[:, None] * step  # [B, K + 1]
    total = jnp.maximum(jnp.sum(batch.weight), 1e-6)
    mean = lambda x, w: jnp.sum(w * x) / total  # noqa: E731

    target = batch.policy
    log_p = jax.nn.log_softmax(logits)
    xent = -jnp.sum(jnp.where(target > 0, target * log_p, 0.0), axis=-1)  # [B, K + 1]
    entropy = -jnp.sum(jnp.where(target > 0, target * jnp.log(jnp.maximum(target, 1e-30)),
                                 0.0), axis=-1)
    policy_weight = weight * batch.in_game
    policy_loss = mean(xent, policy_weight)
    value_loss = mean((value - batch.value) ** 2, weight)
    reward_loss = mean((reward - batch.reward) ** 2, weight[:, 1:])
    decided = batch.weight * (batch.value[:, 0] != 0)
    accuracy = jnp.sum(decided * (jnp.sign(value[:, 0]) == jnp.sign(batch.value[:, 0]))) \
        / jnp.maximum(jnp.sum(decided), 1e-6)
    loss = (policy_loss + section.value_weight * value_loss
            + section.reward_weight * reward_loss)
    parts = LossParts(loss, policy_loss, value_loss, reward_loss,
                      mean(entropy, policy_weight), accuracy)
    return parts, new_stats


def sgd_step(env, network: MuZeroNetwork, section: MuZeroSection,
             optimizer: optax.GradientTransformation, params: Any, batch_stats: Any,
             opt_state: Any, batch: Unroll) -> tuple[Any, Any, Any, LossParts, jax.Array]:
    """One optimiser update on a batch of windows: (params, batch_stats, opt_state,
    LossParts before the update, gradient norm)."""
    obs = jax.vmap(env.observe)(batch.state)

    def loss_fn(p, s):
        parts, stats = losses(network, section, p, s, obs, batch)
        return parts.loss, (parts, stats)

    return optim.update(loss_fn, optimizer, params, batch_stats, opt_state)
