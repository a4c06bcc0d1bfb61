"""The play UI under every Gomoku rule: the rule selector's options, one API game per rule
whose outcome differs by rule (an overline, a five blocked at both ends, a black
double-three), renju's forbidden points in the view and a refused forbidden move that
changes nothing, and an AI that never plays one."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest
from starlette.testclient import TestClient

from gomoku_jax.agents.base import Agent
from gomoku_jax.games.gomoku.config import RULES
from gomoku_jax.io.player import TimedPlayer
from gomoku_jax.web.app import create_app
from gomoku_jax.web.seats import AgentBook, Seat
from gomoku_jax.web.sessions import SessionStore

N = 9
# The AI's cells, in order (x, y): two that block row 6's ends, then spread-out corners.
AI_CELLS = [(0, 6), (6, 6), (8, 8), (8, 2), (2, 8), (8, 0), (0, 8), (8, 4)]


@dataclasses.dataclass(frozen=True)
class ListAgent(Agent):
    """Plays the first empty cell of `cells` (actions; else the last empty cell), forbidden
    or not: the server must not let it play a forbidden one. It never reads the legal mask,
    whose renju scan would cost one more compile."""

    name = "list"
    cells: tuple = ()

    def act(self, params, agent_state, state, key):
        empty = state.board.reshape(-1) == 0
        rank = jnp.arange(empty.size, dtype=jnp.float32) / empty.size
        for i, cell in enumerate(self.cells):
            rank = rank.at[cell].set(len(self.cells) + 1 - i)
        action = jnp.argmax(jnp.where(empty, rank, -1.0))
        return action.astype(jnp.int32), agent_state, {"policy": empty / jnp.sum(empty),
                                                       "value": jnp.float32(0.0)}


class ListBook(AgentBook):
    def __init__(self, agent: Agent):
        super().__init__("random", shipped=False)
        self.list_agent = agent

    def make_seat(self, choice):
        return Seat(choice.env, "list", TimedPlayer(self.list_agent))


def wait_idle(client, game_id) -> dict:
    from test_api import wait_idle as wait

    return wait(client, game_id)


@pytest.fixture(scope="module")
def client():
    store = SessionStore(ListBook(ListAgent(cells=tuple(y * N + x for x, y in AI_CELLS))))
    with TestClient(create_app(store)) as client:
        yield client
    store.close()


def new_game(client, rule: str, colour: str = "black") -> dict:
    r = client.post("/api/games", json={"game": "gomoku", "board_size": N, "rule": rule,
                                        "colour": colour})
    assert r.status_code == 201, r.json()
    return wait_idle(client, r.json()["id"])


# The person (black) plays these cells (x, y); the last one's outcome under each rule.
SCENES = {
    "overline": ([(0, 0), (1, 0), (2, 0), (4, 0), (5, 0), (3, 0)], {
        "freestyle": "black wins", "exact5": "goes on", "renju": "forbidden",
        "caro": "black wins", "caro_exact5": "goes on"}),
    "five blocked at both ends": ([(1, 6), (2, 6), (3, 6), (4, 6), (5, 6)], {
        "freestyle": "black wins", "exact5": "black wins", "renju": "black wins",
        "caro": "goes on", "caro_exact5": "goes on"}),
    "double-three": ([(2, 4), (3, 4), (4, 2), (4, 3), (4, 4)], {
        "freestyle": "goes on", "exact5": "goes on", "renju": "forbidden",
        "caro": "goes on", "caro_exact5": "goes on"}),
}


def test_the_rule_selector_offers_every_rule(client):
    gomoku = client.get("/api/config").json()["games"]["gomoku"]
    rule = next(f for f in gomoku["fields"] if f["name"] == "rule")
    assert rule["kind"] == "choice" and rule["default"] == "freestyle"
    notes = {c["value"]: c["note"] for c in rule["choices"]}
    assert list(notes) == list(RULES)
    assert all(isinstance(note, str) and note and "\n" not in note for note in notes.values())
    assert "double-three" in notes["renju"]


@pytest.mark.parametrize("rule", RULES)
def test_one_game_per_rule(client, rule):
    for name, (cells, expected) in SCENES.items():
        view = new_game(client, rule)
        assert view["config"]["rule"] == rule
        for x, y in cells[:-1]:
            r = client.post(f"/api/games/{view['id']}/move", json={"row": y, "col": x})
            assert r.status_code == 200, (name, r.json())
            view = wait_idle(client, view["id"])
            assert not view["over"] and view["your_turn"], (name, view["result"])
            assert not any(view["forbidden"]) or rule == "renju"
        x, y = cells[-1]
        action = y * N + x
        assert view["forbidden"][action] == (expected[rule] == "forbidden"), name
        assert view["legal"][action] == (expected[rule] != "forbidden"), name
        r = client.post(f"/api/games/{view['id']}/move", json={"row": y, "col": x})
        if expected[rule] == "forbidden":
            assert r.status_code == 400, (name, r.json())
            error = r.json()["error"]
            assert "forbidden point for black under renju" in error and "double-three" in error
            assert client.get(f"/api/games/{view['id']}").json() == view  # nothing changed
            continue
        assert r.status_code == 200, (name, r.json())
        after = wait_idle(client, view["id"])
        if expected[rule] == "black wins":
            assert after["over"] and after["winner"] == "black", (name, after["moves"])
            assert after["result"] == "Black (you) wins"
            assert not any(after["legal"]) and not any(after["forbidden"])
        else:
            assert not after["over"] and after["your_turn"], (name, after["result"])


def test_the_ai_as_black_never_plays_a_forbidden_point():
    """An AI that asks for black's double-three point gets its policy's best playable move
    instead."""
    crossing = 4 * N + 4
    agent = ListAgent(cells=(2 * N + 4, 3 * N + 4, 4 * N + 2, 4 * N + 3, crossing))
    store = SessionStore(ListBook(agent))
    try:
        with TestClient(create_app(store)) as client:
            view = new_game(client, "renju", colour="white")
            for x, y in [(0, 8), (8, 8), (0, 0), (8, 0)]:  # far from the AI's cross
                r = client.post(f"/api/games/{view['id']}/move", json={"row": y, "col": x})
                assert r.status_code == 200, r.json()
                view = wait_idle(client, view["id"])
            assert view["forbidden"] == [False] * (N * N)  # white to move: nothing marked
            assert [m["action"] for m in view["moves"] if m["by"] == "ai"][-1] != crossing
            assert np.asarray(view["board"]).reshape(-1)[crossing] == 0
            assert "illegal action 40" in view["ai"]["message"]
    finally:
        store.close()
