"""The Gomoku game as pure JAX functions (see `Gomoku` for the rules and conventions)."""

from gomoku_jax.game.config import GameConfig
from gomoku_jax.game.env import VERSION, Gomoku, auto_reset
from gomoku_jax.game.observe import observe
from gomoku_jax.game.positions import winning_colours
from gomoku_jax.game.render import to_svg, to_text
from gomoku_jax.game.state import BLACK, EMPTY, WHITE, State
from gomoku_jax.game import symmetry

__all__ = [
    "BLACK", "EMPTY", "WHITE", "VERSION", "GameConfig", "Gomoku", "State", "auto_reset",
    "observe", "symmetry", "to_svg", "to_text", "winning_colours",
]
