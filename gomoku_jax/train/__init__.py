"""Training for any game, by training algorithms that are plug-ins: AlphaZero (on-device
self-play, replay, augmentation, optax, orbax, sharding) and GMO (seed 002's value network
over (state, move)), run by one driver.

    from gomoku_jax import train
    config = train.override(train.preset("quick"), ["run.iterations=4"])
    summary = train.train(config, "runs/quick")        # resumable, extendable
    player = gomoku_jax.players.load("runs/quick")     # play it (no training layer needed)

`ALGORITHMS` maps each algorithm's name to its trainer class (its `Config`, the compiled
iteration), `PRESETS` each preset's name to its config, registered as every kind of plug-in
is (`gomoku_jax.plugins`); `gomoku-jax train --algo NAME --preset PRESET` reads them.
"""

from gomoku_jax.train.algorithms import (
    ALGORITHMS,
    DEFAULT_ALGORITHM,
    algorithm,
    load_config,
    preset,
    presets,
    presets_of,
)
from gomoku_jax.train.alphazero.config import AlphaZeroConfig
from gomoku_jax.train.arena import arena_table
from gomoku_jax.train.config import (
    PRESETS,
    RESUMABLE,
    EvalSection,
    OptimSection,
    ReplaySection,
    RunSection,
    TrainingConfig,
    override,
    resumable,
    resumable_changes,
    valid_keys,
)
from gomoku_jax.train.driver import train
from gomoku_jax.train.gmo.config import GMOTrainConfig
from gomoku_jax.train.trainer import Trainer, trainer_for

__all__ = ["ALGORITHMS", "AlphaZeroConfig", "DEFAULT_ALGORITHM", "EvalSection",
           "GMOTrainConfig", "OptimSection", "PRESETS", "RESUMABLE", "ReplaySection",
           "RunSection", "Trainer", "TrainingConfig", "algorithm", "arena_table",
           "load_config", "override", "preset", "presets", "presets_of", "resumable",
           "resumable_changes", "train", "trainer_for", "valid_keys"]
