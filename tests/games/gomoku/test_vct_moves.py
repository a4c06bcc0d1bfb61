"""The root threat search with a VCT (`vct_moves.forcing_moves`, the hook with `vct_nodes`):
the move it plays wins within 5 plies on positions whose only win is a VCT (labelled by the
exact solver), and the root it leaves against the opponent's VCT is checked by the solver."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

from gomoku_jax.agents import registry
from gomoku_jax.games.gomoku import tactics_suite
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.solver import Solver

N = 9


@functools.lru_cache(maxsize=None)
def hook():
    """The hook with the VCT and its defence, one compile for the file."""
    fn = jax.jit(functools.partial(Gomoku(N).forcing_moves, max_nodes=256, vct_nodes=64,
                                   vct_defend=True))

    def one(state):
        win, allowed = fn(jax.tree.map(lambda x: x[None], state))
        return int(win[0]), np.asarray(allowed[0])
    return one


@pytest.mark.slow
def test_plays_the_vct_of_solver_labelled_positions():
    suite = tactics_suite.generate(N, 2, seed=0, categories=["vct"], stones=(8, 24))
    assert len(suite.puzzles) == 2
    env = Gomoku(N)
    for p in suite.puzzles:
        # (the label says: no VCF within 9 plies, no four among the winning moves)
        win, allowed = hook()(env.from_board(p.board, p.to_move))
        assert win in p.solutions, p


def test_defends_against_a_double_three():
    # Black threatens the double three at (4,5); white (to move) has nothing of its own.
    # (White on (4,5) is no refutation here: black still has longer VCTs after it.)
    board = np.zeros((N, N), np.int8)
    for r, c in [(4, 3), (4, 4), (2, 5), (3, 5), (8, 8)]:
        board[r, c] = 1
    for r, c in [(0, 0), (0, 8), (8, 0), (0, 4)]:
        board[r, c] = -1
    state = Gomoku(N).from_board(board, -1)
    win, allowed = hook()(state)
    assert win == -1
    legal = np.asarray(state.legal_action_mask)
    assert 0 < allowed.sum() < legal.sum() and not np.any(allowed & ~legal)
    solver = Solver(N, 5)
    assert solver.wins_within(board, 1, 5)
    for m in np.flatnonzero(allowed):  # every move kept stops black's win within 5 plies
        after = board.reshape(-1).copy()
        after[m] = -1
        assert not solver.wins_within(after, 1, 5), m
    # (Without the defence the VCT leaves the root as the VCF does:
    # tests/experiments/test_bench_vct.py, which compiles that hook anyway.)


def test_agent_options():
    with pytest.raises(ValueError, match="threat_search"):
        registry.make("mcts", threat_search=0, vct_nodes=8)
    with pytest.raises(ValueError, match="vct_nodes"):
        registry.make("mcts", vct_defend=True)
    with pytest.raises(ValueError, match="no VCT"):
        registry.make("mcts", vct_nodes=8).bind(registry_env("fauxgo"))


def registry_env(name: str):
    import gomoku_jax

    return gomoku_jax.make(name)
