"""Games by name: `make("gomoku", board_size=9)`, `make("pgx/connect_four")`.

`GAMES` is the games' `Registry`: a game's id -> its spec class (a `GameSpec`, the game's
frozen config), so a game is built like every other plug-in (`GAMES.make("gomoku",
board_size="9")` is its spec) and a spec (a training config's game section, a
checkpoint's record) rebuilds its env with `from_spec`. Adding a game is one package under
`games/` plus one line in `ENVS`.
"""

from __future__ import annotations

from typing import Any

from gomoku_jax.games.fauxgo.env import FauxGo
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.pgx_adapter import PgxEnv
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.registry import Registry

PGX_PREFIX = "pgx/"  # "pgx/<pgx env id>" names the pgx game with that env_id

# One line per game: its id -> its env class (whose `Spec` is what `GAMES` holds).
ENVS: dict[str, type[Env]] = {
    "gomoku": Gomoku,
    "fauxgo": FauxGo,
    "pgx": PgxEnv,
}

GAMES = Registry("game")


def register(env_class: type[Env]) -> type[Env]:
    """Add a game: `env_class` under its spec's id (in `ENVS`, and its `Spec` in `GAMES`)."""
    game_id = env_class.Spec.id
    GAMES.register(game_id, env_class.Spec)
    ENVS[game_id] = env_class
    return env_class


for _env in tuple(ENVS.values()):
    register(_env)


def spec_class(game_id: str) -> type[GameSpec]:
    """The GameSpec class of a registered game; ValueError listing the known ids."""
    if game_id not in GAMES:
        raise ValueError(f"{GAMES.unknown(game_id)} (pgx envs as '{PGX_PREFIX}<env id>', "
                         f"e.g. 'pgx/connect_four')")
    return GAMES[game_id]


def from_spec(spec: GameSpec) -> Env:
    """The env a spec describes."""
    spec_class(spec.id)
    return ENVS[spec.id].from_spec(spec)


def make_spec(game_id: str, **options: Any) -> GameSpec:
    """A game's spec by id and options (values may be text: `board_size="9"`);
    "pgx/<env id>" is `make_spec("pgx", env_id=<env id>)`. Raises as `make`."""
    if isinstance(game_id, str) and game_id.startswith(PGX_PREFIX):
        game_id, options = "pgx", {"env_id": game_id[len(PGX_PREFIX):], **options}
    spec_class(game_id)
    return GAMES.make(game_id, **options)


def make(game_id: str, **options: Any) -> Env:
    """An env by name and options, e.g. `make("gomoku", board_size=15, win_length=5,
    rule="freestyle")` or `make("pgx/connect_four")` (= `make("pgx", env_id="connect_four")`).

    Raises:
      ValueError: an unknown game id, an unknown option (the message lists the valid ones),
        or an option value the game refuses.
    """
    return from_spec(make_spec(game_id, **options))
