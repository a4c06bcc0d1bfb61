"""Markdown tables, the format every report of the platform prints."""

from __future__ import annotations

from typing import Sequence


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table with `header` and `rows` (cells as text)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
