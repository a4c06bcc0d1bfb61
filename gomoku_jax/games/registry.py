"""Games by name: `make("gomoku", board_size=9)`, `make("pgx/connect_four")`.

`GAMES` is the games' `Registry`: a game's id -> its `Env` class, whose `Spec` (a
`GameSpec`, the game's frozen config, with the game's defaults for the layers above as class
attributes) is what `GAMES.make` builds (`GAMES.make("gomoku", board_size="9")` is its
spec), and a spec (a training config's game section, a checkpoint's record) rebuilds its env
with `from_spec`. A game registers under its spec's `id`, from inside the package or
outside it, with one call:

    @games.GAMES.register        # or gomoku_jax.plugins.register("game")
    class Nim(Env):
        Spec = NimSpec           # NimSpec.id == "nim"
        ...

Adding a game is then one module plus that registration (docs/plugins.md).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from gomoku_jax.games.fauxgo.env import FauxGo
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.pgx_adapter import PgxEnv
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.registry import Registry

PGX_PREFIX = "pgx/"  # "pgx/<pgx env id>" names the pgx game with that env_id


def _spec_of(env_class: Any) -> Any:
    """A game's config: its env class's `Spec` (ValueError for something else)."""
    spec = getattr(env_class, "Spec", None) if isinstance(env_class, type) else None
    if not (isinstance(spec, type) and issubclass(spec, GameSpec)):
        raise ValueError(f"a game is an Env subclass whose Spec is a GameSpec subclass, got "
                         f"{env_class!r}")
    return spec


def _spec_id(env_class: Any) -> str:
    return _spec_of(env_class).id


def check_env_class(env_class: Any) -> None:
    """ValueError for a game class that lacks what the protocol needs: an `Env` subclass
    with every abstract member (`num_actions`, `observation_shape`, `init`, `step`,
    `observe`, `id`, `version`) defined and a `Spec` of its own with an `id`."""
    if not (isinstance(env_class, type) and issubclass(env_class, Env)):
        raise ValueError(f"a game must be a subclass of gomoku_jax.games.Env, got "
                         f"{env_class!r}")
    if inspect.isabstract(env_class):
        missing = sorted(getattr(env_class, "__abstractmethods__", ()))
        raise ValueError(f"game {env_class.__name__} does not define {missing} of the game "
                         f"protocol (gomoku_jax.games.protocol.Env)")
    spec = _spec_of(env_class)
    if spec is GameSpec or spec.id == GameSpec.id or not dataclasses.is_dataclass(spec):
        raise ValueError(f"game {env_class.__name__} needs a Spec of its own: a frozen "
                         f"dataclass subclass of GameSpec with a class attribute `id`")


GAMES = Registry("game", config_of=_spec_of, name_of=_spec_id, check=check_env_class)
GAMES.register(Gomoku)
GAMES.register(FauxGo)
GAMES.register(PgxEnv)


def register(env_class: type[Env]) -> type[Env]:
    """`GAMES.register(env_class)`: the game under its spec's id (a decorator too)."""
    return GAMES.register(env_class)


def spec_class(game_id: str) -> type[GameSpec]:
    """The GameSpec class of a registered game; ValueError listing the known ids."""
    if game_id not in GAMES:
        raise ValueError(f"{GAMES.unknown(game_id)} (pgx envs as '{PGX_PREFIX}<env id>', "
                         f"e.g. 'pgx/connect_four')")
    return GAMES.config(game_id)


def env_class(game_id: str) -> type[Env]:
    """The Env class of a registered game; ValueError listing the known ids."""
    spec_class(game_id)
    return GAMES[game_id]


def from_spec(spec: GameSpec) -> Env:
    """The env a spec describes."""
    return env_class(spec.id).from_spec(spec)


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
