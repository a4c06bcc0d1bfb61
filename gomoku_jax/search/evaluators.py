"""Evaluators: batched maps from env states to (prior logits, value) that back the search.

An evaluator is `evaluate(params, states, key) -> (logits float32[B, N*N], value float32[B])`
over a batch of states (leading axis B; mctx calls the recurrent function on the whole
batch), with the value from the point of view of each state's side to move, in [-1, 1].
Logits need not mask illegal moves; the search does that.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp

from gomoku_jax.features.cell_values import cell_values, position_value
from gomoku_jax.features.heuristic_score import HeuristicScoreConfig
from gomoku_jax.features.patterns import PatternConfig
from gomoku_jax.game import rules
from gomoku_jax.game.observe import observe
from gomoku_jax.game.random_play import random_legal_action
from gomoku_jax.game.state import State

Evaluator = Callable[[Any, State, jax.Array], tuple[jax.Array, jax.Array]]


@dataclasses.dataclass(frozen=True)
class NetworkEvaluator:
    """Any network `apply(params, observations float32[B, N, N, C]) -> (logits [B, N*N],
    value [B] or [B, 1])` (e.g. a Flax module's apply, or an nnx.merge wrapper)."""

    apply: Callable[[Any, jax.Array], tuple[jax.Array, jax.Array]]

    def __call__(self, params, states, key):
        del key
        logits, value = self.apply(params, observe(states))
        return logits.astype(jnp.float32), value.reshape(-1).astype(jnp.float32)


@dataclasses.dataclass(frozen=True)
class HeuristicEvaluator:
    """Prior from cell values (`features.cell_values`, weighted like the heuristic player):
    `logits = (attack · own + defence · opponent) / prior_temperature`, plus `win_bonus` on
    a five to complete and half of it on the opponent's five to block; value =
    `position_value` (exact where a five or a double threat decides, else a tanh of the
    best own minus the best opponent cell)."""

    attack: float = 1.0
    defence: float = 0.9
    score_weight: float = 1.0
    value_scale: float = 50.0
    patterns: PatternConfig = PatternConfig()
    heuristic_score: HeuristicScoreConfig = HeuristicScoreConfig()
    prior_temperature: float = 10.0
    win_bonus: float = 50.0

    def single(self, state: State) -> tuple[jax.Array, jax.Array]:
        cfg = state.config
        values = lambda colour: cell_values(  # noqa: E731
            state.board, colour, cfg.win_length, cfg.rule, self.patterns, self.score_weight,
            self.heuristic_score)
        own, opp = values(state.color), values(-state.color)
        legal = state.legal_action_mask
        mix = (self.attack * own.value + self.defence * opp.value).reshape(-1)
        logits = (mix / self.prior_temperature + self.win_bonus * (own.wins.reshape(-1) & legal)
                  + 0.5 * self.win_bonus * (opp.wins.reshape(-1) & legal))
        return logits, position_value(own, opp, legal, self.value_scale)

    def __call__(self, params, states, key):
        del params, key
        return jax.vmap(self.single)(states)


@dataclasses.dataclass(frozen=True)
class RolloutEvaluator:
    """Uniform prior; value = mean result of `num_rollouts` uniformly random playouts to the
    end (a pure-MCTS baseline that needs no network)."""

    num_rollouts: int = 1

    def __call__(self, params, states, key):
        del params
        b = states.board.shape[0]
        r = self.num_rollouts
        starts = jax.tree.map(lambda x: jnp.repeat(x, r, axis=0), states)
        mover = jnp.repeat(states.color, r)

        def body(carry):
            s, i = carry
            a = random_legal_action(jax.random.fold_in(key, i), s.legal_action_mask)
            return jax.vmap(rules.step)(s, a), i + 1

        final, _ = jax.lax.while_loop(lambda c: ~jnp.all(c[0].terminated), body, (starts, 0))
        # A state that is already over needs no rollout: the search gives it value 0 anyway.
        result = (final.winner * mover).astype(jnp.float32).reshape(b, r).mean(axis=1)
        logits = jnp.zeros(states.board.shape[:1] + (states.board.shape[-1] ** 2,),
                           jnp.float32)
        return logits, result


@dataclasses.dataclass(frozen=True)
class UniformEvaluator:
    """Zero logits and zero value: search guided by terminal results alone."""

    def __call__(self, params, states, key):
        del params, key
        batch, a = states.board.shape[0], states.board.shape[-1] ** 2
        return jnp.zeros((batch, a), jnp.float32), jnp.zeros((batch,), jnp.float32)


EVALUATORS = {"heuristic": HeuristicEvaluator, "rollout": RolloutEvaluator,
              "uniform": UniformEvaluator}


def make_evaluator(name: str, network: Optional[Callable] = None, **config) -> Evaluator:
    """An evaluator by name: "heuristic", "rollout", "uniform" (zero logits and value), or
    "network" (needs `network`, an apply function)."""
    if name == "network":
        if network is None:
            raise ValueError("evaluator 'network' needs a network apply function")
        return NetworkEvaluator(network)
    if name not in EVALUATORS:
        raise ValueError(f"unknown evaluator {name!r}; available: network, "
                         f"{', '.join(sorted(EVALUATORS))}")
    return EVALUATORS[name](**config)
