"""Evaluators by name, for agents built from specs (`mcts:evaluator=rollout`).

The generic ones come from `search.evaluators`; a game's own plug in here by name with the
env ids they evaluate (their `games`). "auto" names the game's preferred evaluator.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from gomoku_jax.games.gomoku.evaluator import HeuristicEvaluator
from gomoku_jax.games.protocol import Env
from gomoku_jax.search.evaluators import NetworkEvaluator, RolloutEvaluator, UniformEvaluator

AUTO, NETWORK = "auto", "network"

# One line per evaluator: name -> its config class (a frozen dataclass).
EVALUATORS: dict[str, type] = {
    NETWORK: NetworkEvaluator,
    "rollout": RolloutEvaluator,
    "uniform": UniformEvaluator,
    "heuristic": HeuristicEvaluator,
}

# The evaluator "auto" means in each game (others: random rollouts).
PREFERRED = {"gomoku": "heuristic"}


def resolve(name: str, env: Optional[Env]) -> str:
    """The evaluator name `name` stands for in `env` ("auto" -> the game's preferred one)."""
    if name != AUTO:
        return name
    return PREFERRED.get(env.id, "rollout") if env is not None else AUTO


def check(name: str, options: Any, network: Optional[Callable] = None,
          env: Optional[Env] = None) -> None:
    """ValueError for an unknown evaluator, bad options, a network evaluator without a
    network, or (with `env`) an evaluator that cannot evaluate that game."""
    if name != AUTO and name not in EVALUATORS:
        raise ValueError(f"unknown evaluator {name!r}; available: "
                         f"{sorted([AUTO, *EVALUATORS])}")
    try:
        options = dict(options)
    except (TypeError, ValueError):
        raise ValueError(f"evaluator_options must be (name, value) pairs, got {options!r}") \
            from None
    if name == NETWORK:
        if network is None:
            raise ValueError("evaluator 'network' needs a network (apply function)")
        if options:
            raise ValueError(f"evaluator 'network' takes no options, got {sorted(options)}")
    elif name != AUTO:
        try:
            EVALUATORS[name](**options)
        except TypeError as e:
            raise ValueError(f"bad evaluator_options for {name!r}: {e}") from None
    if env is not None:
        cls = EVALUATORS[resolve(name, env)]
        games = getattr(cls, "games", None)
        if games is not None and env.id not in games:
            raise ValueError(f"evaluator {resolve(name, env)!r} evaluates {list(games)}, not "
                             f"{env.id!r}")


def make(name: str, env: Env, network: Optional[Callable] = None,
         options: Mapping[str, Any] = {}) -> Any:
    """The evaluator `name` for `env`, with `options` (checked by `check`)."""
    check(name, options, network, env)
    name = resolve(name, env)
    if name == NETWORK:
        return NetworkEvaluator(network)
    return EVALUATORS[name](**options)
