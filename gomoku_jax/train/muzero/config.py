"""The MuZero run's configuration (`gomoku-jax train --algo muzero`).

A `MuZeroConfig` has AlphaZero's sections with MuZero's network in `net` (the sizes of the
representation, dynamics and prediction networks, `nets.muzero.MuZeroNetConfig`) and one
section of its own, `muzero`: the unroll length and the loss weights. Self-play searches
the learned model with the `search` section's algorithm (`puct`: MuZero; `gumbel`: Gumbel
MuZero). Presets are in `presets.py`.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from gomoku_jax.configs import NonNegativeFloat, PositiveInt, UnitFloat
from gomoku_jax.nets.muzero import MUZERO_NET_PRESETS, MuZeroNetConfig
from gomoku_jax.search.base import SearchAlgorithm
from gomoku_jax.search.puct import PUCT
from gomoku_jax.train import config as shared
from gomoku_jax.train.alphazero.config import EvalSection, SelfPlaySection


@dataclasses.dataclass(frozen=True)
class MuZeroSection(shared.Section):
    """The unrolled loss (the paper's board-game settings are the defaults).

    Attributes:
      unroll_steps: K, the dynamics steps each training example unrolls (the paper: 5).
      value_weight: the value loss's weight (squared error to the game's result).
      reward_weight: the reward loss's weight (squared error to the real reward).
      dynamics_gradient_scale: the gradient into each dynamics step's input latent is
        multiplied by this (the paper: 1/2), so the representation's gradient does not
        grow with K.
    """

    unroll_steps: PositiveInt = 5
    value_weight: NonNegativeFloat = 1.0
    reward_weight: NonNegativeFloat = 1.0
    dynamics_gradient_scale: UnitFloat = 0.5

    name: ClassVar[str] = "muzero"


@dataclasses.dataclass(frozen=True)
class MuZeroConfig(shared.TrainingConfig):
    """Everything a MuZero run needs (`game` and `run` are the base's): `net` sizes the
    three networks, `search` is the algorithm self-play and the arena run on the learned
    model, `selfplay` (AlphaZero's section: `bootstrap_iterations` play their games with
    the bootstrap evaluator searching the real game), `replay` holds unroll windows,
    `optim` trains on the `muzero` section's loss, `eval` is the arena."""

    net: MuZeroNetConfig = MUZERO_NET_PRESETS["small"]
    search: SearchAlgorithm = PUCT()
    selfplay: SelfPlaySection = SelfPlaySection()
    replay: shared.ReplaySection = shared.ReplaySection()
    optim: shared.OptimSection = shared.OptimSection()
    eval: EvalSection = EvalSection()
    muzero: MuZeroSection = MuZeroSection()

    algo: ClassVar[str] = "muzero"
    player: ClassVar[str] = "muzero"
    network_sections: ClassVar[tuple[str, ...]] = ("net",)

    def __post_init__(self):
        if self.selfplay.bootstrap_iterations:
            self.selfplay.check_game(self.env())
