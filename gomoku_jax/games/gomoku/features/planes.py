"""Heuristic maps packaged as the env's optional extra observation plane.

`gomoku_jax.make("gomoku", feature_plane="patterns")` appends seed 000's pattern heat map
(or "proximity", the proximity mask) as channel 5 of the observation. The planes are frozen
dataclasses, so two envs made alike compare equal and share compiled code.
"""

from __future__ import annotations

import dataclasses

import jax

from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.gomoku.features.patterns import PatternConfig, pattern_features
from gomoku_jax.games.gomoku.features.proximity import ProximityConfig, proximity_mask


@dataclasses.dataclass(frozen=True)
class PatternPlane:
    """f(board, colour to move) -> float32[N, N]: `pattern_features` for this game."""

    win_length: int = 5
    rule: str = "freestyle"
    config: PatternConfig = PatternConfig()

    def __call__(self, board: jax.Array, colour: jax.Array) -> jax.Array:
        return pattern_features(board, colour, self.win_length, self.rule, self.config)


@dataclasses.dataclass(frozen=True)
class ProximityPlane:
    """f(board, colour to move) -> float32[N, N]: the proximity mask (colour unused)."""

    config: ProximityConfig = ProximityConfig()

    def __call__(self, board: jax.Array, colour: jax.Array) -> jax.Array:
        del colour
        return proximity_mask(board, self.config)


def plane_function(config: GameConfig):
    """The extra plane of `config`, as a function f(board, colour) -> float32[N, N]: the
    named plane for its k and rule, or the config's own callable."""
    name = config.feature_plane
    if name == "patterns":
        return PatternPlane(config.win_length, config.rule)
    if name == "proximity":
        return ProximityPlane()
    if callable(name):
        return name
    raise ValueError(f"game config {config} has no feature plane")
