"""The jitted VCF search against a brute-force VCF written from the rules, the NumPy threat
solver, hand-made 15x15 positions, and itself under vmap.

The brute force (`bf_vcf`) follows the module's semantics move by move over every empty
cell, with one shortcut that follows from the rules: a stone can only change the lines
through it, so the five cells a move creates are looked for on those 4 lines only.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku_jax.games.gomoku.solver import Solver
from gomoku_jax.games.gomoku.vcf import VCFConfig, opponent_vcf, refutations, vcf

DIRS = ((0, 1), (1, 0), (1, 1), (1, -1))


# -- the reference, from the rules ------------------------------------------------------
def run_through(b, n, cell, colour, dr, dc) -> int:
    """Stones of `colour` in a row through `cell` along (dr, dc), counting `cell` itself."""
    r, c = divmod(cell, n)
    run = 1
    for sign in (1, -1):
        rr, cc = r + sign * dr, c + sign * dc
        while 0 <= rr < n and 0 <= cc < n and b[rr * n + cc] == colour:
            run += 1
            rr, cc = rr + sign * dr, cc + sign * dc
    return run


def wins(run: int, k: int, exact: bool) -> bool:
    return run == k if exact else run >= k


def makes_five(b, n, k, exact, cell, colour) -> bool:
    return any(wins(run_through(b, n, cell, colour, dr, dc), k, exact) for dr, dc in DIRS)


def five_cells(b, n, k, exact, colour) -> list[int]:
    return [c for c in range(n * n) if b[c] == 0 and makes_five(b, n, k, exact, c, colour)]


def fives_after(b, n, k, exact, move, colour) -> list[int]:
    """The five cells of `colour` after it played `move`, when it had none before: they are
    on the 4 lines through `move`, within k cells."""
    r, c = divmod(move, n)
    out = set()
    for dr, dc in DIRS:
        for o in range(-k, k + 1):
            rr, cc = r + o * dr, c + o * dc
            cell = rr * n + cc
            if o and 0 <= rr < n and 0 <= cc < n and b[cell] == 0 and wins(
                    run_through(b, n, cell, colour, dr, dc), k, exact):
                out.add(cell)
    return sorted(out)


def bf_vcf(board, n, k, exact, att, max_depth):
    """The shortest VCF's depth for `att` to move (0: a five now), None without one within
    `max_depth` fours. Iterative deepening over `bf_within`."""
    b = [int(x) for x in np.asarray(board).reshape(-1)]
    if five_cells(b, n, k, exact, att):
        return 0
    for d in range(1, max_depth + 1):
        if bf_within(b, n, k, exact, att, d):
            return d
    return None


def bf_within(b, n, k, exact, att, depth) -> bool:
    """Attacker to move with no five cell: a VCF of at most `depth` fours?"""
    if depth == 0:
        return False
    threats = five_cells(b, n, k, exact, -att)
    if len(threats) >= 2:
        return False
    moves = threats or [c for c in range(n * n) if b[c] == 0]
    for m in moves:
        b[m] = att
        try:
            fives = fives_after(b, n, k, exact, m, att)
            if len(fives) >= 2:
                return True
            if len(fives) == 1:
                b[fives[0]] = -att
                won = bf_within(b, n, k, exact, att, depth - 1)
                b[fives[0]] = 0
                if won:
                    return True
        finally:
            b[m] = 0
    return False


def check_line(board, n, k, exact, att, line, depth) -> None:
    """`line` is a VCF of `depth` fours by the rules: replay it."""
    b = [int(x) for x in np.asarray(board).reshape(-1)]
    line = [int(x) for x in line]
    assert all(x == -1 for x in line[2 * depth + 1:])
    moves = line[:2 * depth + 1]
    assert all(0 <= m < n * n for m in moves), line
    if depth == 0:
        assert moves[0] in five_cells(b, n, k, exact, att)
        return
    assert not five_cells(b, n, k, exact, att)
    for i in range(depth):
        a, d = moves[2 * i], moves[2 * i + 1]
        threats = five_cells(b, n, k, exact, -att)
        assert len(threats) <= 1 and (not threats or threats == [a]), (i, threats, a)
        assert b[a] == 0
        b[a] = att
        fives = five_cells(b, n, k, exact, att)
        assert not five_cells(b, n, k, exact, -att)
        if i < depth - 1:
            assert fives == [d], (i, fives, d)
        else:
            assert len(fives) >= 2 and d in fives, (fives, d)
        b[d] = -att
    assert b[moves[-1]] == 0 and makes_five(b, n, k, exact, moves[-1], att)


# -- positions -----------------------------------------------------------------------
def has_line(b: np.ndarray, n: int, k: int) -> bool:
    flat = b.reshape(-1)
    return any(flat[c] != 0 and run_through(flat, n, c, flat[c], dr, dc) >= k
               for c in range(n * n) for dr, dc in DIRS)


def random_boards(seed: int, count: int, n: int, k: int, stones: tuple[int, int],
                  won=None):
    """`count` boards with `stones` (attacker, defender) random stones each (attacker = +1
    or -1 at random, returned), none won: `won(board)` (default: k in a row)."""
    rng = np.random.default_rng(seed)
    boards, attackers = [], []
    while len(boards) < count:
        att = int(rng.choice([-1, 1]))
        cells = rng.choice(n * n, sum(stones), replace=False)
        b = np.zeros(n * n, np.int8)
        b[cells[:stones[0]]] = att
        b[cells[stones[0]:]] = -att
        b = b.reshape(n, n)
        if not (won(b) if won is not None else has_line(b, n, k)):
            boards.append(b)
            attackers.append(att)
    return np.stack(boards), np.asarray(attackers, np.int8)


def parse(rows: list[str]) -> np.ndarray:
    """'X' black (+1), 'O' white (-1), '.' empty."""
    return np.array([[{"X": 1, "O": -1, ".": 0}[ch] for ch in row] for row in rows], np.int8)


def put(n: int, black=(), white=()) -> np.ndarray:
    b = np.zeros((n, n), np.int8)
    for r, c in black:
        b[r, c] = 1
    for r, c in white:
        b[r, c] = -1
    return b


# k = 4 and 5, and both rules (the rules' differences are test_exact5_overline's, and
# test_vcf_rules.py's for caro and renju).
SMALL = [(7, 4, "freestyle", (9, 7)), (9, 5, "freestyle", (15, 12)),
         (9, 5, "exact5", (15, 12))]
BOUNDS = VCFConfig(max_depth=4, max_nodes=4096)  # searched shortest and by plain DFS
BATCH = 12  # boards per brute-force example
# Every batched search of this file: name -> (n, k, rule, config), each on 2 * BATCH boards
# (SMALL's: a shortest and a plain search of BATCH boards; "depth 1": test_agrees_with_solver's).
BATCHED = {f"{n}-{k}-{rule}": (n, k, rule, BOUNDS) for n, k, rule, _ in SMALL} | {
    "depth 1": (9, 5, "freestyle", VCFConfig(max_depth=1, max_nodes=512))}
REFUTE = (7, 4, "freestyle", VCFConfig(max_depth=3, max_nodes=1024))  # n, k, rule, config
REFUTE_BOARDS, REFUTE_CANDIDATES = 4, 5


@functools.lru_cache(maxsize=None)
def _batched_all():
    """Every batched search of this file in one compiled program (one program compiles in
    less time than its searches apart): {name: (boards, attackers, shortest bool[B])}
    for BATCHED (`shortest` traced, `vcf(shortest=...)` as `threat_moves` runs it: one
    search serves a shortest line and a plain DFS), "refute": (boards, me, candidates) ->
    {name: VCF results, "refute": (refutations, opponent_vcf)}."""
    n, k, rule, config = REFUTE

    def run(inputs):
        out = {}
        for name, (_, kk, r, c) in BATCHED.items():
            search = functools.partial(vcf, win_length=kk, rule=r, config=c)
            out[name] = jax.vmap(lambda b, a, s: search(b, a, shortest=s))(*inputs[name])
        boards, me, candidates = inputs["refute"]
        out["refute"] = (
            jax.vmap(functools.partial(refutations, win_length=k, rule=rule, config=config,
                                       max_candidates=REFUTE_CANDIDATES))(boards, me,
                                                                          candidates),
            jax.vmap(functools.partial(opponent_vcf, win_length=k, rule=rule,
                                       config=config))(boards, me))
        return out

    return jax.jit(run)


def search_batches(cases: dict) -> dict:
    """Results (NumPy) of the named cases of `_batched_all` (BATCHED's name or "refute"),
    given as (boards, attackers, shortest) or "refute"'s inputs; BATCHED cases of fewer
    than 2 * BATCH boards are padded with empty ones; every other case searches empty
    boards (no four: nothing to search)."""
    inputs = {name: (np.zeros((2 * BATCH, n, n), np.int8), np.ones(2 * BATCH, np.int8),
                     np.zeros(2 * BATCH, bool)) for name, (n, *_) in BATCHED.items()}
    n = REFUTE[0]
    inputs["refute"] = (np.zeros((REFUTE_BOARDS, n, n), np.int8),
                        np.ones(REFUTE_BOARDS, np.int8), np.zeros((REFUTE_BOARDS, n * n), bool))
    for name, (boards, attackers, *rest) in cases.items():
        if name != "refute":
            shortest = np.broadcast_to(np.asarray(rest[0], bool), (len(boards),))
            rest = [np.zeros(2 * BATCH, bool)]
            rest[0][:len(boards)] = shortest
            pad = 2 * BATCH - len(boards)
            boards = np.concatenate([boards, np.zeros((pad,) + boards.shape[1:], np.int8)])
            attackers = np.concatenate([attackers, np.ones(pad, np.int8)])
        inputs[name] = (np.asarray(boards, np.int8), np.asarray(attackers, np.int8), *rest)
    out = jax.device_get(_batched_all()(inputs))
    return {name: out[name] if name == "refute" else
            jax.tree.map(lambda x, m=len(cases[name][0]): x[:m], out[name]) for name in cases}


def both_ways(boards, attackers):
    """(boards, attackers, shortest) searching `boards` twice: shortest, then plain DFS."""
    count = len(boards)
    return (np.concatenate([boards, boards]), np.concatenate([attackers, attackers]),
            np.arange(2 * count) < count)


def split(res):
    """`both_ways`' results as (shortest, plain DFS)."""
    count = len(res.found) // 2
    return jax.tree.map(lambda x: x[:count], res), jax.tree.map(lambda x: x[count:], res)


# -- 1. against the brute force -------------------------------------------------------
@pytest.mark.parametrize("n,k,rule,stones", SMALL)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_matches_brute_force(n, k, rule, stones, seed):
    exact = rule == "exact5"
    boards, atts = random_boards(seed, BATCH, n, k, stones)
    name = f"{n}-{k}-{rule}"
    short, dfs = split(search_batches({name: both_ways(boards, atts)})[name])
    for i, (b, att) in enumerate(zip(boards, atts)):
        want = bf_vcf(b, n, k, exact, int(att), BOUNDS.max_depth)
        for res, shortest in ((short, True), (dfs, False)):
            assert not res.exhausted[i]
            assert bool(res.found[i]) == (want is not None), (b, att, shortest)
            if want is None:
                assert res.move[i] == -1 and res.depth[i] == -1 and (res.line[i] == -1).all()
                continue
            depth = int(res.depth[i])
            assert depth == want if shortest else want <= depth <= BOUNDS.max_depth
            assert res.move[i] == res.line[i][0]
            check_line(b, n, k, exact, int(att), res.line[i], depth)


def test_found_positions_are_common_enough():
    """The random positions of the brute-force test have VCFs of several depths (else it
    would test little)."""
    n, k, rule, stones = SMALL[0]
    boards, atts = random_boards(0, 2 * BATCH, n, k, stones)
    # the brute-force test's batch of 2 * BATCH (its program), every board searched shortest
    name = f"{n}-{k}-{rule}"
    depths = list(search_batches({name: (boards, atts, True)})[name].depth)
    assert {-1, 0, 1} <= set(int(d) for d in depths) and max(depths) >= 2, depths


# -- 2. against the threat solver -------------------------------------------------------
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_agrees_with_solver(seed):
    n, k = 9, 5
    solver = Solver(n, k)
    boards, atts = random_boards(seed, BATCH, n, k, (14, 12))
    res = search_batches({"depth 1": (boards, atts, False), "9-5-freestyle":
                          (boards, atts, True)})
    one, two = res["depth 1"], res["9-5-freestyle"]
    for i, (b, att) in enumerate(zip(boards, atts)):
        # A win within 3 plies is a five or a double four (possibly blocking a four).
        assert not one.exhausted[i]
        assert bool(one.found[i]) == solver.wins_within(b, int(att), 3)
        depth = int(two.depth[i])
        if two.found[i] and depth <= 2:
            assert solver.wins_within(b, int(att), 2 * depth + 1)
        if depth == 2:  # shortest: so no win within 3 plies
            assert not solver.wins_within(b, int(att), 3)


# -- 3. hand-made 15x15 positions ----------------------------------------------------------
N = 15
CFG = VCFConfig(max_depth=8, max_nodes=512)
# Every single-board search of this file: name -> (n, k, rule, config). The 15x15 ones take
# `shortest` traced; "vmap" (test_vmap_matches_single's) is the plain search with
# config.shortest static, as the batch's is traced.
SINGLES = {"freestyle": (N, 5, "freestyle", CFG), "exact5": (N, 5, "exact5", CFG),
           "depth 3": (N, 5, "freestyle", VCFConfig(max_depth=3, max_nodes=512)),
           "2 nodes": (N, 5, "freestyle", VCFConfig(max_depth=8, max_nodes=2)),
           "vmap": (9, 5, "exact5", BOUNDS)}


@functools.lru_cache(maxsize=None)
def _singles():
    """{name: (board, attacker, shortest)} -> {name: VCF result} for every search of
    SINGLES, in one compiled program."""
    def run(inputs):
        out = {}
        for name, (_, k, rule, config) in SINGLES.items():
            board, att, shortest = inputs[name]
            out[name] = vcf(board, att, k, rule, config,
                            shortest=None if name == "vmap" else shortest)
        return out

    return jax.jit(run)


def search_one(name, board, att, shortest=False):
    """SINGLES[name]'s search of one board, through `_singles` (the others search an empty
    board: nothing to search)."""
    inputs = {m: (np.zeros((n, n), np.int8), np.int8(1), np.False_)
              for m, (n, *_) in SINGLES.items()}
    inputs[name] = (np.asarray(board, np.int8), np.int8(att), np.bool_(shortest))
    return jax.tree.map(np.asarray, _singles()(inputs)[name])


def solve(board, att=1, rule="freestyle", shortest=False):
    """CFG's search of a 15x15 board under `rule`."""
    return search_one(rule, board, att, shortest)


def test_five_now_and_empty_board():
    b = put(N, black=[(7, 3), (7, 4), (7, 5), (7, 6)], white=[(7, 2), (0, 0), (0, 1)])
    r = solve(b, 1)
    assert r.found and r.depth == 0 and r.move == 7 * N + 7 and r.nodes == 0
    assert list(r.line[:2]) == [7 * N + 7, -1]
    r = solve(np.zeros((N, N), np.int8), 1)
    assert not r.found and not r.exhausted and r.nodes == 0 and r.move == -1


def test_exact5_overline():
    # Row 7: O . X X X _ _ X (cols 0..7).
    b = put(N, black=[(7, 2), (7, 3), (7, 4), (7, 7)], white=[(7, 0)])
    # freestyle: (7,5) leaves two five cells, (7,1) and (7,6) (2..7, six in a row).
    r = solve(b, 1, "freestyle")
    assert r.found and r.depth == 1
    check_line(b, N, 5, False, 1, r.line, 1)
    # exact5: (7,6) would make six, so (7,5) is a single four, (7,6) no four at all.
    r = solve(b, 1, "exact5")
    assert not r.found and not r.exhausted and r.nodes == 2
    # Row 3: X X X X _ X (cols 1..6): the gap makes six, a five under freestyle only.
    b = put(N, black=[(3, 1), (3, 2), (3, 3), (3, 4), (3, 6)], white=[(9, 9)])
    assert solve(b, 1, "freestyle").depth == 0
    r = solve(b, 1, "exact5")
    assert r.found and r.depth == 0 and r.move == 3 * N + 0  # the other end
    b[3, 0] = -1
    assert solve(b, 1, "freestyle").move == 3 * N + 5
    r = solve(b, 1, "exact5")
    assert not r.found and not r.exhausted and r.nodes == 0


def test_four_move_vcf():
    b = parse(FOUR_MOVE_VCF)
    r = solve(b, 1, shortest=True)
    assert r.found and r.depth == 4, r
    check_line(b, N, 5, False, 1, r.line, 4)
    assert bf_solver_depth(b, 1, 4) == 4
    # Plain DFS finds it too, in no more moves than allowed.
    r = solve(b, 1)
    assert r.found and 4 <= r.depth <= 8
    check_line(b, N, 5, False, 1, r.line, int(r.depth))
    # Too shallow a search finds nothing, and says it ran out of depth, not nodes.
    r = search_one("depth 3", b, 1)
    assert not r.found and not r.exhausted


def test_defender_fours():
    # Black has a double four at (7,5) (row 7 and column 5 threes), white a four on row 2
    # with two five cells: black cannot block both.
    black = [(7, 2), (7, 3), (7, 4), (4, 5), (5, 5), (6, 5)]
    white = [(2, 8), (2, 9), (2, 10), (2, 11), (7, 1), (3, 5), (11, 11), (12, 12)]
    r = solve(put(N, black, white))
    assert not r.found and not r.exhausted and r.nodes == 0
    # One white five cell, (2,7), and a black stone there makes no four: no VCF.
    r = solve(put(N, black + [(2, 12)], white))
    assert not r.found and not r.exhausted and r.nodes == 0
    # Now black's block at (2,7) is a four (column 7), then the double four.
    b = put(N, black + [(2, 12), (3, 7), (4, 7), (5, 7)], white + [(6, 7)])
    r = solve(b)
    assert r.found and r.depth == 2 and list(r.line[:2]) == [2 * N + 7, 1 * N + 7], r
    check_line(b, N, 5, False, 1, r.line, 2)
    assert bf_solver_depth(b, 1, 4) == 2


def test_block_makes_a_counter_four():
    # Black: (6,5) fours row 6 (block (6,4)), (9,5) fours row 9 (block (9,4)); after both,
    # column 5 is a double four. Either order wins in 2...
    black = [(6, 6), (6, 7), (6, 8), (9, 6), (9, 7), (9, 8), (7, 5), (8, 5)]
    white = [(6, 9), (9, 9), (8, 6), (7, 6), (10, 4)]
    b = put(N, black, white)
    r = solve(b)
    assert r.found and r.depth == 2 and bf_solver_depth(b, 1, 4) == 2
    check_line(b, N, 5, False, 1, r.line, 2)
    # ... unless each white block completes a white four that black cannot answer with one.
    b = put(N, black, white + [(6, 1), (6, 2), (6, 3), (9, 1), (9, 2), (9, 3)])
    r = solve(b)
    assert not r.found and not r.exhausted and bf_solver_depth(b, 1, 6) is None
    # With one of them, black starts on the other side.
    b = put(N, black, white + [(6, 1), (6, 2), (6, 3)])
    r = solve(b)
    assert r.found and r.depth == 2 and r.move == 9 * N + 5
    check_line(b, N, 5, False, 1, r.line, 2)


def test_budget_exhaustion():
    b = parse(FOUR_MOVE_VCF)
    r = search_one("2 nodes", b, 1)
    assert not r.found and r.exhausted and r.nodes == 2 and r.move == -1
    # No VCF, searched to the end: not exhausted.
    b = put(N, black=[(7, 7), (7, 8), (7, 9)], white=[(7, 6)])
    r = solve(b, 1)
    assert not r.found and not r.exhausted and r.nodes == 2


def bf_solver_depth(board, att, max_depth):
    """Shortest VCF depth by `bf_within`'s rules with the solver's five cells (fast enough
    on 15x15, freestyle only)."""
    solver = Solver(N, 5)
    flat = np.asarray(board, np.int8).reshape(-1).copy()
    if solver.five_cells(flat, att).size:
        return 0

    def within(depth):
        if depth == 0:
            return False
        threats = solver.five_cells(flat, -att)
        if threats.size >= 2:
            return False
        moves = threats if threats.size else solver.four_moves(flat, att)
        for m in moves:
            flat[m] = att
            fives = solver.five_cells(flat, att)
            won = fives.size >= 2
            if fives.size == 1:
                flat[fives[0]] = -att
                won = within(depth - 1)
                flat[fives[0]] = 0
            flat[m] = 0
            if won:
                return True
        return False

    return next((d for d in range(1, max_depth + 1) if within(d)), None)


FOUR_MOVE_VCF = [  # a random position, shortest VCF 4 fours (bf_solver_depth agrees)
    "...............",
    "...............",
    "...............",
    "....X.X........",
    "...XOO..OOXO...",
    ".......X.OX....",
    "....X...O......",
    "...X..X.X......",
    "..........X....",
    "....O..OXX.....",
    ".........O.X...",
    "....O...O.OO...",
    "...............",
    "...............",
    "...............",
]


# -- 4. jit + vmap ----------------------------------------------------------------------
def test_vmap_matches_single():
    boards, atts = random_boards(7, BATCH, 9, 5, (15, 12))
    res = search_batches({"9-5-exact5": (boards, atts, False)})["9-5-exact5"]
    for i in range(len(boards)):
        r = search_one("vmap", boards[i], atts[i])
        for field in r._fields:
            np.testing.assert_array_equal(getattr(r, field), getattr(res, field)[i],
                                          err_msg=field)


# -- refutations --------------------------------------------------------------------------
def test_refutations_against_brute_force():
    n, k, rule, cfg = REFUTE
    assert rule == "freestyle"
    boards, atts = random_boards(3, REFUTE_BOARDS, n, k, (8, 8))
    cands = np.zeros((len(boards), n * n), bool)
    cands[:, ::3] = True
    me = -atts  # the side to move faces the attacker
    res, threat = search_batches({"refute": (boards, me, cands)})["refute"]
    for i, b in enumerate(boards):
        flat = b.reshape(-1)
        want = bf_vcf(b, n, k, False, -int(me[i]), cfg.max_depth)
        assert bool(threat.found[i]) == (want is not None)
        picks = [c for c in range(n * n) if cands[i, c] and flat[c] == 0][:REFUTE_CANDIDATES]
        assert list(np.flatnonzero(res.checked[i])) == picks
        for c in picks:
            nb = flat.copy()
            nb[c] = me[i]
            five = makes_five(list(flat), n, k, False, c, int(me[i]))
            still = bf_vcf(nb.reshape(n, n), n, k, False, -int(me[i]), cfg.max_depth)
            assert bool(res.refutes[i, c]) == (five or still is None), (i, c)
            assert not res.unknown[i, c]


def test_config_validation():
    with pytest.raises(ValueError, match="max_depth"):
        VCFConfig(max_depth=0)
    with pytest.raises(ValueError, match="max_nodes"):
        VCFConfig(max_nodes=True)
    with pytest.raises(ValueError, match="rule"):
        vcf(jnp.zeros((7, 7), jnp.int8), 1, 5, "swap2")  # not a rule (renju is one now)
