"""The play UI's JSON API through Starlette's test client: games, moves, the AI's replies,
takeback, every error path (each changes nothing), isolation, the bounds on live games,
and that the AI never plays an illegal move."""

from __future__ import annotations

import dataclasses
import threading
import time

import jax.numpy as jnp
import numpy as np
import pytest
from engine_search import SEARCH_SPEC
from starlette.testclient import TestClient

from gomoku_jax.agents.base import Agent
from gomoku_jax.games.gomoku.opening_rule import OpeningGomoku
from gomoku_jax.io.player import TimedPlayer
from gomoku_jax.players import default_network_path
from gomoku_jax.web.app import MAX_BODY_BYTES, create_app
from gomoku_jax.web.seats import AgentBook, Seat
from gomoku_jax.web.sessions import SessionStore, legal_move

GOMOKU = {"game": "gomoku", "board_size": 7, "win_length": 4}
FAUXGO = {"game": "fauxgo", "board_size": 5}


def wait_idle(client, game_id, timeout=120.0) -> dict:
    """The game's view once the AI is not compiling or thinking."""
    deadline = time.monotonic() + timeout
    while True:
        view = client.get(f"/api/games/{game_id}").json()
        if view["ai"]["status"] not in ("compiling", "thinking"):
            return view
        assert time.monotonic() < deadline, view["ai"]
        time.sleep(0.02)


@pytest.fixture(scope="module")
def store():
    store = SessionStore(AgentBook("random", shipped=False), max_games=16)
    yield store
    store.close()


@pytest.fixture(scope="module")
def client(store):
    with TestClient(create_app(store)) as client:
        yield client


def new_game(client, **body) -> dict:
    r = client.post("/api/games", json={**GOMOKU, **body})
    assert r.status_code == 201, r.json()
    return wait_idle(client, r.json()["id"])


def stones(view) -> int:
    return int(np.count_nonzero(view["board"]))


def test_config_names_the_games_and_agents(client):
    config = client.get("/api/config").json()
    assert config["default_game"] == "gomoku"
    assert list(config["games"]) == ["gomoku", "fauxgo"]  # registration order
    fields = {game: {f["name"]: f for f in g["fields"]} for game, g in config["games"].items()}
    assert [fields["gomoku"]["board_size"][k] for k in ("kind", "min", "max", "default")] \
        == ["int", 5, 20, 15]
    assert [fields["fauxgo"]["board_size"][k] for k in ("min", "max", "default")] == [5, 19, 9]
    assert fields["fauxgo"]["komi"]["kind"] == "float" and fields["fauxgo"]["komi"]["step"] == 0.5
    assert config["games"]["fauxgo"]["title"] == "Faux Go"
    assert config["games"]["gomoku"]["agent"] == "random"  # --agent plays every game it can


def test_page_and_static_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/missing.js").status_code == 404


def test_a_game_move_by_move(client):
    view = new_game(client, colour="black")
    assert view["your_turn"] and view["human"] == "black" and view["ai"]["colour"] == "white"
    assert stones(view) == 0 and view["moves"] == [] and view["last_action"] == -1
    assert view["config"] == {"board_size": 7, "win_length": 4, "rule": "freestyle",
                              "observation": "absolute", "feature_plane": "none"}
    r = client.post(f"/api/games/{view['id']}/move", json={"row": 3, "col": 3})
    assert r.status_code == 200
    assert r.json()["board"][3][3] == 1 and r.json()["moves"][0]["by"] == "human"
    view = wait_idle(client, view["id"])
    assert stones(view) == 2 and [m["by"] for m in view["moves"]] == ["human", "ai"]
    ai_move = view["moves"][1]
    assert ai_move["colour"] == "white" and view["last_action"] == ai_move["action"]
    row, col = divmod(ai_move["action"], 7)
    assert view["board"][row][col] == -1 and not view["legal"][ai_move["action"]]
    assert view["your_turn"] and view["ai"]["status"] == "idle"
    policy = np.asarray(view["ai"]["policy"])
    assert policy.shape == (49,) and abs(policy.sum() - 1) < 49 * 5e-5 and policy[3 * 7 + 3] == 0
    assert -1 <= view["ai"]["value"] <= 1 and view["ai"]["move_ms"] >= 0
    r = client.post(f"/api/games/{view['id']}/move", json={"action": 0})
    assert r.status_code == 200 and r.json()["board"][0][0] == 1


def test_the_ai_moves_first_when_you_are_white(client):
    view = new_game(client, colour="white")
    assert view["human"] == "white" and view["ai"]["colour"] == "black"
    assert stones(view) == 1 and view["moves"][0]["by"] == "ai" and view["to_move"] == "white"
    assert view["your_turn"]


def test_the_view_says_when_the_ai_compiles():
    from test_bounds import GatedBook  # its players compile only once a gate opens

    book = GatedBook()
    book.gate = threading.Event()
    store = SessionStore(book)  # nothing compiled yet
    try:
        with TestClient(create_app(store)) as client:
            view = client.post("/api/games", json={**GOMOKU, "colour": "white"}).json()
            assert view["ai"]["status"] == "compiling" and "compiling" in view["ai"]["message"]
            assert not view["your_turn"]
            book.gate.set()
            assert wait_idle(client, view["id"])["ai"]["message"] is None
            view = client.post("/api/games", json={**GOMOKU, "colour": "white"}).json()
            assert view["ai"]["status"] in ("thinking", "idle")  # compiled once per board
    finally:
        store.close()


def test_takeback_restores_the_position_before_your_move(client):
    view = new_game(client)
    before = client.post(f"/api/games/{view['id']}/move", json={"action": 10}).json()
    before = wait_idle(client, view["id"])
    client.post(f"/api/games/{view['id']}/move", json={"action": 20})
    wait_idle(client, view["id"])
    back = client.post(f"/api/games/{view['id']}/takeback")
    assert back.status_code == 200
    back = back.json()
    assert back["board"] == before["board"] and back["moves"] == before["moves"]
    assert back["your_turn"] and back["ai"]["policy"] is None
    back = client.post(f"/api/games/{view['id']}/takeback").json()
    assert stones(back) == 0 and back["moves"] == []


def test_takeback_as_white_keeps_the_ais_opening(client):
    view = new_game(client, colour="white")
    empty = next(i for i, ok in enumerate(view["legal"]) if ok)
    client.post(f"/api/games/{view['id']}/move", json={"action": empty})
    wait_idle(client, view["id"])
    back = client.post(f"/api/games/{view['id']}/takeback").json()
    assert back["moves"] == view["moves"] and back["board"] == view["board"]
    r = client.post(f"/api/games/{view['id']}/takeback")
    assert r.status_code == 409 and "no move of yours" in r.json()["error"]


BAD_MOVES = [
    ({"action": 49}, 400, "outside"),
    ({"action": -1}, 400, "outside"),
    ({"action": True}, 400, "an int"),
    ({"action": 1.5}, 400, "an int"),
    ({"action": "3"}, 400, "an int"),
    ({"row": 7, "col": 0}, 400, "off the"),
    ({"row": 0}, 400, "keys"),
    ({"row": 1, "col": 1, "action": 8}, 400, "keys"),
    ({}, 400, "keys"),
    ({"pass": True}, 400, "no pass"),
    ({"pass": False}, 400, "must be true"),
]


@pytest.mark.parametrize("body,status,words", BAD_MOVES, ids=lambda x: str(x))
def test_bad_moves_are_refused_and_change_nothing(client, body, status, words):
    view = new_game(client)
    client.post(f"/api/games/{view['id']}/move", json={"action": 24})
    before = wait_idle(client, view["id"])
    r = client.post(f"/api/games/{view['id']}/move", json=body)
    assert r.status_code == status and words in r.json()["error"], r.json()
    assert client.get(f"/api/games/{view['id']}").json() == before


@pytest.mark.parametrize("raw,status,words", [
    (b"{", 400, "not valid JSON"),
    (b"[1, 2]", 400, "JSON object"),
    (b"\xff\xfe", 400, "not valid JSON"),
    (b"null", 400, "JSON object"),
    (b'{"action": ' + b"1" * MAX_BODY_BYTES + b"}", 413, "larger"),
])
def test_malformed_bodies_are_refused(client, raw, status, words):
    view = new_game(client)
    r = client.post(f"/api/games/{view['id']}/move", content=raw)
    assert r.status_code == status and words in r.json()["error"], r.json()
    assert client.get(f"/api/games/{view['id']}").json() == view


def test_an_occupied_cell_is_not_a_legal_move(client):
    view = new_game(client)
    view = client.post(f"/api/games/{view['id']}/move", json={"action": 5}).json()
    view = wait_idle(client, view["id"])
    taken = view["moves"][1]["action"]  # the AI's stone
    for action in (5, taken):
        r = client.post(f"/api/games/{view['id']}/move", json={"action": action})
        assert r.status_code == 400 and "not a legal move" in r.json()["error"]
    assert client.get(f"/api/games/{view['id']}").json() == view


@pytest.mark.parametrize("body,words", [
    ({"game": "chess"}, "unknown game"),
    ({"game": 3}, "unknown game"),
    ({"game": "gomoku", "board_size": 99}, "board_size"),
    ({"game": "gomoku", "board_size": "9"}, "board_size"),
    ({"game": "gomoku", "board_size": True}, "bad value"),
    ({"game": "gomoku", "rule": "go"}, "rule must be one of"),
    ({"game": "gomoku", "rule": "renju", "win_length": 4}, "defined for win_length 5"),
    ({"game": "gomoku", "komi": 0.5}, "unknown option"),
    ({"game": "gomoku", "observation": "canonical"}, "unknown option"),
    ({"game": "fauxgo", "rule": "exact5"}, "unknown option"),
    ({"game": "fauxgo", "komi": [1]}, "bad value"),
    ({"colour": "red"}, "colour"),
    ({"colour": None}, "colour"),
])
def test_bad_new_games_are_refused(client, store, body, words):
    live = len(store)
    r = client.post("/api/games", json=body)
    assert r.status_code == 400 and words in r.json()["error"], r.json()
    assert len(store) == live


def test_unknown_games_routes_and_methods(client):
    for method, path in [("get", "/api/games/nope"), ("post", "/api/games/nope/move"),
                         ("post", "/api/games/nope/takeback"), ("delete", "/api/games/nope")]:
        r = getattr(client, method)(path, **({"json": {"action": 0}} if method == "post"
                                             else {}))
        assert r.status_code == 404 and "no game 'nope'" in r.json()["error"]
    assert client.get("/api/nothing").status_code == 404
    r = client.put("/api/games")
    assert r.status_code == 405 and r.json()["error"]


def test_delete_ends_a_game(client):
    view = new_game(client)
    assert client.delete(f"/api/games/{view['id']}").json() == {"deleted": view["id"]}
    assert client.get(f"/api/games/{view['id']}").status_code == 404


def test_games_are_isolated(client):
    a, b = new_game(client), new_game(client)
    client.post(f"/api/games/{a['id']}/move", json={"action": 0})
    wait_idle(client, a["id"])
    assert client.get(f"/api/games/{b['id']}").json() == b


def first_legal(view) -> int:
    return next(i for i, ok in enumerate(view["legal"]) if ok)


def test_a_game_to_its_end_then_moves_are_refused(client):
    view = new_game(client, board_size=5, win_length=3)
    while not view["over"]:
        r = client.post(f"/api/games/{view['id']}/move", json={"action": first_legal(view)})
        assert r.status_code == 200, r.json()
        view = wait_idle(client, view["id"])
        assert all(m["by"] == ("human" if m["colour"] == "black" else "ai")
                   for m in view["moves"])
    assert view["winner"] in ("black", "white", "draw") and view["result"]
    assert not any(view["legal"]) and not view["your_turn"]
    r = client.post(f"/api/games/{view['id']}/move", json={"action": 0})
    assert r.status_code == 409 and "over" in r.json()["error"]
    assert client.get(f"/api/games/{view['id']}").json() == view
    # Every move of the game was legal when played: replaying it fills distinct cells.
    actions = [m["action"] for m in view["moves"]]
    assert len(set(actions)) == len(actions) == stones(view)


def test_faux_go_passes_scores_and_enclosures(client):
    r = client.post("/api/games", json=FAUXGO)
    view = wait_idle(client, r.json()["id"])
    assert view["pass_action"] == 25 and len(view["legal"]) == 26
    assert view["scores"] == {"black": 0.0, "white": 0.0}
    assert view["captures"] == {"black": 0, "white": 0}
    assert np.asarray(view["owner"]).shape == (5, 5)
    while not view["over"]:
        r = client.post(f"/api/games/{view['id']}/move", json={"pass": True})
        assert r.status_code == 200, r.json()
        view = wait_idle(client, view["id"])
    assert view["moves"][0]["text"] == "pass" and view["result"]
    assert view["winner"] == {1: "black", -1: "white", 0: "draw"}[
        int(np.sign(view["scores"]["black"] - view["scores"]["white"]))]


class Gate:
    """Holds the AI's worker until released: the AI stays 'thinking'."""

    def __init__(self, store):
        self.event = threading.Event()
        store._worker.submit(self.event.wait)

    def release(self):
        self.event.set()


def test_moves_and_takebacks_wait_for_the_ai(client, store):
    view = new_game(client)
    client.post(f"/api/games/{view['id']}/move", json={"action": 0})
    view = wait_idle(client, view["id"])
    gate = Gate(store)
    try:
        r = client.post(f"/api/games/{view['id']}/move", json={"action": first_legal(view)})
        thinking = r.json()
        assert thinking["ai"]["status"] == "thinking" and not thinking["your_turn"]
        for path, body in [("move", {"action": first_legal(thinking)}), ("takeback", None)]:
            r = client.post(f"/api/games/{view['id']}/{path}", json=body)
            assert r.status_code == 409 and r.json()["error"]
            assert client.get(f"/api/games/{view['id']}").json() == thinking
    finally:
        gate.release()
    assert len(wait_idle(client, view["id"])["moves"]) == 4


def test_the_ais_move_is_dropped_when_its_game_goes(client, store):
    view = new_game(client)
    gate = Gate(store)
    try:
        client.post(f"/api/games/{view['id']}/move", json={"action": 0})
        client.delete(f"/api/games/{view['id']}")
    finally:
        gate.release()
    store._worker.submit(lambda: None).result()  # the AI's move has run (and was dropped)
    assert client.get(f"/api/games/{view['id']}").status_code == 404


def test_live_games_are_bounded_and_idle_ones_expire():
    now = [0.0]
    store = SessionStore(AgentBook("random", shipped=False), max_games=2, idle_s=60,
                         clock=lambda: now[0])
    try:
        with TestClient(create_app(store)) as client:
            a, b = (client.post("/api/games", json=GOMOKU).json() for _ in range(2))
            now[0] = 10.0
            client.get(f"/api/games/{a['id']}")  # a is used: b is the least recently used
            c = client.post("/api/games", json=GOMOKU).json()
            assert len(store) == 2
            assert client.get(f"/api/games/{b['id']}").status_code == 404
            now[0] = 69.0
            assert client.get(f"/api/games/{c['id']}").status_code == 200
            now[0] = 71.0  # a was last used at 10
            assert client.get(f"/api/games/{a['id']}").status_code == 404
            assert len(store) == 1
    finally:
        store.close()


@dataclasses.dataclass(frozen=True)
class AlwaysZero(Agent):
    """A broken agent: plays action 0 whatever the position."""

    name = "always_zero"

    def act(self, params, agent_state, state, key):
        policy = jnp.zeros(self.game.num_actions).at[3].set(1.0)
        return jnp.int32(0), agent_state, {"policy": policy, "value": jnp.float32(0)}


class BrokenBook(AgentBook):
    def make_seat(self, choice):
        return Seat(choice.env, "always_zero", TimedPlayer(AlwaysZero()))


def test_the_ai_never_plays_an_illegal_move():
    store = SessionStore(BrokenBook("random", shipped=False))
    try:
        with TestClient(create_app(store)) as client:
            view = new_game(client)
            client.post(f"/api/games/{view['id']}/move", json={"action": 0})
            view = wait_idle(client, view["id"])
            assert view["moves"][1]["action"] == 3  # the policy's best legal move, not 0
            assert "illegal action 0" in view["ai"]["message"]
    finally:
        store.close()


def test_legal_move():
    legal = np.array([False, True, True])
    assert legal_move(1, legal, np.zeros(3)) == (1, None)
    assert legal_move(0, legal, np.array([0.9, 0.0, 0.1]))[0] == 2
    assert legal_move(7, legal, np.zeros(3))[0] in (1, 2)


def test_default_agents():
    book = AgentBook(shipped=True)
    assert book.default_spec("gomoku", {"board_size": 15}) == \
        "trained:solver=true,proof_nodes=16 (shipped network)"
    assert book.default_spec("gomoku", {"board_size": 15, "rule": "exact5"}) == "mcts"
    assert book.default_spec("gomoku", {"board_size": 9}) == "mcts"
    assert book.default_spec("fauxgo") == "fauxgo_heuristic"
    seat = book.seat("gomoku", {"board_size": 15})
    assert seat.player.params is not None and isinstance(seat.env, OpeningGomoku)
    assert seat.env.config == book._network.env.config  # the network's own planes
    assert AgentBook("heuristic", shipped=False).default_spec("fauxgo") == "fauxgo_heuristic"


def test_agent_book_errors():
    with pytest.raises(ValueError, match="unknown agent"):
        AgentBook("nope", shipped=False)
    with pytest.raises(ValueError, match="needs a checkpoint"):
        AgentBook(step=3, shipped=False)
    with pytest.raises(ValueError, match="ms_per_move"):
        AgentBook(ms_per_move=-1, shipped=False)
    with pytest.raises(ValueError):
        AgentBook(checkpoint="/nonexistent/run")


def test_checkpoint_network_plays_its_own_game():
    run = str(default_network_path())  # any run directory; this one needs no training
    book = AgentBook(checkpoint=run)
    assert book.default_spec("gomoku", {"board_size": 15}) == f"trained ({run})"
    assert book.seat("gomoku", {"board_size": 15}).player.params is not None
    assert book.default_spec("gomoku", {"board_size": 9}) == "mcts"  # not the network's game
    assert book.default_spec("fauxgo") == "fauxgo_heuristic"
    searcher = AgentBook("gumbel:num_simulations=8", checkpoint=run)
    assert searcher._network_agent.evaluator == "network"
    assert searcher.default_spec("gomoku", {"board_size": 15}).startswith("gumbel:")
    plain = AgentBook("heuristic", checkpoint=run)  # an agent without a network: everywhere
    assert plain.seat("gomoku", {"board_size": 15}).player.params is None
    assert plain.default_spec("gomoku", {"board_size": 9}) == "heuristic"


def test_a_muzero_checkpoint_plays_its_own_game_only(tmp_path):
    """A MuZero run's agent plays the run's game (5×5 four in a row) with the run's params;
    another game of the same shapes (five in a row on 5×5) gets that game's default agent,
    not the MuZero agent without its params."""
    from muzero_run import write_run

    run = str(write_run(tmp_path / "mz"))
    book = AgentBook(checkpoint=run)
    assert book.default_spec("gomoku", {"board_size": 5, "win_length": 4}) == \
        f"trained ({run})"
    assert book.seat("gomoku", {"board_size": 5, "win_length": 4}).player.params is not None
    other = book.choose("gomoku", {"board_size": 5, "win_length": 5})
    assert other.spec == "mcts" and other.params is None


def test_a_search_ai_opens_at_the_centre_and_trees_are_bounded():
    """Gomoku is played with pbrain's opening rule: as black, a search opens at the centre
    (the proximity mask alone gives every cell of the empty board the same prior). Only the
    most recently used games keep their AI's search tree (`max_trees`). The search and the
    game of the pbrain tests (`engine_search`): the persistent cache holds their programs."""
    store = SessionStore(AgentBook(SEARCH_SPEC, shipped=False), seed=3, max_trees=1)
    try:
        with TestClient(create_app(store)) as client:
            a = new_game(client, board_size=7, win_length=5, colour="white")
            assert a["moves"][0]["action"] == 3 * 7 + 3
            assert store._games[a["id"]].agent_state is not None
            b = new_game(client, board_size=7, win_length=5, colour="white")
            assert store._games[b["id"]].agent_state is not None
            assert store._games[a["id"]].agent_state is None  # a's AI starts a new tree
            client.post(f"/api/games/{a['id']}/move", json={"action": 0})
            a = wait_idle(client, a["id"])
            assert a["ai"]["status"] == "idle" and len(a["moves"]) == 3
    finally:
        store.close()
