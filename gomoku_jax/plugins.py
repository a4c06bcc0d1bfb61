"""Every kind of plug-in by name, through one registrar and one maker:

    plugins.make("game", "gomoku", board_size="9")          # GameConfig(board_size=9, ...)
    plugins.make("game", "pgx/connect_four")                # PgxGame(env_id="connect_four")
    plugins.make("search algorithm", "puct", greedy="true")  # PUCT(greedy=True, ...)
    plugins.make("evaluator", "rollout", num_rollouts=8)     # RolloutEvaluator(8)
    plugins.make("agent", "mcts", num_simulations="256")     # SearchAgent(...)
    plugins.make("training algorithm", "alphazero")          # its config
    plugins.make("training preset", "test", **{"run.iterations": "4"})  # the preset, changed
    plugins.make("network preset", "tiny", blocks="3")       # NetConfig(blocks=3, ...)

    @plugins.register("search algorithm", "wide_puct")       # from a user's module, a
    @dataclasses.dataclass(frozen=True)                      # notebook cell or another
    class WidePUCT(PUCT): ...                                # package (docs/plugins.md)

Each kind is a `registry.Registry` (name -> the plug-in itself) kept where the kind lives
(`_REGISTRIES`): `games.GAMES` (Env classes), `search.ALGORITHMS`,
`agents.evaluator_registry.EVALUATORS`, `agents.AGENTS` (frozen-dataclass classes),
`train.ALGORITHMS` (trainer classes), `players.NETWORKS` (Player classes, by network kind),
`train.PRESETS` and `nets.NET_PRESETS` (config instances). `make` builds the plug-in's config
with the values (text is converted to each field's type) and raises ValueError listing the
valid kinds, names or fields: a game's spec (`games.from_spec(spec)` is its env), an agent,
an evaluator, a search algorithm, a training config, a net config. The registries are
imported when first asked for, so importing this module costs nothing.

Plug-ins in other installed packages are found through the entry points of the group
`gomoku_jax.plugins` (each names a module, imported once, lazily, before a name is resolved),
and `load(module)` (the command line's `--plugin MODULE`) imports one now; see
`plugin_loading` for what a broken plug-in does.
"""

from __future__ import annotations

import importlib
from typing import Any, Optional

from gomoku_jax import plugin_loading
from gomoku_jax.plugin_loading import FAILURES, GROUP
from gomoku_jax.registry import Registry

# kind -> (module, attribute) of its registry.
_REGISTRIES = {
    "game": ("gomoku_jax.games.registry", "GAMES"),
    "search algorithm": ("gomoku_jax.search", "ALGORITHMS"),
    "evaluator": ("gomoku_jax.agents.evaluator_registry", "EVALUATORS"),
    "agent": ("gomoku_jax.agents.registry", "AGENTS"),
    "training algorithm": ("gomoku_jax.train.algorithms", "ALGORITHMS"),
    "network kind": ("gomoku_jax.players.loader", "NETWORKS"),
    "training preset": ("gomoku_jax.train.config", "PRESETS"),
    "network preset": ("gomoku_jax.nets.resnet", "NET_PRESETS"),
}
KINDS = tuple(_REGISTRIES)
_MISSING = object()


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


def register(kind: str, name: Any = None, implementation: Any = _MISSING, *,
             note: str = "") -> Any:
    """Register a plug-in of `kind` (one of `KINDS`), as a decorator or a call:

        @plugins.register("agent", "first_legal")            # a decorator, with a name
        @plugins.register("game")                            # a game: under its Spec.id
        plugins.register("training preset", "nim_test", NimConfig(...),
                         note="3-heap nim, tiny, for the tests")          # a call

    `note`: one line on what it is for (`gomoku-jax train --help` lists a preset's).

    Raises:
      ValueError: an unknown kind, a name already taken, a config that is not a frozen
        dataclass, or an implementation the kind refuses (`Registry.register`).
    """
    target = registry(kind)
    if implementation is not _MISSING:
        return target.register(name, implementation, note=note)
    return target.register(name, note=note)  # a decorator (or, given a class, registered)


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


def load(module: str) -> bool:
    """Import the plug-in module `module` now (`gomoku-jax --plugin MODULE`); False (and a
    warning on stderr naming it) when its import fails."""
    return plugin_loading.load_module(module)


def sources(kind: Optional[str] = None) -> dict[str, dict[str, str]]:
    """{kind: {name: where it came from}} over every kind (or `kind` alone): "gomoku_jax"
    (the package), "entry point gomoku_jax.plugins: NAME = MODULE", "--plugin MODULE" or
    "module M" (a user's module; a notebook's is `__main__`)."""
    kinds = KINDS if kind is None else (registry(kind).kind,)
    return {k: {n: registry(k).origin(n) for n in registry(k).names()} for k in kinds}


__all__ = ["FAILURES", "GROUP", "KINDS", "load", "make", "names", "register", "registry",
           "sources"]
