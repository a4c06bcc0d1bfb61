"""A trained network loaded from a run directory, for the programs that play with it.

    network = load("runs/quick")                    # the latest checkpoint
    network.agent()                                 # the run's own eval agent
    env = network.env                               # its game, exactly as trained
    run_match(env, network.agent(), heuristic, key, g, params_a=network.variables)

An agent plays with the network when it was built with `evaluator="network"` and
`network=network.model`; its params are then `network.variables` (`params_for`).
A network only plays its own game (for Gomoku: the board size, win length and rule it was
trained on, with the observation form and feature plane of its run), for any game.
"""

from __future__ import annotations

import dataclasses
import pathlib
from importlib import resources
from typing import Any, Optional

from gomoku_jax.agents.base import Agent
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.train import checkpoint, gmo_trained
from gomoku_jax.train.alphazero import AlphaZero, make_mesh
from gomoku_jax.train.gmo_config import run_algo


@dataclasses.dataclass(frozen=True, eq=False)
class TrainedNetwork:
    """A trained policy-value network with what playing it needs.

    Attributes:
      model: the `PolicyValueModel`; `model.apply(variables, obs float32[B, *obs]) ->
        (logits float32[B, A], value float32[B])`.
      variables: its `NetVars` (params and BatchNorm statistics): the params of every
        agent that plays with it.
      config: the run's `TrainConfig`.
      run_dir: the run directory (absolute).
      step: the checkpoint's step (iterations done when it was saved).
    """

    model: Any
    variables: Any
    config: Any
    run_dir: pathlib.Path
    step: int

    @property
    def game_spec(self) -> GameSpec:
        """The run's game spec (for Gomoku: observation form and feature plane included)."""
        return self.config.game

    @property
    def env(self) -> Env:
        return self.config.env()

    def agent(self, num_simulations: Optional[int] = None) -> Agent:
        """The run's eval agent: this network inside the run's search at full strength
        (no root noise, greedy); `num_simulations` defaults to `eval.agent_simulations`."""
        # One device: the run may have been sharded over more than this machine has.
        return AlphaZero(self.config, mesh=make_mesh(1)).agent(num_simulations)

    def params_for(self, agent: Agent) -> Any:
        """`variables` for an agent that evaluates with a network, else None."""
        return self.variables if uses_network(agent) else None

    def describe(self) -> str:
        return f"{self.run_dir} step {self.step} ({self.env!r}, " \
            f"{self.model.num_params():,} params)"

    def to_dict(self) -> dict:
        return {"run_dir": str(self.run_dir), "step": self.step}


def uses_network(agent: Agent) -> bool:
    """Whether `agent` evaluates positions with a network (its params are the network's)."""
    return getattr(agent, "evaluator", None) == "network"


def load(path: str | pathlib.Path, step: Optional[int] = None
         ) -> TrainedNetwork | gmo_trained.TrainedGMO:
    """The network of a run directory, its `checkpoints/` directory or `checkpoints/<step>`
    (a `gmo_trained.TrainedGMO` for a GMO run: `gomoku-jax train --algo gmo`).

    Args:
      step: which checkpoint (default: the one `path` names, else the latest).
    Raises:
      ValueError: a path that is not a run, a run without checkpoints, a missing step or
        a checkpoint that does not fit its config (`checkpoint.load_network`'s messages).
    """
    if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
        raise ValueError(f"step must be an int, got {step!r}")
    if run_algo(checkpoint.locate(pathlib.Path(path))[0]) == "gmo":
        return gmo_trained.load(path, step)
    model, variables, config, step = checkpoint.load_network(path, step)
    run_dir, _ = checkpoint.locate(pathlib.Path(path))
    return TrainedNetwork(model, variables, config, run_dir, step)


# The network shipped with the package: 15x15 freestyle, trained on a 2-core CPU with the
# gomoku15_cpu preset (config.json, metrics.jsonl and summary.json are its run's; the step
# is its checkpoint's). Only the network item of the checkpoint is kept (1.8 MB).
DEFAULT_NETWORK = "gomoku15"


def default_network_path() -> pathlib.Path:
    """The shipped network's run directory (package data of `gomoku_jax.games.gomoku`)."""
    return pathlib.Path(str(resources.files("gomoku_jax.games.gomoku").joinpath(
        "data", "networks", DEFAULT_NETWORK)))


def default_network() -> TrainedNetwork:
    """The network shipped with the package (`DEFAULT_NETWORK`), what `trained` plays when
    no checkpoint is given."""
    return load(default_network_path())


def load_for_cli(path: Optional[str], step: Optional[int] = None,
                 flag: str = "--checkpoint", default: bool = False
                 ) -> Optional[TrainedNetwork]:
    """`load(path, step)` for a command line: without a path, the shipped network when
    `default` (an agent needs a network) else None; SystemExit("error: ...") for a bad one
    or for a `step` without a path."""
    if path is None:
        if step is not None:
            raise SystemExit(f"error: --step {step} needs {flag} PATH")
        return default_network() if default else None
    try:
        return load(path, step)
    except ValueError as e:
        raise SystemExit(f"error: {flag} {path}: {e}")
