"""Every data file of the package is declared in pyproject.toml's package-data, so a plain
`pip install .` (the README's main command) ships it; and the two version numbers agree."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import gomoku_jax

ROOT = Path(__file__).resolve().parents[1]


def test_every_data_file_is_package_data():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = project["tool"]["setuptools"]["package-data"]
    package_root = ROOT / "gomoku_jax"
    data = [p for p in package_root.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
            and "__pycache__" not in p.parts]
    assert data, "the package has data files (the tactical suite)"
    for path in data:
        rel = path.relative_to(ROOT)
        covered = any(
            fnmatch.fnmatch(str(rel.relative_to(Path(*package.split(".")))), pattern)
            for package, patterns in declared.items()
            if rel.is_relative_to(Path(*package.split(".")))
            for pattern in patterns)
        assert covered, f"{rel} is not in [tool.setuptools.package-data]"


def test_versions_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["version"] == gomoku_jax.__version__
