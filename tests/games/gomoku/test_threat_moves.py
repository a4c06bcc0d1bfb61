"""Gomoku's root threat search (`threat_moves.forcing_moves`, the `forcing_moves` hook):
the move it plays starts a real VCF, the root it leaves refutes the opponent's, checked with
the exact solver's VCF (`Solver.vcf_*`) and on the shipped suite's VCF puzzles."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

from gomoku_jax.agents import registry
from gomoku_jax.games.gomoku import tactics_suite
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.positions import from_board
from gomoku_jax.games.gomoku.solver import Solver
from gomoku_jax.games.gomoku.threat_moves import forcing_moves as threat_forcing_moves

N = 9


BATCH = 24  # test_batch_equals_one_board_at_a_time's boards


@functools.lru_cache(maxsize=None)
def _searches():
    """Every threat search of this file on N x N boards, in one compiled program (one
    program compiles in less time than its parts apart): (one, batch) -> {"hook": the
    env's hook on `one` (a batch of one), "vmap" / "lax_map": `forcing_moves` on `batch`
    (BATCH boards) in either layout}."""
    env = Gomoku(N)

    def run(one, batch):
        return {"hook": env.forcing_moves(one, max_nodes=512),
                **{name: threat_forcing_moves(batch, max_nodes=512, one_board_at_a_time=by_one)
                   for name, by_one in (("vmap", False), ("lax_map", True))}}

    return jax.jit(run)


def searches(one=None, batch=None) -> dict:
    """`_searches` of a state (`one`) and of a batch of BATCH states (`batch`); either
    left out is the empty board (nothing to search)."""
    empty = _empty()
    one = jax.tree.map(lambda x: x[None], empty if one is None else one)
    if batch is None:
        batch = jax.tree.map(lambda x: np.stack([x] * BATCH), empty)
    return _searches()(one, batch)


@functools.lru_cache(maxsize=None)
def _empty():
    return jax.device_get(Gomoku(N).init(jax.random.key(0)))


def hook(state):
    """The hook on one state (a batch of one): (win, allowed) of that state."""
    win, allowed = searches(one=state)["hook"]
    return win[0], allowed[0]


def random_positions(seed: int, count: int, n: int = N):
    """Boards from random near-stone play (`tactics_suite.random_position`) with no five on them
    and no five cell for either side (a five cell is the trivial case)."""
    rng = np.random.default_rng(seed)
    solver = Solver(n, 5)
    out = []
    while len(out) < count:
        board = tactics_suite.random_position(rng, n, int(rng.integers(12, 30)))
        if board is None:
            continue
        flat = board.reshape(-1)
        if np.any(np.abs(flat[solver.windows].sum(axis=1)) == 5):
            continue
        me = 1 if np.sum(board == 1) == np.sum(board == -1) else -1
        if solver.five_cells(flat, me).size or solver.five_cells(flat, -me).size:
            continue
        out.append((board, me))
    return out


@pytest.fixture(scope="module")
def positions():
    return random_positions(0, 60)


@pytest.fixture(scope="module")
def alone(positions):
    """The hook's (win, allowed) of each position, searched alone (a batch of one)."""
    config = Gomoku(N).config
    return [jax.device_get(hook(from_board(config, board, me))) for board, me in positions]


def test_win_starts_a_vcf_and_allowed_refutes(positions, alone):
    solver = Solver(N, 5)
    wins = threatened = 0
    for (board, me), (win, allowed) in zip(positions, alone):
        win = int(win)
        own = solver.vcf_depth(board, me, 17)
        theirs = solver.vcf_depth(board, -me, 17)
        if win >= 0:
            wins += 1
            assert own is not None
            assert win in solver.vcf_moves(board, me, own)  # a shortest VCF's first move
        elif theirs is not None:
            threatened += 1
            legal = board.reshape(-1) == 0
            refuting = [m for m in np.flatnonzero(legal) if not _after(solver, board, m, me)]
            if refuting:  # every move kept refutes (our checks are exact when they finish)
                kept = np.flatnonzero(allowed)
                assert set(kept) <= set(refuting) or set(kept) == set(np.flatnonzero(legal))
        else:
            assert np.array_equal(allowed, board.reshape(-1) == 0)
    assert wins >= 3 and threatened >= 3, (wins, threatened)


def _after(solver, board, m, me) -> bool:
    """Whether the opponent has a VCF after `me` plays m."""
    b = board.reshape(-1).copy()
    b[m] = me
    if solver.five_cells(b, me).size and np.any(
            np.abs(b[solver.windows].sum(axis=1)) == 5):
        return False  # m made our five: the game is over
    return solver.vcf_depth(b, -me, 17) is not None


def test_no_threats_leave_the_root_alone():
    env = Gomoku(N)
    state = env.init(jax.random.key(0))
    win, allowed = hook(state)
    assert int(win) == -1 and np.array_equal(np.asarray(allowed),
                                             np.asarray(state.legal_action_mask))


def test_search_agent_plays_the_shipped_vcf_puzzles():
    """One simulation is enough: the move comes from the threat search (and without it the
    same agent misses most of them). Eight of each category, in one batch."""
    suite = tactics_suite.default_suite()
    puzzles = [p for category in ("fours_7", "fours_9")
               for p in suite.by_category()[category][:8]]
    assert len(puzzles) == 16
    env = suite.env
    agent = registry.make("mcts", num_simulations=1).bind(env)
    states = jax.tree.map(lambda *x: np.stack(x),
                          *[from_board(suite.config, p.board, p.to_move) for p in puzzles])
    keys = jax.random.split(jax.random.key(0), len(puzzles))
    act = jax.jit(agent.act_batch)
    actions = np.asarray(act(None, jax.vmap(agent.init)(keys), states, keys)[0])
    assert all(int(a) in p.solutions for a, p in zip(actions, puzzles))


@pytest.mark.parametrize("one_board_at_a_time", [False, True], ids=["vmap", "lax_map"])
def test_batch_equals_one_board_at_a_time(positions, alone, one_board_at_a_time):
    """Neither layout changes an answer (the batch-level conds of the vmapped one, the
    per-board conds under lax.map): a batch mixing threatened, winning and quiet boards
    gives each board what it gets alone."""
    config = Gomoku(N).config
    states = [from_board(config, b, me) for b, me in positions[:BATCH]]
    batch = jax.tree.map(lambda *x: np.stack(x), *states)
    wins, allowed = searches(batch=batch)["lax_map" if one_board_at_a_time else "vmap"]
    for i, (win, mask) in enumerate(alone[:BATCH]):
        assert int(wins[i]) == int(win)
        assert np.array_equal(np.asarray(allowed[i]), np.asarray(mask))
