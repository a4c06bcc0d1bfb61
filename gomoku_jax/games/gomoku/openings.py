"""Match openings: a few stones near the centre that every arena game starts from.

15x15 freestyle Gomoku is a proven first-player win, and fixed agents replay the same game
from the empty board, so matches start from a set of openings and play each with both
colours (the colour advantage of an opening then cancels in the score).

An opening is a move list, black first, of (row, col) offsets from the centre cell
(N // 2, N // 2): `((0, 0), (-1, 0), (1, 2))` puts black on the centre, white right above it
and black's second stone one row below and two columns right. Offsets make one set fit every
board size; the default set stays within 2 cells of the centre (any board, N >= 5).

Games of one match run in lockstep (`eval.play_match`), so all openings of a set must have
the same number of stones (the side to move after them must be the same everywhere). The
arena takes openings as action sequences: `opening_actions(openings, N)`.

Files (`load_openings`) hold one opening per line, as whitespace- or comma-separated
integers taken in (row offset, col offset) pairs (Gomocup opening files use the same
centre-relative idea but x,y = col,row order), '#' starting a comment:

    # direct openings
    0,0  -1,0  1,2
    0,0  -1,0  2,-1

or, for a `.json` file (or text starting with '['), a list of move lists of [row, col] pairs:
`[[[0, 0], [-1, 0], [1, 2]], ...]`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable, Sequence

from gomoku_jax import configs

Opening = tuple[tuple[int, int], ...]

# Black on the centre, white next to it straight ("direct", as in renju's opening names) or
# diagonally ("indirect"), and black's second stone a knight's move or two diagonal steps
# from the first (no two black stones side by side). Three stones: white moves next.
DEFAULT_OPENINGS: tuple[Opening, ...] = (
    ((0, 0), (-1, 0), (1, 2)),
    ((0, 0), (-1, 0), (2, -1)),
    ((0, 0), (-1, 0), (-2, 2)),
    ((0, 0), (-1, 0), (2, 2)),
    ((0, 0), (-1, 1), (1, -2)),
    ((0, 0), (-1, 1), (2, 1)),
    ((0, 0), (-1, 1), (-2, -1)),
    ((0, 0), (-1, 1), (2, -2)),
)


def _as_int(v, where: str) -> int:
    return configs.check_int(f"{where}: an offset", v)


def normalize(openings: Iterable[Sequence[Sequence[int]]]) -> tuple[Opening, ...]:
    """Openings as a tuple of tuples of (row offset, col offset) int pairs.

    Checks the shape of the data and that the set is non-empty and of one length (the
    board-dependent checks are in `absolute_moves` and `opening_actions`).

    Raises:
      ValueError: an empty set, a move that is not a pair of ints, or openings of different
        lengths.
    """
    if isinstance(openings, (str, bytes)):
        raise ValueError("openings must be a list of move lists, not a string "
                         "(use load_openings / parse_openings for text)")
    out = []
    for i, opening in enumerate(openings):
        if isinstance(opening, (str, bytes)) or not isinstance(opening, Sequence):
            raise ValueError(f"opening {i}: expected a list of (row, col) pairs, got {opening!r}")
        moves = []
        for m, move in enumerate(opening):
            where = f"opening {i}, move {m}"
            if isinstance(move, (str, bytes)) or not isinstance(move, Sequence) \
                    or len(move) != 2:
                raise ValueError(f"{where}: expected a (row, col) offset pair, got {move!r}")
            moves.append((_as_int(move[0], where), _as_int(move[1], where)))
        out.append(tuple(moves))
    if not out:
        raise ValueError("the opening set is empty; give at least one opening")
    lengths = sorted({len(o) for o in out})
    if len(lengths) > 1:
        first = {n: next(i for i, o in enumerate(out) if len(o) == n) for n in lengths}
        detail = ", ".join(f"opening {first[n]} has {n}" for n in lengths)
        raise ValueError(f"all openings must have the same number of stones (the games of a "
                         f"match run in lockstep, so the side to move must be the same): "
                         f"{detail}")
    return tuple(out)


def absolute_moves(openings: Iterable[Sequence[Sequence[int]]], board_size: int
                   ) -> list[list[tuple[int, int]]]:
    """The openings' (row, col) cells on an N x N board (offsets from (N // 2, N // 2)).

    Raises:
      ValueError: as `normalize`, or a stone that falls off the board.
    """
    c = board_size // 2
    out = []
    for i, opening in enumerate(normalize(openings)):
        cells = []
        for m, (dr, dc) in enumerate(opening):
            r, col = c + dr, c + dc
            if not (0 <= r < board_size and 0 <= col < board_size):
                raise ValueError(
                    f"opening {i}, move {m}: offset ({dr}, {dc}) from the centre ({c}, {c}) "
                    f"is cell ({r}, {col}), off the {board_size}x{board_size} board")
            cells.append((r, col))
        out.append(cells)
    return out


def opening_actions(openings: Iterable[Sequence[Sequence[int]]], board_size: int
                    ) -> tuple[tuple[int, ...], ...]:
    """The openings as action sequences (`row * N + col`) on an N x N board, for the arena.

    Raises:
      ValueError: as `absolute_moves`, or two stones on one cell; the message names the
        opening. (Whether an opening already ends the game is checked where it is played.)
    """
    openings = normalize(openings)
    out = []
    for i, cells in enumerate(absolute_moves(openings, board_size)):
        if len(set(cells)) != len(cells):
            dup = next(c for c in cells if cells.count(c) > 1)
            raise ValueError(f"opening {i} {list(openings[i])}: two stones on cell {dup} of the "
                             f"{board_size}x{board_size} board")
        out.append(tuple(r * board_size + c for r, c in cells))
    return tuple(out)


def parse_openings(text: str) -> tuple[Opening, ...]:
    """Openings from the text of an openings file (see the module docstring for the format).

    Raises:
      ValueError: malformed JSON, a token that is not an integer, an odd number of
        integers on a line, no openings, or openings of different lengths.
    """
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"openings are not valid JSON: {e}") from None
        if isinstance(data, dict):
            if "openings" not in data:
                raise ValueError("a JSON object of openings needs an 'openings' key")
            data = data["openings"]
        if not isinstance(data, list):
            raise ValueError(f"JSON openings must be a list of move lists, got "
                             f"{type(data).__name__}")
        return normalize(data)
    openings = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        tokens = [t for t in re.split(r"[\s,;()\[\]]+", line) if t]
        try:
            values = [int(t) for t in tokens]
        except ValueError:
            bad = next(t for t in tokens if not re.fullmatch(r"[+-]?\d+", t))
            raise ValueError(f"line {lineno}: {bad!r} is not an integer offset") from None
        if len(values) % 2:
            raise ValueError(f"line {lineno}: an odd number of integers ({len(values)}); a "
                             f"move is a (row offset, col offset) pair")
        openings.append(tuple(zip(values[::2], values[1::2])))
    return normalize(openings)


def load_openings(path: str | Path) -> tuple[Opening, ...]:
    """Openings from a file (text or JSON, see the module docstring).

    Raises:
      ValueError: a missing or unreadable file, or bad content (as `parse_openings`).
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ValueError(f"cannot read openings file {str(path)!r}: {e.strerror or e}") from None
    try:
        return parse_openings(text)
    except ValueError as e:
        raise ValueError(f"openings file {str(path)!r}: {e}") from None
