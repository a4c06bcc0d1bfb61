"""The package's imports point down, and the generic layers know no game.

Every import statement of every module (module-level and inside functions) is read with
`ast`, so a lazy import counts as much as a top-level one.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).parent.parent / "gomoku_jax"

# Layers, bottom up: a module may import modules of its own layer or below.
LAYERS = {
    "configs": 0, "registry": 0, "plugin_loading": 0, "markdown": 0, "compilation_cache": 0,
    "progress": 0,
    "distributed": 0,
    "games": 0,
    "nets": 1, "search": 2, "agents": 3, "eval": 4, "players": 4, "train": 5,
    "io": 6, "benchmarks": 6, "plugins": 6, "compare": 6, "web": 7, "cli": 8,
}
# The generic layers (DESIGN: nothing generic imports a game's internals) and the plug-in
# tables that wire a game's pieces in by name.
GENERIC = ("search", "train", "eval", "agents")
PLUG_IN_TABLES = {"train/alphazero/presets.py", "train/gmo/presets.py", "agents/registry.py",
                  "agents/evaluator_registry.py", "agents/heuristic.py",
                  "agents/fauxgo_heuristic.py", "agents/__init__.py"}
GAME_INTERNALS = ("gomoku_jax.games.gomoku", "gomoku_jax.games.fauxgo",
                  "gomoku_jax.games.pgx_adapter")


def modules() -> dict[str, pathlib.Path]:
    """{dotted module name: path} of every module of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports(path: pathlib.Path, known: set[str]) -> set[str]:
    """The package modules `path` imports (a `from package import name` of a submodule is
    that submodule)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("gomoku_jax"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.startswith("gomoku_jax"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known else node.module)
    return found


def layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


MODULES = modules()
GRAPH = {name: imports(path, set(MODULES)) for name, path in MODULES.items()}


def test_every_import_points_down():
    upward = [f"{m} (layer {layer(m)}) imports {i} (layer {layer(i)})"
              for m, targets in GRAPH.items() for i in targets
              if layer(m) is not None and layer(i) is not None and layer(i) > layer(m)]
    assert not upward, "\n".join(upward)


def test_no_import_cycles():
    """No module reaches itself through imports (e.g. a game's state and observation, or
    eval and train)."""
    def reach(start):
        seen, stack = set(), [start]
        while stack:
            for nxt in GRAPH.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    cycles = sorted(m for m in GRAPH if m in reach(m))
    assert not cycles, f"modules on an import cycle: {cycles}"


@pytest.mark.parametrize("package", GENERIC)
def test_generic_layers_import_no_game_internals(package):
    offenders = []
    for name, path in MODULES.items():
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith(package + "/") or rel in PLUG_IN_TABLES:
            continue
        bad = sorted(i for i in GRAPH[name] if i.startswith(GAME_INTERNALS))
        if bad:
            offenders.append(f"{rel} imports {bad}")
    assert not offenders, "\n".join(offenders)


def test_the_scan_sees_imports():
    """The checks above would catch a violation: the scan finds known edges, lazy ones
    included."""
    assert ("gomoku_jax.games.gomoku.heuristic_evaluator"
            in GRAPH["gomoku_jax.agents.evaluator_registry"])
    assert "gomoku_jax.players" in GRAPH["gomoku_jax.cli.common"]  # inside a function
    assert layer("gomoku_jax.eval.arena") < layer("gomoku_jax.train.driver")


# The play path: what plays a trained network loads it through `players`, never `train`.
PLAY_PATH = ("gomoku_jax.players", "gomoku_jax.web", "gomoku_jax.io", "gomoku_jax.cli.pbrain",
             "gomoku_jax.cli.tactics", "gomoku_jax.cli.play", "gomoku_jax.cli.export")


def test_the_play_path_does_not_import_training():
    offenders = [f"{name} imports {sorted(t for t in targets if t.startswith('gomoku_jax.train'))}"
                 for name, targets in GRAPH.items() if name.startswith(PLAY_PATH)
                 and any(t.startswith("gomoku_jax.train") for t in targets)]
    assert not offenders, "\n".join(offenders)


def test_eval_does_not_import_benchmarks_or_train():
    for name, targets in GRAPH.items():
        if name.startswith("gomoku_jax.eval"):
            assert not any(t.startswith(("gomoku_jax.benchmarks", "gomoku_jax.train"))
                           for t in targets), (name, targets)
