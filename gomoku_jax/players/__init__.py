"""Load any training run's network to play it, without the training layer.

    player = players.load("runs/quick")          # a run dir, its checkpoints/ or a step dir
    agent = player.agent()                       # the run's own agent at full strength
    params = player.params_for(agent)            # what that agent plays with
    shipped = players.default_network()          # the 15x15 network shipped with the package

Each kind of network a run's checkpoints hold is a `Player` subclass registered in
`NETWORKS` (`NETWORKS.register(cls)`, under its `kind`); a run directory records its kind
(`run_dir.tags`). The training layer writes checkpoints with the same classes
(`Player.to_dicts`), so a new training algorithm that trains a policy-value network, a
GMO or MuZero's networks plays with no change here.
"""

from __future__ import annotations

from gomoku_jax.players import run_dir
from gomoku_jax.players.base import Player
from gomoku_jax.players.defaults import (
    SHIPPED_AGENT,
    default_agent_spec,
    default_network,
    shipped_game,
)
from gomoku_jax.players.gmo import GMOPlayer
from gomoku_jax.players.loader import (
    NETWORKS,
    default_network_path,
    load,
    load_for_cli,
    player_class,
)
from gomoku_jax.players.muzero import MuZeroPlayer
from gomoku_jax.players.policy_value import PolicyValuePlayer, uses_network

__all__ = ["GMOPlayer", "MuZeroPlayer", "NETWORKS", "Player", "PolicyValuePlayer",
           "SHIPPED_AGENT", "default_agent_spec", "default_network", "default_network_path", "load",
           "load_for_cli", "player_class", "run_dir", "shipped_game", "uses_network"]
