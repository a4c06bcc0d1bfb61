"""The play server's security defaults: it listens on loopback unless told otherwise and
warns when not; static files cannot be read outside the package (path traversal, however
spelled); a body is read no further than its cap, with or without Content-Length; game ids
are unguessable and a wrong id is a 404 that names no other game."""

from __future__ import annotations

import asyncio
import base64
import os
import pathlib

import pytest
import uvicorn
from starlette.routing import Mount
from starlette.testclient import TestClient

from gomoku_jax import cli
from gomoku_jax.cli.play import is_loopback
from gomoku_jax.web import app as web_app
from gomoku_jax.web.app import MAX_BODY_BYTES, create_app
from gomoku_jax.web.seats import AgentBook
from gomoku_jax.web.sessions import SessionStore

APP_SOURCE = pathlib.Path(web_app.__file__).read_text()


@pytest.fixture(scope="module")
def app():
    store = SessionStore(AgentBook("random", shipped=False), max_games=64)
    yield create_app(store)
    store.close()


def call(app, path: str, raw_path: bytes, method: str = "GET", headers=(), chunks=()):
    """One request straight through the ASGI app, as uvicorn passes it (`path` decoded,
    `raw_path` as sent); the body is sent in `chunks` (a chunked upload when there is no
    Content-Length). Returns (status, body, chunks the app read)."""
    chunks, sent, out = list(chunks) or [b""], [0], {"body": b""}
    answered = asyncio.Event()

    async def receive():
        if sent[0] < len(chunks):
            sent[0] += 1
            return {"type": "http.request", "body": chunks[sent[0] - 1],
                    "more_body": sent[0] < len(chunks)}
        await answered.wait()  # the client hangs up once answered
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
        elif message["type"] == "http.response.body":
            out["body"] += message.get("body", b"")
            if not message.get("more_body", False):
                answered.set()

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": raw_path,
             "root_path": "", "query_string": b"", "server": ("127.0.0.1", 8000),
             "client": ("127.0.0.1", 5000), "headers": [(k.encode(), v.encode())
                                                        for k, v in headers]}
    async def main():
        await asyncio.wait_for(app(scope, receive, send), timeout=60)

    asyncio.run(main())
    return out["status"], out["body"], sent[0]


@pytest.mark.parametrize("path,raw", [
    ("/static/../app.py", b"/static/../app.py"),
    ("/static/../app.py", b"/static/%2e%2e/app.py"),
    ("/static/../app.py", b"/static/..%2fapp.py"),
    ("/static/../../web/app.py", b"/static/%2E%2E/%2E%2E/web/app.py"),
    ("/static/..\\app.py", b"/static/..%5capp.py"),
    ("/static//etc/passwd", b"/static/%2fetc%2fpasswd"),
    ("/static//etc/passwd", b"//static//etc/passwd"),
    (f"/static/{pathlib.Path(web_app.__file__)}", b"/static/abs"),
    ("/static/....//app.py", b"/static/....//app.py"),
    ("/static/%2e%2e/app.py", b"/static/%252e%252e/app.py"),  # double-encoded
    ("/static/\x00/../app.py", b"/static/%00/../app.py"),
])
def test_static_files_cannot_be_read_outside_the_package(app, path, raw):
    status, body, _ = call(app, path, raw)
    assert 400 <= status < 500, (status, body[:200])
    assert APP_SOURCE[:60].encode() not in body and b"root:" not in body


def test_static_files_are_served_from_a_symlink_free_folder(app):
    assert call(app, "/static/app.js", b"/static/app.js")[0] == 200
    static = next(r for r in app.routes if isinstance(r, Mount) and r.path == "/static")
    assert static.app.follow_symlink is False
    root = pathlib.Path(web_app.STATIC)
    assert not any(p.is_symlink() for p in [root, *root.rglob("*")])


@pytest.mark.parametrize("headers", [[], [("content-length", "10")],
                                     [("transfer-encoding", "chunked")]])
def test_a_body_is_read_no_further_than_its_cap(app, headers):
    """A 1 MB upload in 1 KB chunks, with no or a lying Content-Length: the app stops
    reading just past `MAX_BODY_BYTES` and answers 413 (it used to read it all first)."""
    chunk = b"x" * 1024
    status, body, read = call(app, "/api/games", b"/api/games", "POST", headers,
                              [chunk] * 1024)
    assert status == 413 and b"larger than" in body
    assert read <= MAX_BODY_BYTES // len(chunk) + 1


def test_a_declared_oversized_body_is_refused_before_it_is_read(app):
    status, _, read = call(app, "/api/games", b"/api/games", "POST",
                           [("content-length", str(10**12))], [b"{}"])
    assert status == 413 and read == 0  # not even the first chunk


def test_game_ids_are_unguessable_and_a_wrong_id_names_no_game(app):
    with TestClient(app) as client:
        ids = [client.post("/api/games", json={"game": "gomoku", "board_size": 5,
                                               "win_length": 4}).json()["id"]
               for _ in range(12)]
        other = SessionStore(AgentBook("random", shipped=False), seed=0)  # the same seed
        try:
            again = other.new("gomoku", {"board_size": 5, "win_length": 4})["id"]
        finally:
            other.close()
        assert len(set(ids + [again])) == 13
        for game_id in ids:
            assert len(base64.urlsafe_b64decode(game_id + "==")) >= 16  # >= 128 random bits
        prefix = os.path.commonprefix(ids)
        assert len(prefix) <= 3  # nothing shared: no counter, no clock
        for wrong in (ids[0][:-1] + ("A" if ids[0][-1] != "A" else "B"), ids[0].upper(),
                      "0", "1", ids[0] + "x"):
            if wrong in ids:
                continue
            r = client.get(f"/api/games/{wrong}")
            assert r.status_code == 404  # it echoes the id asked for (ids[0]'s kin), no other
            assert not any(i in r.text for i in ids[1:])
            r = client.post(f"/api/games/{wrong}/move", json={"action": 0})
            assert r.status_code == 404 and not any(i in r.text for i in ids[1:])


@pytest.mark.parametrize("host,loopback", [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("LOCALHOST.", True), ("0.0.0.0", False), ("::", False),
    ("192.168.1.5", False), ("example.com", False),
])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("argv,warned", [([], False), (["--host", "localhost"], False),
                                         (["--host", "0.0.0.0"], True),
                                         (["--host", "192.168.1.5"], True)])
def test_play_binds_loopback_by_default_and_warns_otherwise(argv, warned, monkeypatch,
                                                             capsys):
    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(kw))
    assert cli.main(["play", "--agent", "random", *argv]) == 0
    assert served["host"] == (argv[1] if argv else "127.0.0.1")
    err = capsys.readouterr().err
    assert ("warning:" in err and "no authentication" in err) is warned, err
