"""Games by name: `make("gomoku", board_size=9)`, `make("pgx/connect_four")`.

Every game registers its env class here under its spec's `id`; a spec (a `GameSpec`, e.g. a
training config's game section or a checkpoint's record) rebuilds its env with
`from_spec`. Adding a game is one package under `games/` plus one line in `GAMES`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gomoku_jax.games.fauxgo.env import FauxGo
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.pgx_adapter import PgxEnv
from gomoku_jax.games.protocol import Env, GameSpec

# One line per game: spec id -> env class.
GAMES: dict[str, type[Env]] = {
    "gomoku": Gomoku,
    "fauxgo": FauxGo,
    "pgx": PgxEnv,
}


def spec_class(game_id: str) -> type[GameSpec]:
    """The GameSpec class of a registered game; ValueError listing the known ids."""
    if game_id not in GAMES:
        raise ValueError(f"unknown game {game_id!r}; available: {sorted(GAMES)} "
                         f"(pgx envs as 'pgx/<env id>', e.g. 'pgx/connect_four')")
    return GAMES[game_id].Spec


def from_spec(spec: GameSpec) -> Env:
    """The env a spec describes."""
    return GAMES[spec.id].from_spec(spec)


def make(game_id: str, **options: Any) -> Env:
    """An env by name and options, e.g. `make("gomoku", board_size=15, win_length=5,
    rule="freestyle")` or `make("pgx/connect_four")` (= `make("pgx", env_id="connect_four")`).

    Raises:
      ValueError: an unknown game id, an unknown option (the message lists the valid ones),
        or an option value the game refuses.
    """
    if isinstance(game_id, str) and game_id.startswith("pgx/"):
        game_id, options = "pgx", {"env_id": game_id[len("pgx/"):], **options}
    cls = spec_class(game_id)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(options) - fields)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for game {game_id!r}; valid: "
                         f"{sorted(fields)}")
    return from_spec(cls(**options))
