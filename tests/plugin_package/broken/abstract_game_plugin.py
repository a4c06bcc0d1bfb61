"""A broken plug-in: a game class that lacks what the protocol needs (`step`, ...)."""

import dataclasses

from gomoku_jax import plugins
from gomoku_jax.games.protocol import Env, GameSpec


@dataclasses.dataclass(frozen=True)
class HalfSpec(GameSpec):
    id = "half"


@plugins.register("game")
class Half(Env):
    Spec = HalfSpec
