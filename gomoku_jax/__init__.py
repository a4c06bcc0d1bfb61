"""gomoku_jax: a JAX-native, functional research platform for Gomoku AI and the board games
next to it.

    import jax, gomoku_jax
    env = gomoku_jax.make("gomoku", board_size=15, win_length=5, rule="freestyle")
    state = env.init(jax.random.key(0))
    state = env.step(state, 7 * 15 + 7)

Any registered game works the same way (`gomoku_jax.make("pgx/connect_four")`); search,
agents, training and the arena take the env as an argument. Every kind of plug-in (game,
search algorithm, evaluator, agent, training algorithm) is built by name with
`gomoku_jax.plugins.make(kind, name, **values)`.
"""

from gomoku_jax import plugins
from gomoku_jax.games import Env, auto_reset, make, symmetry
from gomoku_jax.games.gomoku import GameConfig, Gomoku, State, to_svg, to_text

__version__ = "0.2.0"

__all__ = ["Env", "GameConfig", "Gomoku", "State", "auto_reset", "make", "plugins",
           "symmetry", "to_svg", "to_text"]
