"""The web UI's routes (Starlette): the page, its static files and the JSON API.

    app = create_app(SessionStore(AgentBook()))
    uvicorn.run(app, host="127.0.0.1", port=8000)     # what `gomoku-jax play` does

API (JSON bodies; an error is a 4xx status with {"error": "..."} and changes nothing):

    GET    /api/config                 the games, their options and default agents
    POST   /api/games                  {"game", "colour", and the game's options} -> 201 view
    GET    /api/games/{id}             the game's view (poll while ai.status is busy)
    POST   /api/games/{id}/move        {"action": a} | {"row": r, "col": c} | {"pass": true}
    POST   /api/games/{id}/takeback    undo your last move and the AI's reply
    DELETE /api/games/{id}

The view's fields are in docs/play.md. The games are those whose spec has `playable`
fields (`seats.playable()`), and a game's options are those fields (Gomoku: board_size,
win_length, rule; Faux Go: board_size, komi), described for the page from the spec class
(`game_options`: kind, bounds, default, choices and notes) with no table by game here.
The store's methods block (the first move on a new board compiles a
game's step function), so they run on Starlette's thread pool; the AI's moves run on the
store's own worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import pathlib
import typing
from typing import Annotated, Any, Mapping, Optional

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gomoku_jax import configs
from gomoku_jax.configs import Bounds
from gomoku_jax.games.protocol import FieldInfo
from gomoku_jax.web.seats import game_spec, playable
from gomoku_jax.web.sessions import COLOURS, ApiError, SessionStore

STATIC = pathlib.Path(__file__).parent / "static"
MAX_BODY_BYTES = 4096
NUMBER_KINDS = {int: "int", float: "float"}


def field_options(spec_class: type, name: str, default: Any) -> dict:
    """What the page shows for the `playable` field `name` of a game's spec class: its name,
    label, note, kind ("int", "float", "choice" or "text"), default, and by kind min / max
    (the field's `Bounds`; None: unbounded) and step (None: any), or choices ([{"value",
    "note"}]). Labels, notes, steps and choices come from the spec's `field_info`.

    Raises:
      ValueError: a field type the page has no control for (not an int, float or str).
    """
    info = spec_class.field_info.get(name) or FieldInfo()
    t = configs.field_types(spec_class)[name]
    base, bounds = t, Bounds()
    if typing.get_origin(t) is Annotated:
        base, *extras = typing.get_args(t)
        bounds = next((e for e in extras if isinstance(e, Bounds)), bounds)
    out = {"name": name, "label": info.label or name.replace("_", " ").capitalize(),
           "note": info.note, "default": default}
    if base in NUMBER_KINDS and info.choices is None:
        number = base if base is int else float
        out.update(kind=NUMBER_KINDS[base],
                   min=None if bounds.low is None else number(bounds.low),
                   max=None if bounds.high is None else number(bounds.high),
                   step=info.step if info.step is not None else (1 if base is int else None))
    elif base is str and info.choices is not None:
        out.update(kind="choice", choices=[{"value": v, "note": n}
                                           for v, n in info.choices.items()])
    elif base is str:
        out.update(kind="text")
    else:
        raise ValueError(f"{spec_class.__name__}.{name}: the page offers int, float and str "
                         f"fields (choices for a str), got {t!r}")
    return out


def game_options(defaults: Optional[Mapping[str, Mapping[str, Any]]] = None) -> dict:
    """What the page may choose for each game it plays (`seats.playable()`, in registry
    order): {game id: {"title", "fields": [`field_options` of each playable field]}}, the
    defaults the spec's unless `defaults` ({game id: {field: value}}) says otherwise.

    Raises:
      ValueError: an unknown game or field in `defaults`, or a value the game refuses.
    """
    defaults = dict(defaults or {})
    offered = playable()
    unknown = sorted(set(defaults) - set(offered))
    if unknown:
        raise ValueError(f"defaults for unknown game(s) {unknown}; the page plays "
                         f"{list(offered)}")
    options = {}
    for game, fields in offered.items():
        spec = game_spec(game, dict(defaults.get(game, {})))  # ValueError for bad ones
        cls = type(spec)
        options[game] = {"title": cls.title or game,
                         "fields": [field_options(cls, f, getattr(spec, f)) for f in fields]}
    return options


async def read_capped(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The request's body; ApiError(413) as soon as it is declared or read past `limit`
    bytes (a chunked body with no Content-Length is read no further than that)."""
    too_big = ApiError(413, f"the body is larger than {limit} bytes")
    declared = request.headers.get("content-length", "").strip()
    if declared.isdigit() and int(declared) > limit:
        raise too_big
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise too_big
    return bytes(raw)


async def _body(request: Request) -> dict:
    """The request's JSON object; ApiError(400/413) for anything else."""
    raw = await read_capped(request)
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except RecursionError:
        raise ApiError(400, "the body's JSON is nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, int digit limits
        raise ApiError(400, f"the body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise ApiError(400, f"the body must be a JSON object, got {type(body).__name__}")
    return body


def _integer(body: dict, name: str) -> int:
    try:
        return configs.check_int(repr(name), body[name])
    except ValueError as e:
        raise ApiError(400, str(e)) from None


def move_action(body: dict, board_size: int, pass_action: Any) -> int:
    """The action a move body names: {"action": a}, {"row": r, "col": c} or {"pass": true}
    (exactly one form); ApiError(400) otherwise. Range and legality are checked later."""
    keys = set(body)
    if keys == {"action"}:
        return _integer(body, "action")
    if keys == {"row", "col"}:
        row, col = _integer(body, "row"), _integer(body, "col")
        if not (0 <= row < board_size and 0 <= col < board_size):
            raise ApiError(400, f"(row, col) = ({row}, {col}) is off the {board_size}x"
                                f"{board_size} board")
        return row * board_size + col
    if keys == {"pass"}:
        if body["pass"] is not True:
            raise ApiError(400, f"'pass' must be true, got {body['pass']!r}")
        if pass_action is None:
            raise ApiError(400, "this game has no pass")
        return int(pass_action)
    raise ApiError(400, f"a move is {{'action': int}}, {{'row': int, 'col': int}} or "
                        f"{{'pass': true}}; got the keys {sorted(keys)}")


def new_game_request(body: dict, default_game: Optional[str] = None) -> tuple[str, dict, str]:
    """(game, options, colour) of a new-game body (no "game": `default_game`, else the first
    game the page plays); ApiError(400) for bad keys or types."""
    offered = playable()
    game = body.get("game", default_game or next(iter(offered), None))
    if not isinstance(game, str) or game not in offered:
        raise ApiError(400, f"unknown game {game!r}; choose one of {sorted(offered)}")
    colour = body.get("colour", "black")
    if not isinstance(colour, str) or colour not in COLOURS:
        raise ApiError(400, f"colour must be one of {sorted(COLOURS)}, got {colour!r}")
    options = {k: v for k, v in body.items() if k not in ("game", "colour")}
    unknown = sorted(set(options) - set(offered[game]))
    if unknown:
        raise ApiError(400, f"unknown option(s) {unknown} for {game}; allowed: "
                            f"{['game', 'colour', *offered[game]]}")
    for k, v in options.items():  # JSON types: the game config checks ranges and values
        if isinstance(v, bool) or not isinstance(v, (int, float, str)) \
                or (isinstance(v, float) and not math.isfinite(v)):
            raise ApiError(400, f"option {k!r} has a bad value {v!r}")
    return game, options, colour


def create_app(store: SessionStore, *, default_game: Optional[str] = None,
               defaults: Optional[Mapping[str, Mapping[str, Any]]] = None) -> Starlette:
    """The Starlette app over `store` (closed when the app shuts down).

    Args:
      default_game: the game the page opens with and a new-game body without "game" plays
        (None: the first game the page plays, in registry order).
      defaults: the page's defaults per game, {game id: {playable field: value}}, over the
        spec's (e.g. `{"gomoku": {"board_size": 15}}`); a new-game body without a field
        gets them too.

    Raises:
      ValueError: an unknown game, or a bad default.
    """
    offered = playable()
    if default_game is None:
        if not offered:
            raise ValueError("no registered game has `playable` fields: the page has none")
        default_game = next(iter(offered))
    if default_game not in offered:
        raise ValueError(f"unknown game {default_game!r}; choose one of {sorted(offered)}")
    game_options(defaults)  # ValueError for bad defaults, now
    overrides = {game: dict(values) for game, values in (defaults or {}).items()}

    async def index(request: Request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def config(request: Request):
        games = game_options(defaults)  # a game registered since is on the page too
        for game, described in games.items():
            described["agent"] = await run_in_threadpool(
                store.book.default_spec, game,
                {f["name"]: f["default"] for f in described["fields"]})
        return JSONResponse({"default_game": default_game, "games": games,
                             "max_games": store.max_games})

    async def new_game(request: Request):
        game, chosen, colour = new_game_request(await _body(request), default_game)
        chosen = {**overrides.get(game, {}), **chosen}
        while True:
            out = await run_in_threadpool(store.open, game, chosen, colour)
            if isinstance(out, dict):
                return JSONResponse(out, status_code=201)
            # The config's game functions are compiling: wait without holding a thread
            # (shielded: a client that goes away must not cancel the seat's future).
            try:
                await asyncio.shield(asyncio.wrap_future(out))
            except Exception as e:
                raise ApiError(500, f"compiling this game config failed: {e!r}") from None

    async def get_game(request: Request):
        return JSONResponse(await run_in_threadpool(store.get, request.path_params["game_id"]))

    async def move(request: Request):
        game_id = request.path_params["game_id"]
        body = await _body(request)
        view = await run_in_threadpool(store.get, game_id)  # 404 before the body's details
        action = move_action(body, view["board_size"], view["pass_action"])
        return JSONResponse(await run_in_threadpool(store.move, game_id, action))

    async def takeback(request: Request):
        await _body(request)
        return JSONResponse(await run_in_threadpool(store.takeback,
                                                    request.path_params["game_id"]))

    async def delete(request: Request):
        game_id = request.path_params["game_id"]
        store.delete(game_id)
        return JSONResponse({"deleted": game_id})

    async def api_error(request: Request, exc: ApiError):
        return JSONResponse({"error": exc.message}, status_code=exc.status,
                            headers=exc.headers)

    async def http_error(request: Request, exc: HTTPException):
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    async def server_error(request: Request, exc: Exception):
        return JSONResponse({"error": f"internal error: {exc!r}"}, status_code=500)

    routes = [
        Route("/", index),
        Route("/api/config", config),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", get_game, methods=["GET"]),
        Route("/api/games/{game_id}", delete, methods=["DELETE"]),
        Route("/api/games/{game_id}/move", move, methods=["POST"]),
        Route("/api/games/{game_id}/takeback", takeback, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        store.close()

    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={ApiError: api_error, HTTPException: http_error,
                                        Exception: server_error})
    app.router.redirect_slashes = False  # /api/games/ is a JSON 404, not a redirect
    return app
