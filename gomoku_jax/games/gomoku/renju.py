"""Renju's forbidden points for black (RIF rules), pure JAX.

For an empty cell p, black's stone there is forbidden when it makes no five (exactly five in
a row: a five always wins, whatever else the stone makes) and makes

- an overline: six or more black stones in a row;
- a double four: two fours through p, on two lines or on one (x_xxx_x, xx_xx_xx with p
  inside are two fours on one line; a straight four _xxxx_ is one);
- a double three: threes through p on two or more lines.

Along one line through p: a *four* is 4 stones, p among them, to which one more stone at an
empty *five point* makes exactly five (each distinct set of 4 stones is one four); a
*straight four* is an unbroken four with two five points; a *three* is 3 stones, p among
them, to which black can add a stone at a point q that is not itself forbidden (judged on
the board with p placed) to make a straight four. A line that holds a four through p is not
also a three, and a line counts at most one three. White has no forbidden points.

Everything about one line through p is decided by the 5 cells on each side of p: a run of
exactly 5 (or of 6 or more) through p, every five point and every completion point of a
three lie within that reach. So each line is looked up in a table of every 10-cell window
(3 ** 10 entries, built once with NumPy), as `features.patterns.threats` does; white stones
and the board's edge both block black, so they share a digit.

The recursion. Whether a three counts depends on whether its completion point q is
forbidden, judged on the board with p placed, which can again depend on a three of q, and so
on. `depth` (static) bounds it: depth 0 counts every completion point as legal, depth d
judges them with depth d - 1, and past the bound completion points are treated as legal.
Depth 0 can only err towards "forbidden", depth 1 only towards "legal", and so on,
alternating (the exact answer lies between any two consecutive depths). The cells whose
answer does not depend on completion points (no possible double three, a five, an overline
or a double four) are decided for the whole board at once; each of the others (usually
none, a few in a game) is searched depth first, one frame per `lax.while_loop` trip,
trying a line's completion points only until one is legal and a cell's lines only until two
threes are found. So a larger depth costs nothing until a position needs it.

DEFAULT_DEPTH = 4 agrees with the unbounded recursion of the pure-Python reference
(tests/games/gomoku/renju_reference.py) on every position of the tests (hand-made cases,
one of them needing depth 2, and generated ones). Measured with the reference on 15x15
boards (1,000 dense random ones, 20-50% filled, and 1,000 game-like ones, 20-100 random
moves next to stones): depth 0 was wrong on 199 and 172 cells (of 2,391 and 1,927 forbidden
ones), depth 1 on 4 and 3 cells (2 and 3 boards), depth 2 and 3 on none.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

BLACK = 1
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # as rules.DIRECTIONS (not imported: rules uses us)
REACH = 5  # cells looked at on each side of p
THREE_OFFSETS = (-3, -2, -1, 1, 2, 3)  # where a completion point of a three through p can be
DEFAULT_DEPTH = 4

# Digits of a window cell, seen from black (base 3, place value 3 ** j for the j-th cell).
EMPTY_DIGIT, BLACK_DIGIT, BLOCK_DIGIT = 0, 1, 2

# Bits of a table entry (int16): what black at p makes along one line.
FIVE_BIT, OVER_BIT = 1, 2
FOURS_SHIFT, FOURS_MASK = 2, 3  # number of distinct fours (at most 2 fit in a 10-cell window)
THREE_SHIFT = 4  # bit THREE_SHIFT + s: black at THREE_OFFSETS[s] would make a straight four


def _digit_position(offset: int) -> int:
    """Which base-3 digit of a window holds the cell at `offset` (-REACH..REACH, not 0)."""
    return offset + REACH if offset < 0 else offset + REACH - 1


def _run_bounds(own: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (lo, hi) of the unbroken black row through the centre of each window;
    own[o + REACH] says whether offset o is black (the centre always is)."""
    lo = np.zeros(own[0].shape, np.int8)
    hi = np.zeros(own[0].shape, np.int8)
    going = np.ones(own[0].shape, bool)
    for o in range(1, REACH + 1):
        going = going & own[REACH + o]
        hi = hi + going
    going = np.ones(own[0].shape, bool)
    for o in range(1, REACH + 1):
        going = going & own[REACH - o]
        lo = lo - going
    return lo, hi


@functools.lru_cache(maxsize=None)
def line_table() -> np.ndarray:
    """int16[3 ** (2 * REACH)]: for every window of 2 * REACH cells around an empty p (digit
    `_digit_position(o)` for offset o), what black at p makes along the line: FIVE_BIT (a run
    of exactly 5 through p), OVER_BIT (6 or more), the number of distinct fours through p
    (<< FOURS_SHIFT) and the straight-four completion points (bit THREE_SHIFT + s for
    THREE_OFFSETS[s]). Read-only, built once."""
    size = 3 ** (2 * REACH)
    index = np.arange(size, dtype=np.int64)
    digit = {o: (index // 3 ** _digit_position(o)) % 3
             for o in range(-REACH, REACH + 1) if o}
    own = [digit[o] == BLACK_DIGIT if o else np.ones(size, bool)
           for o in range(-REACH, REACH + 1)]
    empty = [digit[o] == EMPTY_DIGIT if o else np.zeros(size, bool)
             for o in range(-REACH, REACH + 1)]

    def with_black(q: int) -> list[np.ndarray]:
        out = list(own)
        out[REACH + q] = np.ones(size, bool)
        return out

    lo, hi = _run_bounds(own)
    run = hi - lo + 1
    entry = np.where(run == 5, FIVE_BIT, 0) | np.where(run >= 6, OVER_BIT, 0)

    # Fours: each five point q (within 4 of p) names the four it completes by its set of 4
    # stones, as a bit mask over the window; a straight four's two five points share one.
    four_sets = []
    for q in range(-4, 5):
        if q == 0:
            continue
        qlo, qhi = _run_bounds(with_black(q))
        five = empty[REACH + q] & (qhi - qlo == 4) & (qlo <= q) & (q <= qhi)
        span = sum(np.where((qlo <= o) & (o <= qhi) & (o != q), 1 << (o + REACH), 0)
                   for o in range(-REACH, REACH + 1))
        four_sets.append(np.where(five, span, 0))
    sets = np.sort(np.stack(four_sets), axis=0)
    distinct = np.sum((sets[1:] != sets[:-1]) & (sets[1:] != 0), axis=0) + (sets[0] != 0)
    entry = entry | (np.minimum(distinct, FOURS_MASK) << FOURS_SHIFT)

    # Threes: q such that black at p and q makes an unbroken row of exactly 4 through both,
    # whose two ends are empty and each make exactly five (the cell past it is not black).
    for s, q in enumerate(THREE_OFFSETS):
        b = with_black(q)
        qlo, qhi = _run_bounds(b)
        straight = empty[REACH + q] & (qhi - qlo == 3) & (qlo <= q) & (q <= qhi)
        for end, past in ((qlo - 1, qlo - 2), (qhi + 1, qhi + 2)):
            # ends lie within -4..4 and the cells past them within -5..5: the window
            straight = straight & _pick(empty, end) & ~_pick(b, past)
        entry = entry | np.where(straight, 1 << (THREE_SHIFT + s), 0)
    table = entry.astype(np.int16)
    completions = np.unpackbits(((table >> THREE_SHIFT) & 63).astype(np.uint8)[:, None], axis=1)
    if completions.sum(axis=1).max() > 2:  # `forbidden_at` relies on it
        raise AssertionError("a line with more than 2 completion points")
    table.flags.writeable = False
    return table


def _pick(planes: list[np.ndarray], offset: np.ndarray) -> np.ndarray:
    """planes[offset + REACH] per window, where `offset` varies by window (clipped to the
    window: the callers only use windows where it is inside)."""
    stacked = np.stack(planes)
    at = np.clip(offset.astype(np.int64), -REACH, REACH) + REACH
    return np.take_along_axis(stacked, at[None], 0)[0]


class _Lines:
    """Decoded table entries: each field [4, ...] (one row per direction of p)."""

    def __init__(self, code: jax.Array):
        code = code.astype(jnp.int32)
        self.five = (code & FIVE_BIT) != 0
        self.over = (code & OVER_BIT) != 0
        self.fours = (code >> FOURS_SHIFT) & FOURS_MASK
        self.candidates = (code >> THREE_SHIFT) & ((1 << len(THREE_OFFSETS)) - 1)
        # A line that holds a four through p is not a three.
        self.may_three = (self.fours == 0) & (self.candidates != 0)

    def counts(self) -> jax.Array:
        """int32[4, ...]: each line's `_Counts` fields, to be summed over the lines."""
        return _pack(self.five, self.over, self.fours, self.may_three)


# Per-cell sums over lines, packed in one int32 so that a cell's 4 lines add up with `+`:
# lines with a five, with an overline, fours, possible threes (4 bits each).
_FIVE_AT, _OVER_AT, _FOURS_AT, _THREES_AT, _FIELD = 0, 4, 8, 12, 15


def _pack(five, over, fours, threes) -> jax.Array:
    return (five.astype(jnp.int32) << _FIVE_AT) + (over.astype(jnp.int32) << _OVER_AT) \
        + (fours.astype(jnp.int32) << _FOURS_AT) + (threes.astype(jnp.int32) << _THREES_AT)


class _Counts:
    """A cell's packed line sums, decoded: the decisions that need no recursion."""

    def __init__(self, total: jax.Array):
        self.five = ((total >> _FIVE_AT) & _FIELD) != 0
        over = ((total >> _OVER_AT) & _FIELD) != 0
        fours = (total >> _FOURS_AT) & _FIELD
        self.threes = (total >> _THREES_AT) & _FIELD
        # forbidden whatever the threes are
        self.bad = ~self.five & (over | (fours >= 2))
        # forbidden if the possible threes are all threes (every completion point legal)
        self.upper = self.bad | (~self.five & (self.threes >= 2))
        # a double three that depends on whether completion points are legal
        self.possible = ~self.five & ~self.bad & (self.threes >= 2)


@functools.lru_cache(maxsize=None)
def _candidate_slots() -> tuple[np.ndarray, np.ndarray]:
    """int32[64] each: the lowest and highest set bit of a 6-bit completion mask (-1 when
    none). A line has at most 2 completion points, so these are all of them."""
    masks = np.arange(1 << len(THREE_OFFSETS))
    bits = (masks[:, None] >> np.arange(len(THREE_OFFSETS))) & 1
    first = np.where(masks > 0, np.argmax(bits, axis=1), -1)
    last = np.where(masks > 0, len(THREE_OFFSETS) - 1 - np.argmax(bits[:, ::-1], axis=1), -1)
    return first.astype(np.int32), last.astype(np.int32)


# -- one cell ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _window_cells(n: int) -> tuple[np.ndarray, np.ndarray]:
    """int32[4, 2 * REACH] row and column steps of the window cells, in digit order."""
    offsets = [o for o in range(-REACH, REACH + 1) if o]
    offsets.sort(key=_digit_position)
    d_row = np.array([[dr * o for o in offsets] for dr, _ in DIRECTIONS], np.int32)
    d_col = np.array([[dc * o for o in offsets] for _, dc in DIRECTIONS], np.int32)
    return d_row, d_col


def _cell_lines(flat_board: jax.Array, cell: jax.Array, n: int) -> _Lines:
    """The table entries of black at `cell`'s 4 lines (gathering their 40 cells)."""
    d_row, d_col = _window_cells(n)
    r, c = cell // n + d_row, cell % n + d_col
    inside = (r >= 0) & (r < n) & (c >= 0) & (c < n)
    value = jnp.where(inside, flat_board[jnp.clip(r * n + c, 0, n * n - 1)], -BLACK)
    digit = jnp.where(value == BLACK, BLACK_DIGIT,
                      jnp.where(value == 0, EMPTY_DIGIT, BLOCK_DIGIT)).astype(jnp.int32)
    index = jnp.sum(digit * (3 ** np.arange(2 * REACH, dtype=np.int32)), axis=1)
    return _Lines(jnp.take(jnp.asarray(line_table()), index, mode="clip"))


def _completion_points(lines: _Lines, cell: jax.Array, n: int
                       ) -> tuple[jax.Array, jax.Array]:
    """(int32[8] cells, bool[8] valid): the completion points of each line's possible three,
    slot 2 * d + i for line d (at most 2 per line: checked when the table is built)."""
    first, last = (jnp.asarray(a) for a in _candidate_slots())
    step = jnp.asarray([dr * n + dc for dr, dc in DIRECTIONS], jnp.int32)
    offsets = jnp.asarray(THREE_OFFSETS, jnp.int32)
    slots = jnp.stack([first[lines.candidates], last[lines.candidates]], axis=1)  # [4, 2]
    valid = lines.may_three[:, None] & (slots >= 0)
    qs = jnp.clip(cell + offsets[jnp.maximum(slots, 0)] * step[:, None], 0, n * n - 1)
    return qs.reshape(-1), valid.reshape(-1)


_SLOTS = 2 * len(DIRECTIONS)
_SLOT_LINE = np.arange(_SLOTS) // 2


class _Search(NamedTuple):
    """A depth-first search of the recursion from one cell, one frame per level.

    Frame l judges `path[l]` on the board with `path[:l]` black (its ancestors); it has
    tried its completion points before slot `slot[l]` and `found[l]` says which of its lines
    already have a legal one. `enter`: the frame at `level` is new (else it resumes after a
    child returned)."""

    level: jax.Array  # int32[]
    enter: jax.Array  # bool[]
    path: jax.Array  # int32[depth + 1]
    slot: jax.Array  # int32[depth + 1]
    found: jax.Array  # bool[depth + 1, 4]


def _search_start(cell: jax.Array, depth: int) -> _Search:
    return _Search(level=jnp.int32(0), enter=jnp.bool_(True),
                   path=jnp.zeros(depth + 1, jnp.int32).at[0].set(cell),
                   slot=jnp.zeros(depth + 1, jnp.int32),
                   found=jnp.zeros((depth + 1, len(DIRECTIONS)), bool))


def _search_step(flat_board: jax.Array, n: int, depth: int, st: _Search
                 ) -> tuple[_Search, jax.Array, jax.Array]:
    """One step of the search: enter or resume the frame at `st.level`, then push a child,
    or return the frame's answer to its parent. Returns (state, finished, answer): finished
    when the root frame returned, with its answer."""
    lvl = st.level
    above = jnp.where(jnp.arange(depth + 1) < lvl, st.path, n * n)  # n * n: dropped
    board = flat_board.at[above].set(BLACK, mode="drop")
    cell = st.path[lvl]
    lines = _cell_lines(board, cell, n)
    counts = _Counts(jnp.sum(lines.counts(), axis=0))
    qs, valid = _completion_points(lines, cell, n)

    # A new frame answers at once unless its double three depends on completion points.
    settled = ~counts.possible | (lvl >= depth)
    found = st.found[lvl] & ~st.enter
    start = jnp.where(st.enter, 0, st.slot[lvl])
    open_slot = valid & (jnp.arange(_SLOTS) >= start) & ~found[_SLOT_LINE]
    n_found = jnp.sum(found)
    more = jnp.any(open_slot) & (n_found < 2)
    returns = jnp.where(st.enter, settled, ~more)
    answer = jnp.where(st.enter, counts.upper, n_found >= 2)
    j = jnp.argmax(open_slot).astype(jnp.int32)

    # push: the child at slot j becomes frame lvl + 1
    pushed = st._replace(level=lvl + 1, enter=jnp.bool_(True),
                         path=st.path.at[jnp.minimum(lvl + 1, depth)].set(qs[j]),
                         slot=st.slot.at[lvl].set(j + 1),
                         found=st.found.at[lvl].set(found))
    # return: a legal child makes its line of the parent a three
    parent = jnp.maximum(lvl - 1, 0)
    child_line = jnp.maximum(st.slot[parent] - 1, 0) // 2  # slot 2 * d + i is on line d
    popped = st._replace(level=parent, enter=jnp.bool_(False),
                         found=st.found.at[parent, child_line].set(
                             st.found[parent, child_line] | ~answer))
    out = jax.tree.map(lambda r, p: jnp.where(returns, r, p), popped, pushed)
    return out, returns & (lvl == 0), answer


def forbidden_at(flat_board: jax.Array, cell: jax.Array, n: int, *,
                 depth: int = DEFAULT_DEPTH) -> jax.Array:
    """bool[]: is a black stone on the empty `cell` forbidden (see the module doc)?

    Looks only at the 4 lines through `cell` and, when a double three is possible, at the
    lines through its completion points, depth first to `depth`, in a `lax.while_loop` of
    one step per frame entered or resumed (usually 1). Pure; vmap over boards.

    Args:
      flat_board: int8[N*N] (+1 black, -1 white, 0 empty), `cell` still empty.
      cell: int32[] in [0, N*N); the answer for an occupied cell is meaningless.
      n: N (static).
      depth: recursion bound (static, >= 0), see the module doc.
    """
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")

    def body(carry):
        st, _, _ = carry
        return _search_step(flat_board, n, depth, st)

    start = (_search_start(jnp.asarray(cell, jnp.int32), depth), jnp.bool_(False),
             jnp.bool_(False))
    return jax.lax.while_loop(lambda carry: ~carry[1], body, start)[2]


# -- the whole board -----------------------------------------------------------------------
def _window_index(board: jax.Array) -> jax.Array:
    """int32[4, N, N]: every cell's 4 windows as table indices (seen from black)."""
    n = board.shape[-1]
    padded = jnp.pad(board.astype(jnp.int8), REACH, constant_values=-BLACK)
    digits = jnp.where(padded == BLACK, BLACK_DIGIT,
                       jnp.where(padded == 0, EMPTY_DIGIT, BLOCK_DIGIT)).astype(jnp.int32)
    out = []
    for dr, dc in DIRECTIONS:
        total = 0
        for o in range(-REACH, REACH + 1):
            if o:
                total = total + (3 ** _digit_position(o)) * jax.lax.slice(
                    digits, (REACH + o * dr, REACH + o * dc),
                    (REACH + o * dr + n, REACH + o * dc + n))
        out.append(total)
    return jnp.stack(out)


def forbidden_points(board: jax.Array, *, depth: int = DEFAULT_DEPTH) -> jax.Array:
    """bool[N, N]: every empty cell where a black stone is forbidden (see the module doc);
    False on stones. Pure; vmap over boards.

    Args:
      board: int8[N, N] (+1 black, -1 white, 0 empty).
      depth: recursion bound (static, >= 0), see the module doc.
    """
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    n = board.shape[-1]
    empty = board == 0
    index = _window_index(board)
    lines = _Lines(jnp.take(jnp.asarray(line_table()), index, mode="clip"))
    line_counts = lines.counts()
    total = jnp.sum(line_counts, axis=0)
    counts = _Counts(total)
    if depth == 0:
        return empty & counts.upper

    # The cells whose double three depends on completion points (usually few), each
    # searched depth first as `forbidden_at` does, one step per loop trip.
    result = empty & counts.bad
    pending = empty & counts.possible
    flat = board.reshape(-1)

    def body(carry):
        result, pending, active, st = carry
        begin = ~active & jnp.any(pending)
        fresh = _search_start(jnp.argmax(pending).astype(jnp.int32), depth)
        st = jax.tree.map(lambda f, s: jnp.where(begin, f, s), fresh, st)
        running = active | begin
        root = st.path[0]
        pending = pending.at[root].set(pending[root] & ~begin)
        st, finished, answer = _search_step(flat, n, depth, st)
        finished = finished & running
        result = result.at[root].set(jnp.where(finished, answer, result[root]))
        return result, pending, running & ~finished, st

    carry = (result.reshape(-1), pending.reshape(-1), jnp.bool_(False),
             _search_start(jnp.int32(0), depth))
    carry = jax.lax.while_loop(lambda c: jnp.any(c[1]) | c[2], body, carry)
    return carry[0].reshape(n, n)
