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
from typing import Any, ClassVar, Optional

from flax import nnx

from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.search import SearchAgent
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.nets.resnet import NetConfig, NetVars, PolicyValueModel
from gomoku_jax.players import run_dir as rd
from gomoku_jax.players.base import Player
from gomoku_jax.search.base import SearchAlgorithm
from gomoku_jax.search.puct import PUCT

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
class PolicyValuePlayer(Player):
    """A policy-value network with the run's search (see `Player` for the common fields).

    Attributes:
      search: the run's search algorithm (played at full strength).
      agent_simulations: the simulations of the run's eval agent (`eval.agent_simulations`).
    """

    search: SearchAlgorithm = PUCT()
    agent_simulations: int = 64

    kind: ClassVar[str] = "policy_value"

    def agent(self, num_simulations: Optional[int] = None) -> Agent:
        """The run's eval agent: this network inside the run's search at full strength;
        `num_simulations` defaults to `agent_simulations`."""
        return search_agent(self.env, self.model, self.search,
                            num_simulations or self.agent_simulations)

    def plays(self, agent: Agent) -> bool:
        return uses_network(agent)

    @staticmethod
    def to_dicts(variables: NetVars) -> dict[str, Any]:
        return {"params": nnx.to_pure_dict(variables.params),
                "batch_stats": nnx.to_pure_dict(variables.batch_stats)}

    @classmethod
    def model_for(cls, data: dict, run_dir: pathlib.Path, env: Env) -> PolicyValueModel:
        return PolicyValueModel.for_env(rd.section(data, "net", NetConfig, run_dir), env)

    @classmethod
    def abstract_variables(cls, model: PolicyValueModel) -> NetVars:
        return model.abstract_vars()

    @classmethod
    def from_dicts(cls, abstract: NetVars, dicts: dict) -> NetVars:
        params, stats = abstract.params, abstract.batch_stats
        nnx.replace_by_pure_dict(params, dicts["params"])
        nnx.replace_by_pure_dict(stats, dicts["batch_stats"])
        return NetVars(params, stats)

    @classmethod
    def from_run(cls, model: Any, variables: Any, game: GameSpec, data: dict,
                 run_dir: pathlib.Path, step: int, algo: str) -> "PolicyValuePlayer":
        search = rd.section(data, "search", SearchAlgorithm, run_dir, PUCT())
        simulations = data.get("eval", {}).get("agent_simulations", cls.agent_simulations)
        return cls(model, variables, game, run_dir, step, algo, search=search,
                   agent_simulations=int(simulations))
