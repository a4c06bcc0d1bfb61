"""Baseline players for any game: uniformly random, and random weighted by the game's
candidate weights (Gomoku: seed 000's proximity mask)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from gomoku_jax.agents.base import Agent
from gomoku_jax.configs import UnitFloat
from gomoku_jax.games.random_play import random_legal_action


@dataclasses.dataclass(frozen=True)
class RandomAgent(Agent):
    """A uniformly random legal move."""

    name = "random"

    def act(self, params, agent_state, state, key):
        legal = state.legal_action_mask
        policy = legal / jnp.sum(legal)
        return random_legal_action(key, legal), agent_state, {
            "policy": policy.astype(jnp.float32), "value": jnp.float32(0.0)}


@dataclasses.dataclass(frozen=True)
class ProximityRandomAgent(Agent):
    """A random legal move drawn with probability proportional to the game's candidate
    weight (Gomoku, seed 000: 1 next to a stone, 0.5 two cells away, 0.2 at three, 0.05
    beyond; all equal in the opening; other games: uniform). With `threshold` > 0: uniform
    over the moves whose weight reaches it (all legal moves if none does)."""

    name = "proximity_random"
    threshold: UnitFloat = 0.0

    def act(self, params, agent_state, state, key):
        legal = state.legal_action_mask
        weights = self.game.candidate_weights(state)
        if self.threshold > 0:
            near = legal & (weights >= self.threshold)
            weights = jnp.where(jnp.any(near), near, legal).astype(jnp.float32)
        weights = jnp.where(legal, weights, 0.0)
        weights = jnp.where(jnp.sum(weights) > 0, weights, legal.astype(jnp.float32))
        policy = weights / jnp.sum(weights)
        action = jax.random.categorical(key, jnp.log(policy)).astype(jnp.int32)
        return action, agent_state, {"policy": policy, "value": jnp.float32(0.0)}
