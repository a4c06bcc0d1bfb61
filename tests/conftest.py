"""Shared test set-up: XLA's optimisation level, the persistent compilation cache and
compiled game functions.

Compiling is most of a JAX test's time on CPU, so every test that plays games goes through
`compiled(env)`, which jits each function once per env config for the whole session, and
XLA's CPU backend is told to compile faster:

- optimisation level 0 (LLVM's cheapest code generation, most of a compile): the suite's
  programs run 2-3x slower, but few of them run for long, and over the whole suite (from
  an empty cache, 2026-11-29) compiling took 285 s of the workers' time instead of 522 s
  at level 1, and pytest 466 s instead of 583 s;
- the older loop emitters (`--xla_cpu_use_fusion_emitters=false`): over half the suite at
  level 1 they cut compile time by 28% and wall time by 19%, and the programs ran as fast.
  Their one known trap is a long chain of gathers each reading the last one twice, which
  they fuse into code that doubles with each link; `search/reuse.py`'s subtree mask is a
  loop for that reason.

The subprocesses the tests start (notebooks' kernels, `gomoku-jax launch`, the CLI) inherit
the flags through the environment.
"""

from __future__ import annotations

import os

TEST_XLA_FLAGS = ["--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false"]
os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), *TEST_XLA_FLAGS]).strip()

import dataclasses
import fcntl
import functools
import gc
import pathlib
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from compile_stats import (  # noqa: F401  (pytest --compile-stats=DIR)
    pytest_addoption,
    pytest_configure,
    pytest_runtest_protocol,
    pytest_terminal_summary,
)

import gomoku_jax
from gomoku_jax import compilation_cache
from gomoku_jax.agents import Agent
from gomoku_jax.games.gomoku import rules

# Every program goes to the persistent cache, not only those compiling in over half a second
# (the package's default): the suite compiles thousands of small programs, and the same one
# is compiled again by the other xdist worker, by a later test that builds its jitted function
# afresh, or by a notebook's kernel; reading it back takes milliseconds.
compilation_cache.enable(min_compile_seconds=0.0)


# Python's cyclic garbage collector less often: tracing a JAX program allocates millions of
# short-lived objects, and with the default thresholds (700, 10, 10) the collector ran
# through them many times a trace. Over 469 tests (search, agents, io, players, eval) from an
# empty cache: 111 s instead of 114-117 s, the largest process 2.3 GB instead of 2.0 GB.
gc.set_threshold(50_000, 50, 100)


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


# The run of `trained_run`: the "test" preset (7x7, four in a row, canonical observation,
# tiny net, eval agent with 4 simulations) without synthetic examples, 5 iterations, the
# arena every 2 (and at the end) against random and the previous network; checkpoints are
# kept for its last 3 iterations.
TRAINED_SETS = ("replay.synthetic_fraction=0", "eval.every=2", "eval.opponents=random;previous",
                "run.iterations=5")
TRAINED_STEPS = [3, 4, 5]


def trained_config():
    from gomoku_jax import train

    return train.override(train.preset("test"), TRAINED_SETS)


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory, worker_id) -> pathlib.Path:
    """A finished run directory of `gomoku-jax train` (`trained_config()`), made once per
    test session and shared by the pytest-xdist workers (the first one makes it under a
    file lock). Tests that change it work on a copy."""
    from gomoku_jax import train
    from gomoku_jax.players import run_dir as run_dir_format

    base = tmp_path_factory.getbasetemp()
    root = base if worker_id == "master" else base.parent
    run_dir = root / "trained_run"
    with open(root / "trained_run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (run_dir / run_dir_format.SUMMARY_FILE).exists():
            train.train(trained_config(), run_dir, progress=False)
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


def pytest_collection_modifyitems(config, items):
    """The modules that hold `slow` tests first, the rest after them, each in collection
    order. pytest-xdist's loadscope hands out whole modules in this order
    (`--no-loadscope-reorder`, pyproject.toml), so the long end-to-end modules start at once
    and the many short ones fill in around them: no long module left for one worker at the
    end while the other waits."""
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow)
