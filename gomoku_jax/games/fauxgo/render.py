"""Text and SVG pictures of a Faux Go position, enclosures shaded."""

from __future__ import annotations

import html

import numpy as np

_CHARS = {(1, 0): "X", (-1, 0): "O", (0, 0): ".", (0, 1): "x", (0, -1): "o"}
_FILL = {1: "#333", -1: "#fff"}
_SHADE = {1: "rgba(0,0,0,0.28)", -1: "rgba(255,255,255,0.55)"}


def _host(state, index: int):
    """(board int8[N, N], owner int8[N, N], colour, last action, komi) of one state."""
    board, owner = np.asarray(state.board), np.asarray(state.owner)
    color, last = np.asarray(state.color), np.asarray(state.last_action)
    komi = np.asarray(state.komi)
    if board.ndim > 2:
        board = board.reshape(-1, *board.shape[-2:])[index]
        owner = owner.reshape(-1, *owner.shape[-2:])[index]
        color, last = color.reshape(-1)[index], last.reshape(-1)[index]
        komi = komi.reshape(-1)[index]
    return board, owner, int(color), int(last), float(komi)


def to_text(state, index: int = 0) -> str:
    """X / O stones, x / o empty cells owned by black / white, . empty; the last move in
    brackets; then the side to move and the scores."""
    board, owner, color, last, komi = _host(state, index)
    n = board.shape[0]
    lines = ["    " + "".join(f"{c:>3}" for c in range(n))]
    for r in range(n):
        cells = []
        for c in range(n):
            ch = _CHARS[(int(board[r, c]), int(owner[r, c]) if board[r, c] == 0 else 0)]
            cells.append(f"[{ch}]" if r * n + c == last else f" {ch} ")
        lines.append(f"{r:>3} " + "".join(cells).rstrip())
    # `rules.scores` on the host (render stays below state.py, which prints through it)
    black = int(np.sum((board == 1) | ((board == 0) & (owner == 1))))
    white = int(np.sum((board == -1) | ((board == 0) & (owner == -1)))) + komi
    mover = "black (X)" if color == 1 else "white (O)"
    lines.append(f"{mover} to move; score black {black:g}, white {white:g}"
                 + (" (last move: pass)" if last == n * n else ""))
    return "\n".join(lines)


def to_svg(state, index: int = 0, cell: int = 28) -> str:
    """An SVG board: stones, enclosures as shaded squares, the last move ringed."""
    board, owner, _, last, _ = _host(state, index)
    n = board.shape[0]
    size = cell * (n + 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
             f'viewBox="0 0 {size} {size}">',
             f'<rect width="{size}" height="{size}" fill="#dcb35c"/>']
    for i in range(n):
        p = cell * (i + 1)
        parts.append(f'<line x1="{cell}" y1="{p}" x2="{cell * n}" y2="{p}" stroke="#000"/>')
        parts.append(f'<line x1="{p}" y1="{cell}" x2="{p}" y2="{cell * n}" stroke="#000"/>')
    for r in range(n):
        for c in range(n):
            x, y = cell * (c + 1), cell * (r + 1)
            if board[r, c] == 0 and owner[r, c] != 0:
                parts.append(f'<rect x="{x - cell / 2}" y="{y - cell / 2}" width="{cell}" '
                             f'height="{cell}" fill="{_SHADE[int(owner[r, c])]}"/>')
            elif board[r, c] != 0:
                parts.append(f'<circle cx="{x}" cy="{y}" r="{cell * 0.45}" '
                             f'fill="{_FILL[int(board[r, c])]}" stroke="#000"/>')
            if r * n + c == last:
                parts.append(f'<circle cx="{x}" cy="{y}" r="{cell * 0.2}" fill="none" '
                             f'stroke="#d22" stroke-width="2"/>')
    parts.append(f"<title>{html.escape(f'Faux Go {n}x{n}')}</title></svg>")
    return "".join(parts)
