"""The optimiser and the compiled SGD loop every training algorithm shares.

    optimizer = make_optimizer(config.optim, total_steps)
    params, stats, opt_state, parts, norm = update(loss_fn, optimizer, params, stats, opt_state)
    carry, aux = sgd_loop(step, carry, key, config.optim, ready)   # K steps in one scan
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import optax

from gomoku_jax.train.config import OptimSection


def make_optimizer(optim: OptimSection, total_steps: int) -> optax.GradientTransformation:
    """AdamW with the configured schedule and optional global-norm clipping."""
    lr = optim.learning_rate
    steps = max(total_steps, 1)
    if optim.schedule == "cosine":
        lr = optax.cosine_decay_schedule(lr, steps)
    elif optim.schedule == "warmup_cosine":
        warm = min(optim.warmup_steps, steps - 1)
        lr = optax.warmup_cosine_decay_schedule(0.0, lr, max(warm, 0), steps)
    adamw = optax.adamw(lr, weight_decay=optim.weight_decay)
    if optim.grad_clip > 0:
        return optax.chain(optax.clip_by_global_norm(optim.grad_clip), adamw)
    return adamw


def update(loss_fn: Callable[[Any, Any], tuple[jax.Array, tuple[Any, Any]]],
           optimizer: optax.GradientTransformation, params: Any, batch_stats: Any,
           opt_state: Any) -> tuple[Any, Any, Any, Any, jax.Array]:
    """One optimiser update on `loss_fn(params, batch_stats) -> (loss, (parts, new
    batch_stats))`: (params, batch_stats, opt_state, the parts before the update, the
    gradient's global norm)."""
    (_, (parts, new_stats)), grads = jax.value_and_grad(loss_fn, has_aux=True)(
        params, batch_stats)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return (optax.apply_updates(params, updates), new_stats, opt_state, parts,
            optax.tree_utils.tree_norm(grads))


def train_when(ready: jax.Array | bool, train, carry: Any) -> tuple[Any, Any]:
    """`train(carry) -> (carry, aux)` when `ready` (bool[], may be traced), else nothing:
    under `lax.cond` the steps are not computed at all while the buffer is still filling,
    the carry comes back unchanged and `aux` as zeros of its shapes."""
    if ready is True:
        return train(carry)

    def skip(c):
        aux = jax.eval_shape(train, c)[1]
        return c, jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), aux)

    return jax.lax.cond(ready, train, skip, carry)


def sgd_loop(step: Callable[[Any, jax.Array], tuple[Any, Any]], carry: Any, key: jax.Array,
             optim: OptimSection, ready: jax.Array | bool = True) -> tuple[Any, Any]:
    """`optim.sgd_steps` calls of `step(carry, key) -> (carry, aux)` in one `lax.scan`
    (unrolled `optim.scan_unroll` steps at a time), each with its own key, while `ready`
    (see `train_when`). Returns (carry, aux stacked over the steps)."""
    def train(c):
        return jax.lax.scan(step, c, jax.random.split(key, optim.sgd_steps),
                            unroll=optim.scan_unroll)

    return train_when(ready, train, carry)
