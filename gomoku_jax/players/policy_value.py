"""A policy-value network (`nets.resnet.PolicyValueModel`) loaded from a run: what an
AlphaZero run's checkpoints hold, played inside the run's search.

    player = players.load("runs/quick")
    agent = player.agent()                     # the run's search on the network, greedy
    run_match(player.env, agent, heuristic, key, g, params_a=player.variables)

An agent plays with the network when it was built with `evaluator="network"` and
`network=player.model`; its params are then `player.variables` (`params_for`).
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import ClassVar, Optional

from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.search import SearchAgent
from gomoku_jax.games.protocol import Env
from gomoku_jax.nets.resnet import NetConfig, PolicyValueModel
from gomoku_jax.players import run_dir as rd
from gomoku_jax.players.searched import SearchedNetworkPlayer
from gomoku_jax.search.base import SearchAlgorithm

NETWORK = "network"  # the evaluator name of an agent that plays with the network


def uses_network(agent: Agent) -> bool:
    """Whether `agent` evaluates positions with a policy-value network."""
    return getattr(agent, "evaluator", None) == NETWORK


def search_agent(env: Env, model: PolicyValueModel, search: SearchAlgorithm,
                 num_simulations: int) -> SearchAgent:
    """The network inside `search` at full strength (`for_play()`: no root noise, greedy);
    its params are the network's `NetVars`."""
    return SearchAgent(env=env, evaluator=NETWORK, network=model, search=search.for_play(),
                       num_simulations=num_simulations)


@dataclasses.dataclass(frozen=True, eq=False)
class PolicyValuePlayer(SearchedNetworkPlayer):
    """A policy-value network with the run's search;
    `SearchedNetworkPlayer`'s fields: the run's search and its eval agent's simulations."""

    kind: ClassVar[str] = "policy_value"

    def agent(self, num_simulations: Optional[int] = None) -> Agent:
        """The run's eval agent: this network inside the run's search at full strength;
        `num_simulations` defaults to `agent_simulations`."""
        return search_agent(self.env, self.model, self.search,
                            num_simulations or self.agent_simulations)

    def plays(self, agent: Agent) -> bool:
        return uses_network(agent)

    @classmethod
    def model_for(cls, data: dict, run_dir: pathlib.Path, env: Env) -> PolicyValueModel:
        return PolicyValueModel.for_env(rd.section(data, "net", NetConfig, run_dir), env)
