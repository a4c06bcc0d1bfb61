"""A broken plug-in: it registers an agent under a name the package already has."""

import dataclasses

from gomoku_jax import plugins
from gomoku_jax.agents.baselines import RandomAgent


@plugins.register("agent", "random")
@dataclasses.dataclass(frozen=True)
class AnotherRandom(RandomAgent):
    """Random again, under a taken name."""
