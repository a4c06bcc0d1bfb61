"""GMO's training data: (position, move played, outcome for the mover) from on-device games,
or from an AlphaZero run's replay buffer.

    samples, valid, stats = play_games(env, agent, params, key, num_games,
                                       random_plies=2, epsilon=0.1)
    samples, valid = from_alphazero(alphazero_buffer)        # or: a trained run's positions
    buffer = replay.add(buffer, samples, valid)              # replay.py's FIFO buffer
    obs, moves = batch_inputs(env, augment(env, batch, key))      # train.augment

`play_games` plays `num_games` games from `env.init` to their end, both sides the same
agent (any registered agent, `agent.act_batch`), in one `lax.while_loop` of at most
`env.max_game_length` plies that stops once every game is over. A ply is a uniformly random
legal move instead of the agent's for the first `random_plies` plies of every game (the
openings differ: a greedy agent would otherwise replay one game) and with probability
`epsilon` afterwards (the value net must also see moves the agent would not play: GMO scores
every legal move). Every ply of every game is recorded with the outcome from its mover's
view; all games end inside the loop, so every position is labelled.

`from_alphazero` takes the positions of an AlphaZero replay buffer (`train.samples.Sample`s,
each with the move its self-play played from it) that have a move and a known outcome.

The sample keeps the env state, not the observation, so that the augmentation can move the
state and the move together (`env.transform_state`, `symmetry.transform_action`) before the
observation and the move features are made.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from gomoku_jax.agents.gmo import move_features
from gomoku_jax.games.protocol import is_over
from gomoku_jax.games.random_play import random_legal_action
from gomoku_jax.nets.gmo import MoveFeatures
from gomoku_jax.train.replay import Replay


@struct.dataclass
class GMOSample:
    """One example (or a batch, a leading axis on every leaf); a pytree that `replay.py`'s
    buffer stores (it needs `value` and `weight`).

    state: the position before the move, the mover to play; action: int32[], the move
    played; value: float32[], the game's outcome for the mover (+1 win, 0 draw, -1 loss);
    weight: float32[], 1 for a real sample, 0 for padding.
    """

    state: Any
    action: jax.Array
    value: jax.Array
    weight: jax.Array


class DataStats(NamedTuple):
    """Totals of one `play_games` call (int32[] each): games played, wins of the game's
    first and second player, positions recorded (the plies of all games), and the plies
    the loop ran (the longest game)."""

    games: jax.Array
    first_wins: jax.Array
    second_wins: jax.Array
    positions: jax.Array
    plies: jax.Array


def example(env) -> GMOSample:
    """One unbatched zero sample shaped like `env`'s (`replay.init`'s example)."""
    state = jax.eval_shape(env.init, jax.random.key(0))
    zeros = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), state)
    return GMOSample(zeros, jnp.int32(0), jnp.float32(0), jnp.float32(0))


def play_games(env, agent, params: Any, key: jax.Array, num_games: int,
               random_plies: int = 0, epsilon: float = 0.0,
               shard: Callable[[Any], Any] = lambda tree: tree
               ) -> tuple[GMOSample, jax.Array, DataStats]:
    """Play `num_games` games to the end with `agent` (bound to `env`) on both sides.

    Args:
      params: the agent's params (None for agents without).
      random_plies, epsilon: random legal moves instead of the agent's (module doc).
      shard: applied to the B games' states (inside jit: a sharding constraint that splits
        the games over the run's devices).
    Returns:
      (samples with leaves [L * B, ...] (ply-major, L = env.max_game_length), valid
       bool[L * B]: the plies that were played, DataStats).
    """
    agent = agent.bind(env)
    length, b = env.max_game_length, num_games
    k_init, k_agent, k_play = jax.random.split(key, 3)
    states = shard(jax.vmap(env.init)(jax.random.split(k_init, b)))
    agent_states = shard(jax.vmap(agent.init)(jax.random.split(k_agent, b)))
    first = states.current_player

    def blank(x):
        return jnp.zeros((length,) + x.shape, x.dtype)

    record = GMOSample(jax.tree.map(blank, states), jnp.zeros((length, b), jnp.int32),
                       jnp.zeros((length, b), jnp.int32), jnp.zeros((length, b), bool))

    def ply(carry):
        states, agent_states, returns, record, i = carry
        k_act, k_rand, k_eps = jax.random.split(jax.random.fold_in(k_play, i), 3)
        actions, agent_states, _ = agent.act_batch(params, agent_states, states,
                                                   jax.random.split(k_act, b))
        explore = (i < random_plies) | (jax.random.uniform(k_eps, (b,)) < epsilon)
        actions = jnp.where(explore, random_legal_action(k_rand, states.legal_action_mask),
                            actions).astype(jnp.int32)
        # `value` holds the mover for now, `weight` whether the game was live
        now = GMOSample(states, actions, states.current_player, ~is_over(states))
        record = jax.tree.map(lambda r, x: jax.lax.dynamic_update_index_in_dim(r, x, i, 0),
                              record, now)
        states = jax.vmap(env.step)(states, actions)
        return states, agent_states, returns + states.rewards, record, i + 1

    def going(carry):
        states, _, _, _, i = carry
        return (i < length) & ~jnp.all(is_over(states))

    states, _, returns, record, plies = jax.lax.while_loop(
        going, ply, (states, agent_states, jnp.zeros((b, 2), jnp.float32), record,
                     jnp.int32(0)))
    valid = record.weight & is_over(states)[None]
    mover = record.value
    value = jnp.where(valid, jnp.take_along_axis(returns[None], mover[..., None], -1)[..., 0],
                      0.0)
    flat = lambda x: x.reshape((-1,) + x.shape[2:])  # noqa: E731
    samples = GMOSample(jax.tree.map(flat, record.state), flat(record.action), flat(value),
                        flat(valid).astype(jnp.float32))
    first_result = jnp.take_along_axis(returns, first[:, None], -1)[:, 0]
    stats = DataStats(games=jnp.int32(b),
                      first_wins=jnp.sum(first_result > 0, dtype=jnp.int32),
                      second_wins=jnp.sum(first_result < 0, dtype=jnp.int32),
                      positions=jnp.sum(valid, dtype=jnp.int32), plies=plies)
    return samples, flat(valid), stats


def from_alphazero(buffer: Replay) -> tuple[GMOSample, jax.Array]:
    """The positions of an AlphaZero replay buffer (`Sample`s) as GMO samples, oldest first.

    Returns:
      (samples with leaves [capacity, ...], valid bool[capacity]: the filled slots whose
       sample is real (weight > 0), has a move played (action >= 0) and a known outcome
       (value_weight > 0); its value is then the outcome for the mover).
    """
    data, capacity = buffer.data, buffer.capacity
    i = jnp.arange(capacity, dtype=jnp.int32)
    order = (buffer.position - buffer.size + i) % capacity  # the oldest filled slot first
    data = jax.tree.map(lambda x: x[order], data)
    valid = (i < buffer.size) & (data.action >= 0) & (data.value_weight > 0) \
        & (data.weight > 0)
    samples = GMOSample(data.state, jnp.maximum(data.action, 0).astype(jnp.int32),
                        jnp.where(valid, data.value, 0.0), valid.astype(jnp.float32))
    return samples, valid


def batch_inputs(env, samples: GMOSample) -> tuple[jax.Array, MoveFeatures]:
    """(observations float32[B, *obs_shape], the played moves' MoveFeatures[B]) of a batch."""
    obs = jax.vmap(env.observe)(samples.state)

    def one(state, action):
        return jax.tree.map(lambda f: f[action], move_features(env, state))

    return obs, jax.vmap(one)(samples.state, samples.action)
