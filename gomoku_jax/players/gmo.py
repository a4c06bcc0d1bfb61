"""A GMO (seed 002's gradient move optimisation: `nets.gmo.GMOModel`) loaded from a run.

    player = players.load("runs/gmo_quick")
    agent, params = player.agent(), player.variables

`--checkpoint RUN` of the arena, the tournament and pbrain plays it: the specs `trained` and
`gmo` are then the GMO agent with the run's `gmo` section (a `gmo:` spec may change the
agent's search knobs, such as `gmo:beta=0,optim_steps=0`, but not the networks' sizes) and
its params are the run's.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, ClassVar, Optional

import jax
from flax import nnx

from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.gmo import GMOAgent
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.nets.gmo import GMOConfig, GMOModel
from gomoku_jax.players import run_dir as rd
from gomoku_jax.players.base import Player

# GMOConfig fields that shape the params: a spec may not change them.
NET_FIELDS = ("state_dim", "move_dim", "hidden_dim", "part_dim")


def gmo_agent(env: Env, gmo: GMOConfig) -> GMOAgent:
    """The GMO agent of a `gmo` config section, bound to `env`."""
    return GMOAgent(env=env, **dataclasses.asdict(gmo))


@dataclasses.dataclass(frozen=True, eq=False)
class GMOPlayer(Player):
    """A trained GMO (see `Player` for the common fields); `gmo`: the run's `gmo` section
    (the networks' sizes and the agent's search knobs)."""

    gmo: GMOConfig = GMOConfig()

    kind: ClassVar[str] = "gmo"

    def agent(self, num_simulations: Optional[int] = None) -> Agent:
        """The run's GMO agent (its `gmo` section), bound to the run's game."""
        if num_simulations is not None:
            raise ValueError("a GMO run's agent does not search: it takes no num_simulations "
                             "(set its knobs with gmo:beta=...,optim_steps=...)")
        return gmo_agent(self.env, self.gmo)

    def plays(self, agent: Agent) -> bool:
        return isinstance(agent, GMOAgent)

    def agent_config(self, name: str, config: dict[str, Any], what: str) -> dict[str, Any]:
        """A `gmo` takes the run's `gmo` section under its own fields; agents that would need
        a policy-value network are refused."""
        self.refuse_network_evaluator(config, what, "GMO", GMOAgent.name)
        if name != GMOAgent.name:
            return config
        run = dataclasses.asdict(self.gmo)
        for field in NET_FIELDS:
            if field in config and str(config[field]).strip() != str(run[field]):
                raise ValueError(f"agent {what!r}: {field} is the checkpoint's network size "
                                 f"({run[field]}); don't set it")
        return {**run, **config}

    @staticmethod
    def to_dicts(variables: Any) -> dict[str, Any]:
        return {"params": nnx.to_pure_dict(variables)}

    @classmethod
    def model_for(cls, data: dict, run_dir: pathlib.Path, env: Env) -> GMOModel:
        return GMOModel.for_env(rd.section(data, "gmo", GMOConfig, run_dir), env)

    @classmethod
    def abstract_variables(cls, model: GMOModel) -> Any:
        return jax.eval_shape(model.init, jax.random.key(0))

    @classmethod
    def from_dicts(cls, abstract: Any, dicts: dict) -> Any:
        params = jax.tree.map(lambda x: x, abstract)
        nnx.replace_by_pure_dict(params, dicts["params"])
        return params

    @classmethod
    def from_run(cls, model: Any, variables: Any, game: GameSpec, data: dict,
                 run_dir: pathlib.Path, step: int, algo: str) -> "GMOPlayer":
        return cls(model, variables, game, run_dir, step, algo,
                   gmo=rd.section(data, "gmo", GMOConfig, run_dir))
