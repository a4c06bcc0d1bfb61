"""Gomoku as a game of the platform: the env (rules, observation, positions, rendering),
its features (proximity, threat patterns, HeuristicScore), the heuristic evaluator, the
exact threat solver, the tactical suite and the synthetic tactical training examples.

    env = gomoku_jax.make("gomoku", board_size=15, win_length=5, rule="freestyle")
"""

from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.gomoku.env import VERSION, Gomoku
from gomoku_jax.games.gomoku.observe import observe
from gomoku_jax.games.gomoku.positions import winning_colours
from gomoku_jax.games.gomoku.render import to_svg, to_text
from gomoku_jax.games.gomoku.state import BLACK, EMPTY, WHITE, State

__all__ = [
    "BLACK", "EMPTY", "WHITE", "VERSION", "GameConfig", "Gomoku", "State", "observe",
    "to_svg", "to_text", "winning_colours",
]
