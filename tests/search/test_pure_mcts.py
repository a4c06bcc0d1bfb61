"""Pure MCTS (UCT with random playouts), the classic baseline: it visits every child once
before any twice, takes wins in one, blocks fours, and 4x the playouts beats 1x."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from search_helpers import four_positions

import gomoku_jax
from gomoku_jax import agents, search
from gomoku_jax.eval import run_match

GOMOKU = gomoku_jax.make("gomoku", board_size=7, win_length=4)


@functools.lru_cache(maxsize=None)
def searcher(env, simulations: int):
    """Pure MCTS's jitted search, (states, key) -> SearchOutput, with random playouts."""
    algorithm = search.make("pure_mcts")
    evaluator = agents.evaluator_registry.make("rollout", env)
    return jax.jit(lambda s, k: algorithm.search(env, evaluator, None, s, k, simulations))


def run(env, states, simulations, seed=0):
    return searcher(env, simulations)(states, jax.random.key(seed))


def test_every_child_is_visited_once_before_any_is_revisited():
    """A fresh tree's nodes are its simulations in order: the first L (L the legal moves,
    about 40 here, fewer than the 64 simulations) are the root's children, one per legal
    move, and the next one is the first below them. (Positions without a win in one: a
    winning child would be chosen again at once.)"""
    states, _ = four_positions(GOMOKU, "block", 8, seed=2)
    tree = jax.device_get(run(GOMOKU, states, 64).tree)
    legal = np.asarray(states.legal_action_mask)
    for b in range(8):
        count = int(legal[b].sum())
        assert count < 64
        np.testing.assert_array_equal(tree.parents[b, 1:count + 1], 0)
        assert sorted(tree.action_from_parent[b, 1:count + 1]) == np.flatnonzero(legal[b]).tolist()
        assert tree.parents[b, count + 1] > 0
    visits = tree.children_visits[:, 0]
    assert (visits[legal] >= 1).all() and (visits[~legal] == 0).all()


def test_takes_wins_in_one():
    """Every root child is visited once, and a child that wins the game at once is always
    chosen: with visits spread thin (about 40 moves, 64 playouts) the most visited child
    alone would miss most of these (4 of 16 at 100 playouts, measured before that rule)."""
    states, answers = four_positions(GOMOKU, "win", 8, seed=1)
    actions = np.asarray(run(GOMOKU, states, 64).action)
    assert answers[np.arange(8), actions].all()


def test_blocks_fours_with_the_reference_budget():
    """1600 playouts (the reference ladder's range: 1000 ... 5000) on 7x7: the lone block
    of the opponent's four (1 move of ~40; measured 14 of these 16, and 3 of 16 at 400
    playouts; experiments/pure_mcts.py has the ladder)."""
    states, answers = four_positions(GOMOKU, "block", 16, seed=2)
    actions = np.asarray(run(GOMOKU, states, 1600).action)
    assert answers[np.arange(16), actions].sum() >= 13


@pytest.mark.slow
def test_four_times_the_playouts_beats_one_time_in_the_arena():
    env = gomoku_jax.make("pgx/connect_four")
    result = run_match(env, agents.make("pure_mcts", num_simulations=64),
                       agents.make("pure_mcts", num_simulations=16), jax.random.key(0), 8)
    assert result.games == 16 and result.score >= 0.7, result.summary()
    assert result.openings == ((),) and result.game["id"] == "pgx/connect_four"
    assert result.mean_length >= 7  # four in a row needs at least 7 moves
