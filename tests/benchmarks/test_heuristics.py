"""The heuristics benchmark runs end to end on a tiny configuration, and its NumPy reference
(seed 000's double loop) computes the same proximity mask as `features.proximity_mask`."""

import jax
import jax.numpy as jnp
import numpy as np

import gomoku_jax
from gomoku_jax.benchmarks import heuristics
from gomoku_jax.features import proximity_mask


def _rate(text: str) -> float:
    """'12.3 k' -> 12300.0 (the table's `fmt_rate`)."""
    scale = {"k": 1e3, "M": 1e6}
    parts = text.split()
    return float(parts[0]) * (scale[parts[1]] if len(parts) > 1 else 1.0)


def test_tiny_run_reports_every_kernel():
    lines = []
    rows = heuristics.run_benchmark(board_size=9, batches=[2], repeats=1, numpy_boards=2,
                                    log=lines.append)
    assert [r[0] for r in rows] == ["proximity mask", "proximity mask", "pattern features",
                                    "heuristic move"]
    assert all(len(r) == 7 for r in rows)
    reference, *jax_rows = rows
    assert reference[1] == "seed NumPy double loop" and reference[2] == "1"
    assert reference[-1] == "1.0x" and _rate(reference[5]) > 0
    for row in jax_rows:
        assert row[1] == "gomoku_jax (jit + vmap)" and row[2] == "2"
        assert float(row[3]) > 0  # compile seconds
        assert _rate(row[4]) > 0 and _rate(row[5]) > 0
    assert jax_rows[0][6].endswith("x") and jax_rows[1][6] == jax_rows[2][6] == "-"
    assert len(lines) == len(rows)  # one log line per measurement


def test_random_positions_are_live_mid_game_boards():
    env = gomoku_jax.make("gomoku", board_size=9)
    pool = heuristics.random_positions(env, 6, seed=3)
    counts = np.asarray(pool.move_count)
    boards = np.asarray(pool.board)
    assert boards.shape == (6, 9, 9) and not np.asarray(pool.terminated).any()
    assert ((counts >= 15) & (counts <= 60)).all()
    np.testing.assert_array_equal(counts, (boards != 0).sum((1, 2)))


def _boards(seed: int) -> np.ndarray:
    """Random boards of 15x15 with 0 to 120 stones (the empty board and < 5 stones too)."""
    rng = np.random.default_rng(seed)
    out = []
    for stones in [0, 1, 4, 5, 6, 10, 20, 40, 80, 120, 225] + list(rng.integers(0, 60, 21)):
        board = np.zeros(225, np.int8)
        cells = rng.permutation(225)[:stones]
        board[cells] = rng.choice(np.array([1, -1], np.int8), size=len(cells))
        out.append(board.reshape(15, 15))
    return np.stack(out)


def test_seed_numpy_proximity_equals_proximity_mask():
    boards = _boards(0)
    ours = np.asarray(jax.jit(jax.vmap(proximity_mask))(jnp.asarray(boards)))
    for board, mask in zip(boards, ours):
        np.testing.assert_array_equal(heuristics.seed_proximity_numpy(board), mask)
    # The boards reach every weight: opening ones, 1, 0.5, 0.2, the far 0.05, and 0 on stones.
    for weight in (0.0, 1.0, 0.5, 0.2, 0.05):
        assert np.isclose(ours, weight).any()
