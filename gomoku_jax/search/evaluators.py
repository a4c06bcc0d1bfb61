"""Evaluators: batched maps from env states to (prior logits, value) that back the search.

An evaluator is a frozen dataclass called as

    evaluator(env, params, states, key) -> (logits float32[B, A], value float32[B])

over a batch of states of `env` (leading axis B; mctx calls the recurrent function on the
whole batch), the value from the point of view of each state's side to move, in [-1, 1].
Logits need not mask illegal moves; the search does that. The ones here work on any game;
a game's own (Gomoku's heuristic evaluator) sit with the game, and all of them are named
in `agents.evaluator_registry.EVALUATORS`. An evaluator's fields are its options (checked
against their annotations); `games` says which env ids it can evaluate (None: any).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Optional

import jax
import jax.numpy as jnp

from gomoku_jax import configs
from gomoku_jax.configs import PositiveInt
from gomoku_jax.games.protocol import is_over, reward_of
from gomoku_jax.games.random_play import random_legal_action

Evaluator = Callable[[Any, Any, Any, jax.Array], tuple[jax.Array, jax.Array]]


@dataclasses.dataclass(frozen=True)
class NetworkEvaluator:
    """Any network `apply(params, observations float32[B, *obs_shape]) -> (logits [B, A],
    value [B] or [B, 1])` on `env.observe` (e.g. a `nets.PolicyValueModel`). `apply` None
    stands for a network given later (an agent's `network`); calling it is then an error."""

    games: ClassVar[Optional[tuple[str, ...]]] = None

    apply: Optional[Callable[[Any, jax.Array], tuple[jax.Array, jax.Array]]] = None

    def __post_init__(self):
        configs.validate(self)

    def __call__(self, env, params, states, key):
        del key
        if self.apply is None:
            raise ValueError("evaluator 'network' needs a network (apply function)")
        logits, value = self.apply(params, jax.vmap(env.observe)(states))
        return logits.astype(jnp.float32), value.reshape(-1).astype(jnp.float32)


@dataclasses.dataclass(frozen=True)
class RolloutEvaluator:
    """Uniform prior; value = mean result of `num_rollouts` uniformly random playouts to the
    end (terminated or truncated), for the side to move of each state (a pure-MCTS value
    that needs no network). A state that is already over gets value 0 (the search scores
    finished games by their rewards)."""

    games: ClassVar[Optional[tuple[str, ...]]] = None

    num_rollouts: PositiveInt = 1

    def __post_init__(self):
        configs.validate(self)

    def __call__(self, env, params, states, key):
        del params
        r = self.num_rollouts
        batch = states.legal_action_mask.shape[0]
        starts = jax.tree.map(lambda x: jnp.repeat(x, r, axis=0), states)
        mover = starts.current_player

        def body(carry):
            s, total, i = carry
            a = random_legal_action(jax.random.fold_in(key, i), s.legal_action_mask)
            s = jax.vmap(env.step)(s, a)
            return s, total + reward_of(s, mover), i + 1

        zero = jnp.zeros((batch * r,), jnp.float32)
        _, total, _ = jax.lax.while_loop(lambda c: ~jnp.all(is_over(c[0])), body,
                                         (starts, zero, 0))
        logits = jnp.zeros((batch, env.num_actions), jnp.float32)
        return logits, total.reshape(batch, r).mean(axis=1)


@dataclasses.dataclass(frozen=True)
class UniformEvaluator:
    """Zero logits and zero value: search guided by the games' results alone."""

    games: ClassVar[Optional[tuple[str, ...]]] = None

    def __call__(self, env, params, states, key):
        del params, key
        batch = states.legal_action_mask.shape[0]
        return (jnp.zeros((batch, env.num_actions), jnp.float32),
                jnp.zeros((batch,), jnp.float32))
