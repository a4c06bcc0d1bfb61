"""Games between two agents, a whole batch at once in one compiled loop, for any game.

`play_match(env, first, second, key, num_games, ...)` plays every board to its end: the
agent `first` moves at the start positions, `second` replies, and so on. All boards move in
lockstep (one agent acts for every board, then the other), so each ply runs one agent only,
not both under a select; that needs the side to move to alternate (two-player games with
turns, every game here). The loop is a `lax.while_loop` that stops once every game is over
(terminated or truncated), capped at the game's `max_game_length` plies.

`first_passes` (a traced bool) lets `second` move first instead: `first`'s opening ply is
computed and dropped. So one compiled program plays a pair of agents with both side
assignments (the arena's two halves), at the cost of one wasted ply, instead of compiling
the pair twice.

`play_match` is three steps that can also be called apart: `start_match` (the start
positions and agent states: a `MatchCarry`), `advance_match` (the loop, up to a step
bound `until`, which may be traced) and `match_outcome`. Step i (two plies) draws its keys
from `fold_in(key, i)`, and the carry holds everything the loop reads, so a match played
in several `advance_match` calls is the same computation, ply for ply, as one call that
plays it to the end (the arena shows progress that way).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from gomoku_jax.games.protocol import is_over


class MatchOutcome(NamedTuple):
    """What `play_match` returns, leaves with a leading [num_games] axis.

    states: the final positions; returns: float32[B, 2] the rewards each player id got
    over the games; first_player: int32[B] the player id `first` played (the side to move at
    the start, unless `first` passed its first turn); plies: int32[B] the moves played from
    the start to the end of each game.
    """

    states: Any
    returns: jax.Array
    first_player: jax.Array
    plies: jax.Array


class MatchCarry(NamedTuple):
    """A match between two calls of `advance_match`, leaves with a leading [num_games] axis
    (B) unless scalar.

    states: the positions; agent_states: (first's, second's); returns: float32[B, 2] the
    rewards so far; plies: int32[B] the moves played so far; step: int32[] the two-ply steps
    played; key: the key of the plies (step i uses `fold_in(key, i)`); first_passes: bool[];
    first_player: int32[B] (see `MatchOutcome`).
    """

    states: Any
    agent_states: tuple[Any, Any]
    returns: jax.Array
    plies: jax.Array
    step: jax.Array
    key: jax.Array
    first_passes: jax.Array
    first_player: jax.Array


def max_steps(env) -> int:
    """The most two-ply steps a match takes: `max_game_length` plies, one more when `first`
    passed its first turn."""
    return env.max_game_length // 2 + 1


def start_match(env, first, second, key: jax.Array, num_games: int,
                start: Optional[Any] = None, first_passes: jax.Array | bool = False
                ) -> MatchCarry:
    """The carry of a match before its first ply (see `play_match` for the arguments)."""
    first, second = first.bind(env), second.bind(env)
    k_init, k_first, k_second, k_play = jax.random.split(key, 4)
    if start is None:
        start = jax.vmap(env.init)(jax.random.split(k_init, num_games))
    agent_states = (jax.vmap(first.init)(jax.random.split(k_first, num_games)),
                    jax.vmap(second.init)(jax.random.split(k_second, num_games)))
    first_passes = jnp.asarray(first_passes, bool)
    first_player = jnp.where(first_passes, 1 - start.current_player, start.current_player)
    zero = jnp.zeros((num_games,), jnp.int32)
    return MatchCarry(start, agent_states, jnp.zeros((num_games, 2), jnp.float32), zero,
                      jnp.int32(0), k_play, first_passes, first_player.astype(jnp.int32))


def advance_match(env, first, second, carry: MatchCarry, first_params: Any = None,
                  second_params: Any = None, until: Optional[jax.Array | int] = None
                  ) -> MatchCarry:
    """Play two-ply steps until every game is over, `carry.step` reaches `until` (int32[],
    may be traced; default: `max_steps(env)`) or `max_steps(env)`."""
    first, second = first.bind(env), second.bind(env)
    num_games = carry.plies.shape[0]
    cap = max_steps(env)
    until = cap if until is None else until

    def move(agent, params, agent_state, states, returns, plies, k, plays=True):
        actions, new_agent_state, _ = agent.act_batch(params, agent_state, states,
                                                      jax.random.split(k, num_games))
        live = ~is_over(states) & plays
        stepped = jax.vmap(env.step)(states, actions)
        states, agent_state = jax.tree.map(lambda n, o: jnp.where(plays, n, o),
                                           (stepped, new_agent_state), (states, agent_state))
        return states, agent_state, returns + jnp.where(plays, states.rewards, 0.0), plies + live

    def two_plies(c: MatchCarry) -> MatchCarry:
        s1, s2 = c.agent_states
        k1, k2 = jax.random.split(jax.random.fold_in(c.key, c.step))
        states, s1, returns, plies = move(first, first_params, s1, c.states, c.returns,
                                          c.plies, k1, plays=~(c.first_passes & (c.step == 0)))
        states, s2, returns, plies = move(second, second_params, s2, states, returns, plies,
                                          k2)
        return c._replace(states=states, agent_states=(s1, s2), returns=returns, plies=plies,
                          step=c.step + 1)

    def going(c: MatchCarry) -> jax.Array:
        return (c.step < cap) & (c.step < until) & ~jnp.all(is_over(c.states))

    return jax.lax.while_loop(going, two_plies, carry)


def match_outcome(carry: MatchCarry) -> MatchOutcome:
    """The outcome of a match played to its end."""
    return MatchOutcome(carry.states, carry.returns, carry.first_player, carry.plies)


def play_match(env, first, second, key: jax.Array, num_games: int, first_params: Any = None,
               second_params: Any = None, start: Optional[Any] = None,
               first_passes: jax.Array | bool = False) -> MatchOutcome:
    """Play `num_games` games to the end, `first` to move at the start of every one (or
    `second`, when `first_passes`).

    Jit it with env, the agents and num_games static:
    `jax.jit(play_match, static_argnums=(0, 1, 2, 4))`.

    Args:
      env: the game; the agents are bound to it here.
      start: optional start positions (leaves [num_games, ...]), default `env.init` per
        game; the agent to move first moves there, whichever colour it has.
      first_passes: bool[] (may be traced): `first` skips its first turn, so `second` moves
        first; `first` then keeps its agent state and every game is one ply behind.
    """
    carry = start_match(env, first, second, key, num_games, start, first_passes)
    return match_outcome(advance_match(env, first, second, carry, first_params,
                                       second_params))
