"""Symmetry augmentation of training samples (seed 001's 8-fold augmentation on Gomoku).

Each sample gets one element of the game's symmetry group at random when a batch is drawn;
the position and the policy target move together (`env.transform_state` and the action
permutation), so (observation, policy) stay aligned. A game without symmetries is left
as it is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gomoku_jax.train.samples import Sample


def transform_sample(env, sample: Sample, g: jax.Array) -> Sample:
    """One sample under the game's symmetry g (int32[])."""
    table = jnp.asarray(env.action_permutations)
    return sample.replace(state=env.transform_state(sample.state, g),
                          policy=jnp.take(sample.policy, table[g], axis=-1))


def augment(env, samples: Sample, key: jax.Array) -> Sample:
    """A batch (leading axis B) with an independent random symmetry per sample."""
    if env.num_symmetries == 1:
        return samples
    batch = samples.value.shape[0]
    g = jax.random.randint(key, (batch,), 0, env.num_symmetries)
    return jax.vmap(lambda s, h: transform_sample(env, s, h))(samples, g)
