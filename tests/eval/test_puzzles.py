"""Solve rates: an agent's moves counted against each puzzle's solutions, for any game."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from conftest import EndCell

import gomoku_jax
from gomoku_jax.eval.puzzles import solve_rates

CONNECT_FOUR = gomoku_jax.make("pgx/connect_four")


def test_counts_moves_in_the_solution_sets_by_category():
    start = CONNECT_FOUR.init(jax.random.key(0))
    after = CONNECT_FOUR.from_moves([0, 6])
    puzzles = [("a", "first", start, (0,)),       # EndCell plays column 0: solved
               ("b", "first", start, (3, 4)),     # not solved
               ("c", "second", after, (0, 1))]    # column 0 again: solved
    batches = []
    result = solve_rates(CONNECT_FOUR, EndCell(), puzzles, jax.random.key(1), batch_size=2,
                         latency_samples=1, on_puzzles=batches.append)
    assert batches == [2, 1]  # the puzzles of each batch, as it is played
    assert result.solved == {"first": (1, 2), "second": (1, 1)}
    assert result.actions == {"a": 0, "b": 0, "c": 0}
    assert result.total == (2, 3) and result.rate == pytest.approx(2 / 3)
    assert np.isfinite(result.seconds_per_move) and result.batch_seconds_per_move > 0


def test_needs_puzzles():
    with pytest.raises(ValueError, match="no puzzles"):
        solve_rates(CONNECT_FOUR, EndCell(), [], jax.random.key(0))
