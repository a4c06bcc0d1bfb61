"""VCF ("victory by continuous fours"): a bounded, jittable threat-sequence search.

The attacker (`attacker`, +1 or -1) is to move on `board` (int8[N, N]); the defender is the
other colour. A *five cell* of a colour is an empty cell where a stone of that colour wins
under the rule (`patterns.five_cells`: k in a row; exactly k under "exact5"; per colour under
"renju"; not blocked at both ends under caro). A move *makes a four* when, after it, its
colour has at least one five cell (equivalently: a FOUR or OPEN_FOUR `patterns.threats`
code on one of the cell's lines, since before the move the attacker has no five cell).

The search, exactly:

- Depth 0: if the attacker has a five cell it wins at once: `found`, `depth` 0, `move` the
  lowest such cell, `line` that one move.
- Otherwise, at every attacker turn (the root and after every forced block):
  * the defender has >= 2 five cells: this line fails (the attacker cannot block both);
  * exactly 1: the attacker's only candidate is that cell, and only if it also makes a four
    for the attacker (a block that is no four loses the initiative: the line fails);
  * 0: the candidates are every empty cell where an attacker stone makes a four.
- After the attacker's four the defender has no five cell (it had none, or the attacker
  just took it; an attacker stone never creates one). If the attacker now has >= 2 five
  cells (an open four, a double four) the attacker wins: the defender blocks one (`line`
  shows the lowest) and the attacker completes another. Otherwise the defender must block
  the single five cell, and the search goes on from that position (the block may have made
  the defender a four or two: the rule above handles it at the next attacker turn).

The rules change the defender's side only where a four can be met otherwise than by taking
its five cell:
- renju: black never plays a forbidden point, as attacker (forbidden points carry no
  threat codes for black, so they are no candidates) or as defender: a white four whose
  five cell is forbidden for black wins as a double four does (`line` then shows -1 for
  black's block, and the five cell as white's five).
- caro, caro_exact5: a defender stone just past an end of the five's run also kills a five
  cell (the run would be blocked at both ends), so after every attacker four the defences
  are counted exactly: the five cell and the cells past the ends of the attacker's runs
  through it, each tried (a defence must kill the lowest five cell, and only those cells
  can). None: the attacker wins (`line` shows the lowest five cell as the block, and a five
  cell left after it); one: it is the forced block; two or more: the four is not followed
  (the search stays sound, not complete: it proves only wins whose every four has a single
  defence). At the attacker's turns the rule above stands: against the defender's five
  cells the attacker only takes the single one.

Counting: `depth` d is the number of four-making attacker moves; the last of them makes two
five cells, so the win takes 2d + 1 plies counting the final five (d fours, d replies, the
five); depth 0 is a five on the board's next move. `line` lists those 2d + 1 moves (attacker,
defender, attacker, ..., the five), padded with -1 to 2 * max_depth + 1.

Bounds: at most `max_depth` fours in a line and at most `max_nodes` attacker moves tried in
all (each loop iteration tries one). When the node budget runs out before the search space
within `max_depth` is exhausted, the result is "not found" with `exhausted` set, so callers
can tell "no VCF within max_depth" (found and exhausted both False) from "unknown".

The search is a depth-first search over a single-agent tree (the defender's replies are
forced), with an explicit stack of static shape inside one `lax.while_loop`: per depth the
attacker's move, the defender's block, and the priority of every untried candidate (0 =
tried or no candidate). The board at a depth is the root plus the stacked moves above it, so
backtracking any number of levels and trying the next candidate is one iteration. Candidates
are tried in priority order (ties: lowest cell first): moves making two five cells (they win
at once) first, then by how many of the cell's other lines hold an open three, a closed three,
an open two (the shapes that can become the next four), then nearness to the attacker's last
move. Plain DFS returns the first line it finds, not necessarily a shortest; with
`VCFConfig(shortest=True)` it deepens iteratively (limit 1, 2, ..., max_depth, one shared node
budget), so the line found is a shortest one. A depth limit that cuts no line off ends the
deepening early.

Everything is pure JAX on one board: jit with `win_length`, `rule` and `config` static, and
vmap over boards (`vmap` of a while loop runs until every board is done).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from gomoku_jax import configs
from gomoku_jax.configs import PositiveInt
from gomoku_jax.games.gomoku.config import CARO_RULES, DIRECTIONS, RULES
from gomoku_jax.games.gomoku.features.patterns import (
    CLOSED_THREE,
    FOUR,
    OPEN_FOUR,
    OPEN_THREE,
    OPEN_TWO,
    five_cells,
    threats,
)

WHITE = -1

# Candidate priorities: bit fields of an int32, larger tried first, 0 = not a candidate.
_DOUBLE = 1 << 12       # two five cells after the move: wins at once
_OPEN_THREE = 1 << 8    # times the number of other lines with an open three (<= 3)
_CLOSED_THREE = 1 << 4  # ... closed three (<= 3)
_OPEN_TWO = 1 << 2      # ... open two (<= 3 of them, so < 1 << 4)
_NEAR = 1 << 1          # within k - 1 (Chebyshev) of the attacker's last move
_BASE = 1


@dataclasses.dataclass(frozen=True)
class VCFConfig:
    """Bounds of the search (static; hashable).

    Attributes:
      max_depth: most four-making attacker moves in a line (>= 1); the win then takes at
        most 2 * max_depth + 1 plies.
      max_nodes: most attacker moves tried in all (>= 1); past it the result is "not found"
        with `exhausted` set.
      shortest: deepen iteratively so that the line found is a shortest one (costs nodes:
        every shallower tree is searched first).
    """

    max_depth: PositiveInt = 8
    max_nodes: PositiveInt = 256
    shortest: bool = False

    def __post_init__(self):
        configs.validate(self)


class VCFResult(NamedTuple):
    """What `vcf` found (leaves gain a leading axis under vmap).

    found: bool[], a VCF within the bounds exists and `line` is one.
    move: int32[], its first attacker move (flat row * N + col), -1 if none.
    depth: int32[], its number of four-making attacker moves (0: a five now), -1 if none.
    exhausted: bool[], the node budget ran out first (not found = unknown, not "none").
    line: int32[2 * max_depth + 1], attacker, defender, ..., the final five; -1 padded.
    nodes: int32[], attacker moves tried.
    """

    found: jax.Array
    move: jax.Array
    depth: jax.Array
    exhausted: jax.Array
    line: jax.Array
    nodes: jax.Array


def _check_static(win_length: int, rule: str) -> None:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    configs.check_int("win_length", win_length, 3)


def _fives(flat: jax.Array, n: int, colour: jax.Array, k: int, rule: str) -> jax.Array:
    """bool[N*N]: the five cells of `colour` on the flat board, under `rule`."""
    return five_cells(flat.reshape(n, n), colour, k, rule).reshape(-1)


def _caro_defences(after: jax.Array, n: int, att: jax.Array, k: int, rule: str,
                   five: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Caro: the defender's answers to a four whose lowest five cell is `five`.

    Returns (cells int32[9]: `five` and, per line, the cells just past both ends of the
    attacker's run through it, -1 off the board; kills bool[9]: the cell is empty and a
    defender stone there leaves the attacker no five cell; rest bool[N*N]: the attacker's
    five cells after a defender stone on `five`).
    """
    row, col = five // n, five % n
    filled = after.at[five].set(att)
    dist = jnp.arange(1, n, dtype=jnp.int32)
    cells = [five]
    for dr, dc in DIRECTIONS:
        for sign in (1, -1):
            r, c = row + sign * dr * dist, col + sign * dc * dist
            on = (r >= 0) & (r < n) & (c >= 0) & (c < n)
            same = on & (filled[jnp.clip(r * n + c, 0, n * n - 1)] == att)
            run = jnp.sum(jnp.cumprod(same.astype(jnp.int32)))
            rr, cc = row + sign * dr * (run + 1), col + sign * dc * (run + 1)
            cells.append(jnp.where((rr >= 0) & (rr < n) & (cc >= 0) & (cc < n),
                                   rr * n + cc, -1))
    cells = jnp.stack(cells).astype(jnp.int32)
    at = jnp.clip(cells, 0, n * n - 1)
    rest = jax.vmap(lambda e: _fives(after.at[e].set(-att), n, att, k, rule))(at)
    kills = (cells >= 0) & (after[at] == 0) & ~jnp.any(rest, axis=1)
    return cells, kills, rest[0]


def _candidates(flat: jax.Array, n: int, attacker: jax.Array, k: int, rule: str,
                last: jax.Array) -> jax.Array:
    """int32[N*N]: the priority of every attacker candidate at an attacker turn with no
    attacker five cell (0: not a candidate). `last`: the attacker's last move, or -1."""
    codes = threats(flat.reshape(n, n), attacker, k, rule).reshape(n * n, 4)
    count = lambda code: jnp.sum(codes == code, axis=-1, dtype=jnp.int32)  # noqa: E731
    fours, open_fours = count(FOUR), count(OPEN_FOUR)
    makes_four = (fours + open_fours) > 0
    double = (open_fours > 0) | (fours >= 2)
    cells = jnp.arange(n * n, dtype=jnp.int32)
    near = (last >= 0) & (jnp.maximum(jnp.abs(cells // n - last // n),
                                      jnp.abs(cells % n - last % n)) < k)
    prio = (_BASE + _DOUBLE * double + _OPEN_THREE * count(OPEN_THREE)
            + _CLOSED_THREE * count(CLOSED_THREE) + _OPEN_TWO * count(OPEN_TWO)
            + _NEAR * near)
    prio = jnp.where(makes_four, prio, 0).astype(jnp.int32)
    defender_fives = _fives(flat, n, -attacker, k, rule)
    num_defender = jnp.sum(defender_fives, dtype=jnp.int32)
    return jnp.where(num_defender == 0, prio,
                     jnp.where((num_defender == 1) & defender_fives, prio, 0))


class _Search(NamedTuple):
    prio: jax.Array      # int32[D, A]: untried candidates per level (0 = none)
    moves: jax.Array     # int32[D]: the attacker's four at each level above `level`
    blocks: jax.Array    # int32[D]: the defender's block after it
    level: jax.Array     # int32[]: current level (stones of levels < level are on board)
    limit: jax.Array     # int32[]: depth limit of this deepening round
    cutoff: jax.Array    # bool[]: this round left a continuation unexplored at the limit
    nodes: jax.Array     # int32[]
    found: jax.Array     # bool[]
    finished: jax.Array  # bool[]: the whole space within max_depth was searched
    win: jax.Array       # int32[3]: the winning level's four, block, five


def vcf(board: jax.Array, attacker, win_length: int = 5, rule: str = "freestyle",
        config: VCFConfig = VCFConfig(), *, shortest: Optional[jax.Array] = None
        ) -> VCFResult:
    """Search a VCF for `attacker` (to move) on `board`; see the module doc for the exact
    semantics. board: int8[N, N]; attacker: int8[] +1 / -1 (may be traced); win_length,
    rule, config: static. Pure; vmap over boards (and attackers).

    shortest: bool[] (may be traced), given instead of `config.shortest`: one compiled
    search then serves both kinds (`threat_moves` runs all its searches through one)."""
    _check_static(win_length, rule)
    n = board.shape[-1]
    a, k, d_max = n * n, win_length, config.max_depth
    att = jnp.asarray(attacker, jnp.int8)
    root = jnp.asarray(board, jnp.int8).reshape(a)
    levels = jnp.arange(d_max, dtype=jnp.int32)
    # deepening: a Python bool (config.shortest) or a traced one (`shortest`)
    deepen = config.shortest if shortest is None else jnp.asarray(shortest, bool)
    deepening = shortest is not None or config.shortest  # the code for it is needed

    own = _fives(root, n, att, k, rule)
    five_now = jnp.any(own)
    root_prio = _candidates(root, n, att, k, rule, jnp.int32(-1))
    init = _Search(
        prio=jnp.zeros((d_max, a), jnp.int32).at[0].set(root_prio),
        moves=jnp.full((d_max,), -1, jnp.int32), blocks=jnp.full((d_max,), -1, jnp.int32),
        level=jnp.int32(0), limit=jnp.where(deepen, 1, d_max).astype(jnp.int32),
        cutoff=jnp.bool_(False), nodes=jnp.int32(0), found=jnp.bool_(False),
        finished=jnp.bool_(False), win=jnp.full((3,), -1, jnp.int32))

    def live_levels(s: _Search) -> jax.Array:
        return jnp.any(s.prio > 0, axis=1) & (levels <= s.level)

    def cond(s: _Search) -> jax.Array:
        return ~s.found & ~s.finished & (s.nodes < config.max_nodes)

    def body(s: _Search) -> _Search:
        live = live_levels(s)
        done = ~jnp.any(live)
        if deepening:  # next deepening round
            again = deepen & done & s.cutoff & (s.limit < d_max)
            s = s._replace(prio=jnp.where(again, s.prio.at[0].set(root_prio), s.prio),
                           level=jnp.where(again, 0, s.level),
                           limit=s.limit + again, cutoff=s.cutoff & ~again)
            live = jnp.where(again, levels == 0, live)
            done = done & ~again
        # The deepest level with an untried candidate; the board there.
        level = (d_max - 1 - jnp.argmax(live[::-1])).astype(jnp.int32)
        above = levels < level
        flat = root.at[jnp.where(above, s.moves, a)].set(att, mode="drop")
        flat = flat.at[jnp.where(above, s.blocks, a)].set(-att, mode="drop")
        row = s.prio[level]
        move = jnp.argmax(row).astype(jnp.int32)
        tried = ~done
        # The attacker's four, the defender's forced block.
        after = flat.at[move].set(att)
        fives = _fives(after, n, att, k, rule)
        num_fives = jnp.sum(fives, dtype=jnp.int32)
        block = jnp.argmax(fives).astype(jnp.int32)
        other = jnp.argmax(fives.at[block].set(False)).astype(jnp.int32)
        shown = block  # the block the line shows when the attacker wins
        if rule in CARO_RULES:  # every defence counted (module doc)
            cells, kills, rest = _caro_defences(after, n, att, k, rule, block)
            defences = jnp.sum(kills, dtype=jnp.int32)
            four = num_fives > 0
            won = tried & four & (defences == 0)
            goes_on = tried & four & (defences == 1)
            other = jnp.argmax(rest).astype(jnp.int32)
            block = jnp.where(defences == 1, cells[jnp.argmax(kills)], block)
        else:
            won = tried & (num_fives >= 2)
            goes_on = tried & (num_fives == 1)
            if rule == "renju":  # black cannot block on its forbidden point
                from gomoku_jax.games.gomoku.renju import forbidden_at

                unblockable = goes_on & (att == WHITE) & forbidden_at(after, block, n)
                won = won | unblockable
                goes_on = goes_on & ~unblockable
                shown = jnp.where(unblockable, -1, block)
                other = jnp.where(unblockable, block, other)
        blocked = after.at[block].set(-att)
        next_prio = _candidates(blocked, n, att, k, rule, move)
        push = goes_on & (level + 1 < s.limit)
        cut = goes_on & ~push & jnp.any(next_prio > 0)
        prio = s.prio.at[level, move].set(jnp.where(tried, 0, row[move]))
        nxt = jnp.minimum(level + 1, d_max - 1)
        prio = prio.at[nxt].set(jnp.where(push, next_prio, prio[nxt]))
        record = push | won
        return _Search(
            prio=prio,
            moves=s.moves.at[level].set(jnp.where(record, move, s.moves[level])),
            blocks=s.blocks.at[level].set(jnp.where(record, block, s.blocks[level])),
            level=jnp.where(done, s.level, level + push),
            limit=s.limit, cutoff=s.cutoff | cut, nodes=s.nodes + tried,
            found=won, finished=done,
            win=jnp.where(won, jnp.stack([move, shown, other]), s.win))

    s = jax.lax.while_loop(cond, body, init._replace(found=five_now))
    searched = s.found & ~five_now
    depth = jnp.where(five_now, 0, jnp.where(searched, s.level + 1, -1)).astype(jnp.int32)
    # The line: (four, block) of each level above the winning one, then its four, block, five.
    pairs = jnp.stack([s.moves, s.blocks], axis=1).reshape(-1)  # [2D]
    slots = jnp.arange(2 * d_max + 1, dtype=jnp.int32)
    tail = 2 * s.level
    line = jnp.concatenate([pairs, jnp.full((1,), -1, jnp.int32)])
    line = jnp.where(slots < tail, line,
                     jnp.where(slots - tail < 3, s.win[jnp.clip(slots - tail, 0, 2)], -1))
    line = jnp.where(searched, line, -1)
    line = jnp.where(five_now, jnp.where(slots == 0, jnp.argmax(own), -1), line)
    remaining = jnp.any(live_levels(s))
    if deepening:
        remaining = remaining | (deepen & s.cutoff & (s.limit < d_max))
    exhausted = ~s.found & ~s.finished & remaining
    return VCFResult(found=s.found, move=jnp.where(s.found, line[0], -1).astype(jnp.int32),
                     depth=depth, exhausted=exhausted, line=line.astype(jnp.int32),
                     nodes=s.nodes)


def opponent_vcf(board: jax.Array, me, win_length: int = 5, rule: str = "freestyle",
                 config: VCFConfig = VCFConfig()) -> VCFResult:
    """The opponent's VCF if `me` passes: `vcf(board, -me)`. `me`'s own five cells count
    as the defender's: two of them stop every line, one must be blocked with a four."""
    return vcf(board, -jnp.asarray(me, jnp.int8), win_length, rule, config)


class Refutations(NamedTuple):
    """Per action (bool[N*N] each; a leading axis under vmap):

    refutes: checked, and after the move the opponent has no VCF within the bounds (proven:
      the search finished without the budget running out), or the move completes `me`'s
      five.
    checked: the move was one of the K candidates examined.
    opponent_found: checked and the opponent still has a VCF.
    unknown: checked, not a five, and the opponent's search ran out of nodes.
    """

    refutes: jax.Array
    checked: jax.Array
    opponent_found: jax.Array
    unknown: jax.Array


def refutations(board: jax.Array, me, candidates: jax.Array, win_length: int = 5,
                rule: str = "freestyle", config: VCFConfig = VCFConfig(),
                max_candidates: int = 16, order: Optional[jax.Array] = None
                ) -> Refutations:
    """Which of `me`'s candidate moves leave the opponent without a VCF.

    For each examined move m: if m completes `me`'s five it refutes; else `vcf(board + m,
    -me)` runs (vmapped over the examined moves). That check is complete on its own: if m
    made a four for `me`, the opponent faces a five cell of ours and its search must block
    it with a four of its own or fail (the module's rule), so m's forcing effect is counted.

    Args:
      board: int8[N, N]; me: +1 / -1, the side to move.
      candidates: bool[N*N], the moves to consider (occupied cells are ignored).
      max_candidates: K (static): at most this many are examined: the first K candidates in
        flat order, or the K with the highest `order` (float[N*N]; ties: lower cell). The
        rest come back unchecked: `checked`, `refutes` etc. False.
    """
    picks = refutation_picks(board, me, candidates, win_length, rule, max_candidates, order)
    n = board.shape[-1]
    me = jnp.asarray(me, jnp.int8)
    flat = jnp.asarray(board, jnp.int8).reshape(n * n)
    boards = jax.vmap(lambda m: flat.at[m].set(me).reshape(n, n))(picks.moves)
    res = jax.vmap(functools.partial(vcf, attacker=-me, win_length=win_length, rule=rule,
                                     config=config))(boards)
    return collect_refutations(picks, res.found, res.exhausted, n * n)


class RefutationPicks(NamedTuple):
    """The K moves `refutations` examines (leaves [K]; `refutation_picks`).

    moves: int32[K], the examined moves (any cell where not `valid`).
    valid: bool[K], a real candidate (fewer than K candidates: the rest are padding).
    five: bool[K], the move completes the mover's five (it refutes without a search).
    """

    moves: jax.Array
    valid: jax.Array
    five: jax.Array


def refutation_picks(board: jax.Array, me, candidates: jax.Array, win_length: int = 5,
                     rule: str = "freestyle", max_candidates: int = 16,
                     order: Optional[jax.Array] = None) -> RefutationPicks:
    """The moves `refutations` examines (its Args), before any search."""
    _check_static(win_length, rule)
    configs.check_int("max_candidates", max_candidates, 1)
    n = board.shape[-1]
    a = n * n
    me = jnp.asarray(me, jnp.int8)
    flat = jnp.asarray(board, jnp.int8).reshape(a)
    allowed = candidates.reshape(a) & (flat == 0)
    kk = min(int(max_candidates), a)
    if order is None:
        score = jnp.where(allowed, -jnp.arange(a, dtype=jnp.float32), -jnp.inf)
    else:
        score = jnp.where(allowed, order.reshape(a).astype(jnp.float32), -jnp.inf)
    top_score, picks = jax.lax.top_k(score, kk)
    picks = picks.astype(jnp.int32)
    my_fives = _fives(flat, n, me, win_length, rule)
    return RefutationPicks(moves=picks, valid=top_score > -jnp.inf, five=my_fives[picks])


def collect_refutations(picks: RefutationPicks, found: jax.Array, exhausted: jax.Array,
                        num_cells: int) -> Refutations:
    """`Refutations` over the N*N = `num_cells` cells from the opponent's VCF searches
    after each of `picks` (found, exhausted: bool[K]; ignored where `five` or not `valid`).
    """
    valid, five = picks.valid, picks.five
    refutes = valid & (five | (~found & ~exhausted))
    opponent_found = valid & ~five & found
    unknown = valid & ~five & exhausted

    def scatter(x):
        return jnp.zeros((num_cells,), bool).at[jnp.where(valid, picks.moves, num_cells)].set(
            x, mode="drop")

    return Refutations(refutes=scatter(refutes), checked=scatter(valid),
                       opponent_found=scatter(opponent_found), unknown=scatter(unknown))
