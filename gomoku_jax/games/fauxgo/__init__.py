"""Faux Go ("Simply GO", seed 004): an encirclement-capture game on an N x N board."""

from gomoku_jax.games.fauxgo.config import FauxGoConfig
from gomoku_jax.games.fauxgo.env import FauxGo
from gomoku_jax.games.fauxgo.state import BLACK, EMPTY, WHITE, State

__all__ = ["BLACK", "EMPTY", "FauxGo", "FauxGoConfig", "State", "WHITE"]
