"""What the players of networks that play inside the run's search share (a policy-value
network, MuZero's networks): variables that are `nets.resnet.NetVars` (params and BatchNorm
statistics, a checkpoint's network item as two dicts) and the run's search and simulations."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, ClassVar

from flax import nnx

from gomoku_jax.games.protocol import GameSpec
from gomoku_jax.nets.resnet import NetVars
from gomoku_jax.players import run_dir as rd
from gomoku_jax.players.base import Player
from gomoku_jax.search.base import SearchAlgorithm
from gomoku_jax.search.puct import PUCT


@dataclasses.dataclass(frozen=True, eq=False)
class SearchedNetworkPlayer(Player):
    """A network with `NetVars` variables played inside the run's search (see `Player` for
    the common fields).

    Attributes:
      search: the run's search algorithm (played at full strength).
      agent_simulations: the simulations of the run's eval agent (`eval.agent_simulations`).
    """

    search: SearchAlgorithm = PUCT()
    agent_simulations: int = 64

    kind: ClassVar[str] = ""

    @staticmethod
    def to_dicts(variables: NetVars) -> dict[str, Any]:
        return {"params": nnx.to_pure_dict(variables.params),
                "batch_stats": nnx.to_pure_dict(variables.batch_stats)}

    @classmethod
    def abstract_variables(cls, model: Any) -> NetVars:
        return model.abstract_vars()

    @classmethod
    def from_dicts(cls, abstract: NetVars, dicts: dict) -> NetVars:
        params, stats = abstract.params, abstract.batch_stats
        nnx.replace_by_pure_dict(params, dicts["params"])
        nnx.replace_by_pure_dict(stats, dicts["batch_stats"])
        return NetVars(params, stats)

    @classmethod
    def from_run(cls, model: Any, variables: Any, game: GameSpec, data: dict,
                 run_dir: pathlib.Path, step: int, algo: str) -> "SearchedNetworkPlayer":
        search = rd.section(data, "search", SearchAlgorithm, run_dir, PUCT())
        simulations = data.get("eval", {}).get("agent_simulations", cls.agent_simulations)
        return cls(model, variables, game, run_dir, step, algo, search=search,
                   agent_simulations=int(simulations))
