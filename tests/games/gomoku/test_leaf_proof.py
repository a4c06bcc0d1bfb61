"""Gomoku's leaf proofs (`leaf_proof.py`, the `Env.leaf_proof` hook of the MCTS-Solver):
every +1 is a real VCF and every -1 a real unanswerable double threat, checked with the
NumPy solver on random boards; shallow VCFs are found; both layouts agree."""

from __future__ import annotations

import functools

import jax
import numpy as np

from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.leaf_proof import leaf_proof
from gomoku_jax.games.gomoku.solver import Solver

N = 9
COUNT = 48
NODES = 256


@functools.lru_cache(maxsize=None)
def boards_and_proofs(rule: str = "freestyle"):
    """(boards int8[COUNT, N, N], side to move int[COUNT], {layout: proof int8[COUNT]}) on
    random live boards of 14-30 stones in the central 7x7 (many with fours and threes)."""
    env = Gomoku(N, rule=rule)
    rng = np.random.default_rng(7)
    states, boards = [], []
    while len(states) < COUNT:
        board = np.zeros((N, N), np.int8)
        cells = rng.permutation([r * N + c for r in range(1, N - 1) for c in range(1, N - 1)])
        stones = int(rng.integers(14, 31))
        board.reshape(-1)[cells[:stones]] = np.where(np.arange(stones) % 2 == 0, 1, -1)
        try:
            states.append(env.from_board(board))
        except ValueError:  # a board with a five already
            continue
        boards.append(board)
    batch = jax.tree.map(lambda *x: np.stack(x), *states)
    run = jax.jit(lambda s: {"hook": env.leaf_proof(s, NODES),
                             **{name: leaf_proof(s, NODES, one_board_at_a_time=by_one)
                                for name, by_one in (("vmap", False), ("lax_map", True))}})
    return np.stack(boards), np.asarray(batch.color), jax.tree.map(np.asarray, run(batch))


def test_proofs_are_sound_and_find_shallow_vcfs():
    """+1: the solver confirms a VCF for the side to move (within 17 plies, the proof's 8
    fours); -1: the opponent has two five cells and the side to move none; a VCF within 5
    plies is always proven; each kind occurs."""
    boards, colours, proofs = boards_and_proofs()
    solver = Solver(N)
    proof = proofs["hook"]
    for board, me, p in zip(boards, colours, proof):
        me, flat = int(me), board.reshape(-1)
        lost = len(solver.five_cells(flat, -me)) >= 2 and not len(solver.five_cells(flat, me))
        if p == 1:
            assert solver.vcf_wins_within(board, me, 17)
        else:
            assert not solver.vcf_wins_within(board, me, 5)
        assert (p == -1) == lost
    assert {1, -1, 0} <= set(proof.tolist())


def test_layouts_agree():
    _, _, proofs = boards_and_proofs()
    np.testing.assert_array_equal(proofs["vmap"], proofs["hook"])
    np.testing.assert_array_equal(proofs["lax_map"], proofs["hook"])


def test_caro_proves_no_loss_and_a_finished_game_nothing():
    """Under caro a stone past a run's end can kill a five cell: no -1 there. A finished
    game proves nothing (the search reads the game's end)."""
    _, _, proofs = boards_and_proofs("caro")
    assert -1 not in proofs["hook"].tolist()
    env = Gomoku(N)
    state = env.init(jax.random.key(0))
    for a in (0, 9, 1, 10, 2, 11, 3, 12, 4):  # black's five on the top row
        state = env.step(state, a)
    assert bool(state.terminated)
    one = jax.tree.map(lambda x: x[None], state)
    assert int(leaf_proof(one, 8)[0]) == 0
