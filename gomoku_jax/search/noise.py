"""Root exploration noise: Dirichlet noise over the candidate moves only (seed 001).

mctx's own `muzero_policy` draws its noise over all A actions before masking, which dilutes
it when few actions are candidates (with 30 of 225 the prior moves about 6x less); the noise
here is drawn over the candidates, with the seed's adaptive α = (A / legal) × α0.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gomoku_jax.search.prior import MASKED


def dirichlet_alpha(legal: jax.Array, alpha: float, adaptive: bool) -> jax.Array:
    """float32[B]: α = (A / legal moves) × α0 when adaptive, else α0; legal bool[B, A]."""
    count = jnp.sum(legal, axis=-1).astype(jnp.float32)
    if not adaptive:
        return jnp.full(count.shape, alpha, jnp.float32)
    return legal.shape[-1] / jnp.maximum(count, 1.0) * alpha


def add_root_noise(logits: jax.Array, candidates: jax.Array, alpha: jax.Array,
                   fraction: float, key: jax.Array) -> jax.Array:
    """Mix Dir(α) noise drawn over the candidate moves only into the prior:
    `(1 - ε) · softmax(logits) + ε · η`, returned as logits (non-candidates at MASKED).

    Args:
      logits, candidates: [B, A]; alpha float32[B]; fraction ε; key consumed.
    """
    gamma = jax.random.gamma(key, jnp.broadcast_to(alpha[:, None], logits.shape))
    gamma = jnp.where(candidates, gamma, 0.0)
    noise = gamma / jnp.maximum(jnp.sum(gamma, axis=-1, keepdims=True), 1e-30)
    prior = (1.0 - fraction) * jax.nn.softmax(jnp.where(candidates, logits, MASKED)) \
        + fraction * noise
    return jnp.where(candidates, jnp.log(jnp.maximum(prior, 1e-30)), MASKED)
