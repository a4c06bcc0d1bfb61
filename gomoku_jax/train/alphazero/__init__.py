"""AlphaZero training (seed 001): on-device self-play with any search algorithm, a replay
buffer, symmetry augmentation and a policy-value ResNet trained with optax, one compiled
iteration, sharded over a device mesh."""

from gomoku_jax.train.alphazero.config import AlphaZeroConfig, SelfPlaySection
from gomoku_jax.train.alphazero.samples import Sample

__all__ = ["AlphaZeroConfig", "Sample", "SelfPlaySection"]
