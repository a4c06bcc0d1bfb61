"""MuZero's training example, the unroll window: a position and what followed it for K
moves, cut from self-play's trajectories when the game has ended.

For the position at time t of a game, step k = 0..K of its window is the position t + k
when the game was still running there ("in the game"), and past the game's end an
absorbing step: the paper's targets there are a zero value and a zero reward, no policy
target, and a random action (so the dynamics learn that every move after the end leads
nowhere).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from gomoku_jax.games.protocol import State
from gomoku_jax.train.alphazero.selfplay import Trajectories


@struct.dataclass
class Unroll:
    """One training example of the unrolled loss (or a batch: a leading axis on every leaf).

    Attributes:
      state: the position at the window's start (the env's state; observed when a batch is
        drawn, after the symmetry augmentation).
      action: int32[K], the moves played from positions t .. t + K − 1 (random past the end).
      policy: float32[K + 1, A], the search's policy at each position t + k (zeros past the
        end).
      value: float32[K + 1], the game's result for the mover of position t + k (0 past the
        end: the absorbing value).
      reward: float32[K], the mover's real reward for each of the K moves (the result for
        the move that ended the game, 0 for the others and past the end).
      in_game: float32[K + 1], 1 where step k is a position of the game (its policy target
        counts), else 0.
      weight: float32[], 1 for a real example, 0 for padding (ignored by the loss).
    """

    state: State
    action: jax.Array
    policy: jax.Array
    value: jax.Array
    reward: jax.Array
    in_game: jax.Array
    weight: jax.Array


def example(env, unroll_steps: int) -> Unroll:
    """One unbatched zero example shaped like `env`'s, with K = `unroll_steps`."""
    state = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype),
                         jax.eval_shape(env.init, jax.random.key(0)))
    k, a = unroll_steps, env.num_actions
    return Unroll(state=state, action=jnp.zeros((k,), jnp.int32),
                  policy=jnp.zeros((k + 1, a), jnp.float32),
                  value=jnp.zeros((k + 1,), jnp.float32), reward=jnp.zeros((k,), jnp.float32),
                  in_game=jnp.zeros((k + 1,), jnp.float32), weight=jnp.float32(0))


def windows(traj: Trajectories, unroll_steps: int, num_actions: int, key: jax.Array
            ) -> tuple[Unroll, jax.Array]:
    """The unroll window of every position of self-play's trajectories (leaves [M, B, ...],
    `selfplay.play_model`'s): (Unroll with leaves [M * B, ...], valid bool[M * B]: the
    positions of games that ended, the windows to keep). `key` draws the actions past the
    games' ends."""
    k = unroll_steps
    m, b = traj.present.shape
    # Each board's positions first, in time order, so that a game's moves are consecutive
    # (a column holds its pending positions, empty slots, then the window's).
    order = jnp.argsort(~traj.present, axis=0, stable=True)

    def compact(x):
        return jnp.take_along_axis(x, order.reshape(order.shape + (1,) * (x.ndim - 2)), axis=0)

    traj = jax.tree.map(compact, traj)
    steps = jnp.arange(m)[:, None] + jnp.arange(k + 1)[None]  # [M, K + 1]
    at = lambda x: jnp.swapaxes(x[jnp.minimum(steps, m - 1)], 1, 2)  # noqa: E731  [M, B, K+1, ...]
    done = at(traj.done)
    # Step k is in the game unless a move of t .. t + k − 1 ended it.
    ended_before = (jnp.cumsum(done, axis=2) - done) > 0
    in_game = ~ended_before & (steps < m)[:, None, :] & at(traj.present)
    moves = in_game[..., :k]
    random = jax.random.randint(key, (m, b, k), 0, num_actions, jnp.int32)
    flat = lambda x: x.reshape((m * b,) + x.shape[2:])  # noqa: E731
    windows = Unroll(
        state=jax.tree.map(flat, traj.state),
        action=flat(jnp.where(moves, at(traj.action)[..., :k], random)),
        policy=flat(jnp.where(in_game[..., None], at(traj.policy), 0.0)),
        value=flat(jnp.where(in_game, at(traj.value), 0.0)),
        reward=flat(jnp.where(moves, at(traj.result)[..., :k], 0.0)),
        in_game=flat(in_game.astype(jnp.float32)),
        weight=jnp.ones((m * b,), jnp.float32))
    return windows, flat(traj.written)
