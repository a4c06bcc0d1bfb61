"""Symmetry augmentation of training samples (seed 001's 8-fold augmentation on Gomoku).

Each sample gets one element of the game's symmetry group at random when a batch is drawn;
the position, the policy target and the move played move together (`env.transform_state`,
the action permutation and `symmetry.transform_action`), so (observation, policy, move)
stay aligned; a sample without a move (`NO_ACTION`) keeps it. A game without symmetries is
left as it is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gomoku_jax.games.symmetry import transform_action
from gomoku_jax.train.samples import NO_ACTION, Sample


def transform_sample(env, sample: Sample, g: jax.Array) -> Sample:
    """One sample under the game's symmetry g (int32[])."""
    table = jnp.asarray(env.action_permutations)
    played = sample.action >= 0
    action = transform_action(env, jnp.where(played, sample.action, 0), g).astype(jnp.int32)
    return sample.replace(state=env.transform_state(sample.state, g),
                          policy=jnp.take(sample.policy, table[g], axis=-1),
                          action=jnp.where(played, action, NO_ACTION))


def augment(env, samples: Sample, key: jax.Array) -> Sample:
    """A batch (leading axis B) with an independent random symmetry per sample."""
    if env.num_symmetries == 1:
        return samples
    batch = samples.value.shape[0]
    g = jax.random.randint(key, (batch,), 0, env.num_symmetries)
    return jax.vmap(lambda s, h: transform_sample(env, s, h))(samples, g)
