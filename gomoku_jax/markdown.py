"""Markdown tables, the format every report of the platform prints, and writing reports."""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table with `header` and `rows` (cells as text)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def write_report(text: str, out: Optional[str] = None, json_path: Optional[str] = None,
                 record: Any = None) -> None:
    """Write a report's markdown `text` to `out` and its JSON `record` to `json_path`,
    each only when given (the `--out` / `--json` flags of the scripts)."""
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(record, f, indent=1)
