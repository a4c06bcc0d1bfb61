"""Plain-text and SVG pictures of a board (SVG shows inline in Jupyter via `_repr_html_`)."""

from __future__ import annotations

import html
from typing import Optional

import numpy as np

_STONE_CHARS = {1: "X", -1: "O", 0: "."}


def _unbatched(state, index: int):
    """Host copies (board int8[N, N], last action int) of one state of a possibly batched one."""
    board = np.asarray(state.board)
    last = np.asarray(state.last_action)
    if board.ndim > 2:
        board = board.reshape(-1, *board.shape[-2:])[index]
        last = last.reshape(-1)[index]
    return board, int(last)


def board_to_text(board, last_action: int = -1) -> str:
    """Text board: X black, O white, . empty; the last move in brackets; 0-based column
    numbers on top and row numbers on the left (`action = row * N + col`)."""
    board = np.asarray(board)
    n = board.shape[0]
    lines = ["    " + "".join(f"{c:>3}" for c in range(n))]
    for r in range(n):
        cells = []
        for c in range(n):
            ch = _STONE_CHARS[int(board[r, c])]
            cells.append(f"[{ch}]" if r * n + c == last_action else f" {ch} ")
        lines.append(f"{r:>3} " + "".join(cells).rstrip())
    return "\n".join(lines)


def to_text(state, index: int = 0) -> str:
    """Text picture of a State (of element `index` if it is batched), with the side to move."""
    board, last = _unbatched(state, index)
    color = np.asarray(state.color).reshape(-1)[index]
    terminated = bool(np.asarray(state.terminated).reshape(-1)[index])
    winner = int(np.asarray(state.winner).reshape(-1)[index])
    if terminated:
        status = {1: "black (X) won", -1: "white (O) won", 0: "draw"}[winner]
    else:
        status = ("black (X)" if color == 1 else "white (O)") + " to move"
    return board_to_text(board, last) + "\n" + status


def _heat_colour(v: float) -> str:
    """Transparent yellow -> red for v in [0, 1]."""
    r, g, b = 230, int(200 * (1 - v) + 30 * v), 40
    return f"rgb({r},{g},{b})"


def board_to_svg(board, last_action: int = -1, heatmap=None, *, cell: int = 28,
                 title: Optional[str] = None) -> str:
    """SVG of a board: grid, 0-based coordinates, stones, a red dot on the last move.

    Args:
      board: int[N, N] (+1 black, -1 white, 0 empty).
      last_action: action of the last move, or -1.
      heatmap: optional float[N, N] or [N*N] (a policy or a feature map), drawn as coloured
        squares under the stones, scaled to its maximum.
      cell: pixels per cell.
    """
    board = np.asarray(board)
    n = board.shape[0]
    margin = cell
    size = 2 * margin + (n - 1) * cell
    xy = lambda i: margin + i * cell  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
           f'viewBox="0 0 {size} {size}" font-family="sans-serif">']
    if title:
        out.append(f"<title>{html.escape(title)}</title>")
    out.append(f'<rect width="{size}" height="{size}" fill="#dcb35c"/>')
    if heatmap is not None:
        heat = np.asarray(heatmap, np.float64).reshape(n, n)
        top = heat.max() if heat.size and heat.max() > 0 else 1.0
        for r, c in zip(*np.nonzero(heat > 0)):
            v = float(heat[r, c] / top)
            out.append(f'<rect x="{xy(c) - cell / 2}" y="{xy(r) - cell / 2}" width="{cell}" '
                       f'height="{cell}" fill="{_heat_colour(v)}" '
                       f'fill-opacity="{0.15 + 0.7 * v:.3f}">'
                       f'<title>{heat[r, c]:.4g}</title></rect>')
    for i in range(n):
        out.append(f'<line x1="{xy(0)}" y1="{xy(i)}" x2="{xy(n - 1)}" y2="{xy(i)}" '
                   f'stroke="black" stroke-width="1"/>')
        out.append(f'<line x1="{xy(i)}" y1="{xy(0)}" x2="{xy(i)}" y2="{xy(n - 1)}" '
                   f'stroke="black" stroke-width="1"/>')
        font = f'font-size="{cell * 0.4:.1f}" text-anchor="middle" fill="#333"'
        out.append(f'<text x="{xy(i)}" y="{margin * 0.55:.1f}" {font}>{i}</text>')
        out.append(f'<text x="{margin * 0.45:.1f}" y="{xy(i) + cell * 0.14:.1f}" {font}>{i}</text>')
    for r, c in zip(*np.nonzero(board)):
        black = board[r, c] == 1
        out.append(f'<circle cx="{xy(c)}" cy="{xy(r)}" r="{cell * 0.45:.1f}" '
                   f'fill="{"black" if black else "white"}" stroke="black" stroke-width="1"/>')
    if 0 <= last_action < n * n:
        r, c = divmod(last_action, n)
        out.append(f'<circle cx="{xy(c)}" cy="{xy(r)}" r="{cell * 0.14:.1f}" fill="red"/>')
    out.append("</svg>")
    return "\n".join(out)


def to_svg(state, index: int = 0, heatmap=None, *, cell: int = 28) -> str:
    """SVG picture of a State (of element `index` if it is batched); see `board_to_svg`."""
    board, last = _unbatched(state, index)
    return board_to_svg(board, last, heatmap, cell=cell, title=to_text(state, index))
