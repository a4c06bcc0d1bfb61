"""Symmetry augmentation of training samples, for every training algorithm (seed 001's
8-fold augmentation on Gomoku).

A sample is any pytree dataclass with a `state` and a `value` (the batch axis), and
optionally a `policy` (float32[A] over the actions) and an `action` (int32[], the move played
from the position, `NO_ACTION` for none). Each sample gets one element of the game's symmetry
group at random when a batch is drawn; the position, the policy and the move move together
(`env.transform_state`, the action permutation and `symmetry.transform_action`), so
(observation, policy, move) stay aligned. A game without symmetries is left as it is.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from gomoku_jax.games.symmetry import transform_action

NO_ACTION = -1  # a sample's `action` where no move was played from the position


def transform_sample(env, sample: Any, g: jax.Array) -> Any:
    """One sample under the game's symmetry g (int32[])."""
    changes = {"state": env.transform_state(sample.state, g)}
    if hasattr(sample, "policy"):
        table = jnp.asarray(env.action_permutations)
        changes["policy"] = jnp.take(sample.policy, table[g], axis=-1)
    if hasattr(sample, "action"):
        played = sample.action >= 0
        moved = transform_action(env, jnp.where(played, sample.action, 0), g)
        changes["action"] = jnp.where(played, moved, NO_ACTION).astype(jnp.int32)
    return sample.replace(**changes)


def augment(env, samples: Any, key: jax.Array) -> Any:
    """A batch (leading axis B) with an independent random symmetry per sample."""
    if env.num_symmetries == 1:
        return samples
    g = jax.random.randint(key, samples.value.shape, 0, env.num_symmetries)
    return jax.vmap(lambda s, h: transform_sample(env, s, h))(samples, g)
