"""The generic search, agents and arena play Faux Go without a line of Faux Go code: PUCT
with the rollout evaluator beats random, and every search algorithm returns legal moves
(the pass included) on live positions. Faux Go's own heuristic agent plays the moves the
Python reference ranks best."""

from __future__ import annotations

import functools
import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fauxgo_heuristic_reference import WEIGHTS, components, legal_placements, vetoes
from fauxgo_reference import Game

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.eval import run_match

ENV = gomoku_jax.make("fauxgo", board_size=5)


@pytest.mark.slow
def test_puct_with_rollouts_beats_random():
    result = run_match(ENV, agents.make("mcts", num_simulations=16, evaluator="rollout"),
                       agents.make("random"), jax.random.key(0), 4)
    assert result.games == 8 and result.score >= 0.75, result.summary()
    assert result.game["id"] == "fauxgo" and result.mean_length > 4


@pytest.mark.parametrize("name", ["gumbel", "pure_mcts"])
def test_search_agents_play_legal_moves(name):
    """(Gumbel with the uniform evaluator: the rollouts are the puct test's and pure MCTS's,
    and compile a second Faux Go step into the search.)"""
    states = jax.jit(jax.vmap(ENV.init))(jax.random.split(jax.random.key(1), 4))
    agent = agents.make(name, num_simulations=8,
                        **({"evaluator": "uniform"} if name == "gumbel" else {})).bind(ENV)
    actions, _, info = jax.jit(agent.act_batch)(None, None, states,
                                                jax.random.split(jax.random.key(2), 4))
    legal = np.asarray(states.legal_action_mask)
    assert legal[np.arange(4), np.asarray(actions)].all()
    assert np.asarray(info["policy"]).shape == (4, ENV.num_actions)


@functools.lru_cache(maxsize=None)
def heuristic_act_batch():
    """(the heuristic agent's `act_batch` in chunks of 2, jitted, shared by the tests below;
    the list its traces are counted in)."""
    agent = agents.make("fauxgo_heuristic", batch_chunk=2).bind(ENV)
    traces = []

    def act_batch(states, keys):
        traces.append(None)
        return agent.act_batch(None, None, states, keys)

    return jax.jit(act_batch), traces


BOARDS = 4  # the batch of the tests below: one compiled `act_batch`


def stacked(states):
    return jax.tree.map(lambda *x: np.stack(x), *jax.device_get(states))


def test_fauxgo_heuristic_draws_among_the_references_best_moves_in_chunks():
    """`act_batch` in chunks (`lax.map`: 4 boards in chunks of 2; no remainder, which JAX
    would compile as a second copy of the agent) plays, on each board, a move the Python
    reference puts within 2 points of the best unvetoed one, with the policy uniform over
    exactly those moves (the pass if all are vetoed)."""
    rng = random.Random(4)
    games = []
    for _ in range(BOARDS):
        game = Game(ENV.config.board_size)
        for _ in range(rng.randrange(4, 14)):
            game.play(rng.choice(game.legal_moves()[:-1]))
        games.append(game)
    states = stacked([ENV.from_board(np.array(g.board()), np.array(g.owners()), g.to_move)
                      for g in games])
    act_batch, _ = heuristic_act_batch()
    actions, _, info = jax.device_get(act_batch(states, jax.random.split(jax.random.key(3),
                                                                         BOARDS)))
    n = ENV.config.board_size
    for game, action, policy in zip(games, actions, info["policy"]):
        totals = {}
        for cell in legal_placements(game):
            if not any(vetoes(game, cell)):
                parts = components(game, cell)
                totals[cell[0] * n + cell[1]] = sum(WEIGHTS[k] * v for k, v in parts.items())
        best = max(totals.values(), default=None)
        top = sorted(a for a, t in totals.items() if t >= best - 2.0 - 1e-3) if totals \
            else [n * n]
        assert action in top
        np.testing.assert_allclose(policy[top], 1 / len(top), rtol=1e-6)
        assert policy.sum() == pytest.approx(1.0)


def test_fauxgo_heuristic_is_refused_on_gomoku():
    with pytest.raises(ValueError, match="plays \\['fauxgo'\\]"):
        agents.make("fauxgo_heuristic").bind(gomoku_jax.make("gomoku", board_size=9))


def test_the_heuristic_ai_reads_the_states_komi_through_one_compilation():
    """Its value (tanh of the score margin / N, komi included) follows the state's komi
    leaf: the empty board, white to move, under four komis in one batch, then four others
    through the same compilation (no new trace)."""
    komis = (0.0, 2.5, -2.5, 1.0)
    assert len(komis) == BOARDS
    empty = ENV.from_board(np.zeros((5, 5))).replace(color=jnp.int8(-1))  # white to move
    states = stacked([empty.replace(komi=jnp.float32(k)) for k in komis])
    act_batch, traces = heuristic_act_batch()
    values = act_batch(states, jax.random.split(jax.random.key(0), BOARDS))[2]["value"]
    assert np.asarray(values) == pytest.approx(np.tanh(np.array(komis) / 5), abs=1e-6)
    traced = len(traces)
    values = act_batch(states.replace(komi=-states.komi),
                       jax.random.split(jax.random.key(1), BOARDS))[2]["value"]
    assert np.asarray(values) == pytest.approx(np.tanh(-np.array(komis) / 5), abs=1e-6)
    assert len(traces) == traced  # no new trace for other komis


def test_a_batch_that_is_not_a_whole_number_of_chunks_compiles_one_copy_of_the_move():
    """5 boards in chunks of 2: padded to 6 (copies of board 0, dropped after), one `scan`
    over 3 chunks and no vmapped remainder beside it (traced only, nothing compiled); the
    chunked path's moves are checked against the reference above."""
    agent = agents.make("fauxgo_heuristic", batch_chunk=2).bind(ENV)
    states = jax.tree.map(lambda x: np.stack([x] * 5), ENV.init(jax.random.key(0)))
    keys = jax.random.split(jax.random.key(1), 5)
    jaxpr = jax.make_jaxpr(lambda s, k: agent.act_batch(None, None, s, k))(states, keys)
    scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scans) == 1 and scans[0].params["length"] == 3
    out = jax.eval_shape(lambda s, k: agent.act_batch(None, None, s, k), states, keys)
    assert out[0].shape == (5,) and out[2]["policy"].shape == (5, ENV.num_actions)
    # The move itself is traced once: the whole program is about one chunk's, not two.
    one = jax.make_jaxpr(lambda s, k: agent.act_batch(None, None, s, k))(
        *jax.tree.map(lambda x: x[:4], (states, keys)))
    assert len(jaxpr.eqns) <= len(one.eqns) + 10
