"""Self-play on device, for any game: a batch of games, T moves under one `lax.scan`, then
value targets for every position of every game that ended.

Every move searches every board (the run's search algorithm with the network as
evaluator), records (position, search policy, mover, the move played), steps, and replaces
a finished game by a fresh one so the batch stays full. A game that does not end inside
the window is not lost: its positions wait in the board's `Pending` trajectory (carried to
the next iteration with the game) until it ends, and then all of them are written at once.
So the samples written are exactly the positions of the games that finished, whatever
their length, and none of a game that has not; each with the move played from it
(`Sample.action`: the stone between it and the game's next position).

After the scan, the pending trajectories and the window's records are joined along time
([L + T, B]) and a reverse scan gives every position the final result of its game from its
mover's point of view; the positions of games still running become the new pending
trajectories.

`play` searches the real game with an evaluator (AlphaZero); `play_model` searches any
model (`search.model.Model`: the env model, or MuZero's learned one) and returns the joined
trajectories themselves, from which MuZero cuts its unroll windows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from gomoku_jax.games.protocol import is_over, reward_of
from gomoku_jax.search.base import SearchAlgorithm
from gomoku_jax.search.env_model import EnvModel
from gomoku_jax.train.alphazero.samples import NO_ACTION, Sample


@struct.dataclass
class Pending:
    """The positions of each board's running game, oldest first (leaves [B, L, ...], L the
    game's `max_game_length`): state, policy float32[B, L, A], mover int32[B, L], action
    int32[B, L] the move played from the position; length int32[B], how many slots hold a
    position (the slots after them hold leftovers, -1 actions when fresh)."""

    state: Any
    policy: jax.Array
    mover: jax.Array
    action: jax.Array
    length: jax.Array


class SelfPlayStats(NamedTuple):
    """Totals over one self-play call (int32[] each): games that ended, wins of the game's
    first and second player (draws = games - both), the summed length of the games that
    ended, searched moves, positions written, positions still pending, and positions dropped
    because a game outgrew `max_game_length` (0 for a game that keeps its length)."""

    games: jax.Array
    first_wins: jax.Array
    second_wins: jax.Array
    total_length: jax.Array
    moves: jax.Array
    written: jax.Array
    pending: jax.Array
    dropped: jax.Array


class _Record(NamedTuple):
    state: Any
    policy: jax.Array
    mover: jax.Array
    action: jax.Array
    ply: jax.Array
    done: jax.Array
    result: jax.Array


def new_games(env, key: jax.Array, num_games: int) -> Any:
    """`num_games` fresh games."""
    return jax.vmap(env.init)(jax.random.split(key, num_games))


def empty_pending(env, games: Any) -> Pending:
    """No pending positions for a batch of games (leaves [B, ...]): L slots per board."""
    batch, slots = games.legal_action_mask.shape[0], env.max_game_length
    state = jax.tree.map(lambda x: jnp.broadcast_to(x[:, None], (batch, slots) + x.shape[1:]),
                         games)
    return Pending(state, jnp.zeros((batch, slots, env.num_actions), jnp.float32),
                   jnp.zeros((batch, slots), jnp.int32),
                   jnp.full((batch, slots), NO_ACTION, jnp.int32),
                   jnp.zeros((batch,), jnp.int32))


def value_targets(mover: jax.Array, done: jax.Array, result: jax.Array
                  ) -> tuple[jax.Array, jax.Array]:
    """(value float32[T, B], known bool[T, B]) from a [T, B] record of each move's mover
    (player id), whether the move ended the game and its result for the mover.

    Walks back from the end: a move that ends a game sets that game's result (seen by
    player 0); every earlier move of the same game takes it, sign-flipped for player 1.
    """

    def back(carry, rec):
        known, result_p0 = carry
        m, d, r = rec
        result_p0 = jnp.where(d, jnp.where(m == 0, r, -r), result_p0)
        known = known | d
        return (known, result_p0), (jnp.where(m == 0, result_p0, -result_p0), known)

    b = mover.shape[1]
    init = (jnp.zeros((b,), bool), jnp.zeros((b,), jnp.float32))
    _, (value, known) = jax.lax.scan(back, init, (mover, done, result), reverse=True)
    return value, known


def _time_major(x: jax.Array) -> jax.Array:
    return jnp.swapaxes(x, 0, 1)


class Trajectories(NamedTuple):
    """What a self-play call saw, time-major over its pending positions then its window
    (leaves [M, B, ...], M = L + T; a board's column holds its games in order, the slots
    between its pending length and L empty):

    state: the positions; policy float32[M, B, A]: the search's policy target; mover
    int32[M, B]: the player to move; action int32[M, B]: the move played from the position;
    done bool[M, B]: whether that move ended the game; result float32[M, B]: the mover's
    reward for the move (the games here reward only the move that ends them, with its
    result); value float32[M, B]: the
    game's final result for the position's mover (where known); present bool[M, B]: a slot
    holding a position; written bool[M, B]: a position whose game ended (the samples to
    keep)."""

    state: Any
    policy: jax.Array
    mover: jax.Array
    action: jax.Array
    done: jax.Array
    result: jax.Array
    value: jax.Array
    present: jax.Array
    written: jax.Array


def play(env, search: SearchAlgorithm, evaluator, num_simulations: int, num_moves: int,
         params: Any, games: Any, pending: Pending, key: jax.Array
         ) -> tuple[Any, Pending, Sample, jax.Array, SelfPlayStats]:
    """Play `num_moves` moves on every board of `games` (leaves [B, ...]) whose earlier
    positions are `pending`, searching the real game valued by `evaluator`.

    Returns:
      (games after the last move, the new pending trajectories, samples with leaves
       [(L + T) * B, ...] (time-major), valid bool[(L + T) * B]: the positions of games that
       ended (write these), stats).
    """
    model = EnvModel(env, evaluator, search)
    games, new_pending, traj, stats = play_model(env, search, model, num_simulations,
                                                 num_moves, params, games, pending, key)
    flat = lambda x: x.reshape((-1,) + x.shape[2:])  # noqa: E731
    ones = jnp.ones(traj.written.size, jnp.float32)
    samples = Sample(state=jax.tree.map(flat, traj.state), policy=flat(traj.policy),
                     value=flat(traj.value), weight=ones, value_weight=ones,
                     action=flat(traj.action))
    return games, new_pending, samples, flat(traj.written), stats


def play_model(env, search: SearchAlgorithm, model, num_simulations: int, num_moves: int,
               params: Any, games: Any, pending: Pending, key: jax.Array
               ) -> tuple[Any, Pending, Trajectories, SelfPlayStats]:
    """`play`, searching any `model` (a `search.model.Model` of `env`: the env model, a
    learned one) with `params`, returning the time-major trajectories instead of samples:
    (games, the new pending trajectories, Trajectories [L + T, B], stats)."""
    batch, slots = games.legal_action_mask.shape[0], env.max_game_length

    def move(carry, key):
        states, ply = carry
        k_search, k_reset = jax.random.split(key)
        out = search.search_model(model, params, states, k_search, num_simulations)
        after = jax.vmap(env.step)(states, out.action)
        done = is_over(after)
        fresh = new_games(env, k_reset, batch)
        following = jax.tree.map(
            lambda f, a: jnp.where(done.reshape((batch,) + (1,) * (a.ndim - 1)), f, a),
            fresh, after)
        record = _Record(states, out.policy, states.current_player,
                         out.action.astype(jnp.int32), ply, done,
                         reward_of(after, states.current_player))
        return (following, jnp.where(done, 0, ply + 1)), record

    (games, _), rec = jax.lax.scan(move, (games, pending.length),
                                   jax.random.split(key, num_moves))

    # Join the pending positions ([L, B] once time-major) and the window's records.
    join = lambda p, r: jnp.concatenate([_time_major(p), r])  # noqa: E731
    state = jax.tree.map(join, pending.state, rec.state)
    policy, mover = join(pending.policy, rec.policy), join(pending.mover, rec.mover)
    action = join(pending.action, rec.action)
    slot = jnp.arange(slots)[:, None]
    present = jnp.concatenate([slot < pending.length[None], jnp.ones_like(rec.done)])
    ply = jnp.concatenate([jnp.broadcast_to(slot, (slots, batch)), rec.ply])
    done = jnp.concatenate([jnp.zeros((slots, batch), bool), rec.done])
    result = jnp.concatenate([jnp.zeros((slots, batch), jnp.float32), rec.result])
    value, known = value_targets(mover, done, result)
    written = present & known

    # The positions of running games become the new pending trajectories, oldest first;
    # a game longer than L keeps its last L positions.
    waiting = present & ~known
    count = jnp.sum(waiting, axis=0)
    order = jnp.argsort(~waiting, axis=0, stable=True)  # waiting positions first, in order
    skip = jnp.maximum(count - slots, 0)
    source = jnp.minimum(slot + skip[None], order.shape[0] - 1)  # [L, B]
    take = jnp.take_along_axis(order, source, axis=0)  # the source time of each new slot

    def gather(x):
        index = take.reshape(take.shape + (1,) * (x.ndim - 2))
        return _time_major(jnp.take_along_axis(x, index, axis=0))

    new_pending = Pending(jax.tree.map(gather, state), gather(policy), gather(mover),
                          gather(action), jnp.minimum(count, slots).astype(jnp.int32))

    first = written & (ply == 0)
    stats = SelfPlayStats(
        games=jnp.sum(rec.done, dtype=jnp.int32),
        first_wins=jnp.sum(first & (value > 0), dtype=jnp.int32),
        second_wins=jnp.sum(first & (value < 0), dtype=jnp.int32),
        total_length=jnp.sum(jnp.where(rec.done, rec.ply + 1, 0), dtype=jnp.int32),
        moves=jnp.int32(num_moves * batch),
        written=jnp.sum(written, dtype=jnp.int32),
        pending=jnp.sum(new_pending.length, dtype=jnp.int32),
        dropped=jnp.sum(skip, dtype=jnp.int32))
    return games, new_pending, Trajectories(state, policy, mover, action, done, result,
                                            value, present, written), stats
