"""Plug-ins by name: the one shape of every kind (games, search algorithms, evaluators,
agents, training algorithms, network kinds, presets).

A `Registry` maps a name to the plug-in itself (its implementation: a search algorithm's or
an agent's frozen-dataclass class, a game's `Env` class, a training algorithm's trainer
class, a preset's config instance), and `make(name, **values)` builds the plug-in's config
(`config_of(implementation)`: the class itself, a game's `Spec`, a trainer's `Config`, a
preset's instance) with values as Python objects or as text converted to each field's type
(`configs.assign`), so `make("puct", num_simulations="256")` and the spec
`mcts:num_simulations=256` take one path. Everything registers the same way, inside the
package or outside it (a user's module, a notebook cell, another installed package):

    ALGORITHMS = Registry("search algorithm")
    ALGORITHMS.register("puct", PUCT)           # a call: name and implementation
    @ALGORITHMS.register("gumbel")              # a decorator with a name
    class Gumbel(...): ...
    @ALGORITHMS.register                        # a decorator: the implementation's own name
    class PureMCTS(...): name = "pure_mcts"     # (`name_of`, by default its `name`)
    ALGORITHMS.make("puct", greedy="true")      # PUCT(greedy=True)
    ALGORITHMS.names()                          # ['gumbel', 'puct', 'pure_mcts']

An unknown name is a ValueError listing the names (and any plug-in that failed to load), an
unknown field one listing the fields, a value the field's type or the class refuses a
ValueError naming the field, and registering a name twice or a config that is not a frozen
dataclass a ValueError. Read-only it is a `Mapping` (name -> implementation), so `name in
registry`, `sorted(registry)`, `registry.items()` work as on a dict; every read first
imports the installed plug-ins (`plugin_loading.load_entry_points`, once) when it lists the
names or misses one. `gomoku_jax.plugins` is the one maker and registrar over every kind.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator, Mapping, Optional

from gomoku_jax import configs, plugin_loading

_MISSING = object()


def default_name(implementation: Any) -> Optional[str]:
    """An implementation's own name: its `name` attribute when that is text."""
    name = getattr(implementation, "name", None)
    return name if isinstance(name, str) else None


def is_frozen_dataclass(config: Any) -> bool:
    """Whether `config` is a frozen dataclass (a class, or an instance of one)."""
    cls = config if isinstance(config, type) else type(config)
    return dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen


def _redefined(old: Any, new: Any) -> bool:
    """Whether `new` is a new definition of the class `old` (same module and qualified name,
    outside the package: a notebook cell or a module run again)."""
    return (old is not new and isinstance(old, type) and isinstance(new, type)
            and old.__module__ == new.__module__ and old.__qualname__ == new.__qualname__
            and plugin_loading.origin(new.__module__) != plugin_loading.PACKAGE)


class Registry(Mapping[str, Any]):
    """Names of one kind of plug-in (`kind`: "game", "search algorithm", ...) -> the
    plug-ins themselves.

    Args:
      entries: {name: implementation} to register at once.
      kinds: the polymorphic fields `make` may switch (`configs.Kinds`).
      config_of: implementation -> its config (a frozen-dataclass class, or for presets an
        instance of one); default: the implementation itself. None for a kind without a
        config (network kinds): then `make` is a ValueError.
      name_of: implementation -> its own name (None: it has none), for `register` without
        a name; default `default_name`.
      check: implementation -> None, raising ValueError for one the kind refuses (a game
        class that lacks what the protocol needs).
      derive: () -> {name: implementation}, entries that follow from another registry
        (every search algorithm is an agent); registered, where absent, on every read.
      instances: whether configs are instances (presets) rather than classes.
    """

    def __init__(self, kind: str, entries: Mapping[str, Any] = {}, kinds: configs.Kinds = {},
                 *, config_of: Optional[Callable[[Any], Any]] = lambda impl: impl,
                 name_of: Callable[[Any], Optional[str]] = default_name,
                 check: Optional[Callable[[Any], None]] = None,
                 derive: Optional[Callable[[], Mapping[str, Any]]] = None,
                 instances: bool = False):
        self.kind = kind
        self.kinds = kinds
        self.config_of = config_of
        self.name_of = name_of
        self._check = check
        self._derive = derive
        self.instances = instances
        self._entries: dict[str, Any] = {}
        self._origins: dict[str, str] = {}
        self._notes: dict[str, str] = {}
        self._derived: set[str] = set()  # names added by `derive`
        for name, implementation in entries.items():
            self.register(name, implementation)

    # ------------------------------------------------------------------ registering

    def register(self, name: Any = None, implementation: Any = _MISSING, *,
                 note: str = "") -> Any:
        """Register a plug-in, as a call or a decorator:

            REGISTRY.register("mine", Mine)     # returns Mine
            @REGISTRY.register("mine")          # a decorator
            @REGISTRY.register                  # a decorator; the name is `name_of(Mine)`
            @REGISTRY.register()                # the same

        `note`: one line saying what it is for (listings: `gomoku-jax train --help`'s
        presets, `gomoku-jax plugins`); `note(name)` reads it.

        Raises:
          ValueError: a name that is empty or already taken by another implementation, an
            implementation without a name of its own (then give one), one whose config is
            not a frozen dataclass, or one the kind's `check` refuses. The same
            implementation under the same name again is fine, and so is a new definition of
            the same class (same module and qualified name: a notebook cell run again),
            which replaces the old one.
        """
        if implementation is not _MISSING:
            return self._add(name, implementation, note)
        if name is not None and not isinstance(name, str):  # @REGISTRY.register
            return self._add(None, name, note)
        return lambda implementation: self._add(name, implementation, note)

    def _add(self, name: Optional[str], implementation: Any, note: str = "") -> Any:
        if name is None:
            name = self.name_of(implementation)
            if name is None:
                raise ValueError(f"{implementation!r} has no {self.kind} name of its own: "
                                 f"register it with one (register(name, implementation))")
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ValueError(f"a {self.kind} name must be non-empty text without surrounding "
                             f"spaces, got {name!r}")
        if self.config_of is not None:
            config = self.config_of(implementation)
            if not is_frozen_dataclass(config) or isinstance(config, type) == self.instances:
                what = "an instance of a" if self.instances else "a"
                raise ValueError(f"{self.kind} {name!r}: its config must be {what} frozen "
                                 f"dataclass class (@dataclasses.dataclass(frozen=True)), got "
                                 f"{config!r}")
        if self._check is not None:
            self._check(implementation)
        taken = self._entries.get(name, implementation)
        if _redefined(taken, implementation):
            taken = self._entries[name] = implementation
        if taken is not implementation:
            raise ValueError(f"{self.kind} {name!r} is already registered "
                             f"({getattr(taken, '__name__', repr(taken))}, from "
                             f"{self._origins[name]})")
        self._entries[name] = implementation
        if note or name not in self._notes:
            self._notes[name] = note
        module = None if self.instances else getattr(implementation, "__module__", None)
        self._origins.setdefault(name, plugin_loading.origin(module))
        return implementation

    def unregister(self, name: str) -> None:
        """Remove `name` (a notebook's or a test's own plug-in); ValueError for an unknown
        name."""
        self[name]
        del self._entries[name], self._origins[name]
        self._notes.pop(name, None)
        self._derived.discard(name)

    def _sync(self) -> None:
        """Import the installed plug-ins (once) and add (or renew) the derived entries."""
        plugin_loading.load_entry_points()
        if self._derive is not None:
            derived = self._derive()
            for name in self._derived - set(derived):  # its source was unregistered
                self._derived.discard(name)
                self._entries.pop(name, None)
                self._origins.pop(name, None)
            for name, implementation in derived.items():
                if name in self._derived and self._entries.get(name) is not implementation:
                    self._entries[name] = implementation  # its source was redefined
                elif name not in self._entries:
                    self._add(name, implementation)
                    self._derived.add(name)

    # ------------------------------------------------------------------ reading

    def names(self) -> list[str]:
        """The registered names, sorted."""
        self._sync()
        return sorted(self._entries)

    def origin(self, name: str) -> str:
        """Where `name` came from: "gomoku_jax" (the package), "entry point ...",
        "--plugin MODULE" or "module M" (registered from a user's module or notebook)."""
        self[name]
        return self._origins[name]

    def note(self, name: str) -> str:
        """The one line `name` was registered with ("" when none)."""
        self[name]
        return self._notes.get(name, "")

    def unknown(self, name: Any) -> ValueError:
        """The error for a name that is not registered (it lists the names, and the
        plug-ins that failed to load)."""
        return ValueError(f"unknown {self.kind} {name!r}; available: {self.names()}"
                          f"{plugin_loading.failure_note()}")

    def __getitem__(self, name: str) -> Any:
        """The implementation of `name`; ValueError (not KeyError) listing the names."""
        found = self.get(name, _MISSING)
        if found is _MISSING:
            raise self.unknown(name) from None
        return found

    def get(self, name: str, default: Any = None) -> Any:
        if not isinstance(name, str):
            return default
        if name not in self._entries or name in self._derived:
            self._sync()
        return self._entries.get(name, default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name, _MISSING) is not _MISSING

    def __iter__(self) -> Iterator[str]:
        self._sync()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._sync()
        return len(self._entries)

    # ------------------------------------------------------------------ configs

    def config(self, name: str) -> Any:
        """The config of `name`: a frozen-dataclass class (a preset: an instance of one).

        Raises:
          ValueError: an unknown name, or a kind without configs.
        """
        implementation = self[name]
        if self.config_of is None:
            raise ValueError(f"a {self.kind} has no config to build ({name!r})")
        return self.config_of(implementation)

    def fields(self, name: str) -> list[str]:
        """The config fields of `name`, sorted."""
        return sorted(f.name for f in dataclasses.fields(self.config(name)))

    def make(self, name: str, **values: Any) -> Any:
        """`name`'s config built with `values` (Python values, or text converted to each
        field's type; nested configs' fields by `section.field` or, where unambiguous, by
        their bare name), the rest at their defaults (a preset: at the preset's values).

        Raises:
          ValueError: an unknown name or field (the message lists the valid ones), a
            required field without a value, or a value of the wrong type or range.
        """
        config = self.config(name)
        what = f"{self.kind} {name!r}"
        if not isinstance(config, type):  # a preset: its values are the defaults
            return configs.assign(config, values, what, self.kinds)
        return configs.assign(self._prototype(config, values, what), values, what,
                              self.kinds)

    def _prototype(self, cls: type, values: dict[str, Any], what: str) -> Any:
        """`cls` with its defaults and the required fields (those without a default) from
        `values`, which `make` then sets again."""
        types = configs.field_types(cls)
        required = [f.name for f in dataclasses.fields(cls) if f.init
                    and f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING]
        missing = [f for f in required if f not in values]
        if missing:
            raise ValueError(f"{what} needs a value for {missing}")
        try:
            return cls(**{f: configs.coerce(f"{what} field {f!r}",
                                            configs.without_bounds(types[f]), values[f])
                          for f in required})
        except TypeError as e:
            raise ValueError(f"{what}: {e}") from None

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {sorted(self._entries)})"
