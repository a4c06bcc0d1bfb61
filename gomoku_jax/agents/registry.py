"""Agents by name: each name is a prototype agent whose fields are its defaults, and
`make(name, **config)` is that agent with `config` applied.

Every search algorithm of `search.ALGORITHMS` is an agent of the same name, playing at
full strength (`algorithm.for_play()`); `mcts` is PUCT's agent under the name the first
wave gave it. Adding an agent is one module plus one line in `AGENTS`.
"""

from __future__ import annotations

from typing import Any

from gomoku_jax import configs
from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.baselines import ProximityRandomAgent, RandomAgent
from gomoku_jax.agents.fauxgo_heuristic import FauxGoHeuristicAgent
from gomoku_jax.agents.gmo import GMOAgent
from gomoku_jax.agents.heuristic import HeuristicAgent
from gomoku_jax.agents.search import PolicyAgent, SearchAgent
from gomoku_jax.search import ALGORITHMS
from gomoku_jax.search.pure_mcts import PureMCTS

# One line per agent: name -> prototype (its fields are the defaults of that name).
AGENTS: dict[str, Agent] = {
    "random": RandomAgent(),
    "proximity_random": ProximityRandomAgent(),
    "heuristic": HeuristicAgent(),  # Gomoku's
    "fauxgo_heuristic": FauxGoHeuristicAgent(),  # Faux Go's (seed 004)
    "policy": PolicyAgent(),
    "gmo": GMOAgent(),  # seed 002's gradient move optimisation
    "mcts": SearchAgent(),  # PUCT, with VCF at the root
    # The classic baseline: UCT with one random playout per leaf, no threat search.
    "pure_mcts": SearchAgent(search=PureMCTS().for_play(), evaluator="rollout",
                             num_simulations=1000, threat_search=0),
}
AGENTS["puct"] = AGENTS["mcts"]
for _name, _cls in ALGORITHMS.items():
    AGENTS.setdefault(_name, SearchAgent(search=_cls().for_play()))


def make(name: str, **config: Any) -> Agent:
    """Agent `name` with config fields, e.g. `make("heuristic", defence=1.2)`,
    `make("mcts", num_simulations=256, greedy=False)` (fields of the agent's search config
    are set by name too), `make("pure_mcts", env=env)`. Values may be text, as in specs.

    Raises:
      ValueError: an unknown name or field (the message lists the valid ones), or a value
        of the wrong type or range.
    """
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; available: {sorted(AGENTS)}")
    agent = configs.assign(AGENTS[name], config, f"agent {name!r}")
    if agent.env is not None:
        agent.check_game(agent.env)
    return agent
