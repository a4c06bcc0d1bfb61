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
    first, second = first.bind(env), second.bind(env)
    k_init, k_first, k_second, k_play = jax.random.split(key, 4)
    if start is None:
        start = jax.vmap(env.init)(jax.random.split(k_init, num_games))
    agent_states = (jax.vmap(first.init)(jax.random.split(k_first, num_games)),
                    jax.vmap(second.init)(jax.random.split(k_second, num_games)))

    first_passes = jnp.asarray(first_passes, bool)

    def move(agent, params, agent_state, states, returns, plies, k, plays=True):
        actions, new_agent_state, _ = agent.act_batch(params, agent_state, states,
                                                      jax.random.split(k, num_games))
        live = ~is_over(states) & plays
        stepped = jax.vmap(env.step)(states, actions)
        states, agent_state = jax.tree.map(lambda n, o: jnp.where(plays, n, o),
                                           (stepped, new_agent_state), (states, agent_state))
        return states, agent_state, returns + jnp.where(plays, states.rewards, 0.0), plies + live

    def two_plies(carry):
        states, (s1, s2), returns, plies, i = carry
        k1, k2 = jax.random.split(jax.random.fold_in(k_play, i))
        states, s1, returns, plies = move(first, first_params, s1, states, returns, plies, k1,
                                          plays=~(first_passes & (i == 0)))
        states, s2, returns, plies = move(second, second_params, s2, states, returns, plies,
                                          k2)
        return states, (s1, s2), returns, plies, i + 1

    def going(carry):
        # max_game_length plies, one more when `first` passed its first turn
        states, _, _, _, i = carry
        return (i < env.max_game_length // 2 + 1) & ~jnp.all(is_over(states))

    zero = jnp.zeros((num_games,), jnp.int32)
    states, _, returns, plies, _ = jax.lax.while_loop(
        going, two_plies,
        (start, agent_states, jnp.zeros((num_games, 2), jnp.float32), zero, jnp.int32(0)))
    first_player = jnp.where(first_passes, 1 - start.current_player, start.current_player)
    return MatchOutcome(states, returns, first_player.astype(jnp.int32), plies)
