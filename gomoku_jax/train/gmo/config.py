"""The GMO run's configuration (`gomoku-jax train --algo gmo`).

A `GMOTrainConfig` has one section per part of the run: `game` (any game, by `game.id`, as
in AlphaZero's config), `gmo` (the networks' sizes and the agent's search knobs:
`nets.gmo.GMOConfig`, seed 002's defaults), `data` (who plays the games the positions come
from, or which AlphaZero run's replay they are taken from: `data.replay_run`), and the
shared `replay`, `optim`, `eval` and `run` sections with GMO's defaults. Presets are in
`presets.py`.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from gomoku_jax.agents.specs import make_agent
from gomoku_jax.configs import FiniteFloat, NonNegativeFloat, NonNegativeInt, PositiveInt, UnitFloat
from gomoku_jax.nets.gmo import GMOConfig
from gomoku_jax.train import config as shared

SELF = "self"  # data.agent: the GMO agent being trained plays the games


@dataclasses.dataclass(frozen=True)
class DataSection(shared.Section):
    """Where the positions come from: `games` games per iteration played to their end by
    `agent` on both sides (an agent spec as in `gomoku-jax arena`, or "self": the GMO agent
    being trained, with its current params), a uniformly random legal move instead of the
    agent's for the first `random_plies` plies of every game and with probability `epsilon`
    after that.

    Or, with `replay_run` (a path to an AlphaZero run directory, its checkpoints/ or one
    step's directory; "" = games as above): the positions of that run's replay buffer at
    its latest checkpoint (or the step named), each with the move its self-play played from
    it and its game's outcome for the mover, put in the buffer once when the run starts;
    the iterations then only train (the other `data` fields are unused). The run's game
    must be this config's `game`. The path is read only then: resuming does not need it.
    """

    agent: str = "mcts"
    games: PositiveInt = 64
    random_plies: NonNegativeInt = 2
    epsilon: UnitFloat = 0.1
    replay_run: str = ""

    name: ClassVar[str] = "data"

    def __post_init__(self):
        super().__post_init__()
        if self.agent != SELF:
            try:
                make_agent(self.agent)
            except ValueError as e:
                raise ValueError(f"data.agent: {e}") from None


@dataclasses.dataclass(frozen=True)
class GMOReplaySection(shared.ReplaySection):
    """The shared replay section with GMO's default capacity (positions)."""

    capacity: PositiveInt = 50_000


@dataclasses.dataclass(frozen=True)
class GMOOptimSection(shared.OptimSection):
    """AdamW on the value's heteroscedastic Gaussian NLL, 0.5 (s + (z - v)² e^-s), with the
    log-variance s clamped to [log_var_min, log_var_max] (the shared optimiser fields with
    GMO's defaults, and these).

    Attributes:
      augment: a random element of the game's symmetry group per sample (state and move
        together).
      log_var_min, log_var_max: the clamp of the log-variance. The lower bound keeps the
        NLL's 1/σ² weight of the squared error at most e^3 ≈ 20: with -6 (e^6 ≈ 400), on
        gmo_quick's data and lr 1e-3, the training NLL climbed from 0.31 to 1.5 in 3000
        steps as a few over-confident samples dominated the gradient; with -3 it fell to
        0.14 (held-out squared error the same, ~0.71, in both).
    """

    learning_rate: NonNegativeFloat = 1e-3
    batch_size: PositiveInt = 256
    sgd_steps: PositiveInt = 16
    grad_clip: NonNegativeFloat = 1.0
    log_var_min: FiniteFloat = -3.0
    log_var_max: FiniteFloat = 4.0
    augment: bool = True

    def __post_init__(self):
        super().__post_init__()
        if not self.log_var_min < self.log_var_max:
            raise ValueError(f"optim.log_var_min must be < optim.log_var_max, got "
                             f"{self.log_var_min} and {self.log_var_max}")


@dataclasses.dataclass(frozen=True)
class GMOEvalSection(shared.EvalSection):
    """The shared arena section with GMO's defaults: the trained GMO agent (the `gmo`
    section's knobs) against each opponent, only at the end."""

    every: NonNegativeInt = 0
    opponents: tuple[str, ...] = ("random", "heuristic", "mcts")


@dataclasses.dataclass(frozen=True)
class GMOTrainConfig(shared.TrainingConfig):
    """Everything a GMO run needs (`game` and `run` are the base's)."""

    algo: ClassVar[str] = "gmo"
    player: ClassVar[str] = "gmo"
    network_sections: ClassVar[tuple[str, ...]] = ("gmo",)

    gmo: GMOConfig = GMOConfig()
    data: DataSection = DataSection()
    replay: GMOReplaySection = GMOReplaySection()
    optim: GMOOptimSection = GMOOptimSection()
    eval: GMOEvalSection = GMOEvalSection()
