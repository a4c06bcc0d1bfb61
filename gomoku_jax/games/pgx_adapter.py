"""pgx's two-player envs as games of the platform: `make("pgx/connect_four")`.

pgx (`pip install pgx`, in the dev extra) already follows the conventions the protocol is
written in, so the adapter is thin: `init`, `step` and the state fields pass through,
`observe` returns float32 planes, the move number is pgx's step count. It takes the hooks'
defaults (no symmetries, uniform candidate weights) and knows how long the games it is
tested on can last. pgx is imported when a pgx env is made, not before.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Optional

import jax
import jax.numpy as jnp

from gomoku_jax.configs import NonNegativeInt
from gomoku_jax.games.protocol import Env, GameSpec, State

# The longest game of pgx envs whose length is known (plies); others need `max_game_length`.
KNOWN_LENGTHS = {"tic_tac_toe": 9, "connect_four": 42}


@dataclasses.dataclass(frozen=True)
class PgxGame(GameSpec):
    """A pgx env by its pgx id; `max_game_length` 0 takes the length from `KNOWN_LENGTHS`."""

    id = "pgx"

    env_id: str = "connect_four"
    max_game_length: NonNegativeInt = 0

    def __post_init__(self):
        super().__post_init__()
        if not self.env_id:
            raise ValueError(f"env_id must be a pgx env id, got {self.env_id!r}")
        if self.max_game_length == 0 and self.env_id not in KNOWN_LENGTHS:
            raise ValueError(f"pgx env {self.env_id!r} has no known game length: set "
                             f"max_game_length (known: {sorted(KNOWN_LENGTHS)})")


@functools.lru_cache(maxsize=None)
def _pgx_env(env_id: str):
    # pgx's game modules build jnp constants when they are first imported: imported while
    # a jit is tracing, those constants would be that trace's tracers, leaked into every
    # later use of the game. Importing and making the env at compile-time-eval keeps them
    # concrete.
    with jax.ensure_compile_time_eval():
        try:
            import pgx
        except ImportError:
            raise ValueError("pgx envs need the pgx package: pip install pgx") from None
        try:
            env = pgx.make(env_id)
        except ValueError as e:
            raise ValueError(f"unknown pgx env {env_id!r}: {e}") from None
    if env.num_players != 2:
        raise ValueError(f"pgx env {env_id!r} has {env.num_players} players; the platform "
                         f"plays two-player games")
    return env


class PgxEnv(Env):
    """A pgx env behind the game protocol (`PgxEnv.from_spec(PgxGame("connect_four"))`)."""

    Spec = PgxGame

    @classmethod
    def from_spec(cls, spec: PgxGame) -> "PgxEnv":
        """The env of `spec`; pgx's env is made here, so a bad id fails at once."""
        env = super().from_spec(spec)
        _pgx_env(spec.env_id)
        return env

    @property
    def pgx(self):
        """The wrapped `pgx.Env`."""
        return _pgx_env(self.spec.env_id)

    @property
    def id(self) -> str:
        return f"pgx/{self.spec.env_id}"

    @property
    def version(self) -> str:
        return str(self.pgx.version)

    @property
    def num_actions(self) -> int:
        return int(self.pgx.num_actions)

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return tuple(self.pgx.observation_shape)

    def init(self, key: jax.Array) -> State:
        return self.pgx.init(key)

    def step(self, state: State, action: jax.Array, key: Optional[jax.Array] = None) -> State:
        """pgx's step; an action outside [0, A) is illegal too (pgx would index with it)."""
        action = jnp.asarray(action, jnp.int32)
        in_range = (action >= 0) & (action < self.num_actions)
        stepped = self.pgx.step(state, jnp.where(in_range, action, 0), key)
        live = ~(state.terminated | state.truncated)
        mover = jnp.arange(2) == state.current_player
        forfeit = state.replace(
            rewards=jnp.where(mover, -1.0, 1.0).astype(state.rewards.dtype),
            terminated=jnp.bool_(True),
            legal_action_mask=jnp.ones_like(state.legal_action_mask))
        return jax.tree.map(lambda f, s: jnp.where(live & ~in_range, f, s), forfeit, stepped)

    def observe(self, state: State) -> jax.Array:
        return self.pgx.observe(state).astype(jnp.float32)

    @property
    def max_game_length(self) -> int:
        return self.spec.max_game_length or KNOWN_LENGTHS[self.spec.env_id]

    def move_number(self, state: State) -> jax.Array:
        return state._step_count.astype(jnp.int32)

    def to_svg(self, state: State, **kwargs) -> Optional[str]:
        return state.to_svg()
