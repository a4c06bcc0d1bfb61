"""Bounded work per request: new game configs compile on the store's compile thread, one at
a time behind a capped queue, and never hold up an existing game's AI; a flood beyond the
cap is refused with 429 and changes nothing; the seats kept are capped and a seat live
games use is never evicted; Faux Go's komi is not a config (one seat serves every komi).
Compiles are held open with a gate (a player whose `prepare` waits for an Event), so every
check is about order, never about time."""

from __future__ import annotations

import concurrent.futures
import threading

import pytest
from starlette.testclient import TestClient
from test_api import wait_idle

from gomoku_jax.io.player import TimedPlayer
from gomoku_jax.web.app import create_app
from gomoku_jax.web.seats import AgentBook, Seat
from gomoku_jax.web.sessions import SessionStore

GOMOKU = {"game": "gomoku", "win_length": 4}
FAUXGO = {"game": "fauxgo", "board_size": 5}


class GatedPlayer(TimedPlayer):
    """A player whose compile waits for `gate` (or fails when `fail` is set)."""

    def __init__(self, agent, params, gate: threading.Event, fail: bool = False):
        super().__init__(agent, params)
        self.gate, self.fail = gate, fail

    def prepare(self, env, key):
        assert self.gate.wait(timeout=300), "the test never opened the gate"
        if self.fail:
            raise RuntimeError("compiler exploded")
        return super().prepare(env, key)


class GatedBook(AgentBook):
    """`random` everywhere; seats made while `gate` is set get a `GatedPlayer`."""

    def __init__(self, **kwargs):
        super().__init__("random", shipped=False, **kwargs)
        self.gate: threading.Event | None = None
        self.fail = False

    def make_seat(self, choice) -> Seat:
        seat = super().make_seat(choice)
        if self.gate is not None:
            seat.player = GatedPlayer(choice.agent, choice.params, self.gate, self.fail)
        return seat


def wait_compiled(store, timeout=300.0) -> None:
    """Until the store's compile thread has nothing left."""
    done = threading.Event()
    store._compiler.submit(done.set)
    assert done.wait(timeout)
    while store.compiling():  # the last job's done-callback runs after its result is set
        threading.Event().wait(0.01)


def snapshot(client, store, ids) -> tuple:
    """What a refused request must leave as it was."""
    return (len(store), store.book.seats(), store.compiling(),
            [client.get(f"/api/games/{i}").json() for i in ids])


def test_a_flood_of_new_configs_is_refused_and_existing_games_keep_playing():
    book = GatedBook(max_players=8)
    store = SessionStore(book, max_queued_compiles=1)
    pool = concurrent.futures.ThreadPoolExecutor(2)
    try:
        with TestClient(create_app(store)) as client:
            game = client.post("/api/games", json={**GOMOKU, "board_size": 5}).json()
            faux = wait_idle(client, client.post("/api/games",
                                                 json={**FAUXGO, "komi": 0.5}).json()["id"])
            book.gate = threading.Event()  # new configs' players now compile until opened
            blocked = client.post("/api/games", json={**GOMOKU, "board_size": 6,
                                                      "colour": "white"})
            assert blocked.status_code == 201 and blocked.json()["ai"]["status"] == "compiling"
            assert store.compiling() == 1
            # The existing game's AI moves while the compile is held open.
            client.post(f"/api/games/{game['id']}/move", json={"action": 0})
            game = wait_idle(client, game["id"])
            assert [m["by"] for m in game["moves"]] == ["human", "ai"]
            # One more config may queue (its request waits for its game functions) ...
            queued = pool.submit(client.post, "/api/games", json={**GOMOKU, "board_size": 7})
            while store.compiling() < 2:
                threading.Event().wait(0.01)
            # ... every config beyond is refused, with what to do, and changes nothing.
            before = snapshot(client, store, [game["id"], faux["id"], blocked.json()["id"]])
            for body in [{**GOMOKU, "board_size": 8}, {**FAUXGO, "board_size": 6},
                         {**GOMOKU, "board_size": 5, "rule": "exact5"}]:
                r = client.post("/api/games", json=body)
                assert r.status_code == 429, r.json()
                assert r.headers["retry-after"] == "5" and "busy compiling" in r.json()["error"]
                assert "gomoku (board_size=5, win_length=4, rule=freestyle)" in r.json()["error"]
            assert snapshot(client, store, [game["id"], faux["id"],
                                            blocked.json()["id"]]) == before
            # Komi is no config: any komi plays at once on the compiled 5x5 seat, AI included.
            for komi in (1.5, 2.5, 3.5, -4.5):
                r = client.post("/api/games", json={**FAUXGO, "komi": komi, "colour": "white"})
                assert r.status_code == 201
                view = wait_idle(client, r.json()["id"])
                assert view["config"] == {"board_size": 5, "komi": komi}
                assert view["scores"]["white"] == komi and len(view["moves"]) == 1
                assert store._games[view["id"]].seat is store._games[faux["id"]].seat
            assert not queued.done() and store.compiling() == 2
            book.gate.set()
            assert queued.result(timeout=300).status_code == 201
            assert len(wait_idle(client, blocked.json()["id"])["moves"]) == 1
            wait_compiled(store)
            assert len(book.seats()) == 4
    finally:
        pool.shutdown()
        store.close()


def test_seats_in_use_are_never_evicted_and_a_new_config_then_waits():
    store = SessionStore(AgentBook("random", shipped=False, max_players=2))
    try:
        with TestClient(create_app(store)) as client:
            a = client.post("/api/games", json={**GOMOKU, "board_size": 5}).json()
            b = client.post("/api/games", json={**FAUXGO, "komi": 1.0}).json()
            seats = store.book.seats()
            assert seats == ["gomoku (board_size=5, win_length=4, rule=freestyle)",
                             "fauxgo (board_size=5)"]
            r = client.post("/api/games", json={**GOMOKU, "board_size": 6})
            assert r.status_code == 429 and r.headers["retry-after"] == "60"
            assert "keeps 2 compiled game config(s)" in r.json()["error"], r.json()
            assert store.book.seats() == seats and len(store) == 2
            # Another komi is the same seat: not refused.
            assert client.post("/api/games", json={**FAUXGO, "komi": 9.5}).status_code == 201
            client.delete(f"/api/games/{a['id']}")  # the Gomoku seat is free now
            r = client.post("/api/games", json={**GOMOKU, "board_size": 6})
            assert r.status_code == 201
            assert store.book.seats() == ["fauxgo (board_size=5)",
                                          "gomoku (board_size=6, win_length=4, rule=freestyle)"]
            assert wait_idle(client, b["id"])["ai"]["status"] == "idle"
    finally:
        store.close()


def test_a_failed_compile_is_an_ai_error_and_the_next_game_retries():
    book = GatedBook()
    book.gate, book.fail = threading.Event(), True
    book.gate.set()
    store = SessionStore(book)
    try:
        with TestClient(create_app(store)) as client:
            r = client.post("/api/games", json={**FAUXGO, "colour": "white"})
            assert r.status_code == 201  # the game's functions compiled; the player failed
            view = wait_idle(client, r.json()["id"])
            assert view["ai"]["status"] == "error" and "compile failed" in view["ai"]["message"]
            assert "compiler exploded" in view["ai"]["message"]
            wait_compiled(store)
            assert store.book.seats() == []
            book.fail = False
            view = wait_idle(client, client.post(
                "/api/games", json={**FAUXGO, "colour": "white"}).json()["id"])
            assert view["ai"]["status"] == "idle" and len(view["moves"]) == 1
    finally:
        store.close()


@pytest.mark.parametrize("body,words", [
    ({"game": "gomoku", "board_size": 10**9}, "board_size"),
    ({"game": "gomoku", "board_size": 9, "win_length": 10}, "win_length"),
    ({"game": "fauxgo", "board_size": 4}, "board_size"),
    ({"game": "fauxgo", "komi": 1e308}, "komi"),
])
def test_ranges_are_checked_before_anything_compiles(body, words):
    store = SessionStore(GatedBook())
    try:
        with TestClient(create_app(store)) as client:
            r = client.post("/api/games", json=body)
            assert r.status_code == 400 and words in r.json()["error"], r.json()
            assert store.compiling() == 0 and store.book.seats() == []
    finally:
        store.close()
