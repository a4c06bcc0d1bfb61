"""Plug-ins by name: the one shape of every kind (games, search algorithms, evaluators,
agents, training algorithms).

A `Registry` maps a name to a frozen-dataclass class whose fields are the plug-in's config,
and `make(name, **values)` builds it, with values as Python objects or as text converted to
each field's type (`configs.assign`), so `make("puct", num_simulations="256")` and the spec
`mcts:num_simulations=256` take one path:

    ALGORITHMS = Registry("search algorithm", {"puct": PUCT, "gumbel": Gumbel})
    ALGORITHMS.make("puct", greedy="true")   # PUCT(greedy=True)
    ALGORITHMS.names()                       # ['gumbel', 'puct']

An unknown name is a ValueError listing the names, an unknown field one listing the fields,
and a value the field's type or the class refuses a ValueError naming the field. Read-only
it is a `Mapping` (name -> class), so `name in registry`, `sorted(registry)`,
`registry.items()` work as on a dict. `gomoku_jax.plugins.make(kind, name, **values)` is
the one maker over every kind.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator, Mapping, Optional

from gomoku_jax import configs


class Registry(Mapping[str, type]):
    """Names of one kind of plug-in (`kind`: "game", "search algorithm", ...) -> their
    frozen-dataclass classes. `kinds`: the polymorphic fields `make` may switch
    (`configs.Kinds`)."""

    def __init__(self, kind: str, entries: Mapping[str, type] = {},
                 kinds: configs.Kinds = {}):
        self.kind = kind
        self.kinds = kinds
        self._entries: dict[str, type] = {}
        for name, cls in entries.items():
            self.register(name, cls)

    def register(self, name: str, cls: type) -> type:
        """Add `cls` under `name` (returns `cls`). ValueError for a name already taken by
        another class, or a class that is not a frozen dataclass."""
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ValueError(f"a {self.kind} name must be non-empty text without surrounding "
                             f"spaces, got {name!r}")
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)
                and cls.__dataclass_params__.frozen):
            raise ValueError(f"{self.kind} {name!r} must be a frozen dataclass class, got "
                             f"{cls!r}")
        if self._entries.get(name, cls) is not cls:
            raise ValueError(f"{self.kind} {name!r} is already registered "
                             f"({self._entries[name].__name__})")
        self._entries[name] = cls
        return cls

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entries)

    def unknown(self, name: Any) -> ValueError:
        """The error for a name that is not registered (it lists the names)."""
        return ValueError(f"unknown {self.kind} {name!r}; available: {self.names()}")

    def __getitem__(self, name: str) -> type:
        """The class of `name`; ValueError (not KeyError) listing the names."""
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise self.unknown(name) from None

    def get(self, name: str, default: Optional[type] = None) -> Optional[type]:
        return self._entries.get(name, default) if isinstance(name, str) else default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def fields(self, name: str) -> list[str]:
        """The config fields of `name`, sorted."""
        return sorted(f.name for f in dataclasses.fields(self[name]))

    def make(self, name: str, **values: Any) -> Any:
        """`name`'s class built with `values` (Python values, or text converted to each
        field's type; nested configs' fields by `section.field` or, where unambiguous, by
        their bare name), the rest at their defaults.

        Raises:
          ValueError: an unknown name or field (the message lists the valid ones), a
            required field without a value, or a value of the wrong type or range.
        """
        cls = self[name]
        what = f"{self.kind} {name!r}"
        return configs.assign(self._prototype(cls, values, what), values, what, self.kinds)

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
        return f"Registry({self.kind!r}, {self.names()})"
