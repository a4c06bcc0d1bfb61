"""Frozen-dataclass configs set from text: the one parser behind agent specs
(`mcts:num_simulations=256`), pbrain's `--agent-config KEY=VALUE`, the training config's
`--set section.field=value`, and config JSON files.

- `coerce(name, annotation, value)`: a value (text, or JSON data) as a field's type: bool
  (true / false), int, float, str, Optional[...] ("none" is None), tuple[...] (a list, or
  text "a;b;c"), a str-or-callable union (text). Anything else is a ValueError that names
  the field and what it takes.
- `assign(config, {"field": value, "nested.field": value, ...})`: a copy with fields
  replaced. A name that is not a field of `config` but of exactly one of its nested config
  fields is routed there (`mcts:greedy=false` sets the agent's search config). Polymorphic
  fields (a search algorithm, a game) switch class when their kind key is assigned
  (`search.algorithm=gumbel`), keeping the fields the new class shares with the old.
  A name that belongs to no nested config yet is applied after the others
  (`evaluator=rollout,num_rollouts=8`: naming the evaluator gives the config that has
  `num_rollouts`).
- `to_dict` / `from_dict`: JSON data of a config, polymorphic fields tagged with their kind.
- `validate(config)`: every field checked against its annotation, a config's one validation
  path (call it from `__post_init__`). Ranges are part of the type: `PositiveInt`,
  `NonNegativeInt`, `UnitFloat`, `NonNegativeFloat`, `FiniteFloat`, or any
  `Annotated[T, Bounds(low, high)]`.
- `check_int(name, value, low, high)`: the same check for a function's int argument.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import typing
from typing import Annotated, Any, Callable, Mapping, NamedTuple, Optional


class Kind(NamedTuple):
    """A polymorphic field type: configs of `base` name their class under `key` (e.g. a
    search algorithm's "algorithm"), `resolve(name)` gives the class and `name_of(config)`
    the name (ValueError for an unknown one)."""

    key: str
    resolve: Callable[[str], type]
    name_of: Callable[[Any], str]


Kinds = Mapping[type, Kind]


class OutOfRange(ValueError):
    """A value of the right type outside its field's `Bounds`."""


@dataclasses.dataclass(frozen=True)
class Bounds:
    """The closed range `[low, high]` a number must lie in (None: unbounded), and finite.
    Used as `Annotated[int, Bounds(1)]`: `coerce` and `validate` check it."""

    low: Optional[float] = None
    high: Optional[float] = None

    def check(self, name: str, value: Any, t: Any = None) -> None:
        """ValueError("<name> must be >= low, got <value>") unless `value` is in range; with
        `t` int the message says so ("an int >= 1", "an int in 5..20")."""
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        if not (math.isfinite(value) and low <= value <= high):
            raise OutOfRange(f"{name} must be {self.describe(t)}, got {value!r}")

    def describe(self, t: Any = None) -> str:
        """What the range takes, in words: ">= 0", "in [0, 1]", "an int in 5..20", ..."""
        if self.low is None and self.high is None:
            return "an int" if t is int else "a finite number"
        if t is int:
            return (f"an int >= {self.low:g}" if self.high is None else
                    f"an int <= {self.high:g}" if self.low is None else
                    f"an int in {self.low:g}..{self.high:g}")
        return (f">= {self.low:g}" if self.high is None else
                f"<= {self.high:g}" if self.low is None else
                f"in [{self.low:g}, {self.high:g}]")


PositiveInt = Annotated[int, Bounds(1)]
NonNegativeInt = Annotated[int, Bounds(0)]
NonNegativeFloat = Annotated[float, Bounds(0.0)]
UnitFloat = Annotated[float, Bounds(0.0, 1.0)]
FiniteFloat = Annotated[float, Bounds()]


@functools.lru_cache(maxsize=None)
def field_types(cls: type) -> dict[str, Any]:
    """{field name: resolved type annotation, `Annotated` bounds kept} of a dataclass."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def validate(config: Any, what: Optional[str] = None) -> None:
    """Check (and normalise: an int in a float field becomes a float, "a;b" in a tuple field
    a tuple) every field of the frozen dataclass `config` against its annotation; ValueError
    naming the first bad field and what it takes. Text is not a number or a bool here (text
    is parsed where it enters: `assign`, `from_dict`). Nested configs validate themselves."""
    what = what or type(config).__name__
    for name, t in field_types(type(config)).items():
        value = getattr(config, name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            continue
        fixed = coerce(f"{what}.{name}", t, value)
        if isinstance(value, str) and isinstance(fixed, (bool, int, float)):
            raise ValueError(f"{what}.{name} takes {_type_name(type(fixed))}, got {value!r}")
        if fixed is not value:
            object.__setattr__(config, name, fixed)


def check_int(name: str, value: Any, low: Optional[int] = None,
              high: Optional[int] = None) -> int:
    """`value` as a Python int (NumPy's ints too, not a bool or text) in `[low, high]`; else
    ValueError("<name> must be an int >= low, got <value>"). For a function's arguments at an
    API boundary; a config's fields are checked by their annotations (`validate`)."""
    bounds = Bounds(low, high)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be {bounds.describe(int)}, got {value!r}")
    bounds.check(name, int(value), int)
    return int(value)


def _type_name(t: Any) -> str:
    """"an int", "a float", "an int or none", ... for error messages."""
    if typing.get_origin(t) is Annotated:
        return _type_name(typing.get_args(t)[0])
    if typing.get_origin(t) is typing.Union:
        return " or ".join("none" if a is type(None) else _type_name(a)
                           for a in typing.get_args(t))
    name = getattr(t, "__name__", None) or str(t).replace("typing.", "")
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def coerce(name: str, t: Any, value: Any) -> Any:
    """`value` as type `t`, or ValueError("<name> takes <a type>, got <value>")."""
    if t is Any:  # before isinstance: Python 3.11's Any is a class isinstance refuses
        return value
    if typing.get_origin(t) is Annotated:
        base, *extras = typing.get_args(t)
        value = coerce(name, base, value)
        for extra in extras:
            if isinstance(extra, Bounds):
                extra.check(name, value, base)
        return value
    if isinstance(t, type) and not isinstance(value, (str, bool)) and isinstance(value, t):
        return value
    origin = typing.get_origin(t)
    if origin is typing.Union:
        args = typing.get_args(t)
        if type(None) in args and (value is None or (isinstance(value, str)
                                                     and value.strip().lower() == "none")):
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return coerce(name, arg, value)
            except OutOfRange:
                raise  # the type fits, the value is outside its range
            except ValueError:
                continue
        raise ValueError(f"{name} takes {_type_name(t)}, got {value!r}")
    if origin is tuple:
        if isinstance(value, str):
            value = [v for v in value.split(";") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{name} takes a list (text: a;b;c), got {value!r}")
        args = typing.get_args(t)
        if len(args) > 1 and args[-1] is not Ellipsis:  # tuple[A, B]: one type per place
            if len(value) != len(args):
                raise ValueError(f"{name} takes {len(args)} values, got {value!r}")
            return tuple(coerce(name, a, v) for a, v in zip(args, value))
        inner = args[0] if args and args[0] is not Ellipsis else str
        return tuple(coerce(name, inner, v) for v in value)
    if origin is not None and callable(value) and not isinstance(value, str):
        return value  # Callable[...]: a callable passes as is
    if t is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
    elif t is int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)  # NumPy's ints too, stored as Python ints
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
    elif t is float:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
    elif t is str:
        if isinstance(value, str):
            return value.strip()
    elif dataclasses.is_dataclass(t):
        if isinstance(value, t):
            return value
        raise ValueError(f"{name} is a nested config ({t.__name__}); set its fields as "
                         f"{name}.FIELD=VALUE")
    raise ValueError(f"{name} takes {_type_name(t)}, got {value!r}")


def _kind_of(value: Any, kinds: Kinds) -> Optional[Kind]:
    for base, kind in kinds.items():
        if isinstance(value, base):
            return kind
    return None


def _switch(config: Any, kind: Kind, name: str) -> Any:
    """`config` as class `kind.resolve(name)`: the new class's defaults, with the values
    `config` had changed from its own class's defaults in the fields both classes have."""
    cls = kind.resolve(name)
    if type(config) is cls:
        return config
    new_fields = {f.name for f in dataclasses.fields(cls)}
    old_defaults = type(config)()
    kept = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)
            if f.name in new_fields and getattr(config, f.name) != getattr(old_defaults, f.name)}
    return dataclasses.replace(cls(), **kept)


def assign(config: Any, assignments: Mapping[str, Any], what: str = "config",
           kinds: Kinds = {}) -> Any:
    """A copy of the frozen dataclass `config` with `assignments` applied (see the module
    docstring). `what` names the config in error messages.

    Raises:
      ValueError: an unknown field (the message lists the valid ones), an ambiguous bare
        name, a field that can't be set from text, or a value the field or the config
        refuses.
    """
    fields = field_types(type(config))
    kind = _kind_of(config, kinds)
    later = {key: value for key, value in assignments.items() if _waits(config, key, kinds)}
    if later and len(later) < len(assignments):  # the others may give them their config
        first = {key: value for key, value in assignments.items() if key not in later}
        return assign(assign(config, first, what, kinds), later, what, kinds)
    direct: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in assignments.items():
        head, dot, rest = key.partition(".")
        if kind is not None and key == kind.key:
            continue  # handled by the caller that owns this polymorphic field
        if head not in fields:
            owners = [f for f, t in fields.items() if _nested_has(getattr(config, f), head,
                                                                  kinds)] if not dot else []
            if len(owners) == 1:
                nested.setdefault(owners[0], {})[key] = value
                continue
            valid = sorted(fields) + ([kind.key] if kind else [])
            if len(owners) > 1:
                raise ValueError(f"{what}: {key!r} is a field of {owners}; write "
                                 f"{owners[0]}.{key}=... to say which")
            raise ValueError(f"unknown field {key!r} for {what}; valid fields: {valid}")
        if dot:
            nested.setdefault(head, {})[rest] = value
        else:
            direct[head] = value
    changes: dict[str, Any] = {}
    for head, sub in nested.items():
        current = getattr(config, head)
        if not dataclasses.is_dataclass(current):
            raise ValueError(f"{what}: {head!r} is not a nested config; set it as {head}=VALUE")
        sub_kind = _kind_of(current, kinds)
        if sub_kind is not None and sub_kind.key in sub:
            current = _switch(current, sub_kind, str(sub[sub_kind.key]).strip())
        changes[head] = assign(current, sub, f"{what}.{head}", kinds)
    for head, value in direct.items():
        current = getattr(config, head)
        if dataclasses.is_dataclass(current) and not isinstance(value, type(current)):
            raise ValueError(f"{what}: {head!r} is a nested config ({type(current).__name__}); "
                             f"set its fields as {head}.FIELD=VALUE")
        # The type here; a range (`Annotated` bounds) is the config's own check
        # (`validate` in its `__post_init__`), whose message names it as `section.field`.
        changes[head] = coerce(f"{what} field {head!r}", without_bounds(fields[head]), value)
    try:
        return dataclasses.replace(config, **changes)
    except TypeError as e:
        raise ValueError(f"{what}: {e}") from None


def without_bounds(t: Any) -> Any:
    """`t` without its `Annotated` bounds, inside `Optional[...]` too."""
    if typing.get_origin(t) is Annotated:
        return typing.get_args(t)[0]
    args = typing.get_args(t)
    if typing.get_origin(t) is typing.Union and any(typing.get_origin(a) is Annotated
                                                    for a in args):
        return typing.Union[tuple(without_bounds(a) for a in args)]
    return t


def _waits(config: Any, key: str, kinds: Kinds) -> bool:
    """Whether `key` names no field of `config` now but may once the other assignments are
    applied: a bare name of no nested config, or `field.name` where `field` holds no config
    (`evaluator=rollout,num_rollouts=8`: naming the evaluator gives the agent the evaluator
    config that has `num_rollouts`)."""
    fields = field_types(type(config))
    kind = _kind_of(config, kinds)
    head, dot, _ = key.partition(".")
    if kind is not None and key == kind.key:
        return False
    if head in fields:
        value = getattr(config, head)
        return bool(dot) and not (dataclasses.is_dataclass(value) and not isinstance(value, type))
    return not dot and not any(_nested_has(getattr(config, f), head, kinds) for f in fields)


def _nested_has(value: Any, name: str, kinds: Kinds) -> bool:
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return False
    kind = _kind_of(value, kinds)
    return name in field_types(type(value)) or (kind is not None and name == kind.key)


def to_dict(config: Any, kinds: Kinds = {}) -> dict:
    """JSON data of a frozen dataclass config: nested configs as dicts, tuples as lists,
    polymorphic ones tagged with their kind key."""
    out: dict[str, Any] = {}
    kind = _kind_of(config, kinds)
    if kind is not None:
        out[kind.key] = kind.name_of(config)
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = to_dict(value, kinds)
        elif isinstance(value, tuple):
            value = [to_dict(v, kinds) if dataclasses.is_dataclass(v) else v for v in value]
        elif callable(value):
            raise ValueError(f"field {f.name!r} holds a callable ({value!r}), which has no "
                             f"JSON form")
        out[f.name] = value
    return out


def from_dict(cls: type, data: Any, what: str = "config", kinds: Kinds = {},
              default: Any = None) -> Any:
    """The config `to_dict` made (`cls`, or the class its kind tag names, or without a tag
    the class of `default`); missing fields take their defaults. ValueError for unknown
    keys, a polymorphic section with neither tag nor default, or values of the wrong
    type."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{what} must be a mapping, got {data!r}")
    data = dict(data)
    kind = next((k for base, k in kinds.items() if issubclass(cls, base)), None)
    if kind is not None:
        if kind.key in data:
            cls = kind.resolve(str(data.pop(kind.key)))
        elif default is not None:
            cls = type(default)
        else:
            raise ValueError(f"{what} needs its {kind.key!r}")
    types = field_types(cls)
    unknown = sorted(set(data) - set(types))
    if unknown:
        raise ValueError(f"unknown key(s) {[f'{what}.{k}' for k in unknown]}; valid: "
                         f"{sorted(f'{what}.{k}' for k in types)}")
    kwargs = {}
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    for name, value in data.items():
        t = types[name]
        if isinstance(t, type) and dataclasses.is_dataclass(t):
            default = defaults[name] if defaults[name] is not dataclasses.MISSING else None
            kwargs[name] = from_dict(t, value, f"{what}.{name}", kinds, default)
        else:
            kwargs[name] = coerce(f"{what}.{name}", t, value)
    try:
        return cls(**kwargs)
    except TypeError as e:
        raise ValueError(f"{what}: {e}") from None
