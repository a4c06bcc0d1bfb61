"""DeepGomoku's HeuristicScore (`games.gomoku.features.heuristic_score`, seed 003).

- The numbers printed in the seed's notebook, the notebook's qualitative claims, and the
  two documented places where the notebook's printout does not follow its definition.
- An exhaustive check of `cscore` over all 3^8 line vectors against a pure-Python reading
  of the definition (adversary-free range, best 5-window count, number of windows).
- f_range masks, config validation, jit / vmap of the line functions.
- heuristic_score_map on random boards against a slow reference that extracts each
  cell's four seed 8-vectors with Python loops and scores them with the public
  `total_score`.
"""

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gomoku_jax.games.gomoku.features import (
    HeuristicScoreConfig,
    cscore,
    f_range,
    heuristic_score_map,
    score,
    total_score,
)

TOL = dict(rtol=1e-6, atol=1e-6)
BATCH = 32

# Jitted once (per input shape) for the whole module: compiling is most of the time here.
_score = jax.jit(score, static_argnames=("width",))
_cscore = jax.jit(cscore, static_argnames=("width",))
_total = jax.jit(total_score, static_argnames=("width",))
_f_range = jax.jit(f_range)


def s(line) -> float:
    return float(_score(jnp.asarray(line, jnp.int32)))


def total(lines) -> float:
    return float(_total(jnp.asarray(lines, jnp.int32)))


def cs(line, width=5) -> tuple[int, int]:
    c, n = _cscore(jnp.asarray(line, jnp.int32), width=width)
    return int(c), int(n)


# --------------------------------------------------------------------------------------
# The notebook's numbers and claims
# --------------------------------------------------------------------------------------


def test_notebook_scores():
    assert s([2, 1, 1, 0, 1, 0, 0, 2]) == pytest.approx(3.0, abs=1e-6)
    assert s([1, 1, 0, 1, 0, 0, 2, 0]) == pytest.approx(3.0, abs=1e-6)
    assert s([0, 1, 1, 0, 0, 2, 0, 2]) == pytest.approx(2.29739670999407, abs=1e-6)
    crossing = [[0, 0, 1, 0, 1, 0, 0, 2], [1, 1, 0, 0, 0, 2, 0, 2]]
    defended = [[0, 2, 1, 0, 1, 0, 0, 2], [1, 1, 0, 0, 0, 2, 0, 2]]
    assert total(crossing) == pytest.approx(3.3185059187118733, abs=1e-6)
    assert total(defended) == pytest.approx(3.084421650815882, abs=1e-6)


def test_documented_discrepancies_with_the_notebook_printout():
    # The notebook prints (3, 2) and 3.446; only the window [1,1,0,*,1] holds three stones.
    assert cs([0, 1, 1, 0, 1, 0, 0, 2]) == (3, 1)
    assert s([0, 1, 1, 0, 1, 0, 0, 2]) == pytest.approx(3.0, abs=1e-6)
    # The notebook prints 2.297 (2, 2); three windows hold two stones: 2 * 3 ** (1/5).
    assert cs([0, 0, 1, 1, 0, 0, 0, 2]) == (2, 3)
    assert s([0, 0, 1, 1, 0, 0, 0, 2]) == pytest.approx(2 * 3 ** 0.2, abs=1e-6)
    assert s([0, 0, 1, 1, 0, 0, 0, 2]) == pytest.approx(2.491, abs=5e-4)


def test_an_adversary_at_one_end_lowers_a_lines_score():
    open_two = [0, 0, 1, 1, 0, 0, 0, 0]      # . . x x * . . . .
    closed = [2, 0, 1, 1, 0, 0, 0, 0]        # o . x x * . . . .
    assert s(open_two) == pytest.approx(2 * 3 ** 0.2, abs=1e-6)
    assert s(closed) == pytest.approx(2 * 2 ** 0.2, abs=1e-6)
    assert s(closed) < s(open_two)
    # The notebook's own pair: by the definition the adversary at the far end costs no
    # window with three stones, so the two scores are equal (the notebook printed 3.446
    # for the first, see the documented discrepancy).
    assert s([0, 1, 1, 0, 1, 0, 0, 2]) == s([2, 1, 1, 0, 1, 0, 0, 2])
    # In general an adversary never raises a score (default kappa1): every line vector
    # with an empty or own cell turned into an opponent stone.
    lines = all_lines()
    base = np.asarray(_score(jnp.asarray(lines)))
    for i in range(8):
        blocked = lines.copy()
        blocked[:, i] = 2
        assert np.all(np.asarray(_score(jnp.asarray(blocked))) <= base + 1e-6), i


def test_the_middle_of_a_three_scores_higher_than_its_edge():
    # One board line . . x x _ x . . . . with the broken three x x _ x: the cell inside
    # the three fills it to x x x x (two 5-windows through it hold the three stones); the
    # cells at its edges make x x _ x x / x x x _ x (one such window each).
    middle = [0, 0, 1, 1, 1, 0, 0, 0]   # . . x x * x . . .
    right_edge = [1, 1, 0, 1, 0, 0, 0, 0]  # x x . x * . . . .
    left_edge = [0, 0, 0, 0, 1, 1, 0, 1]   # . . . . * x x . x
    assert s(middle) == pytest.approx(3 * 2 ** 0.2, abs=1e-6)
    assert s(right_edge) == pytest.approx(3.0, abs=1e-6)
    assert s(left_edge) == pytest.approx(3.0, abs=1e-6)
    assert s(middle) > s(right_edge) and s(middle) > s(left_edge)
    # The notebook's own example: equal by the definition (3.0 each), since the
    # notebook's 3.446 for the first line is the documented miscount.
    assert s([0, 1, 1, 0, 1, 0, 0, 2]) == pytest.approx(s([1, 1, 0, 1, 0, 0, 2, 0]))


def test_crossing_threats_score_more_than_either_alone():
    a, b = [0, 0, 1, 0, 1, 0, 0, 2], [1, 1, 0, 0, 0, 2, 0, 2]
    both = total([a, b])
    assert both > s(a) and both > s(b)
    assert total([a, a]) == pytest.approx(2 ** (1 / 1.6) * s(a), abs=1e-5)
    # The combination is the kappa0-norm of the line scores.
    assert both == pytest.approx((s(a) ** 1.6 + s(b) ** 1.6) ** (1 / 1.6), abs=1e-6)
    # Four crossing lines: more again.
    assert total([a, [0] * 8]) == pytest.approx(s(a), abs=1e-6)  # a quiet line adds 0


def test_a_defensive_stone_lowers_the_total():
    attack = [[0, 0, 1, 0, 1, 0, 0, 2], [1, 1, 0, 0, 0, 2, 0, 2]]
    for i in range(8):
        if attack[0][i] == 0:
            defended = [list(attack[0]), attack[1]]
            defended[0][i] = 2
            assert total(defended) <= total(attack) + 1e-6
    defended = [[0, 2, 1, 0, 1, 0, 0, 2], attack[1]]
    assert total(defended) < total(attack)


# --------------------------------------------------------------------------------------
# cscore against the definition, exhaustively
# --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _all_lines() -> np.ndarray:
    return np.array(list(itertools.product((0, 1, 2), repeat=8)), np.int32)


def all_lines() -> np.ndarray:
    return _all_lines().copy()


def reference_cscore(line, width: int = 5) -> tuple[int, int]:
    """(c, n) straight from the notebook's description."""
    half = len(line) // 2
    full = list(line[:half]) + [0] + list(line[half:])  # the empty candidate in the middle
    lo = half
    while lo > 0 and full[lo - 1] != 2:
        lo -= 1
    hi = half
    while hi < len(full) - 1 and full[hi + 1] != 2:
        hi += 1
    counts = [full[st:st + width].count(1)
              for st in range(half - width + 1, half + 1)
              if st >= lo and st + width - 1 <= hi]
    if not counts:
        return 0, 0
    return max(counts), counts.count(max(counts))


def test_cscore_matches_the_definition_on_every_line():
    lines = all_lines()
    c, n = (np.asarray(x) for x in _cscore(jnp.asarray(lines)))
    want = np.array([reference_cscore(line.tolist()) for line in lines])
    np.testing.assert_array_equal(c, want[:, 0])
    np.testing.assert_array_equal(n, want[:, 1])
    got = np.asarray(_score(jnp.asarray(lines)))
    np.testing.assert_allclose(got, want[:, 0] * want[:, 1].astype(np.float64) ** 0.2, **TOL)


def test_cscore_of_other_widths():
    # width 4 on 6-vectors (k = 4): . . x * x . o -> windows [. . x *], [. x * x],
    # [x * x .] ([* x . o] holds the adversary)
    assert cs([0, 0, 1, 1, 0, 2], 4) == reference_cscore([0, 0, 1, 1, 0, 2], 4) == (2, 2)
    # 4 free cells between two adversaries: no window fits, (0, 0). With 5: one empty one.
    assert cs([2, 2, 2, 0, 0, 0, 2, 2]) == (0, 0)
    assert cs([2, 2, 0, 0, 0, 0, 2, 2]) == (0, 1)
    assert s([2, 2, 2, 0, 0, 0, 2, 2]) == s([2, 2, 0, 0, 0, 0, 2, 2]) == 0.0
    assert s([2, 2, 2, 2, 2, 2, 2, 2]) == 0.0
    assert total([[2] * 8, [2] * 8]) == 0.0


# --------------------------------------------------------------------------------------
# f_range, config, jit / vmap
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("line, mask", [
    ([0, 1, 1, 0, 1, 0, 2, 2], "1111111.."),   # the notebook's [0,1,1,0,1,0]
    ([0, 0, 0, 0, 0, 0, 0, 0], "111111111"),
    ([2, 0, 0, 0, 0, 0, 0, 2], ".1111111."),
    ([0, 0, 2, 1, 1, 2, 0, 0], "...111..."),
    ([2, 2, 2, 2, 2, 2, 2, 2], "....1...."),
    ([1, 1, 1, 2, 0, 0, 0, 0], "....11111"),
    ([0, 2, 0, 0, 0, 0, 2, 0], "..11111.."),
])
def test_f_range(line, mask):
    got = np.asarray(_f_range(jnp.asarray(line)))
    assert got.dtype == np.bool_ and got.shape == (9,)
    assert "".join("1" if x else "." for x in got) == mask


def test_f_range_batched_and_under_jit():
    lines = all_lines()
    got = np.asarray(_f_range(jnp.asarray(lines)))
    assert got.shape == (len(lines), 9) and np.all(got[:, 4])
    for line, m in zip(lines[::5], got[::5]):
        full = list(line[:4]) + [0] + list(line[4:])
        # the range is contiguous, contains the centre and holds no adversary
        idx = np.flatnonzero(m)
        assert np.all(np.diff(idx) == 1) and all(full[i] != 2 for i in idx)
        # and it cannot grow: the cells just outside it are adversaries or the line's end
        assert idx[0] == 0 or full[idx[0] - 1] == 2
        assert idx[-1] == 8 or full[idx[-1] + 1] == 2


@pytest.mark.parametrize("kappa0, kappa1", [(0.0, 5.0), (1.6, 0.0), (-1.0, 5.0), (1.6, -2.0)])
def test_config_rejects_non_positive_kappas(kappa0, kappa1):
    with pytest.raises(ValueError):
        HeuristicScoreConfig(kappa0=kappa0, kappa1=kappa1)


def test_config_defaults_and_hashing():
    assert HeuristicScoreConfig() == HeuristicScoreConfig(1.6, 5.0)
    assert hash(HeuristicScoreConfig()) == hash(HeuristicScoreConfig(1.6, 5.0))


def test_line_functions_under_jit_and_vmap():
    lines = jnp.asarray(all_lines().reshape(-1, 3, 8))  # every line, 3 to a cell
    per_line = np.asarray(_score(lines.reshape(-1, 8))).reshape(-1, 3)
    # total_score over a batch, jitted, equals the vmap of the unbatched function and the
    # kappa0-combination of the per-line scores.
    batched = np.asarray(_total(lines))
    vmapped = np.asarray(jax.jit(jax.vmap(total_score))(lines))
    np.testing.assert_allclose(vmapped, batched, **TOL)
    np.testing.assert_allclose(batched, (per_line.astype(np.float64) ** 1.6).sum(-1)
                               ** (1 / 1.6), rtol=1e-5, atol=1e-6)
    # cscore / score / f_range under vmap equal their batched forms.
    c, n = jax.jit(jax.vmap(cscore))(lines.reshape(-1, 8))
    c2, n2 = _cscore(lines)
    np.testing.assert_array_equal(np.asarray(c).reshape(-1, 3), np.asarray(c2))
    np.testing.assert_array_equal(np.asarray(n).reshape(-1, 3), np.asarray(n2))
    ranges = jax.jit(jax.vmap(f_range))(lines.reshape(-1, 8))
    np.testing.assert_array_equal(np.asarray(ranges).reshape(-1, 3, 9),
                                  np.asarray(_f_range(lines)))
    # kappas may be traced.
    traced = jax.jit(lambda x, k0, k1: total_score(x, k0, k1))(lines, 2.0, 3.0)
    want = (np.asarray(_cscore(lines)[0], np.float64)
            * np.asarray(_cscore(lines)[1], np.float64) ** (1 / 3.0))
    np.testing.assert_allclose(np.asarray(traced), ((want ** 2).sum(-1)) ** 0.5,
                               rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------------------
# heuristic_score_map against a slow reference
# --------------------------------------------------------------------------------------

DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def seed_vectors(board: np.ndarray, colour: int, k: int = 5) -> np.ndarray:
    """int32[N, N, 4, 2(k-1)]: the seed's line vectors of every cell, by Python loops.

    Entry i < k-1 is the cell at distance k-1-i on one side, entry i >= k-1 the cell at
    distance i-k+2 on the other; 1 own, 0 empty, 2 opponent or off the board."""
    n = board.shape[0]
    h = k - 1
    out = np.zeros((n, n, 4, 2 * h), np.int32)
    for r in range(n):
        for c in range(n):
            for d, (dr, dc) in enumerate(DIRECTIONS):
                for i in range(2 * h):
                    dist = i - h if i < h else i - h + 1
                    rr, cc = r + dist * dr, c + dist * dc
                    if not (0 <= rr < n and 0 <= cc < n):
                        out[r, c, d, i] = 2
                    elif board[rr, cc] == colour:
                        out[r, c, d, i] = 1
                    elif board[rr, cc] == 0:
                        out[r, c, d, i] = 0
                    else:
                        out[r, c, d, i] = 2
    return out


def reference_map(boards, colours, k: int, config: HeuristicScoreConfig) -> np.ndarray:
    vectors = np.stack([seed_vectors(b, int(c), k) for b, c in zip(boards, colours)])
    totals = np.asarray(_total(jnp.asarray(vectors), config.kappa0, config.kappa1, width=k))
    return np.where(np.asarray(boards) == 0, totals, 0.0)


@functools.lru_cache(maxsize=None)
def _map_fn(n: int, k: int, config: HeuristicScoreConfig):
    del n
    return jax.jit(jax.vmap(lambda b, c: heuristic_score_map(b, c, k, config)))


def random_boards(rng, count, n):
    boards = np.zeros((count, n, n), np.int8)
    for i in range(count):
        density = rng.uniform(0.05, 0.7)
        u = rng.random((n, n))
        black = rng.uniform(0.2, 0.8)
        boards[i] = np.where(u < density * black, 1, np.where(u < density, -1, 0))
    return boards


MAP_CASES = [
    pytest.param(9, 5, HeuristicScoreConfig(), id="9x9-k5-default"),
    pytest.param(15, 5, HeuristicScoreConfig(), id="15x15-k5-default"),
    pytest.param(9, 5, HeuristicScoreConfig(kappa0=2.0, kappa1=3.0), id="9x9-k5-kappa2-3"),
    pytest.param(7, 4, HeuristicScoreConfig(), id="7x7-k4-default"),
]


@pytest.mark.parametrize("n, k, config", MAP_CASES)
def test_heuristic_score_map_matches_reference(n, k, config):
    rng = np.random.default_rng(n * 10 + k + int(config.kappa0 * 10))
    boards = random_boards(rng, BATCH, n)
    colours = np.where(np.arange(BATCH) % 2, 1, -1).astype(np.int8)
    got = np.asarray(_map_fn(n, k, config)(jnp.asarray(boards), jnp.asarray(colours)))
    assert got.shape == boards.shape and got.dtype == np.float32
    want = reference_map(boards, colours, k, config)
    np.testing.assert_allclose(got, want, **TOL)
    assert np.all(got[boards != 0] == 0.0)
    assert np.count_nonzero(got) > BATCH * 5  # the sample isn't trivially zero
    assert np.all(got >= 0.0)


def test_heuristic_score_map_hand_example():
    """The notebook's crossing lines, laid out on a board around the cell (7, 7)."""
    board = np.zeros((15, 15), np.int8)
    # horizontal [0,0,1,0,1,0,0,2]: own at distance 2 left and 1 right, opponent at 4 right
    board[7, 5], board[7, 8], board[7, 11] = 1, 1, -1
    # vertical [1,1,0,0,0,2,0,2]: own at distance 4, 3 above; opponent at 2, 4 below
    board[3, 7], board[4, 7], board[9, 7], board[11, 7] = 1, 1, -1, -1
    boards = np.zeros((BATCH, 15, 15), np.int8)
    boards[0], boards[1] = board, board
    boards[1, 6, 6] = 1  # unrelated own stone on the diagonal: only raises the score
    colours = np.ones(BATCH, np.int8)
    got = np.asarray(_map_fn(15, 5, HeuristicScoreConfig())(jnp.asarray(boards),
                                                             jnp.asarray(colours)))
    assert got[0, 7, 7] == pytest.approx(3.3185059187118733, abs=1e-5)
    assert got[1, 7, 7] > got[0, 7, 7]
    # From white's side the same cell sees only opponents near it.
    colours[0] = -1
    got_white = np.asarray(_map_fn(15, 5, HeuristicScoreConfig())(jnp.asarray(boards),
                                                                   jnp.asarray(colours)))
    assert got_white[0, 7, 7] < got[0, 7, 7]
