"""Plug-ins from outside the package: a package installed beside gomoku_jax (its entry
point, group `gomoku_jax.plugins`) is found by every command; `--plugin MODULE` imports one;
broken plug-ins give one clear warning each and the rest keeps working; a class registered
from a notebook cell is usable at once. The installed package is tests/plugin_package/
tictactoe_plugin.py (docs/plugins.md's example, checked here to be that file).

Each subprocess runs several commands in one Python process (one JAX start), on 3x3
tic-tac-toe with agents that compile in a second or two.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import jax.numpy as jnp
import pytest

from gomoku_jax import agents, plugin_loading, plugins, search

ROOT = pathlib.Path(__file__).parent.parent
PACKAGE = pathlib.Path(__file__).parent / "plugin_package"
BROKEN = PACKAGE / "broken"
DOC = ROOT / "docs" / "plugins.md"


def install(site: pathlib.Path, name: str, entry_points: dict[str, str]) -> pathlib.Path:
    """What pip writes for an installed distribution `name`: its `.dist-info/` with METADATA
    and the `gomoku_jax.plugins` entry points, in `site` (put on PYTHONPATH)."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{plugin_loading.GROUP}]\n{lines}")
    return site


def run_python(body: str, *paths: pathlib.Path) -> subprocess.CompletedProcess:
    """`HELPERS` then `body` in a new Python with `paths` on its PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in (*paths, ROOT))}
    code = HELPERS + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


# Runs `gomoku_jax.cli.main(argv)` with `stdin`, returning (exit code, stdout).
HELPERS = """
import contextlib, io, json, sys
from gomoku_jax import cli

def run(argv, stdin=""):
    out, old = io.StringIO(), sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out):
            code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    finally:
        sys.stdin = old
    return code, out.getvalue()
"""


@pytest.mark.slow
def test_an_installed_plugin_is_found_by_every_command(tmp_path):
    """In one process: the arena, train's keys, one real training iteration on the plug-in's
    game searched by its algorithm, pbrain, the plug-in listing, compare's command line and
    the play server's seats all find the installed package's game, algorithm and agent."""
    site = install(tmp_path / "site", "tictactoe_plugin", {"tictactoe": "tictactoe_plugin"})
    run_dir = tmp_path / "run"
    code = f"""
    results = {{}}
    results["run"] = run(["train", "--preset", "test", "--run-dir", {str(run_dir)!r},
                          "--set", "game.id=tictactoe", "--set", "search.algorithm=wide_puct",
                          "--set", "replay.synthetic_fraction=0", "--set", "run.iterations=1",
                          "--set", "eval.games=2", "--set", "eval.opponents=first_legal",
                          "--no-progress"])
    results["arena"] = run(["--no-compilation-cache", "arena", "--game", "tictactoe", "--a",
                            "first_legal", "--b", "random", "--games", "2", "--no-progress"])
    results["train"] = run(["train", "--preset", "test", "--set", "game.id=tictactoe",
                            "--set", "search.algorithm=wide_puct", "--set",
                            "replay.synthetic_fraction=0", "--list-keys"])
    results["pbrain"] = run(["--no-compilation-cache", "pbrain", "--agent", "first_legal"],
                            "ABOUT\\nEND\\n")
    results["plugins"] = run(["plugins"])

    from gomoku_jax.cli.compare import spec_from_args
    args = cli.build_parser().parse_args([
        "compare", "--out", "unused", "--preset", "test", "--no-ladder", "--iterations", "2",
        "--points", "1", "--seeds", "1", "--eval-agent", "first_legal", "--set",
        "game.id=tictactoe", "--set", "replay.synthetic_fraction=0", "--arm",
        "wide: search.algorithm=wide_puct"])
    spec = spec_from_args(args)
    config = spec.config(spec.arms[0], 0)
    results["compare"] = [config.game.id, config.search.name, list(spec.references)]

    from gomoku_jax.web.seats import AgentBook
    book = AgentBook(agent="wide_puct:num_simulations=2", shipped=False)
    results["play"] = book.choose("fauxgo", {{}}).spec
    print("RESULTS " + json.dumps(results))
    """
    proc = run_python(code, site, PACKAGE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "warning" not in proc.stderr, proc.stderr
    results = json.loads(proc.stdout.split("RESULTS ", 1)[1])
    code, text = results["run"]
    assert code == 0 and "| first_legal |" in text, text
    saved = json.loads((run_dir / "config.json").read_text())
    assert saved["game"]["id"] == "tictactoe" and saved["search"]["algorithm"] == "wide_puct"
    code, text = results["arena"]
    assert code == 0 and "first_legal vs random: tictactoe, 2 games" in text, text
    code, text = results["train"]
    assert code == 0 and 'game.id = "tictactoe"' in text, text
    assert 'search.algorithm = "wide_puct"' in text and "search.pb_c_init = 2.5" in text
    code, text = results["pbrain"]
    assert code == 0 and 'name="' in text, text
    code, text = results["plugins"]
    source = "entry point gomoku_jax.plugins: tictactoe = tictactoe_plugin"
    for name in ("tictactoe", "wide_puct", "first_legal"):
        assert re.search(rf"^  {name} +{re.escape(source)}$", text, re.M), text
    assert re.search(r"^  gomoku +gomoku_jax$", text, re.M)
    assert results["compare"] == ["tictactoe", "wide_puct", ["random", "first_legal"]]
    assert results["play"] == "wide_puct:num_simulations=2"


@pytest.mark.slow
def test_the_plugin_flag_and_broken_plugins(tmp_path):
    """`--plugin MODULE` imports a module first; broken entry points (an import error, a
    name already taken, a config that is not a frozen dataclass, a game without the
    protocol's members) each give one warning naming the plug-in and its entry point,
    unknown names mention them, and everything else works."""
    site = install(tmp_path, "broken_plugins", {
        "missing": "no_such_module_of_gomoku_jax_tests", "duplicate": "duplicate_plugin",
        "loose": "loose_plugin", "half": "abstract_game_plugin"})
    code = """
    results = {"plugins": run(["--plugin", "tictactoe_plugin", "plugins", "--kind", "agent"])}
    from gomoku_jax import agents, games, search
    results["random"] = type(agents.make("random")).__module__
    results["puct"] = type(search.make("puct")).__name__
    for name, make in (("agent", lambda: agents.make("nope")),
                       ("game", lambda: games.make("half"))):
        try:
            make()
        except ValueError as e:
            results[name] = str(e)
    print("RESULTS " + json.dumps(results))
    """
    proc = run_python(code, site, BROKEN, PACKAGE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.split("RESULTS ", 1)[1])
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 4, proc.stderr  # once each
    expected = {
        "missing": "ModuleNotFoundError: No module named 'no_such_module_of_gomoku_jax_tests'",
        "duplicate": "agent 'random' is already registered (RandomAgent, from gomoku_jax)",
        "loose": "search algorithm 'loose': its config must be a frozen dataclass",
        "half": "game Half does not define ['id', 'init', 'num_actions'",
    }
    for (name, message), line in zip(sorted(expected.items()), sorted(warnings)):
        module = {"missing": "no_such_module_of_gomoku_jax_tests", "duplicate":
                  "duplicate_plugin", "loose": "loose_plugin", "half": "abstract_game_plugin"}
        assert line.startswith(f"warning: plug-in '{name}' (entry point gomoku_jax.plugins: "
                               f"{name} = {module[name]}) failed: "), line
        assert message in line, line
    code, text = results["plugins"]
    assert code == 0 and re.search(r"^  first_legal +--plugin tictactoe_plugin$", text, re.M)
    assert re.search(r"^  random +gomoku_jax$", text, re.M)
    assert text.count("failed: plug-in") == 4
    assert results["random"] == "gomoku_jax.agents.baselines" and results["puct"] == "PUCT"
    assert "unknown agent 'nope'; available: [" in results["agent"]
    assert "plug-in 'duplicate' (entry point" in results["agent"]
    assert "unknown game 'half'" in results["game"] and "plug-in 'half'" in results["game"]


def test_a_notebook_cell_registers_and_uses_at_once():
    """A search algorithm and an agent defined here (as in a notebook cell) are made by
    name at once; running the cell again replaces them; `unregister` removes them."""
    def cell(c_puct: float):
        @plugins.register("search algorithm", "notebook_puct")
        @dataclasses.dataclass(frozen=True)
        class NotebookPUCT(search.PUCT):
            name = "notebook_puct"
            pb_c_init: float = c_puct

        @plugins.register("agent", "last_legal")
        @dataclasses.dataclass(frozen=True)
        class LastLegal(agents.Agent):
            name = "last_legal"

            def act(self, params, agent_state, state, key):
                legal = state.legal_action_mask
                action = legal.shape[-1] - 1 - jnp.argmax(legal[::-1])
                return action, agent_state, {"policy": legal / legal.sum(),
                                             "value": jnp.float32(0)}
        return NotebookPUCT, LastLegal

    try:
        first, agent_class = cell(3.0)
        assert search.make("notebook_puct", greedy="true") == first(greedy=True)
        agent = agents.make("notebook_puct", num_simulations="2")
        assert isinstance(agent.search, first) and agent.search.pb_c_init == 3.0
        assert isinstance(agents.make("last_legal"), agent_class)
        assert plugins.sources("agent")["agent"]["last_legal"] == f"module {__name__}"
        again, _ = cell(4.0)  # the cell run again: the new class replaces the old
        assert again is not first and search.make("notebook_puct").pb_c_init == 4.0
        assert agents.make("notebook_puct").search.pb_c_init == 4.0
        with pytest.raises(ValueError, match="frozen dataclass"):
            plugins.register("search algorithm", "loose", type("Loose", (), {}))
    finally:
        search.ALGORITHMS.unregister("notebook_puct")
        agents.AGENTS.unregister("last_legal")
    assert "notebook_puct" not in agents.AGENTS and "notebook_puct" not in search.ALGORITHMS
    with pytest.raises(ValueError, match="unknown agent 'last_legal'"):
        agents.make("last_legal")


def test_the_docs_example_is_the_tested_package():
    """docs/plugins.md shows tests/plugin_package/tictactoe_plugin.py, whole."""
    source = (PACKAGE / "tictactoe_plugin.py").read_text()
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert source in blocks, "docs/plugins.md must show tictactoe_plugin.py as it is"
