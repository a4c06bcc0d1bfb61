"""Self-play on device: a batch of games, T moves under one `lax.scan`, then value targets.

Every move: search every board (`search.search` with the network as evaluator and the
seeds' exploration features), record (position, search policy, mover), step with
auto-reset, so a finished game is replaced by a fresh one and the batch stays full. After
the scan, a reverse scan fills in each recorded position's value target, the final result
of its game from its mover's point of view. Positions of a game still running at the end
of the window have no outcome yet; they are returned with `valid` False (the caller drops
them).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from gomoku_jax.game import rules
from gomoku_jax.game.config import GameConfig
from gomoku_jax.game.env import auto_reset
from gomoku_jax.game.state import BLACK, State
from gomoku_jax.search.evaluators import Evaluator
from gomoku_jax.search.mcts import SearchConfig, search
from gomoku_jax.train.samples import Sample


class SelfPlayStats(NamedTuple):
    """Totals over one self-play call (int32[] each): games that ended, black / white wins
    (draws = games - both), the summed length of the games that ended, searched moves."""

    games: jax.Array
    black_wins: jax.Array
    white_wins: jax.Array
    total_length: jax.Array
    moves: jax.Array


class _Record(NamedTuple):
    state: State
    policy: jax.Array
    mover: jax.Array
    done: jax.Array
    result: jax.Array


def new_games(config: GameConfig, key: jax.Array, num_games: int) -> State:
    """`num_games` empty boards, black's player id drawn per game."""
    return jax.vmap(lambda k: rules.init(config, k))(jax.random.split(key, num_games))


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


def play(evaluator: Evaluator, search_config: SearchConfig, num_simulations: int,
         algorithm: str, num_moves: int, params: Any, games: State, key: jax.Array
         ) -> tuple[State, Sample, jax.Array, SelfPlayStats]:
    """Play `num_moves` moves on every board of `games` (leaves [B, ...]).

    Returns:
      (games after the last move, samples with leaves [T*B, ...] in time-major order,
       valid bool[T*B]: the sample's game ended inside the window, stats).
    """
    config = games.config
    step = auto_reset(rules.step, lambda k: rules.init(config, k))
    batch = games.board.shape[0]

    def move(states, key):
        # auto_reset hands back fresh boards still flagged as the end of the old game.
        states = states.replace(terminated=jnp.zeros_like(states.terminated),
                                rewards=jnp.zeros_like(states.rewards))
        k_search, k_reset = jax.random.split(key)
        out = search(evaluator, search_config, num_simulations, params, states, k_search,
                     algorithm)
        mover = states.current_player
        after = jax.vmap(step)(states, out.action, jax.random.split(k_reset, batch))
        result = jnp.take_along_axis(after.rewards, mover[:, None], axis=1)[:, 0]
        return after, _Record(states, out.policy, mover, after.terminated, result)

    games, rec = jax.lax.scan(move, games, jax.random.split(key, num_moves))
    value, known = value_targets(rec.mover, rec.done, rec.result)
    winner_colour = jnp.where(rec.done, rec.result.astype(jnp.int8) * rec.state.color, 0)
    stats = SelfPlayStats(
        games=jnp.sum(rec.done, dtype=jnp.int32),
        black_wins=jnp.sum(winner_colour == BLACK, dtype=jnp.int32),
        white_wins=jnp.sum(winner_colour == -BLACK, dtype=jnp.int32),
        total_length=jnp.sum(jnp.where(rec.done, rec.state.move_count + 1, 0),
                             dtype=jnp.int32),
        moves=jnp.int32(num_moves * batch))
    flat = lambda x: x.reshape((num_moves * batch,) + x.shape[2:])  # noqa: E731
    ones = jnp.ones((num_moves * batch,), jnp.float32)
    samples = Sample(state=jax.tree.map(flat, rec.state), policy=flat(rec.policy),
                     value=flat(value), weight=ones, value_weight=ones)
    return games, samples, flat(known), stats
