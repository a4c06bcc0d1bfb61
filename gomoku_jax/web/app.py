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

The view's fields are in docs/play.md. Game options are the
`seats.PLAYABLE` fields of the game's config (Gomoku: board_size, win_length, rule; Faux Go:
board_size, komi). The store's methods block (the first move on a new board compiles a
game's step function), so they run on Starlette's thread pool; the AI's moves run on the
store's own worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import pathlib
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gomoku_jax import configs
from gomoku_jax.games.fauxgo import config as fauxgo_config
from gomoku_jax.games.gomoku import config as gomoku_config
from gomoku_jax.web.seats import PLAYABLE
from gomoku_jax.web.sessions import COLOURS, ApiError, SessionStore

STATIC = pathlib.Path(__file__).parent / "static"
MAX_BODY_BYTES = 4096
DEFAULT_GAME = "gomoku"

# One line per Gomoku rule (`config.RULES`) for the page's rule selector.
RULE_NOTES = {
    "freestyle": "k or more in a row wins, for both sides.",
    "exact5": "exactly k in a row wins; an overline (more than k) does not.",
    "renju": "black wins only with exactly five and may not play a double-three, "
             "double-four or overline (marked x); white wins with five or more.",
    "caro": "k or more in a row wins unless the opponent's stones block both ends "
            "(the board's edge is no block).",
    "caro_exact5": "caro with exactly k in a row.",
}


def game_options(default_gomoku_size: int = 15) -> dict:
    """What the page may choose for each game (sizes as [min, max])."""
    return {
        "gomoku": {"sizes": [gomoku_config.MIN_BOARD_SIZE, gomoku_config.MAX_BOARD_SIZE],
                   "default_size": default_gomoku_size, "rules": list(gomoku_config.RULES),
                   "rule_notes": {rule: RULE_NOTES[rule] for rule in gomoku_config.RULES},
                   "default_rule": "freestyle", "default_win_length": 5,
                   "win_lengths": [gomoku_config.MIN_WIN_LENGTH, gomoku_config.MAX_BOARD_SIZE]},
        "fauxgo": {"sizes": [fauxgo_config.MIN_BOARD_SIZE, fauxgo_config.MAX_BOARD_SIZE],
                   "default_size": 9, "default_komi": 0.0},
    }


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


def new_game_request(body: dict) -> tuple[str, dict, str]:
    """(game, options, colour) of a new-game body; ApiError(400) for bad keys or types."""
    game = body.get("game", DEFAULT_GAME)
    if not isinstance(game, str) or game not in PLAYABLE:
        raise ApiError(400, f"unknown game {game!r}; choose one of {sorted(PLAYABLE)}")
    colour = body.get("colour", "black")
    if not isinstance(colour, str) or colour not in COLOURS:
        raise ApiError(400, f"colour must be one of {sorted(COLOURS)}, got {colour!r}")
    options = {k: v for k, v in body.items() if k not in ("game", "colour")}
    unknown = sorted(set(options) - set(PLAYABLE[game]))
    if unknown:
        raise ApiError(400, f"unknown option(s) {unknown} for {game}; allowed: "
                            f"{['game', 'colour', *PLAYABLE[game]]}")
    for k, v in options.items():  # JSON types: the game config checks ranges and values
        if isinstance(v, bool) or not isinstance(v, (int, float, str)) \
                or (isinstance(v, float) and not math.isfinite(v)):
            raise ApiError(400, f"option {k!r} has a bad value {v!r}")
    return game, options, colour


def create_app(store: SessionStore, *, default_game: str = DEFAULT_GAME) -> Starlette:
    """The Starlette app over `store` (closed when the app shuts down)."""
    if default_game not in PLAYABLE:
        raise ValueError(f"unknown game {default_game!r}; choose one of {sorted(PLAYABLE)}")

    async def index(request: Request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def config(request: Request):
        options = game_options()
        for game in options:
            options[game]["agent"] = await run_in_threadpool(
                store.book.default_spec, game,
                {"board_size": options[game]["default_size"]})
        return JSONResponse({"default_game": default_game, "games": options,
                             "max_games": store.max_games})

    async def new_game(request: Request):
        game, options, colour = new_game_request(await _body(request))
        while True:
            out = await run_in_threadpool(store.open, game, options, colour)
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
