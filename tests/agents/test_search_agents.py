"""The search and policy agents: legal moves and distributions over them, a pure function of
the key, one game or a batch (on Gomoku; the searches on connect_four are in
tests/search)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax import agents

GOMOKU = gomoku_jax.make("gomoku", board_size=7, win_length=4)
CONNECT_FOUR = gomoku_jax.make("pgx/connect_four")
BATCH = 8
# The uniform evaluator and no threat search at the root keep compiling cheap: these tests
# are about the agents' plumbing (the heuristic evaluator is tested with the tactics,
# rollouts with pure MCTS, an agent's threat search with the VCF puzzles,
# tests/games/gomoku/test_threat_moves.py, and under a clock in test_anytime.py).
SPECS = {"policy": {"evaluator": "uniform"},
         "mcts": {"num_simulations": 8, "evaluator": "uniform", "threat_search": 0},
         "gumbel": {"num_simulations": 8, "evaluator": "uniform", "threat_search": 0},
         "pure_mcts": {"num_simulations": 16}}


@functools.lru_cache(maxsize=None)
def positions(env):
    """BATCH positions: the start and random games of 0 to 10 moves."""
    def play(ply, states):
        actions = gomoku_jax.games.random_legal_action(jax.random.key(ply),
                                                       states.legal_action_mask)
        stepped = jax.vmap(env.step)(states, actions)
        keep = (jnp.arange(BATCH) > ply) & ~stepped.terminated
        return jax.tree.map(lambda a, b: jnp.where(
            keep.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), stepped, states)

    return jax.jit(lambda keys: jax.lax.fori_loop(0, 10, play, jax.vmap(env.init)(keys)))(
        jax.random.split(jax.random.key(0), BATCH))


@functools.lru_cache(maxsize=None)
def act_batch(agent):
    return jax.jit(agent.act_batch)


@functools.lru_cache(maxsize=None)
def acted() -> dict:
    """{name: (its act_batch's output, that of a second call with the same keys)}, on the
    host, for every agent of SPECS on `positions(GOMOKU)`: all four agents in one compiled
    program, run twice."""
    bound = {name: agents.make(name, **spec).bind(GOMOKU) for name, spec in SPECS.items()}
    both = jax.jit(lambda states, keys: {name: agent.act_batch(None, None, states, keys)
                                         for name, agent in bound.items()})
    states, keys = positions(GOMOKU), jax.random.split(jax.random.key(1), BATCH)
    first, second = (jax.device_get(both(states, keys)) for _ in range(2))
    return {name: (first[name], second[name]) for name in SPECS}


@pytest.mark.parametrize("name", list(SPECS))
def test_plays_legal_moves_from_a_distribution_over_them(name):
    env = GOMOKU
    states = positions(env)
    (actions, agent_state, info), again = acted()[name]
    legal = np.asarray(states.legal_action_mask)
    actions, policy = np.asarray(actions), np.asarray(info["policy"])
    assert agent_state is None and policy.shape == (BATCH, env.num_actions)
    assert legal[np.arange(BATCH), actions].all()
    np.testing.assert_allclose(policy.sum(-1), 1.0, atol=1e-5)
    assert (policy[~legal] == 0).all() and (policy[np.arange(BATCH), actions] > 0).all()
    assert (np.abs(np.asarray(info["value"])) <= 1).all()
    np.testing.assert_array_equal(actions, again[0])  # a pure function of the key


def test_one_game_is_a_batch_of_one():
    """`act` on one game is `act_batch` on a batch of one (`BatchedAgent`'s, the search
    agents' and the policy agent's alike: shown with the policy agent, whose programs are
    the smallest; search agents act on batches of one under a clock in test_anytime.py)."""
    agent = agents.make("policy", **SPECS["policy"]).bind(GOMOKU)
    state = jax.tree.map(lambda x: np.asarray(x)[3], positions(GOMOKU))  # (NumPy: no compile)
    key = jax.random.key(2)
    action, _, info = jax.jit(agent.act)(None, None, state, key)
    batched, _, binfo = act_batch(agent)(None, None, jax.tree.map(lambda x: x[None], state),
                                         key[None])
    assert action.shape == () and info["policy"].shape == (GOMOKU.num_actions,)
    assert info["value"].shape == ()
    assert int(action) == int(batched[0])
    np.testing.assert_allclose(info["policy"], binfo["policy"][0])


def test_auto_evaluator_is_the_games_own():
    assert type(agents.make("mcts").bind(GOMOKU).evaluator_fn()).__name__ == \
        "HeuristicEvaluator"
    assert type(agents.make("mcts").bind(CONNECT_FOUR).evaluator_fn()).__name__ == \
        "RolloutEvaluator"
    with pytest.raises(ValueError, match="evaluates \\['gomoku'\\]"):
        agents.make("mcts", evaluator="heuristic").bind(CONNECT_FOUR)
