"""What every loaded network is: a `Player` (one subclass per kind of network a run's
checkpoints hold, registered in `gomoku_jax.players.NETWORKS`)."""

from __future__ import annotations

import abc
import dataclasses
import pathlib
from typing import Any, ClassVar, Optional

from gomoku_jax import games
from gomoku_jax.agents.base import Agent
from gomoku_jax.games.protocol import Env, GameSpec


@dataclasses.dataclass(frozen=True, eq=False)
class Player(abc.ABC):
    """A trained network loaded from a run directory, with what playing it needs.

    Attributes:
      model: the network (its class depends on the kind).
      variables: its params: the params of every agent that plays with it (`params_for`).
      game: the run's game spec (for Gomoku: board size, win length, rule, observation
        form and feature plane, exactly as trained).
      run_dir: the run directory (absolute).
      step: the checkpoint's step (iterations done when it was saved).
      algo: the training algorithm that made it.
    """

    model: Any
    variables: Any
    game: GameSpec
    run_dir: pathlib.Path
    step: int
    algo: str

    kind: ClassVar[str] = ""

    @property
    def game_spec(self) -> GameSpec:
        return self.game

    @property
    def env(self) -> Env:
        """The run's game."""
        return games.from_spec(self.game)

    @abc.abstractmethod
    def agent(self, num_simulations: Optional[int] = None) -> Agent:
        """The run's own agent at full strength (no noise, greedy)."""

    def params_for(self, agent: Agent) -> Any:
        """`variables` for an agent that plays with this network, else None."""
        return self.variables if self.plays(agent) else None

    @abc.abstractmethod
    def plays(self, agent: Agent) -> bool:
        """Whether `agent` plays with this network's params."""

    def agent_config(self, name: str, config: dict[str, Any], what: str) -> dict[str, Any]:
        """The config of agent `name` built with this network (`specs.build_agent`): a kind
        may fill in the run's own fields, or refuse fields it fixes."""
        return config

    @staticmethod
    def refuse_network_evaluator(config: dict[str, Any], what: str, run: str,
                                 own: str) -> None:
        """ValueError for an agent config that evaluates with a policy-value network
        (`evaluator=network`), for a kind of network that is none: `run` names the run's
        kind ("GMO"), `own` the agent that plays it ("gmo")."""
        if config.get("evaluator") == "network":
            raise ValueError(f"agent {what!r} uses evaluator=network, but the checkpoint is a "
                             f"{run} run (no policy-value network): play it as {own!r} or "
                             f"'trained'")

    def describe(self) -> str:
        return (f"{self.run_dir} step {self.step} ({self.algo}, {self.env!r}, "
                f"{self.model.num_params():,} params)")

    def to_dict(self) -> dict:
        return {"run_dir": str(self.run_dir), "step": self.step, "algo": self.algo}

    # ---------------------------------------------------------------- the checkpoint items

    @staticmethod
    @abc.abstractmethod
    def to_dicts(variables: Any) -> dict[str, Any]:
        """The network item of a checkpoint: `variables` as nested dicts of arrays."""

    @classmethod
    @abc.abstractmethod
    def model_for(cls, data: dict, run_dir: pathlib.Path, env: Env) -> Any:
        """The (untrained) model a run config's data describes."""

    @classmethod
    @abc.abstractmethod
    def abstract_variables(cls, model: Any) -> Any:
        """Shapes and dtypes of the model's variables."""

    @classmethod
    @abc.abstractmethod
    def from_dicts(cls, abstract: Any, dicts: dict) -> Any:
        """Variables shaped like `abstract` filled from `to_dicts`' item."""

    @classmethod
    def from_run(cls, model: Any, variables: Any, game: GameSpec, data: dict,
                 run_dir: pathlib.Path, step: int, algo: str) -> "Player":
        """The player of a loaded run (its config's data gives the kind's own fields)."""
        return cls(model, variables, game, run_dir, step, algo)
