"""The MuZero agent (`agents/muzero.py`): its move is its search over the learned model,
it plays only legal moves to the end of a game, and it refuses what it cannot play.

One tiny network (`muzero_helpers.tiny_muzero`, 5×5 Gomoku) and 4 simulations; the agent's
batch of two games is compiled once for the module.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import compiled
from muzero_helpers import TINY, tiny_muzero

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.agents.muzero import MuZeroAgent
from gomoku_jax.nets.muzero import MuZeroNetwork
from gomoku_jax.search.gumbel import Gumbel
from gomoku_jax.search.muzero_model import MuZeroModel
from gomoku_jax.search.puct import PUCT

SIMULATIONS = 4


@functools.lru_cache(maxsize=None)
def _agent():
    """(env, agent bound to it, variables, jitted act_batch)."""
    env, network, variables = tiny_muzero()
    agent = MuZeroAgent(network=network, num_simulations=SIMULATIONS).bind(env)
    return env, agent, variables, jax.jit(agent.act_batch)


def _starts(env):
    """Two games: the empty board and the board after the centre (leaves [2, ...])."""
    empty = env.init(jax.random.key(0))
    return jax.tree.map(lambda a, b: jnp.stack([a, b]), empty,
                        compiled(env).step(empty, jnp.int32(12)))


def test_defaults_are_full_strength_puct_as_the_search_agents():
    agent = agents.make("muzero")
    assert type(agent) is MuZeroAgent and agent.name == "muzero"
    assert agent.search == PUCT(q_transform="parent").for_play() == agents.SearchAgent().search
    assert agent.num_simulations == 64 and agent.network is None
    assert agent.init(jax.random.key(0)) is None


def test_the_move_is_the_search_over_the_learned_model_with_the_same_key():
    env, agent, variables, act = _agent()
    states, keys = _starts(env), jax.random.split(jax.random.key(3), 2)
    action, agent_states, info = act(variables, None, states, keys)
    model = MuZeroModel(env, agent.network, agent.search)
    out = jax.jit(lambda p, s, k: agent.search.search_model(model, p, s, k, SIMULATIONS))(
        variables, states, keys[0])
    assert agent_states is None and action.dtype == jnp.int32 and action.shape == (2,)
    np.testing.assert_array_equal(action, out.action)
    np.testing.assert_array_equal(info["policy"], out.policy)
    # two programs: XLA may fuse the root's value differently (measured: 1 ulp apart)
    np.testing.assert_allclose(info["value"], out.value, rtol=1e-6)
    assert info["policy"].shape == (2, env.num_actions)
    assert bool(jnp.all(states.legal_action_mask[jnp.arange(2), action]))


def test_plays_only_legal_moves_to_the_end_of_the_game():
    env, _, variables, act = _agent()
    step = jax.jit(jax.vmap(env.step))
    states, key = _starts(env), jax.random.key(5)
    for _ in range(env.num_actions):
        if bool(jnp.all(states.terminated)):
            break
        key, sub = jax.random.split(key)
        action, _, _ = act(variables, None, states, jax.random.split(sub, 2))
        playing = ~states.terminated
        legal = states.legal_action_mask[jnp.arange(2), action]
        assert bool(jnp.all(legal | ~playing)), (action, playing)
        states = step(states, action)
    assert bool(jnp.all(states.terminated))
    # a legal game: nobody lost by an illegal move (pgx's rule), the rewards sum to 0
    np.testing.assert_array_equal(jnp.sum(states.rewards, -1), 0.0)


def test_errors_without_a_network_or_with_another_games():
    env, network, variables = tiny_muzero()
    with pytest.raises(ValueError, match="needs a checkpoint"):
        MuZeroAgent().bind(env)
    seven = gomoku_jax.make("gomoku", board_size=7, win_length=4)
    with pytest.raises(ValueError, match=r"network takes .*\(5, 5, 5\), 25.*'gomoku' has "
                                         r".*\(7, 7, 5\), 49"):
        MuZeroAgent(network=network).bind(seven)
    with pytest.raises(ValueError, match="needs a checkpoint"):
        agents.make("muzero", env=env)
    bound = MuZeroAgent(network=MuZeroNetwork.for_env(TINY, seven)).bind(seven)
    with pytest.raises(ValueError, match="network's variables as params"):
        bound.act_batch(None, None, _starts(seven), jax.random.split(jax.random.key(0), 2))
    with pytest.raises(ValueError, match="multiple of the search's leaves_per_step"):
        MuZeroAgent(network=network, search=PUCT(leaves_per_step=2), num_simulations=3)
    with pytest.raises(ValueError, match="search is a nested config"):
        MuZeroAgent(network=network, search="puct")
    # any search algorithm searches the model (Gumbel MuZero)
    assert MuZeroAgent(network=network, search=Gumbel().for_play()).bind(env).search.name \
        == "gumbel"
