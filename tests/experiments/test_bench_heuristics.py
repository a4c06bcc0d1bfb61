"""experiments/bench_heuristics.py: its NumPy reference (seed 000's double loop) computes the
same proximity mask as `features.proximity_mask`, its scan reference player chooses among the
same moves as the heuristic player, and the smallest configuration runs end to end through
the command line with the side-by-side table it promises. No timed asserts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from experiment_scripts import load_script

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.games.gomoku.features import proximity_mask

bh = load_script("bench_heuristics")


def test_smallest_run_end_to_end(tmp_path, capsys):
    out = tmp_path / "heuristics.md"
    args = bh.build_parser().parse_args(
        ["--board-size", "9", "--batch-sizes", "2", "--repeats", "1", "--numpy-boards", "2",
         "--functions", "proximity,threats,move", "--out", str(out)])
    assert bh.main(args) == 0
    table = out.read_text()
    assert table.strip() in capsys.readouterr().out
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ")][1:]
    assert [r[0].lstrip("| ") for r in rows] == ["proximity mask", "proximity mask", "threats",
                                                  "threats", "heuristic move", "heuristic move"]
    reference, mask, threats_scan, threats_table, move_scan, move_table = rows
    assert reference[1:3] == ["seed NumPy double loop", "1"] and reference[-1] == "1.0x |"
    assert mask[1:3] == ["gomoku_jax (jit + vmap)", "2"] and mask[-1].endswith("x |")
    for scan, lookup in ((threats_scan, threats_table), (move_scan, move_table)):
        assert scan[1:3] == ["gomoku_jax scan (previous)", "2"] and scan[-1] == "1.0x |"
        assert lookup[1:3] == ["gomoku_jax table lookup", "2"]
        assert float(lookup[-1].rstrip("x |")) > 0
    assert all(len(row) == 7 for row in rows)
    assert len(rows) == bh.count_rows([2], ["proximity mask", "threats", "heuristic move"])
    assert "speed-up: CPU time of the reference row" in table


def test_the_scan_agent_plays_like_the_heuristic_agent():
    """The move rows' reference computes the same cell values (the table's come from the
    scan's definition), so both players pick their moves from the same best cells."""
    env = gomoku_jax.make("gomoku", board_size=9)
    pool = bh.random_positions(env, 8, seed=5)
    keys = jax.random.split(jax.random.key(0), 8)
    scan = bh.ScanHeuristicAgent().bind(env)
    table = agents.make("heuristic").bind(env)
    (_, _, a), (_, _, b) = (jax.jit(agent.act_batch)(None, None, pool, keys)
                            for agent in (scan, table))
    np.testing.assert_array_equal(a["policy"] > 0, b["policy"] > 0)
    np.testing.assert_allclose(a["value"], b["value"], rtol=1e-6, atol=1e-6)


def test_random_positions_are_live_mid_game_boards():
    env = gomoku_jax.make("gomoku", board_size=9)
    pool = bh.random_positions(env, 4, seed=3)
    counts, boards = np.asarray(pool.move_count), np.asarray(pool.board)
    assert boards.shape == (4, 9, 9) and not np.asarray(pool.terminated).any()
    assert ((counts >= 15) & (counts <= 60)).all()
    np.testing.assert_array_equal(counts, (boards != 0).sum((1, 2)))


def _boards(seed: int) -> np.ndarray:
    """Random 15x15 boards with 0 to 225 stones (the empty board and < 5 stones too)."""
    rng = np.random.default_rng(seed)
    out = []
    for stones in [0, 1, 4, 5, 6, 10, 20, 40, 80, 120, 225] + list(rng.integers(0, 60, 9)):
        board = np.zeros(225, np.int8)
        cells = rng.permutation(225)[:stones]
        board[cells] = rng.choice(np.array([1, -1], np.int8), size=len(cells))
        out.append(board.reshape(15, 15))
    return np.stack(out)


def test_seed_numpy_proximity_equals_proximity_mask():
    """The reference row is the same function as the one it is compared with."""
    boards = _boards(0)
    ours = np.asarray(jax.jit(jax.vmap(proximity_mask))(jnp.asarray(boards)))
    for board, mask in zip(boards, ours):
        np.testing.assert_array_equal(bh.seed_proximity_numpy(board), mask)
    # The boards reach every weight: opening ones, 1, 0.5, 0.2, the far 0.05, and 0 on stones.
    for weight in (0.0, 1.0, 0.5, 0.2, 0.05):
        assert np.isclose(ours, weight).any()


def test_bad_flags_exit_with_a_message():
    for argv in (["--functions", "scan"], ["--repeats", "0"], ["--batch-sizes", "0"]):
        with pytest.raises(SystemExit, match="error"):
            bh.main(bh.build_parser().parse_args(argv))
