"""The docs site builds with every warning an error, and the README stays short and keeps
the two command lines CI and people copy (`.ci/run` greps the test command out of it)."""

from __future__ import annotations

import os
import re
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


LIST_ITEM = re.compile(r"^( *)[-*] \S")


def list_layout_problems(text: str) -> list[str]:
    """Where Python-Markdown (MkDocs) would not render a list as the text means it: a list
    item straight after a paragraph line (no blank line: it joins the paragraph), and a
    nested item indented 1-3 spaces (Python-Markdown nests at 4; less is a sibling)."""
    problems, fence, block = [], False, None
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fence, block = not fence, None
            continue
        if fence:
            continue
        if not line.strip():
            block = None
            continue
        item = LIST_ITEM.match(line)
        if block is None:
            block = line
        elif item and not LIST_ITEM.match(block) and not re.match(r" {4}|[|#>:<]|\d+\. ", block):
            problems.append(f"{number}: a list item right after a paragraph, with no blank "
                            f"line: {line.strip()[:60]}")
        if item and 0 < len(item.group(1)) < 4:
            problems.append(f"{number}: a nested list item indented {len(item.group(1))} "
                            f"spaces, not 4: {line.strip()[:60]}")
    return problems


def test_list_layout_problems_finds_both_mistakes():
    assert list_layout_problems("A paragraph:\n- item\n") == [
        "2: a list item right after a paragraph, with no blank line: - item"]
    assert list_layout_problems("- item\n  - nested\n") == [
        "2: a nested list item indented 2 spaces, not 4: - nested"]
    assert list_layout_problems("A paragraph:\n\n- item\n  text\n    - nested\n- b\n"
                                "```\nx\n- code\n```\n") == []


def test_docs_lists_render_as_lists():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = [f"{page.relative_to(ROOT)}:{problem}" for page in pages
             for problem in list_layout_problems(page.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)
