"""Loads the scripts of experiments/ by path (they are scripts, not package modules):
`bench = load_script("bench_search")`."""

from __future__ import annotations

import functools
import importlib.util
import pathlib
import sys
import types

EXPERIMENTS = pathlib.Path(__file__).resolve().parents[1] / "experiments"


@functools.lru_cache(maxsize=None)
def load_script(name: str) -> types.ModuleType:
    """experiments/<name>.py as a module (loaded once per session)."""
    spec = importlib.util.spec_from_file_location(f"experiments_{name}", EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module
