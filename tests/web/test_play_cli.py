"""`gomoku-jax play`: bad flags are clear errors before anything is served; good ones build
the app and print the URL; and the background server answers real HTTP."""

from __future__ import annotations

import httpx2 as httpx
import pytest
import uvicorn

from gomoku_jax import cli
from gomoku_jax.web.app import create_app
from gomoku_jax.web.seats import AgentBook
from gomoku_jax.web.server import background
from gomoku_jax.web.sessions import SessionStore


@pytest.mark.parametrize("argv,words", [
    (["--port", "0"], "--port"),
    (["--port", "70000"], "--port"),
    (["--agent", "nope"], "unknown agent"),
    (["--agent", "mcts:bogus=1"], "bogus"),
    (["--checkpoint", "/nonexistent/run"], "/nonexistent/run"),
    (["--step", "3"], "needs a checkpoint"),
    (["--max-games", "0"], "max_games"),
    (["--idle-minutes", "0"], "idle_s"),
    (["--ms-per-move", "-5"], "ms_per_move"),
])
def test_bad_flags(argv, words, monkeypatch):
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("served"))
    with pytest.raises(SystemExit, match=words):
        cli.main(["play", *argv])


def test_unknown_game_is_refused_by_argparse(capsys):
    with pytest.raises(SystemExit):
        cli.main(["play", "--game", "chess"])
    assert "invalid choice" in capsys.readouterr().err


def test_play_serves_the_app_and_prints_the_url(monkeypatch, capsys):
    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    assert cli.main(["play", "--agent", "random", "--game", "fauxgo", "--port", "8123"]) == 0
    assert served["host"] == "127.0.0.1" and served["port"] == 8123
    assert "http://127.0.0.1:8123/" in capsys.readouterr().out


def test_background_server_answers_http():
    store = SessionStore(AgentBook("random", shipped=False))
    with background(create_app(store, default_game="fauxgo")) as url:
        config = httpx.get(url + "api/config").json()
        assert config["default_game"] == "fauxgo"
        r = httpx.post(url + "api/games", content=b"{oops")
        assert r.status_code == 400 and "JSON" in r.json()["error"]
        assert httpx.get(url).status_code == 200
    with pytest.raises(httpx.TransportError):
        httpx.get(url + "api/config", timeout=2)
