"""A FIFO replay buffer of device arrays, filled with masked writes and sampled uniformly.

    buffer = replay.init(example_sample, capacity)       # zeros, size 0
    buffer = replay.add(buffer, samples, valid)           # [M] samples, bool[M] valid
    batch = replay.sample(buffer, key, batch_size)        # uniform over the filled part

Everything is a pure function of arrays with static shapes (jit, scan and sharding work):
`add` writes the valid samples in order at the write position, wrapping around, and drops
the invalid ones; when more than `capacity` valid samples arrive at once, only the last
`capacity` are kept (the FIFO rule).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class Replay:
    """data: samples (any pytree dataclass with a `value`, e.g. AlphaZero's `Sample`),
    leaves [capacity, ...]; size int32[]: how many are filled;
    position int32[]: the next write index; added int32[]: samples ever added."""

    data: Any
    size: jax.Array
    position: jax.Array
    added: jax.Array

    @property
    def capacity(self) -> int:
        return self.data.value.shape[0]


def init(example: Any, capacity: int) -> Replay:
    """An empty buffer for samples shaped like `example` (one unbatched sample)."""
    data = jax.tree.map(lambda x: jnp.zeros((capacity,) + jnp.shape(x), jnp.asarray(x).dtype),
                        example)
    zero = jnp.zeros((), jnp.int32)
    return Replay(data, zero, zero, zero)


def add(buffer: Replay, samples: Any, valid: jax.Array) -> Replay:
    """`buffer` with the `valid` ones of `samples` (leaves [M, ...], valid bool[M]) appended."""
    capacity = buffer.capacity
    m = valid.shape[0]
    # Valid samples first, in their order: a stable sort on the invalid flag.
    order = jnp.argsort(~valid, stable=True)
    ordered = jax.tree.map(lambda x: x[order], samples)
    count = jnp.sum(valid).astype(jnp.int32)
    i = jnp.arange(m, dtype=jnp.int32)
    keep = (i < count) & (i >= count - capacity)
    index = jnp.where(keep, (buffer.position + i - jnp.maximum(count - capacity, 0)) % capacity,
                      capacity)  # out of range: dropped by the scatter
    data = jax.tree.map(lambda d, x: d.at[index].set(x, mode="drop"), buffer.data, ordered)
    written = jnp.minimum(count, capacity)
    return Replay(data, jnp.minimum(buffer.size + written, capacity),
                  (buffer.position + written) % capacity, buffer.added + count)


def sample(buffer: Replay, key: jax.Array, batch_size: int) -> Any:
    """`batch_size` samples drawn uniformly, with replacement, from the filled part (weight 0
    everywhere when the buffer is empty)."""
    index = jax.random.randint(key, (batch_size,), 0, jnp.maximum(buffer.size, 1))
    batch = jax.tree.map(lambda x: x[index], buffer.data)
    return batch.replace(weight=batch.weight * (buffer.size > 0))
