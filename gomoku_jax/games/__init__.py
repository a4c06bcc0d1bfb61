"""Games: the protocol every game implements, the registry, and the games themselves.

    env = gomoku_jax.games.make("gomoku", board_size=9)
    env = gomoku_jax.games.make("pgx/connect_four")
    state = env.init(key); state = env.step(state, action); obs = env.observe(state)

See `protocol.py` for the protocol and its optional hooks, `api_check.check_env` for the
checks every env passes, and `gomoku/` for Gomoku.
"""

from gomoku_jax.games import symmetry
from gomoku_jax.games.auto_reset import auto_reset
from gomoku_jax.games.protocol import Env, Examples, FieldInfo, GameSpec, is_over, reward_of
from gomoku_jax.games.random_play import random_legal_action
from gomoku_jax.games.registry import (
    GAMES,
    env_class,
    from_spec,
    make,
    make_spec,
    register,
    spec_class,
)

__all__ = ["Env", "Examples", "FieldInfo", "GAMES", "GameSpec", "auto_reset", "env_class",
           "from_spec", "is_over", "make", "make_spec", "random_legal_action", "register",
           "reward_of", "spec_class", "symmetry"]
