"""Evaluators by name, for agents built from specs (`mcts:evaluator=rollout`,
`mcts:evaluator=rollout,num_rollouts=8`).

`EVALUATORS` is the evaluators' `Registry`: a name -> the evaluator's frozen-dataclass class,
whose fields are its options (`EVALUATORS.make("rollout", num_rollouts="8")`). The generic
ones come from `search.evaluators`; a game's own plug in here by name with the env ids they
evaluate (their `games`). Two names are not classes: "auto", the game's preferred
evaluator (its spec's `preferred_evaluator`) at its defaults, and "network" resolves to
`NetworkEvaluator` on the network an agent is given (its `network` field).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

from gomoku_jax.games.gomoku.heuristic_evaluator import HeuristicEvaluator
from gomoku_jax.games.protocol import Env
from gomoku_jax.registry import Registry
from gomoku_jax.search.evaluators import NetworkEvaluator, RolloutEvaluator, UniformEvaluator

AUTO, NETWORK = "auto", "network"

# name -> its config class (a frozen dataclass; fields: its options), registered as every
# plug-in is (`EVALUATORS.register(name, cls)`, or `gomoku_jax.plugins.register("evaluator")`).
EVALUATORS = Registry("evaluator")
EVALUATORS.register(NETWORK, NetworkEvaluator)
EVALUATORS.register("rollout", RolloutEvaluator)
EVALUATORS.register("uniform", UniformEvaluator)
EVALUATORS.register("heuristic", HeuristicEvaluator)  # Gomoku's


def names() -> list[str]:
    """Every name an agent's `evaluator` takes: the registered ones and "auto"."""
    return sorted([AUTO, *EVALUATORS])


def resolve(name: str, env: Optional[Env]) -> str:
    """The evaluator name `name` stands for in `env` ("auto" -> the game's preferred one,
    its spec's `preferred_evaluator`)."""
    if name != AUTO:
        return name
    return env.spec.preferred_evaluator if env is not None else AUTO


def _at_defaults(config: Any) -> bool:
    try:
        return dataclasses.is_dataclass(config) and config == type(config)()
    except (TypeError, ValueError):
        return False


def config_for(name: str, config: Any) -> Any:
    """The evaluator config an agent holds for the evaluator `name`: `config`, or when None
    the named evaluator's defaults; None for "auto" and "network", which take none. A config
    of another evaluator still at its defaults (what changing an agent's `evaluator` leaves
    behind) gives way too; one with options set stays, for `check` to refuse."""
    cls = EVALUATORS.get(name) if name != NETWORK else None
    if cls is None:
        return None if _at_defaults(config) else config
    if config is None or (not isinstance(config, cls) and _at_defaults(config)):
        return cls()
    return config


def check(name: str, config: Any = None, network: Optional[Callable] = None,
          env: Optional[Env] = None) -> None:
    """ValueError for an unknown evaluator, a `config` that is not an instance of the named
    evaluator's class (or any config with "auto" or "network"), a network evaluator without
    a network, or (with `env`) an evaluator that cannot evaluate that game. `config` None
    (or `()`): the evaluator's defaults."""
    if name != AUTO and name not in EVALUATORS:
        raise ValueError(f"unknown evaluator {name!r}; available: {names()}")
    if isinstance(config, tuple) and not config:
        config = None
    if name == NETWORK and network is None:
        raise ValueError("evaluator 'network' needs a network (apply function)")
    if config is not None:
        if name in (AUTO, NETWORK):
            raise ValueError(f"evaluator {name!r} takes no evaluator_config (options), got "
                             f"{config!r}; name the evaluator to set its options")
        cls = EVALUATORS[name]
        if not isinstance(config, cls):
            raise ValueError(f"evaluator_config of evaluator {name!r} must be a "
                             f"{cls.__name__} (fields {EVALUATORS.fields(name)}), got "
                             f"{config!r}")
    if env is not None:
        resolved = resolve(name, env)
        games = getattr(EVALUATORS[resolved], "games", None)
        if games is not None and env.id not in games:
            raise ValueError(f"evaluator {resolved!r} evaluates {list(games)}, not "
                             f"{env.id!r}")


def make(name: str, env: Env, network: Optional[Callable] = None, config: Any = None) -> Any:
    """The evaluator `name` for `env`: `config` (an instance of its class: its options),
    by default the class's defaults; "network" evaluates with `network`. Checked by
    `check`."""
    check(name, config, network, env)
    name = resolve(name, env)
    if name == NETWORK:
        return NetworkEvaluator(network)
    return config if config is not None and config != () else EVALUATORS[name]()
