"""Heuristic maps packaged as the env's optional extra observation plane.

`gomoku_jax.make("gomoku", feature_plane="patterns")` appends seed 000's pattern heat map
(or "proximity", the proximity mask) as channel 5 of the observation. The planes are frozen
dataclasses, so two envs made alike compare equal and share compiled code.
"""

from __future__ import annotations

import dataclasses

import jax

from gomoku_jax.features.patterns import PatternConfig, pattern_features
from gomoku_jax.features.proximity import ProximityConfig, proximity_mask


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


PLANE_NAMES = ("patterns", "proximity")


def named_plane(name: str, win_length: int = 5, rule: str = "freestyle"):
    """The plane called `name` (one of PLANE_NAMES) for a game with this k and rule."""
    if name == "patterns":
        return PatternPlane(win_length, rule)
    if name == "proximity":
        return ProximityPlane()
    raise ValueError(f"unknown feature_plane {name!r}; named planes: {PLANE_NAMES}, or pass a "
                     f"callable f(board, colour) -> float32[N, N]")
