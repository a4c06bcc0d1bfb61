"""Threat patterns and the pattern heat map (`games.gomoku.features.patterns`, seed 000).

- Hand-made lines for every pattern code, in all 4 directions, for both colours, in open
  space, against the board's edge and against opponent stones; freestyle and exact5; k = 4.
- A differential test against `reference_threats`, a brute-force pure-Python classifier
  written here from the module docstring's definitions: it walks each whole board line,
  places the stone, and tries every empty cell of the line as the next stone.
- pattern_counts / pattern_scores / pattern_features (range, occupied cells, fallback, the
  1.2 defence weight) and the env's "patterns" observation plane.

Every jitted function is compiled once per static config and fed fixed-size batches.
"""

from __future__ import annotations

import functools
import importlib.util
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax.games.gomoku.features import (
    CLOSED_THREE,
    FIVE,
    FOUR,
    NONE,
    OPEN_FOUR,
    OPEN_THREE,
    OPEN_TWO,
    PATTERN_NAMES,
    PatternConfig,
    ProximityConfig,
    pattern_counts,
    pattern_features,
    pattern_scores,
    proximity_mask,
    threats,
)
from gomoku_jax.games.gomoku.features.planes import PatternPlane, plane_function

BATCH = 32  # boards per compiled call
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # horizontal, vertical, diagonal, anti-diagonal
DIRECTION_NAMES = ("horizontal", "vertical", "diagonal", "anti-diagonal")


# --------------------------------------------------------------------------------------
# Brute-force reference, from the module docstring
# --------------------------------------------------------------------------------------

_EMPTY, _OWN, _BLOCK, _OPP = 0, 1, 2, 3  # a line seen from one colour; BLOCK: the edge,
# OPP: an opponent stone (they block alike, except at the ends of a run under caro)
_BLOCKS = (_BLOCK, _OPP)


def _run(line: list, j: int) -> tuple[int, int]:
    """First and last index of the run of own stones through index j (walls stop it)."""
    a = b = j
    while line[a - 1] == _OWN:
        a -= 1
    while line[b + 1] == _OWN:
        b += 1
    return a, b


def classify(values: list, i: int, k: int, exact: bool, caro: bool = False) -> int:
    """The pattern code a stone placed on the empty cell `values[i]` makes along the line.

    `values` is the whole board line (EMPTY / OWN / OPP); off-board cells are walls. Under
    `caro` a run whose two neighbours are opponent stones is no five; as the module doc
    says, only opponent stones within k cells of the new stone are seen.
    """
    line = [_BLOCK] + list(values) + [_BLOCK]
    e = i + 1
    line[e] = _OWN

    def is_five(first, last):
        length = last - first + 1
        long_enough = length == k if exact else length >= k
        if not caro:
            return long_enough
        stopped = [line[j] == _OPP and abs(j - e) <= k for j in (first - 1, last + 1)]
        return long_enough and not all(stopped)

    # FIVE: the run through the cell.
    if is_five(*_run(line, e)):
        return FIVE
    # FOUR / OPEN_FOUR: distinct empty cells of the line whose stone completes a five
    # through this cell.
    empties = [j for j, v in enumerate(line) if v == _EMPTY]
    completions = 0
    for j in empties:
        line[j] = _OWN
        first, last = _run(line, j)
        completions += first <= e <= last and is_five(first, last)
        line[j] = _EMPTY
    if completions >= 2:
        return OPEN_FOUR
    if completions == 1:
        return FOUR

    def not_overline(first, last):  # exact5: no own stone right outside a window
        return not exact or (line[first - 1] != _OWN and line[last + 1] != _OWN)

    # OPEN_THREE: one more stone somewhere in the line makes a straight four through the
    # cell: a (k+1)-window, both ends empty, the k-1 cells between them all own.
    for j in empties:
        line[j] = _OWN
        straight = any(
            line[s] == _EMPTY and line[s + k] == _EMPTY and not_overline(s, s + k)
            and all(line[t] == _OWN for t in range(s + 1, s + k))
            for s in range(max(0, e - k + 1), e) if s + k < len(line))
        line[j] = _EMPTY
        if straight:
            return OPEN_THREE
    # CLOSED_THREE: a k-window through the cell, free of blocks, holding k-2 own stones.
    for s in range(max(0, e - k + 1), e + 1):
        window = line[s:s + k]
        if (len(window) == k and not any(v in _BLOCKS for v in window)
                and window.count(_OWN) == k - 2 and not_overline(s, s + k - 1)):
            filled = line[:s] + [_OWN] * k + line[s + k:]
            saved, line = line, filled
            ok = not caro or is_five(*_run(line, s))
            line = saved
            if ok:
                return CLOSED_THREE
    # OPEN_TWO: a (k+1)-window, both ends empty, its k-1 inner cells (through the cell)
    # free of blocks and holding k-3 own stones.
    for s in range(max(0, e - k + 1), e):
        if s + k >= len(line):
            break
        inner = line[s + 1:s + k]
        if (line[s] == _EMPTY and line[s + k] == _EMPTY
                and not any(v in _BLOCKS for v in inner)
                and inner.count(_OWN) == k - 3 and not_overline(s, s + k)):
            return OPEN_TWO
    return NONE


@functools.lru_cache(maxsize=None)
def renju_reference():
    """tests/games/gomoku/renju_reference.py (pure Python, from the renju rules)."""
    path = pathlib.Path(__file__).parent.parent / "renju_reference.py"
    spec = importlib.util.spec_from_file_location("renju_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def board_lines(n: int):
    """(direction index, [cells]) for every whole line of an n x n board."""
    for d, (dr, dc) in enumerate(DIRECTIONS):
        for r0 in range(n):
            for c0 in range(n):
                if 0 <= r0 - dr < n and 0 <= c0 - dc < n:
                    continue  # not the first cell of its line
                cells, r, c = [], r0, c0
                while 0 <= r < n and 0 <= c < n:
                    cells.append((r, c))
                    r, c = r + dr, c + dc
                yield d, cells


def reference_threats(board: np.ndarray, colour: int, k: int, rule: str) -> np.ndarray:
    """Every rule: exact under exact5 / caro_exact5 / renju for black; caro's ends; under
    renju black's forbidden points (the renju reference) NONE."""
    n = board.shape[0]
    out = np.full((n, n, 4), NONE, np.int8)
    exact = rule in ("exact5", "caro_exact5") or (rule == "renju" and colour == 1)
    caro = rule in ("caro", "caro_exact5")
    for d, cells in board_lines(n):
        values = [_OWN if board[p] == colour else _EMPTY if board[p] == 0 else _OPP
                  for p in cells]
        for i, (r, c) in enumerate(cells):
            if values[i] == _EMPTY:
                out[r, c, d] = classify(values, i, k, exact, caro)
    if rule == "renju" and colour == 1:
        forbidden = np.array(renju_reference().forbidden_points(board.tolist()), bool)
        out[forbidden] = NONE
    return out


# --------------------------------------------------------------------------------------
# Compiled functions, one per static config
# --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _threats_fn(n: int, k: int, rule: str):
    del n  # cache key only
    return jax.jit(jax.vmap(lambda b, c: threats(b, c, k, rule)))


@functools.lru_cache(maxsize=None)
def _features_fn(n: int, k: int, rule: str, config: PatternConfig):
    """(features, own scores, opponent scores, proximity, own threat codes) per board and
    colour to move."""
    del n

    def f(board, to_move):
        return (pattern_features(board, to_move, k, rule, config),
                pattern_scores(board, to_move, k, rule, config),
                pattern_scores(board, -to_move, k, rule, config),
                proximity_mask(board, config.proximity),
                threats(board, to_move, k, rule))

    return jax.jit(jax.vmap(f))


# Threat codes of this config come out of its pattern_features program (one compile less).
_WITH_FEATURES = {(9, 5, "freestyle")}


def _batched(fn, boards, colours):
    """Apply a compiled vmapped fn to boards [B, n, n] / colours [B] in BATCH-sized calls."""
    boards = np.asarray(boards, np.int8)
    colours = np.broadcast_to(np.asarray(colours, np.int8), boards.shape[:1])
    count, n = boards.shape[0], boards.shape[-1]
    pad = (-count) % BATCH
    boards = np.concatenate([boards, np.zeros((pad, n, n), np.int8)])
    colours = np.concatenate([colours, np.ones(pad, np.int8)])
    outs = [fn(jnp.asarray(boards[i:i + BATCH]), jnp.asarray(colours[i:i + BATCH]))
            for i in range(0, len(boards), BATCH)]
    return jax.tree.map(lambda *xs: np.concatenate([np.asarray(x) for x in xs])[:count],
                        *outs)


def threat_codes(boards, colours, k=5, rule="freestyle") -> np.ndarray:
    boards = np.asarray(boards)
    n = boards.shape[-1]
    if (n, k, rule) in _WITH_FEATURES:
        return _batched(_features_fn(n, k, rule, PatternConfig()), boards, colours)[-1]
    return _batched(_threats_fn(n, k, rule), boards, colours)


def features(boards, to_move, k=5, rule="freestyle", config=PatternConfig()):
    """(features, own scores, opponent scores, proximity) of each board."""
    boards = np.asarray(boards)
    return _batched(_features_fn(boards.shape[-1], k, rule, config), boards, to_move)[:4]


# --------------------------------------------------------------------------------------
# Hand-made lines
# --------------------------------------------------------------------------------------


def line_board(spec: str, d: int, colour: int, n: int = 15, at_edge: bool = False):
    """A board holding `spec` along direction d; returns (board, the '*' cell).

    spec: 'x' a stone of `colour`, 'o' an opponent stone, '.' empty, '*' the empty cell
    under test. With `at_edge` the spec's first cell is the first cell of its board line
    (the cell before it is off the board); otherwise the spec is centred on the board.
    """
    dr, dc = DIRECTIONS[d]
    m = len(spec)
    if at_edge:  # the cell before (r0, c0) along d is off the board
        r0, c0 = (n // 2, 0) if d == 0 else (0, n // 2)
        assert not (0 <= r0 - dr < n and 0 <= c0 - dc < n)
    else:
        r0, c0 = n // 2 - dr * (m // 2), n // 2 - dc * (m // 2)
    board = np.zeros((n, n), np.int8)
    cell = None
    for t, ch in enumerate(spec):
        r, c = r0 + t * dr, c0 + t * dc
        assert 0 <= r < n and 0 <= c < n, (spec, d)
        board[r, c] = {"x": colour, "o": -colour, ".": 0, "*": 0}[ch]
        if ch == "*":
            cell = (r, c)
    return board, cell


# (spec, expected freestyle code, expected exact5 code), k = 5, placed mid-board.
OPEN_SPACE = [
    ("..xx*xx..", FIVE, FIVE),
    ("..xxxx*..", FIVE, FIVE),
    ("..*xxxx..", FIVE, FIVE),
    ("..xxx*xx..", FIVE, NONE),           # an overline: no exact five, nothing to build
    ("..xxxxx*..", FIVE, NONE),
    ("..xxx*..", OPEN_FOUR, OPEN_FOUR),   # straight four _XXXX_
    ("..x.x*x.x..", OPEN_FOUR, OPEN_FOUR),  # X_XXX_X: two fours sharing the line
    ("..x.xxx*.o", OPEN_FOUR, FOUR),      # X_XXXX_: the left gap makes 6 under exact5
    ("oxxx*...", FOUR, FOUR),             # closed four against an opponent stone
    ("o.xx*.x.o", FOUR, FOUR),            # broken four XXX_X
    ("..xx*.x..", FOUR, FOUR),            # XXX_X with space around: still one completion
    ("o.x*.xx.o", FOUR, FOUR),            # XX_XX
    ("...x*x...", OPEN_THREE, OPEN_THREE),
    ("...xx*...", OPEN_THREE, OPEN_THREE),
    ("..x.x*...", OPEN_THREE, OPEN_THREE),  # split three _X_XX_
    ("o.xx*..x", OPEN_THREE, CLOSED_THREE),  # the straight four would touch x: overline
    ("oxx*...", CLOSED_THREE, CLOSED_THREE),
    ("ox.x*..o", CLOSED_THREE, CLOSED_THREE),  # space for one five only, no open three
    ("o.x*x.o", CLOSED_THREE, CLOSED_THREE),  # exactly 5 free cells
    ("..xx*.o", OPEN_THREE, OPEN_THREE),  # _XXX_ fits before the o
    ("...x*...", OPEN_TWO, OPEN_TWO),
    ("...x.*...", OPEN_TWO, OPEN_TWO),    # split two
    ("..x..*...", OPEN_TWO, OPEN_TWO),    # X__X inside a 6-window
    ("o.x*..o", NONE, NONE),              # the two fits only in one closed 5-window
    ("ox*...o", NONE, NONE),
    ("o.x*.o", NONE, NONE),               # 4 free cells: no five possible
    ("oxxx*o", NONE, NONE),
    ("....*....", NONE, NONE),            # a lone stone
    ("..o*o..", NONE, NONE),
]

# (spec starting at the board edge, expected freestyle code), k = 5.
AT_EDGE = [
    ("xxx*.", FOUR),           # closed four against the edge
    ("xxx*..", FOUR),
    ("xx*..", CLOSED_THREE),   # a three against the edge is closed
    ("x*...", NONE),           # a two against the edge: no open 6-window with both
    (".x*...", OPEN_TWO),
    (".xx*..", OPEN_THREE),
    (".xxx*.", OPEN_FOUR),
    ("*xxxx", FIVE),
    ("x*x.o", NONE),           # 4 free cells between the edge and o
]


@pytest.mark.parametrize("colour", [1, -1], ids=["black", "white"])
@pytest.mark.parametrize("rule", ["freestyle", "exact5"])
def test_hand_made_lines_in_open_space(rule, colour):
    boards, cells, expected, labels = [], [], [], []
    for spec, free_code, exact_code in OPEN_SPACE:
        for d in range(4):
            board, cell = line_board(spec, d, colour)
            boards.append(board)
            cells.append((cell, d))
            expected.append(free_code if rule == "freestyle" else exact_code)
            labels.append(f"{spec!r} {DIRECTION_NAMES[d]}")
    codes = threat_codes(np.stack(boards), colour, 5, rule)
    for i, ((r, c), d) in enumerate(cells):
        want = np.full(4, NONE, np.int8)
        want[d] = expected[i]  # the other 3 lines hold the cell's stone only
        assert codes[i, r, c].tolist() == want.tolist(), (
            f"{labels[i]} ({rule}, colour {colour}): got "
            f"{[PATTERN_NAMES[x] for x in codes[i, r, c]]}, want "
            f"{[PATTERN_NAMES[x] for x in want]}")


@pytest.mark.parametrize("colour", [1, -1], ids=["black", "white"])
def test_hand_made_lines_against_the_edge(colour):
    boards, cells = [], []
    for spec, _ in AT_EDGE:
        for d in range(4):
            board, cell = line_board(spec, d, colour, at_edge=True)
            boards.append(board)
            cells.append((cell, d))
    codes = threat_codes(np.stack(boards), colour)
    for i, ((r, c), d) in enumerate(cells):
        spec, want = AT_EDGE[i // 4]
        assert codes[i, r, c, d] == want, (
            f"{spec!r} at the edge, {DIRECTION_NAMES[d]}, colour {colour}: got "
            f"{PATTERN_NAMES[codes[i, r, c, d]]}, want {PATTERN_NAMES[want]}")
        assert all(codes[i, r, c, e] == NONE for e in range(4) if e != d)


@pytest.mark.parametrize("colour", [1, -1], ids=["black", "white"])
def test_an_opponent_stone_blocks_like_the_edge(colour):
    """The edge cases again, mid-board, with an opponent stone in place of the edge."""
    boards, cells = [], []
    for spec, _ in AT_EDGE:
        for d in range(4):
            board, cell = line_board("o" + spec, d, colour)
            boards.append(board)
            cells.append((cell, d))
    codes = threat_codes(np.stack(boards), colour, 5, "exact5")
    for i, ((r, c), d) in enumerate(cells):
        spec, want = AT_EDGE[i // 4]
        assert codes[i, r, c, d] == want, (
            f"'o' + {spec!r}, {DIRECTION_NAMES[d]}, colour {colour}: got "
            f"{PATTERN_NAMES[codes[i, r, c, d]]}, want {PATTERN_NAMES[want]}")


def test_both_colours_see_their_own_patterns():
    """On one board, the code of a cell depends on whose stone would go there."""
    board = np.zeros((15, 15), np.int8)
    board[7, 4:7] = 1       # black . x x x . : cell (7, 7) makes a straight four for black
    board[9, 4:7] = -1      # white o o o on another row
    codes = threat_codes(np.stack([board, board]), np.array([1, -1]))
    assert codes[0, 7, 7, 0] == OPEN_FOUR and codes[1, 7, 7, 0] == NONE  # white: blocked
    assert codes[1, 9, 7, 0] == OPEN_FOUR and codes[0, 9, 7, 0] == NONE
    assert codes[0, 7, 3, 0] == OPEN_FOUR and codes[1, 9, 3, 0] == OPEN_FOUR
    # Vertical line through (8, 5), between black (7, 5) and white (9, 5): each colour's
    # two stones can't get an open 6-window (the other colour blocks), and make no three.
    assert codes[0, 8, 5, 1] == NONE and codes[1, 8, 5, 1] == NONE


def test_win_length_four():
    cases = [  # (spec, freestyle, exact) with k = 4 on a 7x7 board, centred
        (".xx*x.", FIVE, FIVE),             # k in a row
        ("xx*xx", FIVE, NONE),              # 5 > k: an overline
        (".x*..", OPEN_THREE, OPEN_THREE),
        ("..*x.", OPEN_THREE, OPEN_THREE),
        ("ox*x.o", FOUR, FOUR),
        (".x*.x.", FOUR, FOUR),             # XX_X
        ("..*..", OPEN_TWO, OPEN_TWO),      # k - 3 = 1: the cell alone
        ("o.*.o", NONE, NONE),              # 3 free cells < k
    ]
    cases_open_four = [(".*xx.", OPEN_FOUR, OPEN_FOUR)]
    for rule, col in (("freestyle", 1), ("exact5", 2)):
        boards, cells = [], []
        for spec, *_ in cases + cases_open_four:
            for d in range(4):
                board, cell = line_board(spec, d, 1, n=7)
                boards.append(board)
                cells.append((cell, d))
        codes = threat_codes(np.stack(boards), 1, 4, rule)
        for i, ((r, c), d) in enumerate(cells):
            case = (cases + cases_open_four)[i // 4]
            assert codes[i, r, c, d] == case[col], (
                f"k=4 {rule} {case[0]!r} {DIRECTION_NAMES[d]}: "
                f"got {PATTERN_NAMES[codes[i, r, c, d]]}, want {PATTERN_NAMES[case[col]]}")


def test_the_reference_agrees_with_the_hand_made_lines():
    """The brute-force reference reproduces the hand examples (so it is no tautology)."""
    for spec, free_code, exact_code in OPEN_SPACE:
        values = [{"x": _OWN, "o": _OPP, ".": _EMPTY, "*": _EMPTY}[ch] for ch in spec]
        values = [_EMPTY] * 6 + values + [_EMPTY] * 6  # the rest of a 15-cell-ish line
        i = 6 + spec.index("*")
        assert classify(values, i, 5, False) == free_code, spec
        assert classify(values, i, 5, True) == exact_code, spec


# --------------------------------------------------------------------------------------
# Differential test against the reference
# --------------------------------------------------------------------------------------


def random_boards(rng: np.random.Generator, count: int, n: int) -> np.ndarray:
    """Random boards, sparse to dense, balanced or dominated by one colour (so that long
    runs and overlines appear), without regard to legality."""
    boards = np.zeros((count, n, n), np.int8)
    for i in range(count):
        density = rng.uniform(0.08, 0.75)
        black_share = (0.5, 0.85, 0.97)[i % 3]
        if i % 2:
            black_share = 1 - black_share
        u = rng.random((n, n))
        boards[i] = np.where(u < density * black_share, 1, np.where(u < density, -1, 0))
    return boards


DIFFERENTIAL = [  # (board size, k, rule, boards)
    pytest.param(9, 5, "freestyle", 192, id="9x9-k5-freestyle"),
    pytest.param(9, 5, "exact5", 192, id="9x9-k5-exact5"),
    pytest.param(15, 5, "freestyle", 64, id="15x15-k5-freestyle"),
    pytest.param(15, 5, "exact5", 64, id="15x15-k5-exact5"),
    pytest.param(7, 4, "freestyle", 128, id="7x7-k4-freestyle"),
    pytest.param(7, 4, "exact5", 128, id="7x7-k4-exact"),
]


@pytest.mark.parametrize("n, k, rule, count", DIFFERENTIAL)
def test_threats_match_brute_force_reference(n, k, rule, count):
    rng = np.random.default_rng(n * 100 + k * 10 + (rule == "exact5"))
    boards = random_boards(rng, count, n)
    colours = np.where(np.arange(count) % 4 < 2, 1, -1).astype(np.int8)
    got = threat_codes(boards, colours, k, rule)
    expected = np.stack([reference_threats(b, int(c), k, rule)
                         for b, c in zip(boards, colours)])
    bad = np.argwhere(got != expected)
    if len(bad):
        b, r, c, d = bad[0]
        pytest.fail(
            f"{len(bad)} disagreements; first: board {b} (colour {colours[b]}), cell "
            f"({r}, {c}), {DIRECTION_NAMES[d]}: reference {PATTERN_NAMES[expected[b, r, c, d]]}"
            f", threats {PATTERN_NAMES[got[b, r, c, d]]}\n{boards[b]}")
    # Occupied cells are NONE; every code occurs often enough to mean something.
    assert np.all(got[boards != 0] == NONE)
    histogram = np.bincount(got.ravel(), minlength=len(PATTERN_NAMES))
    assert np.all(histogram >= 50), dict(zip(PATTERN_NAMES, histogram.tolist()))


def test_colour_symmetry():
    """Black's codes on a board are white's codes on the colour-swapped board."""
    rng = np.random.default_rng(3)
    boards = random_boards(rng, BATCH, 9)
    np.testing.assert_array_equal(threat_codes(boards, 1), threat_codes(-boards, -1))


# --------------------------------------------------------------------------------------
# pattern_counts, pattern_scores
# --------------------------------------------------------------------------------------


def test_pattern_counts():
    rng = np.random.default_rng(4)
    codes = rng.integers(0, len(PATTERN_NAMES), (6, 5, 4)).astype(np.int8)
    counts = np.asarray(pattern_counts(jnp.asarray(codes)))
    assert counts.shape == (6, 5, len(PATTERN_NAMES)) and counts.dtype == np.int32
    for r in range(6):
        for c in range(5):
            assert counts[r, c].tolist() == np.bincount(codes[r, c], minlength=7).tolist()
    assert np.all(counts.sum(-1) == 4)


def test_pattern_scores_sum_the_weights_of_the_four_lines():
    rng = np.random.default_rng(6)
    boards = random_boards(rng, BATCH, 9)
    colours = np.where(np.arange(BATCH) % 2, 1, -1).astype(np.int8)
    config = PatternConfig()
    _, own, opp, _ = features(boards, colours, config=config)
    weights = np.asarray(config.weights, np.float32)
    np.testing.assert_allclose(own, weights[threat_codes(boards, colours)].sum(-1),
                               rtol=1e-6)
    np.testing.assert_allclose(opp, weights[threat_codes(boards, -colours)].sum(-1),
                               rtol=1e-6)


def test_pattern_config_validation():
    with pytest.raises(ValueError):
        PatternConfig(weights=(1.0, 2.0))
    assert PatternConfig() == PatternConfig()
    assert hash(PatternConfig()) == hash(PatternConfig())


# --------------------------------------------------------------------------------------
# pattern_features
# --------------------------------------------------------------------------------------


def test_pattern_features_compose_as_documented():
    n = 9
    rng = np.random.default_rng(29)
    boards = random_boards(rng, BATCH, n)
    to_move = np.where(np.arange(BATCH) % 2, 1, -1).astype(np.int8)
    got, own, opp, prox = features(boards, to_move)
    assert got.dtype == np.float32 and got.shape == boards.shape
    for i in range(BATCH):
        empty = boards[i] == 0
        combined = (own[i] + np.float32(1.2) * opp[i]) * prox[i] * empty
        if combined.max() == 0:
            combined = np.float32(0.3) * prox[i] * empty
        want = combined / combined.max()
        np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-7, err_msg=f"board {i}")
        assert got[i].min() >= 0.0 and got[i].max() == pytest.approx(1.0, abs=1e-6)
        assert np.all(got[i][~empty] == 0.0), "occupied cells must be 0"


def test_pattern_features_fallback_without_patterns():
    # A crowded board whose colours alternate in pairs along every line, with 9 scattered
    # empty cells: every 5 cells of a line hold both colours, so no cell makes any pattern.
    r, c = np.mgrid[:9, :9]
    board = np.where((r + 2 * c) // 2 % 2 == 0, 1, -1).astype(np.int8)
    for cell in [(1, 1), (1, 5), (3, 3), (4, 7), (5, 1), (6, 4), (7, 7), (2, 8), (8, 2)]:
        board[cell] = 0
    codes = threat_codes(np.stack([board, board]), np.array([1, -1]))
    assert np.all(codes == NONE)
    got, own, opp, prox = features(board[None], -1)
    assert np.all(own == 0) and np.all(opp == 0)
    # The fallback is 0.3 x proximity, normalised: 1 on the (all adjacent) empty cells.
    np.testing.assert_allclose(got[0], prox[0] / prox[0].max(), rtol=1e-6)
    assert np.all(got[0][board != 0] == 0.0) and np.all(got[0][board == 0] == 1.0)

    # In the opening with no patterns it is all ones on the empty cells (the opening
    # exception makes the proximity mask all ones) and 0 on the stones.
    empty = np.zeros((1, 9, 9), np.int8)
    corners = empty.copy()
    corners[0, 0, 0], corners[0, 8, 8] = 1, -1  # corner stones make no pattern
    boards = np.concatenate([empty, corners])
    got, own, opp, _ = features(boards, 1)
    assert np.all(own == 0) and np.all(opp == 0)
    assert np.all(got[boards == 0] == 1.0) and np.all(got[boards != 0] == 0.0)


def test_pattern_features_weigh_defence_by_1_2():
    """A position symmetric under 180-degree rotation with the colours swapped: black's
    pattern on a cell is white's pattern on the rotated cell, so with black to move the
    rotated cells of black-only threats score exactly 1.2 times as much (and the reverse
    with white to move)."""
    board = np.zeros((15, 15), np.int8)
    for r, c in [(3, 3), (3, 4), (5, 5)]:
        board[r, c] = 1
    board = board - np.rot90(board, 2)  # white stones at the rotated cells
    assert np.array_equal(-np.rot90(board, 2), board)
    codes_black, codes_white = threat_codes(np.stack([board, board]), np.array([1, -1]))
    black_only = (codes_black != NONE).any(-1) & (codes_white == NONE).all(-1)
    assert black_only.sum() >= 10
    got, own, opp, prox = features(np.stack([board, board]), np.array([1, -1]))
    rot = lambda a: np.rot90(a, 2)  # noqa: E731
    f_black, f_white = got
    # Black to move: white's threats (defence) are the 1.2 ones.
    np.testing.assert_allclose(rot(f_black)[black_only], 1.2 * f_black[black_only],
                               rtol=1e-6)
    # White to move: now black's threats are the opponent's.
    np.testing.assert_allclose(f_white[black_only], 1.2 * rot(f_white)[black_only],
                               rtol=1e-6)
    assert f_black.max() == 1.0 and f_white.max() == 1.0
    # Hand numbers for (3, 5): black's x x * is an open three (8) and with (5, 5) two rows
    # below an open two (1) on the vertical; white has nothing there.
    assert own[0][3, 5] == 9.0 and opp[0][3, 5] == 0.0
    assert own[1][3, 5] == 0.0 and opp[1][3, 5] == 9.0


def test_pattern_features_with_custom_config():
    config = PatternConfig(weights=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), defence_weight=3.0,
                           fallback=0.5, proximity=ProximityConfig(opening_stones=0))
    board = np.zeros((9, 9), np.int8)
    board[4, 0:4] = 1          # black four at the edge: (4, 4) makes black five
    board[0, 2:6] = -1         # white four: (0, 1) and (0, 6) make white fives
    got, own, opp, prox = features(board[None], 1, config=config)
    assert own[0][4, 4] == 1.0 and opp[0][0, 1] == 1.0 and opp[0][0, 6] == 1.0
    assert got[0][0, 1] == 1.0 and got[0][0, 6] == 1.0
    np.testing.assert_allclose(got[0][4, 4], 1.0 / 3.0, rtol=1e-6)
    assert np.count_nonzero(got[0]) == 3
    # Only weighted-zero patterns: the fallback, 0.5 x proximity, normalised.
    quiet = np.zeros((1, 9, 9), np.int8)
    quiet[0, 4, 4] = 1
    got, *_ = features(quiet, 1, config=config)
    assert got[0][4, 4] == 0.0 and got[0][3, 3] == 1.0
    np.testing.assert_allclose(got[0][2, 2], 0.5, rtol=1e-6)


def test_patterns_feature_plane_of_the_env():
    env = gomoku_jax.make("gomoku", board_size=9, feature_plane="patterns")
    other = gomoku_jax.make("gomoku", board_size=9, feature_plane="patterns")
    assert env == other and hash(env) == hash(other)
    assert env.config.feature_plane == "patterns" and env.config.has_feature_plane
    assert plane_function(env.config) == PatternPlane(5, "freestyle", PatternConfig())
    assert env != gomoku_jax.make("gomoku", board_size=9, feature_plane="proximity")
    assert env.observation_shape == (9, 9, 6)
    games = [
        [],
        [(4, 4), (4, 5)],
        [(4, 4), (4, 5), (3, 3), (0, 8), (5, 5), (2, 2)],          # black to move
        [(4, 4), (4, 5), (3, 3), (0, 8), (5, 5), (2, 2), (1, 1)],  # white to move
        [(4, 4), (0, 0), (4, 5), (0, 1), (4, 6), (8, 0), (2, 2), (8, 1), (6, 6)],  # white
    ]
    states = [env.from_moves(g) for g in games]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *states)
    obs = np.asarray(jax.jit(env.observe)(batch))
    assert obs.shape == (len(games), 9, 9, 6)
    boards = np.stack([np.asarray(s.board) for s in states])
    colours = np.stack([np.asarray(s.color) for s in states])
    assert colours.tolist() == [1, 1, 1, -1, -1]
    want, *_ = features(boards, colours)
    np.testing.assert_allclose(obs[..., 5], want, rtol=1e-6, atol=1e-7)
    # The plane is seen from the side to move: in the last game white must stop black's
    # open three x x x in row 4, so the plane is not black's own view of the board.
    black_view, *_ = features(boards[4:], 1)
    assert not np.allclose(obs[4, ..., 5], black_view[0])
    assert obs[4, 4, 3, 5] == obs[4, 4, 7, 5] == 1.0  # the two open-four cells, defence
    # k and rule reach the plane.
    env4 = gomoku_jax.make("gomoku", board_size=9, win_length=4, rule="exact5",
                           feature_plane="patterns")
    assert plane_function(env4.config) == PatternPlane(4, "exact5")
