"""Agents: one interface (`base.Agent`), one registry; `make(name, **config)`."""

from gomoku_jax.agents.base import Agent, make_from, play_best
from gomoku_jax.agents.baselines import ProximityRandomAgent, RandomAgent
from gomoku_jax.agents.heuristic import HeuristicAgent
from gomoku_jax.agents.mcts import GumbelAgent, MCTSAgent, PolicyAgent

# One line per algorithm.
REGISTRY = {
    "random": RandomAgent,
    "proximity_random": ProximityRandomAgent,
    "heuristic": HeuristicAgent,
    "policy": PolicyAgent,
    "mcts": MCTSAgent,
    "gumbel": GumbelAgent,
}


def make(name: str, **config) -> Agent:
    """An agent by registry name with its config fields, e.g. `make("heuristic", defence=1.2)`.

    Raises:
      ValueError: an unknown name or config field (the message lists the valid ones).
    """
    return make_from(REGISTRY, name, **config)


__all__ = ["Agent", "GumbelAgent", "HeuristicAgent", "MCTSAgent", "PolicyAgent",
           "ProximityRandomAgent", "REGISTRY", "RandomAgent", "make", "play_best"]
