"""The jitted VCT search against a brute force written from the rules (the defender's
replies: every empty cell), the exact threat solver, the shipped suite, and itself under
vmap.

The brute force (`bf_win`) follows the module's definition of a threat move, with its own
pure-Python five cells and open threes, and a plain minimax in which the defender may answer
a three anywhere: so it checks the VCT's exact reply sets (a reply it leaves out must lose).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_jax.games.gomoku import tactics_suite
from gomoku_jax.games.gomoku.solver import Solver
from gomoku_jax.games.gomoku.vcf import VCFConfig, vcf
from gomoku_jax.games.gomoku.vct import VCTConfig, vct

DIRS = ((0, 1), (1, 0), (1, 1), (1, -1))


# -- the reference, from the rules ------------------------------------------------------
class Ref:
    """Five cells, fours, open threes and double cells on a flat list board, from the
    rules (k in a row, exactly k under exact5)."""

    def __init__(self, n: int, k: int, exact: bool):
        self.n, self.k, self.exact = n, k, exact

    def at(self, b, r, c):
        """The cell's value, or None off the board."""
        return b[r * self.n + c] if 0 <= r < self.n and 0 <= c < self.n else None

    def makes_five(self, b, cell, colour) -> bool:
        r, c = divmod(cell, self.n)
        for dr, dc in DIRS:
            run = 1
            for sign in (1, -1):
                i = 1
                while self.at(b, r + sign * i * dr, c + sign * i * dc) == colour:
                    run += 1
                    i += 1
            if run == self.k if self.exact else run >= self.k:
                return True
        return False

    def near(self, b, colour, reach: int) -> list[int]:
        """The empty cells with a `colour` stone within `reach` on one of their lines
        (only those can complete a line of `colour`)."""
        n = self.n
        out = set()
        for cell in range(n * n):
            if b[cell] != colour:
                continue
            r, c = divmod(cell, n)
            for dr, dc in DIRS:
                for o in range(-reach, reach + 1):
                    v = self.at(b, r + o * dr, c + o * dc)
                    if v == 0:
                        out.add((r + o * dr) * n + c + o * dc)
        return sorted(out)

    def five_cells(self, b, colour) -> list[int]:
        return [c for c in self.near(b, colour, 1) if self.makes_five(b, c, colour)]

    def fives_after(self, b, cell, colour) -> int:
        """How many five cells `colour` has after a stone on `cell`, when it has none
        before: they are on the cell's 4 lines, within k of it."""
        n, k = self.n, self.k
        r, c = divmod(cell, n)
        b[cell] = colour
        out = sum(self.at(b, r + o * dr, c + o * dc) == 0
                  and self.makes_five(b, (r + o * dr) * n + c + o * dc, colour)
                  for dr, dc in DIRS for o in range(-k, k + 1) if o)
        b[cell] = 0
        return out

    def open_three(self, b, cell, colour) -> bool:
        """A (k+1)-window on a line through `cell`, the cell strictly inside, both ends
        empty, the k - 1 inner cells holding k - 2 `colour` stones with the cell's and no
        other stone; under exact5 no `colour` stone just beyond either end."""
        n, k = self.n, self.k
        r, c = divmod(cell, n)
        for dr, dc in DIRS:
            for start in range(-(k - 1), 0):  # offset of the window's first end
                cells = [(r + (start + i) * dr, c + (start + i) * dc) for i in range(k + 1)]
                vals = [self.at(b, rr, cc) for rr, cc in cells]
                if None in vals:
                    continue
                vals[-start] = colour
                inner = vals[1:k]
                if vals[0] != 0 or vals[k] != 0 or any(v == -colour for v in inner):
                    continue
                if sum(v == colour for v in inner) != k - 2:
                    continue
                if self.exact and colour in (
                        self.at(b, r + (start - 1) * dr, c + (start - 1) * dc),
                        self.at(b, r + (start + k + 1) * dr, c + (start + k + 1) * dc)):
                    continue
                return True
        return False

    def has_double(self, b, colour) -> bool:
        return any(self.fives_after(b, c, colour) >= 2
                   for c in self.near(b, colour, self.k - 1))


def bf_win(ref: Ref, b: list, att: int, depth: int) -> bool:
    """The attacker (to move) wins by a VCT of at most `depth` threat moves."""
    if ref.five_cells(b, att):
        return True
    if depth == 0:
        return False
    theirs = ref.five_cells(b, -att)
    if len(theirs) >= 2:
        return False
    if not theirs and ref.has_double(b, att):
        return True  # (playing it leaves two five cells, and the defender has none)
    moves = theirs or [c for c in range(len(b)) if b[c] == 0 and (
        ref.fives_after(b, c, att) or (depth >= 2 and ref.open_three(b, c, att)))]
    return any(bf_move_wins(ref, b, att, m, depth) for m in moves)


def bf_move_wins(ref: Ref, b: list, att: int, m: int, depth: int) -> bool:
    """The attacker's move `m` (a threat of the definition) wins within `depth`."""
    b[m] = att
    try:
        fives = ref.five_cells(b, att)
        if len(fives) >= 2:
            return True
        if depth < 2:
            return False
        if len(fives) == 1:
            b[fives[0]] = -att
            won = bf_win(ref, b, att, depth - 1)
            b[fives[0]] = 0
            return won
        if not ref.has_double(b, att):
            return False  # no threat
        for r in [c for c in range(len(b)) if b[c] == 0]:  # the defender: anywhere
            b[r] = -att
            won = bf_win(ref, b, att, depth - 1)
            b[r] = 0
            if not won:
                return False
        return True
    finally:
        b[m] = 0


# -- positions -----------------------------------------------------------------------
def random_boards(seed: int, count: int, n: int, k: int, stones: tuple[int, int]):
    """`count` boards from random near-stone play with `stones` in [lo, hi) stones and
    no k in a row; the attacker is the side to move."""
    rng = np.random.default_rng(seed)
    boards, attackers = [], []
    while len(boards) < count:
        board = tactics_suite.random_position(rng, n, int(rng.integers(*stones)), radius=1)
        if board is None or _has_line(board, k):
            continue
        boards.append(board)
        attackers.append(1 if np.sum(board == 1) == np.sum(board == -1) else -1)
    return np.stack(boards), np.asarray(attackers, np.int8)


def _has_line(board: np.ndarray, k: int) -> bool:
    n = board.shape[0]
    for r in range(n):
        for c in range(n):
            v = board[r, c]
            if v == 0:
                continue
            for dr, dc in DIRS:
                if all(0 <= r + i * dr < n and 0 <= c + i * dc < n
                       and board[r + i * dr, c + i * dc] == v for i in range(k)):
                    return True
    return False


DEPTH3 = VCTConfig(max_depth=3, max_nodes=20_000)
FOURS3 = VCFConfig(max_depth=3, max_nodes=4096)
BOARDS = 12  # one batch shape: one compiled function for every 7x7 batch


@functools.lru_cache(maxsize=None)
def _small():
    """(boards int8[BOARDS, 7, 7], attackers) -> the VCT of depth 3 under freestyle and
    exact5 and the VCF of depth 3 under freestyle, k = 4: every 7x7 search of this file in
    one compiled program."""
    def searches(board, att):
        return {"freestyle": vct(board, att, win_length=4, rule="freestyle", config=DEPTH3),
                "exact5": vct(board, att, win_length=4, rule="exact5", config=DEPTH3),
                "fours": vcf(board, att, win_length=4, rule="freestyle", config=FOURS3)}

    return jax.jit(jax.vmap(searches))


def run_batch(boards, attackers):
    return jax.tree.map(np.asarray, _small()(jnp.asarray(boards), jnp.asarray(attackers)))


SHORT = VCTConfig(max_depth=2, max_nodes=512)
THREE = VCTConfig(max_depth=3, max_nodes=32)


@functools.lru_cache(maxsize=None)
def _single():
    """(board, attacker) -> the VCT of one 15x15 freestyle board under SHORT and under
    THREE: one compiled function for both."""
    return jax.jit(lambda board, att: [vct(board, att, win_length=5, rule="freestyle",
                                           config=config) for config in (SHORT, THREE)])


def solve(board, att, config):
    """One 15x15 freestyle board under `config` (SHORT or THREE)."""
    res = _single()(jnp.asarray(board), jnp.int8(att))[(SHORT, THREE).index(config)]
    return jax.tree.map(np.asarray, res)


# -- 1. against the brute force -------------------------------------------------------
@pytest.mark.parametrize("rule", ["freestyle", "exact5"])
@settings(max_examples=1, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_matches_brute_force(rule, seed):
    """7x7, four in a row, depth 3: found exactly when the brute force wins (and never
    "exhausted" with this budget), and the move found starts a win by the brute force."""
    n, k = 7, 4
    ref = Ref(n, k, rule == "exact5")
    boards, atts = random_boards(seed, BOARDS, n, k, (4, 14))
    res = run_batch(boards, atts)[rule]
    for i, (b, att) in enumerate(zip(boards, atts)):
        flat = [int(x) for x in b.reshape(-1)]
        want = bf_win(ref, flat, int(att), DEPTH3.max_depth)
        assert not res.exhausted[i]
        assert bool(res.found[i]) == want, (b, att)
        if want:
            m = int(res.move[i])
            assert flat[m] == 0
            assert m in ref.five_cells(flat, int(att)) or bf_move_wins(
                ref, flat, int(att), m, DEPTH3.max_depth)
        else:
            assert res.move[i] == -1


def test_wins_by_threes_match_brute_force():
    """Boards where the VCT finds wins the VCF does not (so the threes and the exact reply
    sets are what is tested), against the brute force."""
    n, k = 7, 4
    ref = Ref(n, k, False)
    boards, atts = random_boards(5, BOARDS, n, k, (4, 10))
    both = run_batch(boards, atts)
    res, only_fours = both["freestyle"], both["fours"].found
    assert not np.any(only_fours & ~res.found)  # a VCF is a VCT
    by_threes = np.flatnonzero(res.found & ~only_fours)
    assert len(by_threes) >= 2
    for i in np.flatnonzero(~only_fours):
        flat = [int(x) for x in boards[i].reshape(-1)]
        assert bool(res.found[i]) == bf_win(ref, flat, int(atts[i]), DEPTH3.max_depth)


# -- 2. against the exact solver, on the shipped suite ---------------------------------------


def test_suite_positions_against_solver():
    """Depth 2 is a three (or four) then a double: a win within 5 plies. The suite's labels
    are the solver's: every `vct`, `open_four` and `fours_win` puzzle (win within 5, the
    `vct` ones by no four) is found with a move among its solutions; no `fours_7` /
    `fours_9` one (no win within 5)."""
    suite = tactics_suite.default_suite().by_category()
    picks = suite["vct"] + [p for c in ("open_four", "fours_win", "fours_7", "fours_9")
                            for p in suite[c][:3]]
    for p in picks:
        res = solve(p.board, p.to_move, SHORT)
        wins5 = p.category in ("vct", "open_four", "fours_win")
        assert bool(res.found) == wins5 and not res.exhausted, p.id
        if wins5:
            assert int(res.move) in p.solutions, p.id
    solver = Solver(15, 5)
    for p in suite["vct"][:3]:  # and the labels themselves, re-checked
        assert solver.wins_within(p.board, p.to_move, 5)
        assert not solver.wins_within(p.board, p.to_move, 3)
        assert not set(p.solutions) & set(solver.four_moves(p.board.reshape(-1), p.to_move))


# -- 3. hand-made 15x15 positions, bounds, errors -----------------------------------------
def put(n: int, black=(), white=()) -> np.ndarray:
    b = np.zeros((n, n), np.int8)
    for r, c in black:
        b[r, c] = 1
    for r, c in white:
        b[r, c] = -1
    return b


def test_double_three_and_counter_four():
    # Black: (7,6) (7,7) and (5,8) (6,8): (7,8) makes two open threes (a double three).
    black = [(7, 6), (7, 7), (5, 8), (6, 8)]
    far = [(0, 0), (0, 14), (14, 0), (14, 14)]
    b = put(15, black, white=far)
    res = solve(b, 1, SHORT)
    assert res.found and res.move == 7 * 15 + 8
    solver = Solver(15, 5)
    assert solver.winning_moves(b, 1, 5) == [7 * 15 + 8]
    # White's closed three on row 2 (black at (2,0)) answers the double three with a four
    # at (2,4); black's block (2,5) makes no four but leaves the double cells: one more
    # threat move, so depth 2 no longer wins and depth 3 does.
    b = put(15, black + [(2, 0)], far + [(2, 1), (2, 2), (2, 3)])
    res = solve(b, 1, SHORT)
    assert not res.found and not res.exhausted
    res = solve(b, 1, THREE)
    assert res.found and not res.exhausted and res.move == 7 * 15 + 8
    assert not solver.wins_within(b, 1, 5)  # (7 plies is too slow for the solver here)


def test_budget_and_errors():
    # A VCF of three fours is a VCT of depth 3: with 32 nodes it is found, or the result
    # says the budget ran out ("unknown"), never "no VCT".
    for p in tactics_suite.default_suite().by_category()["fours_7"][:4]:
        res = solve(p.board, p.to_move, THREE)
        assert res.nodes <= THREE.max_nodes and not (res.found and res.exhausted)
        assert res.found or (res.exhausted and res.move == -1 and res.nodes == THREE.max_nodes)
    with pytest.raises(ValueError, match="max_depth"):
        VCTConfig(max_depth=0)
    with pytest.raises(ValueError, match="rule"):
        vct(jnp.zeros((7, 7), jnp.int8), 1, 4, "renju")
