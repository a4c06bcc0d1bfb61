"""The agent interface and the registry every algorithm plugs into.

An agent is a frozen dataclass of its (static) config with two pure methods:

    init(key) -> agent_state
    act(params, agent_state, env_state, key) -> (action int32[], agent_state, info)

for one game; batch with `jax.vmap`. `params` are whatever the agent learns (None for the
fixed ones), `agent_state` whatever it carries between moves (None for most), and `info`
is a dict with at least `policy` float32[N*N] (the distribution the move came from, or the
search's visit distribution) and `value` float32[] (the agent's estimate for the side to
move, 0 where it has none).

Adding an algorithm: write its dataclass in a module of this package and add one line to
`REGISTRY` in `gomoku_jax/agents/__init__.py`.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, Callable

import jax
import jax.numpy as jnp

from gomoku_jax.game.random_play import random_legal_action
from gomoku_jax.game.state import State


@dataclasses.dataclass(frozen=True)
class Agent(abc.ABC):
    """Base class: no params, no agent state; subclasses define `act`."""

    name = "agent"

    def init(self, key: jax.Array) -> Any:
        del key
        return None

    @abc.abstractmethod
    def act(self, params: Any, agent_state: Any, state: State, key: jax.Array
            ) -> tuple[jax.Array, Any, dict[str, jax.Array]]:
        """One move for the side to move of `state` (a single game)."""

    def act_batch(self, params: Any, agent_states: Any, states: State, keys: jax.Array
                  ) -> tuple[jax.Array, Any, dict[str, jax.Array]]:
        """`act` over a batch (leading axis on agent_states, states and keys). By default a
        vmap; agents that are batched by nature (tree search) override it."""
        return jax.vmap(self.act, in_axes=(None, 0, 0, 0))(params, agent_states, states, keys)


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


def make_from(registry: dict[str, Callable[..., Agent]], name: str, **config) -> Agent:
    """Build agent `name` from `registry` with `config`, or raise a ValueError that lists the
    known names, or the agent's valid config fields."""
    if name not in registry:
        raise ValueError(f"unknown agent {name!r}; available: {sorted(registry)}")
    cls = registry[name]
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(config) - fields)
    if unknown:
        raise ValueError(f"unknown config for agent {name!r}: {unknown}; valid fields: "
                         f"{sorted(fields) or 'none'}")
    return cls(**config)
