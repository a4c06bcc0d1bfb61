"""Shared test set-up: the persistent compilation cache and compiled game functions.

Compiling is most of a JAX test's time on CPU, so every test that plays games goes through
`compiled(env)`, which jits each function once per env config for the whole session.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax import compilation_cache
from gomoku_jax.agents import Agent
from gomoku_jax.game import rules

compilation_cache.enable()


@functools.lru_cache(maxsize=None)
def compiled(env: gomoku_jax.Gomoku) -> types.SimpleNamespace:
    """Jitted functions of one env, shared by all tests.

    step(state, action) / init(key): single games.
    play(actions int32[B, T]) -> (states after every move, stacked [T, B] leaves): B games
      from the empty board (black_player 0), each playing its row of actions in order
      (a -1 padding action after a game ended is harmless: stepping a terminated state is
      a no-op).
    """
    step = jax.jit(env.step)
    init = jax.jit(env.init)

    @jax.jit
    def play(actions):
        b = actions.shape[0]
        start = jax.vmap(lambda _: rules.initial_state(env.config, 0))(
            jnp.arange(b))

        def body(states, a):
            states = jax.vmap(env.step)(states, a)
            return states, states

        _, trajectory = jax.lax.scan(body, start, actions.T)
        return trajectory

    return types.SimpleNamespace(step=step, init=init, play=play)


def play_moves(env, moves) -> list:
    """States after each move of one game (host-side list), via the shared compiled step."""
    fns = compiled(env)
    state = rules.initial_state(env.config, 0)
    out = []
    for m in moves:
        state = fns.step(state, np.int32(m))
        out.append(state)
    return out


@pytest.fixture(scope="session")
def env15():
    return gomoku_jax.make("gomoku")


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory) -> pathlib.Path:
    """A run directory of `gomoku-jax train`, made once per session: the "test" preset
    (7x7, four in a row, canonical observation, tiny net, eval agent with 4 simulations)
    for one iteration, so it holds one checkpoint, step 1."""
    from gomoku_jax.train import config as train_config, loop

    run_dir = tmp_path_factory.mktemp("trained_run")
    config = train_config.override(train_config.preset("test"), [
        "replay.tactical_fraction=0", "run.iterations=1", "eval.every=0",
        "eval.opponents=random"])
    loop.train(config, run_dir, progress=False)
    return run_dir


@dataclasses.dataclass(frozen=True)
class EndCell(Agent):
    """A predictable test opponent: the lowest (or, with `last`, the highest) empty cell."""

    name = "end_cell"
    last: bool = False

    def act(self, params, agent_state, state, key):
        legal = state.legal_action_mask
        idx = jnp.arange(legal.shape[-1])
        action = (jnp.max(jnp.where(legal, idx, -1)) if self.last
                  else jnp.min(jnp.where(legal, idx, legal.shape[-1])))
        policy = jax.nn.one_hot(action, legal.shape[-1], dtype=jnp.float32)
        return action.astype(jnp.int32), agent_state, {"policy": policy,
                                                        "value": jnp.float32(0.0)}
