"""Agents by name: `AGENTS` maps each name to its agent class (a frozen dataclass whose
fields, with their defaults, are the agent's config), and `make(name, **config)` is that
class built with `config` (values may be text, as in specs).

Every search algorithm of `search.ALGORITHMS` is an agent of the same name, playing at
full strength (`algorithm.for_play()`); `mcts` is PUCT's agent under the name the first
wave gave it. A name whose defaults differ from its class's (`gumbel`, `pure_mcts`) has a
subclass that only sets them. Adding an agent is one module plus one line in `AGENTS`.
"""

from __future__ import annotations

from typing import Any

from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.baselines import ProximityRandomAgent, RandomAgent
from gomoku_jax.agents.fauxgo_heuristic import FauxGoHeuristicAgent
from gomoku_jax.agents.gmo import GMOAgent
from gomoku_jax.agents.heuristic import HeuristicAgent
from gomoku_jax.agents.search import (
    GumbelAgent,
    PolicyAgent,
    PureMCTSAgent,
    SearchAgent,
    search_agent_class,
)
from gomoku_jax.registry import Registry
from gomoku_jax.search import ALGORITHMS

# One line per agent: name -> its class (its fields' defaults are that name's defaults).
AGENTS = Registry("agent", {
    "random": RandomAgent,
    "proximity_random": ProximityRandomAgent,
    "heuristic": HeuristicAgent,  # Gomoku's
    "fauxgo_heuristic": FauxGoHeuristicAgent,  # Faux Go's (seed 004)
    "policy": PolicyAgent,
    "gmo": GMOAgent,  # seed 002's gradient move optimisation
    "mcts": SearchAgent,  # PUCT, with VCF at the root
    "puct": SearchAgent,
    "gumbel": GumbelAgent,
    # The classic baseline: UCT with one random playout per leaf, no threat search.
    "pure_mcts": PureMCTSAgent,
})
for _name, _cls in ALGORITHMS.items():  # any other search algorithm: its own agent
    if _name not in AGENTS:
        AGENTS.register(_name, search_agent_class(_cls))


def takes_network(name: str) -> bool:
    """Whether agent `name` can play with a network (`evaluator="network"`): a search or a
    policy agent. False for an unknown name."""
    cls = AGENTS.get(name)
    return cls is not None and issubclass(cls, (SearchAgent, PolicyAgent))


def make(name: str, **config: Any) -> Agent:
    """Agent `name` with config fields, e.g. `make("heuristic", defence=1.2)`,
    `make("mcts", num_simulations=256, greedy=False)` (fields of the agent's search and
    evaluator configs are set by name too: `make("mcts", evaluator="rollout",
    num_rollouts=8)`), `make("pure_mcts", env=env)`. Values may be text, as in specs.

    Raises:
      ValueError: an unknown name or field (the message lists the valid ones), or a value
        of the wrong type or range.
    """
    agent = AGENTS.make(name, **config)
    if agent.env is not None:
        agent.check_game(agent.env)
    return agent
