"""Dihedral (D4) augmentation of training samples (seed 001's 8-fold augmentation).

Each sample gets one of the 8 symmetries at random when a batch is drawn; the board, the
last moves and the policy target move together, so (observation, policy) stay aligned.
"""

from __future__ import annotations

import jax

from gomoku_jax.game import symmetry
from gomoku_jax.train.samples import Sample


def transform_sample(sample: Sample, g: jax.Array) -> Sample:
    """One sample under symmetry g (int32[] in 0..7)."""
    return sample.replace(state=symmetry.transform_state(sample.state, g),
                          policy=symmetry.transform_policy(sample.policy, g))


def augment(samples: Sample, key: jax.Array) -> Sample:
    """A batch (leading axis B) with an independent random symmetry per sample."""
    batch = samples.value.shape[0]
    g = jax.random.randint(key, (batch,), 0, symmetry.NUM_SYMMETRIES)
    return jax.vmap(transform_sample)(samples, g)
