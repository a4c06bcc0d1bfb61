"""The API test every env passes (`games.api_check.check_env`), on Gomoku in several configs
and on pgx's tic_tac_toe and connect_four through the adapter; and the check itself fails
on envs that break the protocol."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

import gomoku_jax
from gomoku_jax import games
from gomoku_jax.games.api_check import check_env
from gomoku_jax.games.pgx_adapter import PgxEnv, PgxGame

ENVS = {
    "gomoku-7x7-k4-canonical": dict(game_id="gomoku", board_size=7, win_length=4,
                                    observation="canonical"),
    "gomoku-9x9-exact5-patterns": dict(game_id="gomoku", board_size=9, rule="exact5",
                                       feature_plane="patterns"),
    "fauxgo-5-komi": dict(game_id="fauxgo", board_size=5, komi=0.5),
    "pgx-tic_tac_toe": dict(game_id="pgx/tic_tac_toe"),
    "pgx-connect_four": dict(game_id="pgx/connect_four"),
}


@pytest.mark.parametrize("name", list(ENVS))
def test_env_passes_the_api_check(name):
    options = dict(ENVS[name])
    check_env(games.make(options.pop("game_id"), **options), batch=8)


def test_make_names_games_and_refuses_unknown_ones():
    assert gomoku_jax.make("pgx/connect_four") == games.make("pgx", env_id="connect_four")
    assert gomoku_jax.make("gomoku", board_size=9).num_actions == 81
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        games.make("chess")
    with pytest.raises(ValueError, match=r"unknown field 'komi' for game 'gomoku'; valid "
                                         r"fields: \['board_size', 'feature_plane'"):
        games.make("gomoku", komi=0.5)
    with pytest.raises(ValueError, match="unknown pgx env"):
        games.make("pgx/no_such_game", max_game_length=10).num_actions
    with pytest.raises(ValueError, match="no known game length"):
        games.make("pgx/go_9x9")


class NoForfeit(PgxEnv):
    """tic_tac_toe where an action outside [0, A) is silently replaced by a legal one."""

    def step(self, state, action, key=None):
        legal = jnp.argmax(state.legal_action_mask)
        action = jnp.where((action < 0) | (action >= self.num_actions), legal, action)
        return self.pgx.step(state, action, key)


def test_the_check_catches_a_broken_env():
    with pytest.raises(AssertionError, match="action -1 must end a live game"):
        check_env(NoForfeit.from_spec(PgxGame("tic_tac_toe")), batch=4)


def test_pgx_adapter_forfeits_an_out_of_range_action_and_keeps_pgx_semantics():
    env = games.make("pgx/connect_four")
    step = jax.jit(env.step)  # (one compile: stepped eagerly, pgx's ops compile one by one)
    state = jax.jit(env.init)(jax.random.key(3))
    mover = int(state.current_player)
    lost = step(state, jnp.int32(7))
    assert bool(lost.terminated)
    assert lost.rewards.tolist()[mover] == -1 and lost.rewards.tolist()[1 - mover] == 1
    again = step(lost, jnp.int32(0))  # a finished game stays as it is, zero rewards
    assert bool(again.terminated) and again.rewards.tolist() == [0.0, 0.0]
    assert env.observe(state).dtype == jnp.float32 and env.observe(state).shape == (6, 7, 2)
    assert dataclasses.asdict(env.spec) == {"env_id": "connect_four", "max_game_length": 0}


PGX_FIRST_USE_IN_A_TRACE = """
import jax
from gomoku_jax.games import pgx_adapter
env = jax.jit(lambda k: pgx_adapter._pgx_env("connect_four").init(k))(jax.random.key(0))
pgx_env = pgx_adapter._pgx_env("connect_four")
after = pgx_env.step(pgx_env.init(jax.random.key(1)), 3)  # leaked tracers would raise here
print("ok", int(after.current_player) in (0, 1))
"""


def test_pgx_imported_first_inside_a_trace_keeps_its_constants_concrete():
    """pgx builds jnp constants when its game modules are imported; the adapter imports
    them at compile-time eval, so a first use inside a jit does not leak tracers into the
    game (in a fresh process: pgx is already imported here)."""
    proc = subprocess.run([sys.executable, "-c", PGX_FIRST_USE_IN_A_TRACE],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert proc.returncode == 0 and "ok True" in proc.stdout, proc.stderr[-2000:]


def test_a_bad_pgx_id_fails_when_the_env_is_made():
    with pytest.raises(ValueError, match="unknown pgx env 'connect_five'"):
        games.make("pgx/connect_five", max_game_length=30)
