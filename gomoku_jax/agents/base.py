"""The agent interface every algorithm plugs into.

An agent is a frozen dataclass of its (static) config, bound to a game, with two pure
methods:

    init(key) -> agent_state
    act(params, agent_state, env_state, key) -> (action int32[], agent_state, info)

for one game; batch with `jax.vmap`, or `act_batch`, which search agents override because
they are batched by nature. `params` are whatever the agent learns (None for the fixed
ones), `agent_state` whatever it carries between moves (None for most), and `info` is a
dict with at least `policy` float32[A] (the distribution the move came from, or the
search's visit distribution) and `value` float32[] (the agent's estimate for the side to
move, 0 where it has none).

The game is the agent's `env` field: `agent.bind(env)` gives the copy bound to it (the
arena, self-play, tactics and pbrain bind the agents they are given), and an agent that
plays only some games says so in `games` (env ids), so binding it elsewhere is an error.

An agent's fields are its config, checked against their annotations (`configs.validate`,
called here in `__post_init__`; a subclass's `__post_init__` calls this one first, then
checks what types can't say). Adding an agent: write its dataclass in a module and register
it, `AGENTS.register(name, cls)` in `gomoku_jax/agents/registry.py` (from outside the
package: `gomoku_jax.plugins.register("agent", name)`, docs/plugins.md).
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, ClassVar, Optional

import jax
import jax.numpy as jnp

from gomoku_jax import configs
from gomoku_jax.games.protocol import Env
from gomoku_jax.games.random_play import random_legal_action


@dataclasses.dataclass(frozen=True)
class Agent(abc.ABC):
    """Base class: no params, no agent state; subclasses define `act`.

    Attributes:
      env: the game the agent plays (None until bound).
    """

    name: ClassVar[str] = "agent"
    games: ClassVar[Optional[tuple[str, ...]]] = None  # env ids it can play; None: any
    # The kinds of trained network (`players.NETWORKS`) it plays with, given a run's
    # `--checkpoint` (a search agent: a policy-value network as its evaluator); (): none.
    network_kinds: ClassVar[tuple[str, ...]] = ()
    # Whether it plays only with such a network (none untrained): a spec naming it needs
    # a `--checkpoint` (MuZero's search over its learned model).
    requires_network: ClassVar[bool] = False

    env: Optional[Env] = None

    def __post_init__(self):
        configs.validate(self)

    def bind(self, env: Env) -> "Agent":
        """This agent playing `env`; ValueError if it cannot play that game."""
        if self.env == env:
            return self
        self.check_game(env)
        return dataclasses.replace(self, env=env)

    def check_game(self, env: Env) -> None:
        """ValueError unless this agent can play `env` (see `games`)."""
        if self.games is not None and env.id not in self.games:
            raise ValueError(f"agent {self.name!r} plays {list(self.games)}, not {env.id!r}")

    @property
    def game(self) -> Env:
        """The bound env; ValueError when there is none."""
        if self.env is None:
            raise ValueError(f"agent {self.name!r} is not bound to a game: use "
                             f"agent.bind(env) (the arena and self-play bind their agents)")
        return self.env

    def init(self, key: jax.Array) -> Any:
        del key
        return None

    @abc.abstractmethod
    def act(self, params: Any, agent_state: Any, state: Any, key: jax.Array
            ) -> tuple[jax.Array, Any, dict[str, jax.Array]]:
        """One move for the side to move of `state` (a single game)."""

    def act_batch(self, params: Any, agent_states: Any, states: Any, keys: jax.Array
                  ) -> tuple[jax.Array, Any, dict[str, jax.Array]]:
        """`act` over a batch (leading axis on agent_states, states and keys). By default a
        vmap; agents that are batched by nature (tree search) override it."""
        return jax.vmap(self.act, in_axes=(None, 0, 0, 0))(params, agent_states, states, keys)


@dataclasses.dataclass(frozen=True)
class BatchedAgent(Agent):
    """An agent that is batched by nature (`act_batch` is its algorithm); `act` plays one
    game as a batch of one."""

    def act(self, params, agent_state, state, key):
        one = jax.tree.map(lambda x: x[None], (agent_state, state))
        action, new_state, info = self.act_batch(params, one[0], one[1], key[None])
        return action[0], jax.tree.map(lambda x: x[0], new_state), jax.tree.map(
            lambda x: x[0], info)

    @abc.abstractmethod
    def act_batch(self, params, agent_states, states, keys):
        """Moves for a batch of games (leading axis B)."""


def play_best(scores: jax.Array, legal: jax.Array, key: jax.Array
              ) -> tuple[jax.Array, jax.Array]:
    """(action, policy): a uniformly random legal action among those of maximal score.

    Args:
      scores: float32[A]; legal: bool[A] (at least one True).
    Returns:
      int32[] action, float32[A] uniform policy over the tied best actions.
    """
    masked = jnp.where(legal, scores, -jnp.inf)
    best = legal & (masked == jnp.max(masked))
    return random_legal_action(key, best), best / jnp.sum(best)
