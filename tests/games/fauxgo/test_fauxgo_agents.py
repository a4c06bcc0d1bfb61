"""The generic search, agents and arena play Faux Go without a line of Faux Go code: PUCT
with the rollout evaluator beats random, and every search algorithm returns legal moves
(the pass included) on live positions. Faux Go's own heuristic agent plays the moves the
Python reference ranks best."""

from __future__ import annotations

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


def test_fauxgo_heuristic_draws_among_the_references_best_moves_in_chunks():
    """`act_batch` in chunks (`lax.map` with a remainder: 5 boards in chunks of 2) plays,
    on each board, a move the Python reference puts within 2 points of the best unvetoed
    one, with the policy uniform over exactly those moves (the pass if all are vetoed)."""
    rng = random.Random(4)
    games = []
    for _ in range(5):
        game = Game(ENV.config.board_size)
        for _ in range(rng.randrange(4, 14)):
            game.play(rng.choice(game.legal_moves()[:-1]))
        games.append(game)
    states = jax.tree.map(lambda *x: jnp.stack(x), *[
        ENV.from_board(np.array(g.board()), np.array(g.owners()), g.to_move) for g in games])
    agent = agents.make("fauxgo_heuristic", batch_chunk=2).bind(ENV)
    actions, _, info = jax.device_get(jax.jit(agent.act_batch)(
        None, None, states, jax.random.split(jax.random.key(3), 5)))
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
    leaf; the jitted act is traced once for every komi."""
    agent = agents.make("fauxgo_heuristic").bind(ENV)
    traces = []

    def act(state, key):
        traces.append(None)
        return agent.act(None, agent.init(key), state, key)

    act = jax.jit(act)
    state = ENV.from_board(np.zeros((5, 5))).replace(color=jnp.int8(-1))  # white to move
    values = [float(act(state.replace(komi=jnp.float32(k)), jax.random.key(0))[2]["value"])
              for k in (0.0, 2.5, -2.5)]
    assert values == pytest.approx([0.0, np.tanh(2.5 / 5), np.tanh(-2.5 / 5)], abs=1e-6)
    assert len(traces) == 1
