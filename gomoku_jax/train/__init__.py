"""AlphaZero training for any game: on-device self-play, replay, augmentation, optax, orbax,
sharding.

    from gomoku_jax.train import preset, train
    summary = train(preset("quick"), "runs/quick")
"""

from gomoku_jax.train.alphazero import AlphaZero, TrainState, make_mesh, make_model
from gomoku_jax.train.checkpoint import load_network
from gomoku_jax.train.config import TrainConfig, override

from gomoku_jax.train.presets import PRESETS, preset
from gomoku_jax.train.samples import Sample

__all__ = ["AlphaZero", "PRESETS", "Sample", "TrainConfig", "TrainState", "load_network",
           "make_mesh", "make_model", "override", "preset"]
