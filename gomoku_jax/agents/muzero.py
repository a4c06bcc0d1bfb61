"""MuZero as an agent: a search over the learned model of a trained MuZero network.

    agent = MuZeroAgent(network=player.model).bind(env)      # a MuZero run's networks
    action, _, info = agent.act_batch(player.variables, None, states, keys)

At every move the root is the real position (h of its observation, f's prior masked to the
legal moves and shaped by the game's candidates), and below it the search runs on latents
only (g and f): `search.muzero_model.MuZeroModel` searched by `search`, any registered
search algorithm (PUCT: MuZero; Gumbel: Gumbel MuZero). Only the root's legal moves are
played. `params` are the network's `nets.NetVars`; the agent has no untrained form (a
random dynamics network plays no game), so it needs a run's checkpoint.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import jax.numpy as jnp

from gomoku_jax.agents.base import BatchedAgent
from gomoku_jax.configs import PositiveInt
from gomoku_jax.games.protocol import Env
from gomoku_jax.nets.muzero import MuZeroNetwork
from gomoku_jax.search.base import SearchAlgorithm
from gomoku_jax.search.muzero_model import MuZeroModel
from gomoku_jax.search.puct import PUCT

NEEDS_CHECKPOINT = ("plays a trained MuZero network, which needs a checkpoint: give "
                    "--checkpoint PATH (a MuZero run directory)")


@dataclasses.dataclass(frozen=True)
class MuZeroAgent(BatchedAgent):
    """Search over MuZero's learned model with `num_simulations` simulations per move.

    Attributes:
      network: the three networks (`nets.muzero.MuZeroNetwork`, shaped for the bound game);
        None only until one is given (the agent cannot play without it).
      search: the search algorithm; default PUCT at full strength (no root noise, the most
        visited move) with an unvisited move's Q at its parent's value, as `SearchAgent`'s.
      num_simulations: simulations per move (a multiple of the search's leaves_per_step).

    `info`: the search policy float32[A] and the root value float32[] per game.
    """

    name = "muzero"
    network_kinds = ("muzero",)  # a MuZero run's h, g and f
    requires_network = True

    network: Optional[MuZeroNetwork] = None
    search: SearchAlgorithm = PUCT(q_transform="parent").for_play()
    num_simulations: PositiveInt = 64

    def __post_init__(self):
        super().__post_init__()
        if self.num_simulations % self.search.leaves_per_step:
            raise ValueError(f"num_simulations ({self.num_simulations}) must be a multiple of "
                             f"the search's leaves_per_step ({self.search.leaves_per_step})")

    def check_game(self, env: Env) -> None:
        """ValueError without a network, or with one shaped for another game (its
        observation shape, number of actions or pass action differ from `env`'s)."""
        super().check_game(env)
        if self.network is None:
            raise ValueError(f"agent {self.name!r} {NEEDS_CHECKPOINT}")
        want = (tuple(env.observation_shape), env.num_actions, env.pass_action)
        have = (self.network.observation_shape, self.network.num_actions,
                self.network.pass_action)
        if have != want:
            raise ValueError(f"agent {self.name!r}: its network takes (observation shape, "
                             f"actions, pass) {have}, but the game {env.id!r} has {want}")

    @property
    def model(self) -> MuZeroModel:
        """The learned model of the bound game that the search searches."""
        self.check_game(self.game)
        return MuZeroModel(self.game, self.network, self.search)

    def act_batch(self, params: Any, agent_states, states, keys):
        """Moves for a batch of games: action int32[B], agent_states unchanged (None),
        info {"policy": float32[B, A], "value": float32[B]}. `params`: the network's
        `NetVars`; `keys[0]` is the search's key."""
        if params is None:
            raise ValueError(f"agent {self.name!r} needs its network's variables as params "
                             f"(a MuZero run's: `players.load(run).variables`)")
        out = self.search.search_model(self.model, params, states, keys[0],
                                       self.num_simulations)
        return out.action.astype(jnp.int32), agent_states, {"policy": out.policy,
                                                            "value": out.value}
