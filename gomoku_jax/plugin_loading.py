"""Importing plug-ins from outside the package: Python entry points and `--plugin MODULE`.

A plug-in is a module that registers things when it is imported (`gomoku_jax.plugins.register`
or a registry's `register`). Another installed package declares its modules as entry points
of the group `GROUP`:

    [project.entry-points."gomoku_jax.plugins"]
    nim = "my_package.nim"

Every registry (`gomoku_jax.registry.Registry`) calls `load_entry_points()` before it
resolves a name it does not hold or lists its names, so the modules are imported once,
lazily, the first time anything asks. `load_module("my_module")` imports one module now
(the command line's `--plugin`). A plug-in whose import fails (an ImportError, a name that is
already taken, a config class that is not a frozen dataclass, ...) is reported once on stderr
as `warning: plug-in 'nim' (entry point gomoku_jax.plugins: nim = my_package.nim) failed:
...`, kept in `FAILURES`, and named in every unknown-name error after it; what the rest
registered keeps working.

While a plug-in is imported, `origin()` says which (the registries record it beside each
name they register: `gomoku-jax plugins` lists it).
"""

from __future__ import annotations

import importlib
import sys
import traceback
from importlib import metadata
from typing import NamedTuple, Optional

GROUP = "gomoku_jax.plugins"  # the entry-point group plug-in packages declare
PACKAGE = "gomoku_jax"  # the origin of everything the package registers itself


class Failure(NamedTuple):
    """A plug-in that failed to load: `source` names it (the entry point or the module),
    `error` says why."""

    source: str
    error: str

    def __str__(self) -> str:
        return f"plug-in {self.source} failed: {self.error}"


FAILURES: list[Failure] = []  # every plug-in that failed, in order
LOADED: dict[str, str] = {}  # module -> source, of every plug-in module imported
_state = {"entry_points": "no", "origin": None}  # "no" | "loading" | "done"


def origin(module: Optional[str] = None) -> str:
    """Where something defined in `module` that is being registered now comes from: the
    package (`PACKAGE`) for a module inside it, else the plug-in being imported (its source,
    e.g. "entry point gomoku_jax.plugins: nim = my_package.nim"), else "module <module>" (a
    user's module; a notebook's is `__main__`)."""
    if module is not None and (module == PACKAGE or module.startswith(PACKAGE + ".")):
        return PACKAGE
    if _state["origin"] is not None:
        return _state["origin"]
    return PACKAGE if module is None else f"module {module}"


def _import(module: str, source: str, label: str) -> bool:
    """Import `module` as plug-in `label` (recorded as `source`); False, a warning on stderr
    and an entry in `FAILURES` when it raises."""
    if module in LOADED:
        return True
    previous, _state["origin"] = _state["origin"], source
    try:
        importlib.import_module(module)
    except Exception as e:  # a broken plug-in must not break the rest
        where = "".join(traceback.format_exception_only(type(e), e)).strip()
        failure = Failure(label, where)
        FAILURES.append(failure)
        print(f"warning: {failure}", file=sys.stderr)
        return False
    finally:
        _state["origin"] = previous
    LOADED[module] = source
    return True


def load_module(module: str) -> bool:
    """Import the plug-in module `module` now (`gomoku-jax --plugin MODULE`); False (and a
    warning, see the module docstring) when its import fails. Importing one twice does
    nothing."""
    return _import(module, f"--plugin {module}", f"{module!r} (--plugin {module})")


def entry_points() -> list[metadata.EntryPoint]:
    """The entry points of `GROUP` of the installed packages, sorted by name."""
    return sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name)


def load_entry_points() -> None:
    """Import every entry point's module of `GROUP`, once (later calls, and calls made while
    they are imported, do nothing)."""
    if _state["entry_points"] != "no":
        return
    _state["entry_points"] = "loading"
    try:
        for point in entry_points():
            source = f"entry point {GROUP}: {point.name} = {point.value}"
            _import(point.module, source, f"{point.name!r} ({source})")
    finally:
        _state["entry_points"] = "done"


def failure_note() -> str:
    """Text to add to an unknown-name error: the plug-ins that failed to load, which may
    have provided the name ("" when none failed)."""
    if not FAILURES:
        return ""
    return ("; note: " + "; ".join(str(f) for f in FAILURES)
            + " (a name it registers is missing)")
