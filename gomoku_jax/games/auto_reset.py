"""pgx's auto-reset, for any env: a game that ends is replaced by a fresh one."""

from __future__ import annotations

from typing import Callable, Optional

import jax
import jax.numpy as jnp

from gomoku_jax.games.protocol import State, is_over


def auto_reset(step_fn: Callable[..., State], init_fn: Callable[[jax.Array], State]
               ) -> Callable[[State, jax.Array, jax.Array], State]:
    """Wrap `step_fn(state, action, key)` so that a game that ends is replaced by a fresh one.

    The returned `step(state, action, key)` (single state; vmap it) behaves like pgx's
    `auto_reset`: a state that arrives finished is first un-finished (its position is
    already a fresh one), then stepped; if that step ends the game (terminated or
    truncated), the result is a fresh game (`init_fn` of the second half of `key`; the first
    half goes to `step_fn`) carrying the step's `terminated`, `truncated` and `rewards`, so
    the caller still sees the outcome. `key` is required.
    """

    def step(state: State, action: jax.Array, key: Optional[jax.Array]) -> State:
        if key is None:
            raise ValueError("auto_reset's step needs a key for the fresh game")
        k_step, k_init = jax.random.split(key)
        state = state.replace(terminated=jnp.zeros_like(state.terminated),
                              truncated=jnp.zeros_like(state.truncated),
                              rewards=jnp.zeros_like(state.rewards))
        state = step_fn(state, action, k_step)
        fresh = init_fn(k_init).replace(terminated=state.terminated,
                                        truncated=state.truncated, rewards=state.rewards)
        return jax.tree.map(lambda a, b: jnp.where(is_over(state), a, b), fresh, state)

    return step
