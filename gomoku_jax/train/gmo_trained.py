"""A trained GMO loaded from a run directory, for the programs that play with it.

    trained = load("runs/gmo_quick")          # the latest checkpoint
    agent, params = trained.agent(), trained.variables
    run_match(trained.env, agent, heuristic, key, g, params_a=params)

`train.trained.load` returns one for a GMO run, so `--checkpoint RUN` of the arena, the
tournament and pbrain plays it: the specs `trained` and `gmo` are then the GMO agent with
the run's `gmo` section (a `gmo:` spec may change the agent's search knobs, such as
`gmo:beta=0,optim_steps=0`, but not the networks' sizes) and its params are the run's.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Optional

import jax

from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.gmo import GMOAgent
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.nets.gmo import GMOModel
from gomoku_jax.train import checkpoint
from gomoku_jax.train.gmo_config import GMOTrainConfig, load_config
from gomoku_jax.train.gmo_loop import restore_params

# GMOConfig fields that shape the params: a spec may not change them.
NET_FIELDS = ("state_dim", "move_dim", "hidden_dim", "part_dim")


@dataclasses.dataclass(frozen=True, eq=False)
class TrainedGMO:
    """A trained GMO with what playing it needs (the interface of
    `train.trained.TrainedNetwork`).

    Attributes:
      model: the `GMOModel`; variables: its params (the params of the GMO agent);
      config: the run's `GMOTrainConfig`; run_dir: the run directory (absolute);
      step: the checkpoint's step.
    """

    model: GMOModel
    variables: Any
    config: GMOTrainConfig
    run_dir: pathlib.Path
    step: int

    @property
    def game_spec(self) -> GameSpec:
        return self.config.game

    @property
    def env(self) -> Env:
        return self.config.env()

    def agent(self, num_simulations: Optional[int] = None) -> Agent:
        """The run's GMO agent (its `gmo` section), bound to the run's game."""
        if num_simulations is not None:
            raise ValueError("a GMO run's agent does not search: it takes no num_simulations "
                             "(set its knobs with gmo:beta=...,optim_steps=...)")
        return GMOAgent(env=self.env, **dataclasses.asdict(self.config.gmo))

    def agent_config(self, name: str, config: dict[str, Any], what: str) -> dict[str, Any]:
        """The config of agent `name` built with this checkpoint (`specs.build_agent`): a
        `gmo` takes the run's `gmo` section under its own fields; agents that would need a
        policy-value network are refused."""
        if config.get("evaluator") == "network":
            raise ValueError(f"agent {what!r} uses evaluator=network, but the checkpoint is a "
                             f"GMO run (no policy-value network): play it as 'gmo' or "
                             f"'trained'")
        if name != GMOAgent.name:
            return config
        run = dataclasses.asdict(self.config.gmo)
        for field in NET_FIELDS:
            if field in config and str(config[field]).strip() != str(run[field]):
                raise ValueError(f"agent {what!r}: {field} is the checkpoint's network size "
                                 f"({run[field]}); don't set it")
        return {**run, **config}

    def params_for(self, agent: Agent) -> Any:
        """The params for a GMO agent, else None."""
        return self.variables if isinstance(agent, GMOAgent) else None

    def describe(self) -> str:
        return f"{self.run_dir} step {self.step} (GMO, {self.env!r}, " \
            f"{self.model.num_params():,} params)"

    def to_dict(self) -> dict:
        return {"run_dir": str(self.run_dir), "step": self.step, "algo": "gmo"}


def load(path: str | pathlib.Path, step: Optional[int] = None) -> TrainedGMO:
    """The GMO of a run directory, its `checkpoints/` directory or `checkpoints/<step>`.

    Args:
      step: which checkpoint (default: the one `path` names, else the latest).
    Raises:
      ValueError: a path that is not a GMO run, a run without checkpoints, a missing step,
        or a checkpoint that does not fit its config or its env version.
    """
    run_dir, named = checkpoint.locate(pathlib.Path(path))
    config = load_config(run_dir)
    env = config.env()
    model = GMOModel.for_env(config.gmo, env)
    mgr, step, where = checkpoint.open_step(run_dir, step if step is not None else named, env)
    abstract = jax.eval_shape(model.init, jax.random.key(0))
    params = restore_params(mgr, step, "network", abstract, where)
    return TrainedGMO(model, params, config, run_dir, step)
