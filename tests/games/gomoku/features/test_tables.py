"""The lookup tables under the board heuristics: `patterns.threat_table` (threat codes) and
`heuristic_score.line_score_table` (HeuristicScore), indexed by `lines.window_index`.

- `window_index` numbers the same cells `line_planes` gives, in the order `all_windows`
  decodes (the plumbing every lookup relies on), edges included.
- Exact equality of `threats` (the table) with `threats_scan` (the direct evaluation the
  table is built from) on 64,000 random boards of (2k + 2)^2 cells: k = 3..6 (6,400 to
  12,800 boards each), freestyle and exact5, sparse to full, one colour dominating a third
  of them so that fives and overlines occur; every pattern code occurs.
- A hypothesis property: the table agrees with the brute-force classifier of
  test_patterns.py on small boards.
- HeuristicScore and `cell_values` by table agree with their scans (float32 rounding);
  above MAX_TABLE_SIZE "auto" scans and "table" is refused; bad methods are refused.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from experiment_scripts import load_script
from hypothesis import given, settings
from hypothesis import strategies as st
from test_patterns import reference_threats

from gomoku_jax.games.gomoku.features import PATTERN_NAMES, heuristic_score, patterns
from gomoku_jax.games.gomoku.features.cell_values import cell_values
from gomoku_jax.games.gomoku.features.heuristic_score import (
    HeuristicScoreConfig,
    heuristic_score_map,
    line_score_table,
    score_table,
)
from gomoku_jax.games.gomoku.features.lines import (
    BLOCKED_DIGIT,
    EMPTY_DIGIT,
    OWN_DIGIT,
    WALL,
    all_windows,
    line_planes,
    window_index,
)
from gomoku_jax.games.gomoku.features.patterns import threat_table, threats, threats_scan

RULES = ("freestyle", "exact5", "caro", "caro_exact5", "renju")
# (k, rule) pairs with a table: caro's base-4 table fits for k <= 5; renju is k = 5.
TABLE_CASES = ([(k, r) for r in ("freestyle", "exact5") for k in (3, 4, 5, 6)]
               + [(k, r) for r in ("caro", "caro_exact5") for k in (3, 4, 5)]
               + [(5, "renju")])


# Random boards: per board a stone density from empty to full, one colour dominating a
# third of them (fives and overlines occur). Drawn by experiments/check_threat_tables.py's
# `random_boards` (the heavier run of the same comparison), compiled once for the module at
# the largest size the tests use; a smaller board is a corner of one (its cells are drawn
# independently given the board's density and share, so it has the same distribution).
random_boards = load_script("check_threat_tables").random_boards
DRAWN, DRAWN_SIZE = 6400, 15  # boards per draw; 15 = 2k + 1 for k = 7


@functools.lru_cache(maxsize=None)
def _draw():
    return jax.jit(lambda key: random_boards(key, DRAWN, DRAWN_SIZE))


def boards_of(seed: int, count: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(int8[count, n, n] boards, int8[count] colours) for key `seed`, count <= DRAWN."""
    boards, colours = jax.device_get(_draw()(jax.random.key(seed)))
    return boards[:count, :n, :n], colours[:count]


# --------------------------------------------------------------------------------------
# window_index
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("reach", [1, 4])
def test_window_index_decodes_to_the_line_planes(reach):
    n = 7
    boards, colours = boards_of(reach, 16, n)
    windows = all_windows(reach)
    assert windows.shape == (2 * reach + 1, 3 ** (2 * reach)) and windows.dtype == np.int8
    assert np.all(windows[reach] == EMPTY_DIGIT)
    index, lines = map(np.asarray, jax.jit(jax.vmap(
        lambda b, c: (window_index(b, c, reach), line_planes(b, reach))))(boards, colours))
    assert index.shape == (16, 4, n, n) and index.dtype == np.int32
    c = np.asarray(colours)[:, None, None, None]
    lines = np.moveaxis(lines, 1, 0)  # [offset, board, direction, row, col]
    digits = np.where(lines == c, OWN_DIGIT, np.where(lines == 0, EMPTY_DIGIT, BLOCKED_DIGIT))
    digits[reach] = EMPTY_DIGIT
    np.testing.assert_array_equal(windows[:, index], digits)
    assert (lines == WALL).any()  # the edges were in it


# --------------------------------------------------------------------------------------
# threats: table == scan on random boards
# --------------------------------------------------------------------------------------

CHUNK = 6400  # boards per key
# Keys per k (k = 3 has the fewest windows per board): 2 rules x (2 + 1 + 1 + 1) x 6400 =
# 64,000 boards.
CHUNKS = {3: 2, 4: 1, 5: 1, 6: 1}


def _case_boards(k: int, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """The boards of one case: (2k + 2)^2 cells, windows with walls on either side and a
    few with none; CHUNK per key 1000 k + i (renju: the forbidden-point scan runs on every
    board, masking both alike: CHUNK / 8 of one key)."""
    if rule == "renju":
        return boards_of(1000 * k, CHUNK // 8, 2 * k + 2)
    drawn = [boards_of(1000 * k + i, CHUNK, 2 * k + 2)
             for i in range(CHUNKS[k] if rule in ("freestyle", "exact5") else 1)]
    return tuple(np.concatenate(x) for x in zip(*drawn))


@functools.lru_cache(maxsize=None)
def _table_vs_scan() -> dict:
    """Every case of TABLE_CASES in one compiled program: (k, rule) -> (boards, colours,
    how many codes differ, how often each code occurs in the table's, the first board that
    differs or -1)."""

    def compare(k, rule, boards, colours):
        table = jax.vmap(lambda b, c: threats(b, c, k, rule, "table"))(boards, colours)
        scan = jax.vmap(lambda b, c: threats_scan(b, c, k, rule))(boards, colours)
        bad = jnp.any(table != scan, axis=(1, 2, 3))
        first = jnp.where(jnp.any(bad), jnp.argmax(bad), -1)
        histogram = jnp.sum(table[..., None] == jnp.arange(7, dtype=jnp.int8),
                            axis=(0, 1, 2, 3))
        return jnp.sum(table != scan), histogram, first

    run = jax.jit(lambda inputs: [compare(k, rule, *inputs[i])
                                  for i, (k, rule) in enumerate(TABLE_CASES)])
    inputs = [_case_boards(k, rule) for k, rule in TABLE_CASES]
    # The one program of the suite that runs long (64,000 boards): optimised, unlike the
    # rest (conftest.py's optimisation level 0), it compiles ~5 s longer and runs ~13 s less.
    results = jax.device_get(run.lower(inputs).compile(
        compiler_options={"xla_backend_optimization_level": 1})(inputs))
    return {case: (*x, *r) for case, x, r in zip(TABLE_CASES, inputs, results)}


@pytest.mark.slow
@pytest.mark.parametrize("k,rule", TABLE_CASES)
def test_threat_table_equals_scan_on_random_boards(k, rule):
    boards, colours, mismatches, histogram, first = _table_vs_scan()[k, rule]
    if int(mismatches):
        b = int(first)
        pytest.fail(f"k={k} {rule}: {int(mismatches)} codes differ; first board "
                    f"(colour {int(colours[b])}):\n{boards[b]}")
    counts = dict(zip(PATTERN_NAMES, histogram.tolist()))
    if k == 3:  # an open two needs k - 3 = 0 stones in k - 1 cells holding the new one
        assert counts.pop("open_two") == 0
    assert all(v >= 100 for v in counts.values()), counts


# The (k, rule) pairs the brute-force property draws from (renju: k = 5 only).
BRUTE_CASES = tuple((k, r) for r in RULES for k in (3, 4, 5) if r != "renju" or k == 5)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), k=st.integers(3, 5), rule=st.sampled_from(RULES))
def test_threat_table_matches_the_brute_force_reference(data, k, rule):
    if rule == "renju":
        k = 5
    n = 7
    cells = data.draw(st.lists(st.sampled_from([0, 0, 1, -1]), min_size=n * n,
                               max_size=n * n))
    colour = data.draw(st.sampled_from([1, -1]))
    board = np.asarray(cells, np.int8).reshape(n, n)
    got = np.asarray(_threats_by_table()(board, np.int8(colour))[BRUTE_CASES.index((k, rule))])
    np.testing.assert_array_equal(got, reference_threats(board, colour, k, rule))


@functools.lru_cache(maxsize=None)
def _threats_by_table():
    """(board, colour) -> the table's threats for every pair of BRUTE_CASES (one compile
    for all the examples hypothesis draws)."""
    return jax.jit(lambda b, c: [threats(b, c, k, rule, "table") for k, rule in BRUTE_CASES])


def test_caro_table_tells_the_edge_from_a_stone():
    """`x xxx_ o` style: a four of k = 4 whose five would be blocked at both ends is no
    four under caro; the edge in place of the first stone makes it one again."""
    k = 4
    board = np.zeros((9, 9), np.int8)
    board[4, 1:4] = 1  # x x x on columns 1..3
    board[4, 0] = board[4, 5] = -1  # o x x x _ o: the empty column 4 would close a blocked run
    f = jax.jit(lambda b: (threats(b, 1, k, "caro"), threats(b, 1, k, "freestyle"),
                           threats(b, 1, k, "caro", "scan")))
    caro, free, scan = map(np.asarray, f(jnp.asarray(board)))
    assert free[4, 4, 0] == patterns.FIVE and caro[4, 4, 0] == patterns.NONE
    np.testing.assert_array_equal(caro, scan)
    edge = board.copy()
    edge[4, :] = 0
    edge[4, 0:3] = 1  # |x x x _ o: the edge is no block
    edge[4, 4] = -1
    caro, free, scan = map(np.asarray, f(jnp.asarray(edge)))
    assert caro[4, 3, 0] == patterns.FIVE == free[4, 3, 0]
    assert threat_table(k, "caro").shape == (4 ** (2 * k),)


def test_threat_table_is_a_cached_read_only_constant():
    table = threat_table(5, "exact5")
    assert table.shape == (3 ** 10,) and table.dtype == np.int8
    assert table is threat_table(5, "exact5") and not table.flags.writeable
    assert set(np.unique(table).tolist()) == set(range(7))
    assert not np.array_equal(table, threat_table(5, "freestyle"))
    # Index 0: only empty cells around, a lone stone is nothing. All digits own: a run of
    # 2k + 1, a five under freestyle and an overline (nothing) under exact5.
    all_own = sum(3 ** j for j in range(10))
    assert table[0] == patterns.NONE and table[all_own] == patterns.NONE
    assert threat_table(5)[all_own] == patterns.FIVE


# --------------------------------------------------------------------------------------
# HeuristicScore and cell values
# --------------------------------------------------------------------------------------


HEURISTIC_CASES = {3: HeuristicScoreConfig(2.0, 3.0), 7: HeuristicScoreConfig()}
CELL_VALUE_CASES = ((5, "exact5"), (7, "freestyle"), (5, "caro"))


@functools.lru_cache(maxsize=None)
def _by_both_methods() -> dict:
    """The table's and the scan's results for every case of the two tests below, in one
    compiled program, on 256 random boards of (2k + 1)^2 cells per case:
    ("heuristic", k) -> (table, scan) HeuristicScore maps; ("cells", k, rule) -> (auto,
    scan) `cell_values`."""

    def heuristic(k, boards, colours):
        config = HEURISTIC_CASES[k]
        return jax.vmap(lambda b, c: (heuristic_score_map(b, c, k, config, "table"),
                                      heuristic_score_map(b, c, k, config, "scan")))(
            boards, colours)

    def cells(k, rule, boards, colours):
        return jax.vmap(lambda b, c: (cell_values(b, c, k, rule),
                                      cell_values(b, c, k, rule, method="scan")))(
            boards, colours)

    inputs = {("heuristic", k): boards_of(k, 256, 2 * k + 1) for k in HEURISTIC_CASES}
    inputs |= {("cells", k, rule): boards_of(7 + k, 256, 2 * k + 1)
               for k, rule in CELL_VALUE_CASES}
    run = jax.jit(lambda x: {case: heuristic(case[1], *boards) if case[0] == "heuristic"
                             else cells(*case[1:], *boards) for case, boards in x.items()})
    return jax.device_get(run(inputs))


@pytest.mark.parametrize("k", [3, 7])
def test_heuristic_score_table_matches_scan(k):
    """k = 7: the largest table (3^12); k = 5 is test_heuristic_score.py's, against the
    seed's vectors."""
    config = HEURISTIC_CASES[k]
    table, scan = _by_both_methods()["heuristic", k]
    np.testing.assert_allclose(table, scan, rtol=1e-6, atol=1e-6)
    assert np.count_nonzero(scan) > 256 * 3
    packed = score_table(k)
    assert packed.shape == (3 ** (2 * k - 2),) and not packed.flags.writeable
    assert line_score_table(k, config).shape == (3 ** (2 * k - 2),)
    if k <= 6:  # by the threats' index, of reach k
        assert line_score_table(k, config, k).shape == (3 ** (2 * k),)


@pytest.mark.parametrize("k, rule", CELL_VALUE_CASES)
def test_cell_values_by_table_match_scan(k, rule):
    """One window index of reach k serves threats and HeuristicScore (caro: a base-4 one
    for the threats); k = 7 is past the threat table's size, so "auto" scans the threats
    and looks HeuristicScore up."""
    auto, scan = _by_both_methods()["cells", k, rule]
    np.testing.assert_allclose(auto.value, scan.value, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(auto.wins, scan.wins)
    np.testing.assert_array_equal(auto.double_threats, scan.double_threats)
    assert np.asarray(scan.wins).any() and np.asarray(scan.double_threats).any()


def test_tables_beyond_max_table_size(monkeypatch):
    board = np.zeros((7, 7), np.int8)
    board[3, 2:4], board[1, 1] = 1, -1
    scan = jax.jit(lambda b: (threats_scan(b, 1, 4), threats_scan(b, 1, 3),
                              heuristic_score_map(b, 1, 4, method="scan")))(board)
    monkeypatch.setattr(patterns, "MAX_TABLE_SIZE", 3 ** 7)
    monkeypatch.setattr(heuristic_score, "MAX_TABLE_SIZE", 3 ** 5)
    got = jax.jit(lambda b: (threats(b, 1, 4), threats(b, 1, 3, method="table"),
                             heuristic_score_map(b, 1, 4)))(board)  # "auto" scans k = 4
    for x, y in zip(got, scan):
        np.testing.assert_array_equal(x, y)
    # (refused while tracing: eval_shape compiles nothing)
    with pytest.raises(ValueError, match="MAX_TABLE_SIZE"):
        jax.eval_shape(lambda b: threats(b, 1, 4, method="table"), board)
    with pytest.raises(ValueError, match="MAX_TABLE_SIZE"):
        jax.eval_shape(lambda b: heuristic_score_map(b, 1, 4, method="table"), board)


def test_unknown_methods_are_refused():
    board = jnp.zeros((9, 9), jnp.int8)
    for fn in (threats, heuristic_score_map):
        with pytest.raises(ValueError, match="method must be one of"):
            fn(board, 1, 5, method="fast")
    with pytest.raises(ValueError, match="method must be one of"):
        cell_values(board, 1, 5, "freestyle", method="fast")
