"""Agents by name: `AGENTS` maps each name to its agent class (a frozen dataclass whose
fields, with their defaults, are the agent's config), and `make(name, **config)` is that
class built with `config` (values may be text, as in specs).

Every search algorithm of `search.ALGORITHMS` is an agent of the same name, playing at
full strength (`algorithm.for_play()`), a plug-in's too (`search_agent_class`, added when
the agents are read); `mcts` is PUCT's agent under the name the project first gave it. A
name whose defaults differ from its class's (`gumbel`, `pure_mcts`) has a subclass that
only sets them. Adding an agent is one module plus one registration,
`AGENTS.register(name, cls)` (from outside the package: `gomoku_jax.plugins.register(
"agent", name)`, docs/plugins.md).
"""

from __future__ import annotations

import functools
from typing import Any

from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.baselines import ProximityRandomAgent, RandomAgent
from gomoku_jax.agents.fauxgo_heuristic import FauxGoHeuristicAgent
from gomoku_jax.agents.gmo import GMOAgent
from gomoku_jax.agents.heuristic import HeuristicAgent
from gomoku_jax.agents.muzero import MuZeroAgent
from gomoku_jax.agents.search import (
    GumbelAgent,
    PolicyAgent,
    PureMCTSAgent,
    SearchAgent,
    search_agent_class,
)
from gomoku_jax.registry import Registry
from gomoku_jax.search import ALGORITHMS

_agent_of = functools.cache(search_agent_class)  # one agent class per search algorithm


def _search_agents() -> dict[str, type[Agent]]:
    """{name: its agent class} of every registered search algorithm."""
    return {name: _agent_of(cls) for name, cls in ALGORITHMS.items()}


# name -> its class (its fields' defaults are that name's defaults), registered as every
# plug-in is; the search algorithms without an agent of their own follow (`_search_agents`).
AGENTS = Registry("agent", derive=_search_agents)
AGENTS.register("random", RandomAgent)
AGENTS.register("proximity_random", ProximityRandomAgent)
AGENTS.register("heuristic", HeuristicAgent)  # Gomoku's
AGENTS.register("fauxgo_heuristic", FauxGoHeuristicAgent)  # Faux Go's (seed 004)
AGENTS.register("policy", PolicyAgent)
AGENTS.register("gmo", GMOAgent)  # seed 002's gradient move optimisation
AGENTS.register("muzero", MuZeroAgent)  # a search over a MuZero run's learned model
AGENTS.register("mcts", SearchAgent)  # PUCT, with VCF at the root
AGENTS.register("puct", SearchAgent)
AGENTS.register("gumbel", GumbelAgent)
# The classic baseline: UCT with one random playout per leaf, no threat search.
AGENTS.register("pure_mcts", PureMCTSAgent)


def takes_network(name: str) -> bool:
    """Whether agent `name` can play with a policy-value network as its evaluator
    (`evaluator="network"`): a search or a policy agent. False for an unknown name."""
    cls = AGENTS.get(name)
    return cls is not None and issubclass(cls, (SearchAgent, PolicyAgent))


def network_kinds(name: str) -> tuple[str, ...]:
    """The kinds of trained network agent `name` plays with (its class's `network_kinds`;
    () for an agent without a network, or an unknown name)."""
    cls = AGENTS.get(name)
    return tuple(getattr(cls, "network_kinds", ())) if cls is not None else ()


def requires_network(name: str) -> bool:
    """Whether agent `name` plays only with a trained network (its class's
    `requires_network`; False for an unknown name)."""
    cls = AGENTS.get(name)
    return cls is not None and bool(getattr(cls, "requires_network", False))


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
