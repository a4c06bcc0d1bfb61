"""Games between two agents, a whole batch at once in one compiled scan."""

from __future__ import annotations

from typing import Any, Optional

import jax

from gomoku_jax.agents.base import Agent
from gomoku_jax.game.env import Gomoku
from gomoku_jax.game.state import State


def play_match(env: Gomoku, black: Agent, white: Agent, key: jax.Array, num_games: int,
               black_params: Any = None, white_params: Any = None,
               start: Optional[State] = None, white_first: Optional[bool] = None) -> State:
    """Play `num_games` games, `black` playing black in all of them, to the end.

    All games move in lockstep (one agent acts for every board, then the other), so each
    ply runs one agent only, not both under a select. Jit it with env, the agents,
    num_games and white_first static:
    `jax.jit(play_match, static_argnums=(0, 1, 2, 4), static_argnames="white_first")`.

    Args:
      start: optional batched start positions (leading axis num_games), all with the same
        side to move; default the empty board.
      white_first: whether that side is white. None (the default) reads it from `start`
        (which compiles both move orders); pass it when you know it to compile one.
    Returns:
      the final states, leaves with a leading [num_games] axis (`winner` +1 black, -1 white,
      0 draw). N*N plies are played, so every game is over.
    """
    k_init, k_first, k_second, k_play = jax.random.split(key, 4)
    if start is None:
        start = jax.vmap(env.init)(jax.random.split(k_init, num_games))
        white_first = False
    if white_first is None:
        # Read once, before any game ends (a finished game's colour stops alternating).
        return jax.lax.cond(
            start.color[0] == -1,
            lambda: play_match(env, black, white, key, num_games, black_params, white_params,
                               start, True),
            lambda: play_match(env, black, white, key, num_games, black_params, white_params,
                               start, False))
    first, second = (white, black) if white_first else (black, white)
    first_params, second_params = ((white_params, black_params) if white_first
                                   else (black_params, white_params))
    agent_states = (jax.vmap(first.init)(jax.random.split(k_first, num_games)),
                    jax.vmap(second.init)(jax.random.split(k_second, num_games)))

    def move(agent, params, agent_state, states, k):
        actions, agent_state, _ = agent.act_batch(params, agent_state, states,
                                                  jax.random.split(k, num_games))
        return jax.vmap(env.step)(states, actions), agent_state

    def two_plies(carry, k):
        states, (s1, s2) = carry
        k1, k2 = jax.random.split(k)
        states, s1 = move(first, first_params, s1, states, k1)
        states, s2 = move(second, second_params, s2, states, k2)
        return (states, (s1, s2)), None

    plies = (env.num_actions + 1) // 2
    (states, _), _ = jax.lax.scan(two_plies, (start, agent_states),
                                  jax.random.split(k_play, plies))
    return states
