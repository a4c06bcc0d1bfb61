"""gomoku_jax: a JAX-native, functional research platform for Gomoku AI.

    import jax, gomoku_jax
    env = gomoku_jax.make("gomoku", board_size=15, win_length=5, rule="freestyle")
    state = env.init(jax.random.key(0))
    state = env.step(state, 7 * 15 + 7)
"""

from gomoku_jax.game import GameConfig, Gomoku, State, auto_reset, observe, symmetry
from gomoku_jax.game import to_svg, to_text

__version__ = "0.1.0"

_ENVS = {"gomoku": Gomoku}


def make(env_id: str, **config) -> Gomoku:
    """An environment by name: `make("gomoku", board_size=15, win_length=5, rule="freestyle")`.

    `feature_plane` may be a callable `f(board, colour) -> float32[N, N]` or the name of a
    heuristic plane: "patterns" (seed 000's pattern heat map) or "proximity".

    Raises:
      ValueError: an unknown env id, or a config value out of range.
    """
    if env_id not in _ENVS:
        raise ValueError(f"unknown env id {env_id!r}; available: {sorted(_ENVS)}")
    plane = config.get("feature_plane")
    if isinstance(plane, str):
        from gomoku_jax.features.planes import named_plane

        config["feature_plane"] = named_plane(plane, config.get("win_length", 5),
                                              config.get("rule", "freestyle"))
    try:
        return _ENVS[env_id](**config)
    except TypeError as e:  # an unknown keyword
        raise ValueError(f"bad config for {env_id!r}: {e}") from None


__all__ = ["GameConfig", "Gomoku", "State", "auto_reset", "make", "observe", "symmetry",
           "to_svg", "to_text"]
