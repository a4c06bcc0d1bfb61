"""The docs site builds with every warning an error, and the README stays short and keeps
the two command lines CI and people copy (`.ci/run` greps the test command out of it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Copied from the README's "Two commands", byte for byte.
MAIN_JOB = ("python3 -m venv .venv && . .venv/bin/activate && pip install . && "
            "gomoku-jax train --preset quick --run-dir runs/quick")
TEST_SUITE = ('python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[dev]" && '
              "python -m pytest -q -n 2")


def test_readme_is_short_and_keeps_the_two_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines; the limit is 199"
    assert MAIN_JOB in lines, "README.md lost the main job's command line"
    assert TEST_SUITE in lines, "README.md lost the test suite's command line"
    # .ci/run takes the first line that starts with the venv and runs pytest.
    ci = [line for line in lines if line.startswith("python3 -m venv .venv") and "pytest" in line]
    assert ci and ci[0] == TEST_SUITE


def test_docs_build_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        f"mkdocs build --strict failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    assert (tmp_path / "index.html").is_file()
    assert (tmp_path / "api" / "games" / "index.html").is_file()
