"""Every kind of plug-in by name, through one maker:

    plugins.make("game", "gomoku", board_size="9")          # GameConfig(board_size=9, ...)
    plugins.make("game", "pgx/connect_four")                # PgxGame(env_id="connect_four")
    plugins.make("search algorithm", "puct", greedy="true")  # PUCT(greedy=True, ...)
    plugins.make("evaluator", "rollout", num_rollouts=8)     # RolloutEvaluator(8)
    plugins.make("agent", "mcts", num_simulations="256")     # SearchAgent(...)
    plugins.make("training algorithm", "alphazero")          # its config

Each kind is a `registry.Registry` (name -> frozen-dataclass class) kept where the kind
lives: `games.GAMES`, `search.ALGORITHMS`, `agents.evaluator_registry.EVALUATORS`,
`agents.AGENTS`, `train.ALGORITHMS`. `make` builds the class with the values (text is
converted to each field's type) and raises ValueError listing the valid kinds, names or
fields. What it builds is the plug-in's config: a game's spec (`games.from_spec(spec)` is
its env), an agent, an evaluator, a search algorithm, a training config. The registries are
imported when first asked for, so importing this module costs nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

from gomoku_jax.registry import Registry

# kind -> (module, attribute) of its registry.
_REGISTRIES = {
    "game": ("gomoku_jax.games.registry", "GAMES"),
    "search algorithm": ("gomoku_jax.search", "ALGORITHMS"),
    "evaluator": ("gomoku_jax.agents.evaluator_registry", "EVALUATORS"),
    "agent": ("gomoku_jax.agents.registry", "AGENTS"),
    "training algorithm": ("gomoku_jax.train", "ALGORITHMS"),
}
KINDS = tuple(_REGISTRIES)


def registry(kind: str) -> Registry:
    """The registry of plug-ins of `kind` (one of `KINDS`); ValueError listing the kinds for
    any other, or for a kind whose registry is not there (yet)."""
    if kind not in _REGISTRIES:
        raise ValueError(f"unknown kind of plug-in {kind!r}; kinds: {list(KINDS)}")
    module, attribute = _REGISTRIES[kind]
    found = getattr(importlib.import_module(module), attribute, None)
    if isinstance(found, Registry):
        return found
    raise ValueError(f"no {kind} registry: {module} has no {attribute}")


def names(kind: str) -> list[str]:
    """The registered names of `kind`, sorted."""
    return registry(kind).names()


def make(kind: str, name: str, **values: Any) -> Any:
    """The plug-in `name` of `kind` built with `values` (Python values, or text as in specs
    and `--set`); see the module docstring. A game takes its "pgx/<env id>" names too, and
    an agent given an `env` is checked against that game.

    Raises:
      ValueError: an unknown kind, name or field (the message lists the valid ones), or a
        value of the wrong type or range.
    """
    registry(kind)  # an unknown kind fails here, before the module of another is imported
    if kind == "game":
        from gomoku_jax.games.registry import make_spec
        return make_spec(name, **values)
    if kind == "agent":
        from gomoku_jax.agents.registry import make as make_agent
        return make_agent(name, **values)
    return registry(kind).make(name, **values)
