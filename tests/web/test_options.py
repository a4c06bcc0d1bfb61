"""The page's game options come from the games' spec classes, with no table by game in
web/: a plug-in game with `playable` fields shows up with its fields' kinds, bounds,
defaults, choices and notes (no compile: the options function and /api/config only)."""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import re
from typing import Annotated

import pytest
from starlette.testclient import TestClient

from gomoku_jax import games
from gomoku_jax.configs import Bounds
from gomoku_jax.games.protocol import Env, FieldInfo, GameSpec
from gomoku_jax.web.app import create_app, field_options, game_options
from gomoku_jax.web.seats import AgentBook, playable
from gomoku_jax.web.sessions import SessionStore

WEB = pathlib.Path(__file__).parents[2] / "gomoku_jax" / "web"


@dataclasses.dataclass(frozen=True)
class TinySpec(GameSpec):
    id = "test_tiny"
    playable = ("size", "bonus", "mode", "label")
    title = "Tiny game"
    field_info = {"mode": FieldInfo(label="Play mode", choices={"a": "plain.", "b": "fancy."}),
                  "bonus": FieldInfo(note="added to white's score", step=0.25)}

    size: Annotated[int, Bounds(2, 6)] = 4
    bonus: Annotated[float, Bounds(-1.0, 1.0)] = 0.5
    mode: str = "a"
    label: str = "x"
    hidden: int = 0  # not playable: not on the page

    def __post_init__(self):
        super().__post_init__()
        if self.mode not in ("a", "b"):
            raise ValueError(f"mode must be 'a' or 'b', got {self.mode!r}")


class Tiny(Env):
    """Just enough of a game to be registered and described (never played here)."""

    Spec = TinySpec
    id = "test_tiny"
    version = "v0"
    observation_shape = (1,)

    @property
    def num_actions(self) -> int:
        return self.spec.size

    def init(self, key):
        raise NotImplementedError

    def step(self, state, action, key=None):
        raise NotImplementedError

    def observe(self, state):
        raise NotImplementedError


@pytest.fixture
def tiny():
    games.GAMES.register(Tiny)
    try:
        yield
    finally:
        games.GAMES.unregister("test_tiny")


def by_name(options: dict, game: str) -> dict:
    return {f["name"]: f for f in options[game]["fields"]}


def test_a_plug_in_game_shows_up_with_its_fields(tiny):
    assert playable()["test_tiny"] == ("size", "bonus", "mode", "label")
    assert list(playable())[:2] == ["gomoku", "fauxgo"]  # the package's games first
    options = game_options()
    assert options["test_tiny"]["title"] == "Tiny game"
    fields = by_name(options, "test_tiny")
    assert list(fields) == ["size", "bonus", "mode", "label"]  # `hidden` is not offered
    assert fields["size"] == {"name": "size", "label": "Size", "note": None, "default": 4,
                              "kind": "int", "min": 2, "max": 6, "step": 1}
    assert fields["bonus"] == {"name": "bonus", "label": "Bonus", "default": 0.5,
                               "note": "added to white's score", "kind": "float",
                               "min": -1.0, "max": 1.0, "step": 0.25}
    assert fields["mode"]["kind"] == "choice" and fields["mode"]["label"] == "Play mode"
    assert fields["mode"]["choices"] == [{"value": "a", "note": "plain."},
                                        {"value": "b", "note": "fancy."}]
    assert fields["label"]["kind"] == "text" and fields["label"]["default"] == "x"


def test_the_callers_defaults_replace_the_specs(tiny):
    options = game_options({"test_tiny": {"size": 3, "mode": "b"}, "gomoku": {"board_size": 9}})
    assert by_name(options, "test_tiny")["size"]["default"] == 3
    assert by_name(options, "test_tiny")["mode"]["default"] == "b"
    assert by_name(options, "gomoku")["board_size"]["default"] == 9
    assert by_name(options, "fauxgo")["board_size"]["default"] == 9  # the spec's
    for defaults, words in [({"chess": {}}, "unknown game"),
                            ({"test_tiny": {"hidden": 1}}, "unknown option"),
                            ({"test_tiny": {"size": 9}}, "size must be an int in 2..6"),
                            ({"test_tiny": {"mode": "c"}}, "mode must be 'a' or 'b'"),
                            ({"gomoku": {"win_length": 16, "board_size": 15}},
                             "win_length must be an int in 3..board_size")]:
        with pytest.raises(ValueError, match=words):
            game_options(defaults)


def test_the_config_endpoint_and_the_default_game(tiny):
    store = SessionStore(AgentBook("random", shipped=False))
    try:
        app = create_app(store, default_game="test_tiny", defaults={"test_tiny": {"size": 5}})
        with TestClient(app) as client:
            config = client.get("/api/config").json()
        assert config["default_game"] == "test_tiny"
        assert config["games"]["test_tiny"]["agent"] == "random"
        assert by_name(config["games"], "test_tiny")["size"]["default"] == 5
        with TestClient(create_app(store)) as client:  # none named: the first the page plays
            assert client.get("/api/config").json()["default_game"] == "gomoku"
        with pytest.raises(ValueError, match="unknown game 'chess'"):
            create_app(store, default_game="chess")
        with pytest.raises(ValueError, match="size must be"):
            create_app(store, defaults={"test_tiny": {"size": 1}})
    finally:
        store.close()


def test_a_field_the_page_has_no_control_for_is_an_error():
    @dataclasses.dataclass(frozen=True)
    class Odd(GameSpec):
        id = "test_odd"
        playable = ("flags",)
        flags: tuple[int, ...] = ()

    with pytest.raises(ValueError, match="Odd.flags: the page offers int, float and str"):
        field_options(Odd, "flags", ())


def test_web_names_no_game():
    """No game id in web/'s code (docstrings and comments aside) and no import of a game's
    internals: what differs by game comes from the spec and the env's hooks."""
    ids = {"gomoku", "fauxgo"}
    for path in WEB.glob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                           ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in docstrings:
                assert node.value not in ids, f"{path.name}: {node.value!r}"
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("gomoku_jax.games.gomoku",
                                                   "gomoku_jax.games.fauxgo")), path.name
    for path in (WEB / "static").glob("*.*"):
        code = re.sub(r"//.*|/\*.*?\*/", "", path.read_text(), flags=re.S)
        assert not re.search(r"""["'`](gomoku|fauxgo)["'`]|\.(gomoku|fauxgo)\b""", code), path
