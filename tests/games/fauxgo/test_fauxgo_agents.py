"""The generic search, agents and arena play Faux Go without a line of Faux Go code: PUCT
with the rollout evaluator beats random, and every search algorithm returns legal moves
(the pass included) on live positions."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.eval import run_match

ENV = gomoku_jax.make("fauxgo", board_size=5)


def test_puct_with_rollouts_beats_random():
    result = run_match(ENV, agents.make("mcts", num_simulations=16, evaluator="rollout"),
                       agents.make("random"), jax.random.key(0), 4)
    assert result.games == 8 and result.score >= 0.75, result.summary()
    assert result.game["id"] == "fauxgo" and result.mean_length > 4


@pytest.mark.parametrize("name", ["gumbel", "pure_mcts"])
def test_search_agents_play_legal_moves(name):
    states = jax.vmap(ENV.init)(jax.random.split(jax.random.key(1), 4))
    agent = agents.make(name, num_simulations=8,
                        **({"evaluator": "rollout"} if name == "gumbel" else {})).bind(ENV)
    actions, _, info = jax.jit(agent.act_batch)(None, None, states,
                                                jax.random.split(jax.random.key(2), 4))
    legal = np.asarray(states.legal_action_mask)
    assert legal[np.arange(4), np.asarray(actions)].all()
    assert np.asarray(info["policy"]).shape == (4, ENV.num_actions)


def test_fauxgo_heuristic_plays_legal_moves_in_chunks_as_one_vmap():
    """`act_batch` in chunks (`lax.map`, a remainder included) is the vmapped `act`; every
    move is legal (or the pass) on positions of random games."""
    keys = jax.random.split(jax.random.key(3), 5)
    states = jax.vmap(ENV.init)(keys)
    random = agents.make("random").bind(ENV)
    for t in range(6):
        actions, _, _ = random.act_batch(None, None, states, jax.random.split(keys[t % 5], 5))
        states = jax.vmap(ENV.step)(states, actions)
    chunked = agents.make("fauxgo_heuristic", batch_chunk=2).bind(ENV)
    whole = agents.make("fauxgo_heuristic").bind(ENV)
    a, _, info_a = jax.jit(chunked.act_batch)(None, None, states, keys)
    b, _, info_b = jax.jit(whole.act_batch)(None, None, states, keys)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(info_a["policy"], info_b["policy"])
    legal = np.asarray(states.legal_action_mask)
    assert legal[np.arange(5), np.asarray(a)].all()


def test_fauxgo_heuristic_is_refused_on_gomoku():
    with pytest.raises(ValueError, match="plays \\['fauxgo'\\]"):
        agents.make("fauxgo_heuristic").bind(gomoku_jax.make("gomoku", board_size=9))
