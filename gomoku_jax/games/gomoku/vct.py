"""VCT ("victory by continuous threats"): a bounded, jittable AND/OR threat-space search.

The attacker (`attacker`, +1 or -1) is to move on `board` (int8[N, N]). Five cells, fours
and the rules are those of `vcf.py` (freestyle or exact5; renju and caro are refused). A
*double cell* of the attacker is an empty cell where its stone makes two or more five cells
(an open four or a double four): a move there wins, since the defender can block one only.

Every attacker move is a *threat*, exactly:

- At an attacker turn, if the attacker has a five cell it wins. Otherwise
  * the defender has >= 2 five cells: the line fails;
  * exactly 1: the attacker's only move is to block it;
  * 0: its moves are the fours (cells where its stone makes a five cell) and the *threes*:
    cells where its stone makes an open three (`patterns.OPEN_THREE` on one of the cell's
    lines: a (k+1)-window, both ends empty, whose inner k - 1 cells then hold k - 2 stones,
    so one more stone makes a straight four) and no four.
- After the attacker's move:
  * two or more five cells: it wins (the defender blocks one, it completes another);
  * one: the defender must block it (its only reply), and the search goes on;
  * none, and the attacker has a double cell (a three, or a block that leaves one): an AND
    node. The defender's replies are every empty cell where its stone leaves the attacker no
    double cell, and every cell where its stone makes a four (a counter-threat the attacker
    must answer). Any other reply loses at once: it makes no four and leaves a double
    cell, which the attacker plays. Every listed reply must lose for the move to win; with
    none, the move wins (the attacker plays a double cell next);
  * none, and no double cell: the move is no threat, the line fails.

Counting: `max_depth` bounds the attacker's threat moves in a line, not counting the
final five (as in `vcf.py`: a VCF of d fours is a VCT of depth d). A three needs one more
attacker move after it (at least the double cell), so it is a move only at depths below
`max_depth`. A VCT of depth d wins within 2d + 1 plies. Every VCF within `max_depth` is a
VCT within `max_depth`; the converse fails.

The replies of an AND node are computed exactly: the double cells W after the move (the
first `_MAX_DOUBLES` of them, lowest cells first), and for every cell m within k of the
first double cell w0 on its four lines (only those can touch w0's lines), whether W still
has a double cell with a defender stone on m (codes looked up on the 4 lines of each
w, `patterns.threat_table`). With more than `_MAX_DOUBLES` double cells the reply set is a
superset of the exact one (a reply that stops the first ones is kept even if a later one
survives): still sound, the search may only miss a VCT.

Search: a depth-first search over the AND/OR tree with an explicit stack of static shape in
one `lax.while_loop`: per depth the attacker's untried candidates (priorities, 0 = tried),
the attacker's move, the defender's untried replies (a mask) and the reply being explored.
The board at a depth is the root plus the stacked moves and replies above it. One
iteration is one of: try the next candidate at the current depth (a *node*: `nodes`
counts them), drop a depth whose candidates all failed (its parent's reply refutes the
parent's move), or, after a proven win at a depth, go on with the parent's next reply (or
prove the parent). Candidates are tried in priority order (ties: lowest cell): double cells
first, then fours (the shapes on their other lines breaking ties, as in `vcf.py`), then
threes; replies: the defender's fours first, then the lowest cell.

With `first_depth` the search runs to that depth first and, without a win there, again
to `max_depth` (one shared budget; the root at play uses 2: a win by one three and a double
is not hidden by a longer line met first).

Bounds: `max_depth` (static) and `max_nodes` candidates tried in all. When the budget runs
out first the result is "not found" with `exhausted` set ("unknown", not "no VCT").

Everything is pure JAX on one board: jit with `win_length`, `rule` and `config` static, and
vmap over boards (a vmapped while loop runs until every board is done).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax import configs
from gomoku_jax.configs import NonNegativeInt, PositiveInt
from gomoku_jax.games.gomoku.config import DIRECTIONS
from gomoku_jax.games.gomoku.features.lines import BLOCKED_DIGIT, EMPTY_DIGIT, OWN_DIGIT
from gomoku_jax.games.gomoku.features.patterns import (
    CLOSED_THREE,
    FIVE,
    FOUR,
    OPEN_FOUR,
    OPEN_THREE,
    OPEN_TWO,
    threat_table,
    threats,
)

VCT_RULES = ("freestyle", "exact5")  # the rules whose threats this search knows

# Candidate priorities: bit fields of an int32, larger tried first, 0 = not a candidate.
_DOUBLE = 1 << 14       # two five cells after the move: wins at once
_FOUR = 1 << 12         # makes a four (or blocks the defender's single five cell)
_OPEN_THREE = 1 << 8    # times the number of lines with an open three (<= 4)
_CLOSED_THREE = 1 << 4  # ... closed three (<= 4)
_OPEN_TWO = 1 << 1      # ... open two (<= 4, so < 1 << 4)
_BASE = 1

# Double cells checked exactly per AND node (more: the reply set is a sound superset).
_MAX_DOUBLES = 8


@dataclasses.dataclass(frozen=True)
class VCTConfig:
    """Bounds of the search (static; hashable).

    Attributes:
      max_depth: most attacker threat moves (fours and threes) in a line, not counting the
        final five (>= 1; depth 1 is a VCF of one four).
      max_nodes: most attacker moves tried in all (>= 1); past it the result is "not found"
        with `exhausted` set.
      first_depth: 0, or search to this depth first (>= 2), then to `max_depth` (one shared
        node budget): a short win is then not hidden by a longer line the depth-first
        search meets first.
    """

    max_depth: PositiveInt = 6
    max_nodes: PositiveInt = 256
    first_depth: NonNegativeInt = 0

    def __post_init__(self):
        configs.validate(self)
        if self.first_depth and not 2 <= self.first_depth <= self.max_depth:
            raise ValueError(f"first_depth must be 0 (off) or in 2..max_depth "
                             f"({self.max_depth}), got {self.first_depth}")


class VCTResult(NamedTuple):
    """What `vct` found (leaves gain a leading axis under vmap).

    found: bool[], a VCT within the bounds exists and `move` starts one.
    move: int32[], its first attacker move (flat row * N + col), -1 if none.
    exhausted: bool[], the node budget ran out first (not found = unknown, not "none").
    nodes: int32[], attacker moves tried.
    """

    found: jax.Array
    move: jax.Array
    exhausted: jax.Array
    nodes: jax.Array


def check_rule(win_length: int, rule: str) -> None:
    """ValueError unless the VCT knows `rule` (and k >= 3)."""
    if rule not in VCT_RULES:
        raise ValueError(f"the VCT search supports the rules {VCT_RULES}, got {rule!r} "
                         f"(use threat_search (VCF) alone for it)")
    configs.check_int("win_length", win_length, 3)


@functools.lru_cache(maxsize=None)
def _line_cells(n: int, k: int) -> np.ndarray:
    """int32[N*N, 4, 2k]: the cells at offsets -k..-1, 1..k along each direction from every
    cell (the digit order of `lines.window_index`), N*N off the board."""
    offsets = [o for o in range(-k, k + 1) if o != 0]
    out = np.full((n * n, 4, 2 * k), n * n, np.int32)
    for cell in range(n * n):
        r, c = divmod(cell, n)
        for d, (dr, dc) in enumerate(DIRECTIONS):
            for j, o in enumerate(offsets):
                rr, cc = r + o * dr, c + o * dc
                if 0 <= rr < n and 0 <= cc < n:
                    out[cell, d, j] = rr * n + cc
    return out


def _codes_at(flat: jax.Array, n: int, colour: jax.Array, cells: jax.Array, k: int,
              rule: str) -> jax.Array:
    """int8[M, 4]: `patterns.threats` codes of `colour` at `cells` (int32[M], empty cells)
    on the flat board, looked up from the cells' own lines only."""
    ext = jnp.concatenate([flat, jnp.full((1,), 2, flat.dtype)])  # off board: blocked
    vals = ext[jnp.asarray(_line_cells(n, k))[cells]]  # [M, 4, 2k]
    digits = jnp.where(vals == colour, OWN_DIGIT,
                       jnp.where(vals == 0, EMPTY_DIGIT, BLOCKED_DIGIT)).astype(jnp.int32)
    index = jnp.sum(digits * (3 ** jnp.arange(2 * k, dtype=jnp.int32)), axis=-1)
    return jnp.take(jnp.asarray(threat_table(k, rule)), index, mode="clip")


def _is_double(codes: jax.Array) -> jax.Array:
    """bool[...]: codes int8[..., 4] of a cell give two or more five cells."""
    return (jnp.any(codes == OPEN_FOUR, axis=-1)
            | (jnp.sum(codes == FOUR, axis=-1) >= 2))


@functools.lru_cache(maxsize=None)
def near_cells(n: int, k: int) -> np.ndarray:
    """int32[N*N, 8k + 1]: every cell itself and the cells within k of it on its 4 lines,
    N*N off the board."""
    lines = _line_cells(n, k).reshape(n * n, -1)
    return np.concatenate([np.arange(n * n, dtype=np.int32)[:, None], lines], axis=1)


def _candidates(flat: jax.Array, n: int, att: jax.Array, k: int, rule: str,
                threes: jax.Array) -> jax.Array:
    """int32[N*N]: the priority of every attacker move at an attacker turn with no attacker
    five cell (0: not a move); `threes`: bool[], whether threes are allowed here."""
    codes = threats(flat.reshape(n, n), att, k, rule).reshape(n * n, 4)
    count = lambda code: jnp.sum(codes == code, axis=-1, dtype=jnp.int32)  # noqa: E731
    four = (count(FOUR) + count(OPEN_FOUR)) > 0
    three = (count(OPEN_THREE) > 0) & ~four & threes
    shape = (_OPEN_THREE * count(OPEN_THREE) + _CLOSED_THREE * count(CLOSED_THREE)
             + _OPEN_TWO * count(OPEN_TWO))
    prio = _BASE + _DOUBLE * _is_double(codes) + _FOUR * four + shape
    prio = jnp.where(four | three, prio, 0).astype(jnp.int32)
    theirs = jnp.any(threats(flat.reshape(n, n), -att, k, rule) == FIVE, axis=-1).reshape(-1)
    num = jnp.sum(theirs, dtype=jnp.int32)
    # Facing one five cell the block is the only move, whatever it makes (the move's
    # analysis decides: a four, a block that leaves a double cell, or no threat).
    return jnp.where(num == 0, prio, jnp.where((num == 1) & theirs, _FOUR, 0)).astype(jnp.int32)


class _Move(NamedTuple):
    """What an attacker move leads to (see `_analyse`)."""

    wins: jax.Array     # bool[]: proven at once
    push: jax.Array     # bool[]: the defender has replies to explore
    order: jax.Array    # int32[N*N]: the defender's replies (push), larger tried first,
                        #   0 = not a reply


def _analyse(after: jax.Array, n: int, att: jax.Array, k: int, rule: str,
             room: jax.Array) -> _Move:
    """The defender's side of the move just played: `after` int8[N*N] holds it; the
    attacker had no five cell and the defender none (or the one just blocked). `room`:
    bool[], whether the depth leaves room for another attacker move (a three needs it)."""
    a = n * n
    codes = threats(after.reshape(n, n), att, k, rule).reshape(a, 4)
    fives = jnp.any(codes == FIVE, axis=-1)
    num_fives = jnp.sum(fives, dtype=jnp.int32)
    doubles = _is_double(codes)
    has_double = jnp.any(doubles)
    # AND node of a three: the exact replies (module doc).
    cells = jnp.arange(a, dtype=jnp.int32)
    first = jax.lax.top_k(jnp.where(doubles, -cells, -a).astype(jnp.int32), _MAX_DOUBLES)[0]
    ws = -first
    w_ok = ws < a
    ws = jnp.where(w_ok, ws, 0)
    ms = jnp.asarray(near_cells(n, k))[ws[0]]
    ext = jnp.concatenate([after, jnp.ones((1,), after.dtype)])  # off board: not empty
    m_ok = (ms < a) & (ext[ms] == 0)

    def stops(m):
        board = after.at[m].set(-att, mode="drop")
        survives = _is_double(_codes_at(board, n, att, ws, k, rule)) & w_ok & (ws != m)
        return ~jnp.any(survives)

    stoppers = jax.vmap(stops)(ms) & m_ok
    replies_three = jnp.zeros((a + 1,), bool).at[jnp.where(stoppers, ms, a)].set(True)[:a]
    def_codes = threats(after.reshape(n, n), -att, k, rule).reshape(a, 4)
    counter = jnp.any((def_codes == FOUR) | (def_codes == OPEN_FOUR), axis=-1)
    replies_three = (replies_three | counter) & (after == 0)
    three = (num_fives == 0) & has_double & room
    replies = jnp.where(num_fives == 1, fives, jnp.where(three, replies_three, False))
    wins = (num_fives >= 2) | (three & ~jnp.any(replies_three))
    push = ~wins & jnp.any(replies)
    order = jnp.where(replies, 1 + counter, 0).astype(jnp.int32)
    return _Move(wins=wins, push=push, order=order)


class _Search(NamedTuple):
    prio: jax.Array      # int32[D, A]: untried attacker candidates per depth (0 = none)
    moves: jax.Array     # int32[D]: the attacker's move at each depth above `level`
    replies: jax.Array   # int32[D, A]: the defender's untried replies per depth (their
                         #   order, larger first; 0 = none)
    reply: jax.Array     # int32[D]: the reply being explored at each depth above `level`
    level: jax.Array     # int32[]: current depth (stones of depths < level are on board)
    limit: jax.Array     # int32[]: the depth limit of this round (`first_depth`, max_depth)
    won: jax.Array       # bool[]: the attacker turn at `level` is proven
    nodes: jax.Array     # int32[]
    found: jax.Array     # bool[]
    finished: jax.Array  # bool[]: the whole space within max_depth was searched


def vct(board: jax.Array, attacker, win_length: int = 5, rule: str = "freestyle",
        config: VCTConfig = VCTConfig()) -> VCTResult:
    """Search a VCT for `attacker` (to move) on `board`; see the module doc for the exact
    semantics. board: int8[N, N]; attacker: int8[] +1 / -1 (may be traced); win_length,
    rule, config: static. Pure; vmap over boards (and attackers)."""
    check_rule(win_length, rule)
    n = board.shape[-1]
    a, k, d_max = n * n, win_length, config.max_depth
    att = jnp.asarray(attacker, jnp.int8)
    root = jnp.asarray(board, jnp.int8).reshape(a)
    levels = jnp.arange(d_max, dtype=jnp.int32)

    def board_at(s: _Search, level) -> jax.Array:
        above = levels < level
        flat = root.at[jnp.where(above, s.moves, a)].set(att, mode="drop")
        return flat.at[jnp.where(above, s.reply, a)].set(-att, mode="drop")

    def cands(flat, level, limit):
        return _candidates(flat, n, att, k, rule, level + 1 < limit)

    own = jnp.any(threats(root.reshape(n, n), att, k, rule) == FIVE, axis=-1).reshape(-1)
    five_now = jnp.any(own)
    first = config.first_depth or d_max
    root_prio = cands(root, 0, first)  # (the same for every limit >= 2)
    init = _Search(
        prio=jnp.zeros((d_max, a), jnp.int32).at[0].set(root_prio),
        moves=jnp.full((d_max,), -1, jnp.int32).at[0].set(
            jnp.where(five_now, jnp.argmax(own), -1).astype(jnp.int32)),
        replies=jnp.zeros((d_max, a), jnp.int32), reply=jnp.full((d_max,), -1, jnp.int32),
        level=jnp.int32(0), limit=jnp.int32(first), won=jnp.bool_(False),
        nodes=jnp.int32(0), found=five_now,
        finished=jnp.bool_(False))

    def cond(s: _Search) -> jax.Array:
        # Past the budget, the steps that try no move still run (a proof or a refutation
        # being passed up), until the next move would be tried.
        bookkeeping = s.won | ~jnp.any(s.prio[s.level] > 0)
        return ~s.found & ~s.finished & ((s.nodes < config.max_nodes) | bookkeeping)

    def expand(s: _Search) -> _Search:
        """Try the best untried candidate at `level`."""
        level = s.level
        flat = board_at(s, level)
        move = jnp.argmax(s.prio[level]).astype(jnp.int32)
        prio = s.prio.at[level, move].set(0)
        after = flat.at[move].set(att)
        out = _analyse(after, n, att, k, rule, level + 1 < s.limit)
        push = out.push & (level + 1 < s.limit)
        reply = jnp.argmax(out.order).astype(jnp.int32)
        nxt = jnp.minimum(level + 1, d_max - 1)
        child = jax.lax.cond(push, lambda: cands(after.at[reply].set(-att), nxt, s.limit),
                             lambda: prio[nxt])
        record = push | out.wins
        return s._replace(
            prio=prio.at[nxt].set(jnp.where(push, child, prio[nxt])),
            moves=s.moves.at[level].set(jnp.where(record, move, s.moves[level])),
            replies=s.replies.at[level].set(
                jnp.where(push, out.order.at[reply].set(0), s.replies[level])),
            reply=s.reply.at[level].set(jnp.where(push, reply, s.reply[level])),
            level=level + push, won=out.wins, nodes=s.nodes + 1)

    def fail(s: _Search) -> _Search:
        """Every candidate at `level` failed: its parent's reply refutes the parent (at
        the root: the round is over, and the next one searches to max_depth)."""
        root_level = s.level == 0
        again = root_level & (s.limit < d_max)
        return s._replace(prio=jnp.where(again, s.prio.at[0].set(root_prio), s.prio),
                          limit=jnp.where(again, d_max, s.limit),
                          level=jnp.maximum(s.level - 1, 0), finished=root_level & ~again)

    def prove(s: _Search) -> _Search:
        """`level` is proven: the parent's next reply, or the parent is proven too."""
        root_level = s.level == 0
        parent = jnp.maximum(s.level - 1, 0)
        left = s.replies[parent]
        more = jnp.any(left > 0) & ~root_level
        reply = jnp.argmax(left).astype(jnp.int32)
        s = s._replace(replies=s.replies.at[parent, reply].set(0),
                       reply=s.reply.at[parent].set(jnp.where(more, reply, s.reply[parent])))
        child = jax.lax.cond(more, lambda: cands(board_at(s, s.level), s.level, s.limit),
                             lambda: s.prio[s.level])
        return s._replace(prio=s.prio.at[s.level].set(child),
                          level=jnp.where(more | root_level, s.level, parent),
                          won=~more, found=root_level)

    def body(s: _Search) -> _Search:
        branch = jnp.where(s.won, 2, jnp.where(jnp.any(s.prio[s.level] > 0), 0, 1))
        return jax.lax.switch(branch, (expand, fail, prove), s)

    s = jax.lax.while_loop(cond, body, init)
    exhausted = ~s.found & ~s.finished
    return VCTResult(found=s.found, move=jnp.where(s.found, s.moves[0], -1).astype(jnp.int32),
                     exhausted=exhausted, nodes=s.nodes)


def opponent_vct(board: jax.Array, me, win_length: int = 5, rule: str = "freestyle",
                 config: VCTConfig = VCTConfig()) -> VCTResult:
    """The opponent's VCT if `me` passes: `vct(board, -me)`."""
    return vct(board, -jnp.asarray(me, jnp.int8), win_length, rule, config)
