"""A MuZero network (`nets.muzero.MuZeroNetwork`: h, g and f) loaded from a run, played by
searching its learned model.

    player = players.load("runs/muzero_quick")
    agent = player.agent()                     # the run's search over the model, greedy
    run_match(player.env, agent, heuristic, key, g, params_a=player.variables)

`--checkpoint RUN` of the arena, the tournament and pbrain plays it: the specs `trained`
and `muzero` are then the `MuZeroAgent` with the run's network and its search at full
strength (`muzero:num_simulations=32,pb_c_init=2` changes its knobs, the search's fields
set on the run's search), and its params are the run's `NetVars`. Agents that need a
policy-value network (`evaluator=network`) are refused: a MuZero run has none.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, ClassVar, Optional

from gomoku_jax import configs
from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.muzero import MuZeroAgent
from gomoku_jax.games.protocol import Env
from gomoku_jax.nets.muzero import MuZeroNetConfig, MuZeroNetwork
from gomoku_jax.players import run_dir as rd
from gomoku_jax.players.searched import SearchedNetworkPlayer


@dataclasses.dataclass(frozen=True, eq=False)
class MuZeroPlayer(SearchedNetworkPlayer):
    """MuZero's networks with the run's search;
    `SearchedNetworkPlayer`'s fields: the run's search and its eval agent's simulations."""

    kind: ClassVar[str] = "muzero"

    def agent(self, num_simulations: Optional[int] = None) -> Agent:
        """The run's eval agent: the run's search over the learned model at full strength,
        bound to the run's game; `num_simulations` defaults to `agent_simulations`."""
        return MuZeroAgent(env=self.env, network=self.model, search=self.search.for_play(),
                           num_simulations=num_simulations or self.agent_simulations)

    def plays(self, agent: Agent) -> bool:
        return isinstance(agent, MuZeroAgent)

    def agent_config(self, name: str, config: dict[str, Any], what: str) -> dict[str, Any]:
        """A `muzero` takes the run's network, search (at full strength) and simulations
        under its own fields; agents that would need a policy-value network are refused."""
        self.refuse_network_evaluator(config, what, "MuZero", MuZeroAgent.name)
        if name != MuZeroAgent.name:
            return config
        if "network" in config:
            raise ValueError(f"agent {what!r}: the field 'network' comes from the checkpoint; "
                             f"don't set it")
        config = {"network": self.model, "num_simulations": self.agent_simulations, **config}
        if "search" in config:
            return config
        # The run's search, with the fields of it that the spec sets (`pb_c_init=2`).
        names = configs.field_types(type(self.search))
        changes = {k: v for k, v in config.items() if k in names}
        search = configs.assign(self.search.for_play(), changes, f"agent {what!r}", rd.KINDS)
        return {**{k: v for k, v in config.items() if k not in names}, "search": search}

    @classmethod
    def model_for(cls, data: dict, run_dir: pathlib.Path, env: Env) -> MuZeroNetwork:
        return MuZeroNetwork.for_env(rd.section(data, "net", MuZeroNetConfig, run_dir), env)
