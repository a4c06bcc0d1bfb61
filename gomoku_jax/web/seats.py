"""Which agent plays the AI's side of each game the web UI offers, and its compiled player.

    book = AgentBook()                                  # the default agents
    book = AgentBook(agent="mcts:num_simulations=64")   # mcts wherever it can play
    book = AgentBook(checkpoint="runs/quick")           # the run's network on its game
    seat = book.seat("gomoku", {"board_size": 15})      # -> Seat(env, spec, player)
    choice = book.choose("fauxgo", {"komi": 2.5})       # the seat's key, and komi 2.5

The agent of a game config, first that applies:

1. `checkpoint`'s network (its own eval agent, `trained`, or `agent` when that is a search
   or policy spec) on the network's game: the same game id and the same `playable` fields
   (the env is then the network's, with its own observation planes);
2. `agent` (a spec, `gomoku_jax.agents.specs`) wherever it can play the game;
3. the default (`players.default_agent_spec`, shared with pbrain): Gomoku on the shipped
   network's game (15x15 freestyle five) plays the shipped network's agent with the
   MCTS-Solver (`players.SHIPPED_AGENT`), any other game
   its spec's `default_agent` (any other Gomoku `mcts`, PUCT on the heuristic evaluator with
   VCF at the root; Faux Go its heuristic AI, `fauxgo_heuristic`): the strongest the project
   measured.

The games the page offers are the registered games whose spec has `playable` fields (the
config fields a person chooses: `playable()`), a plug-in's too.

Each game is played as its env's `for_people()` (Gomoku: `OpeningGomoku`, whose search
prior follows pbrain's opening rule), and the legal and forbidden cells a person sees are
its `host_masks` (renju's forbidden points).
A seat is one compiled game config: its game's `init`, `step` and `scores` and its
`TimedPlayer`, compiled once by `Seat.compile` (on the store's compile thread, see
`sessions`) and shared by every game on that config. Options that are leaves of the game's
state rather than part of the compiled program (the spec's `traced`: Faux Go's komi) are not part of
the config: one seat plays every komi, and each game's initial state carries its own
(`Choice.start`). The book keeps at most `max_players` seats; a new one evicts the least
recently used seat that no live game uses (`add`), and is refused (`SeatsFull`) when
every seat is in use.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import functools
import threading
from typing import Any, Callable, Collection, NamedTuple, Optional

import jax
import numpy as np

from gomoku_jax import agents, games
from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.registry import network_kinds
from gomoku_jax.agents.specs import TRAINED, make_agent, network_agent, parse_spec
from gomoku_jax.games.protocol import Env
from gomoku_jax.io.player import TimedPlayer
from gomoku_jax.players import default_agent_spec, default_network, load, uses_network
from gomoku_jax.players.defaults import SHIPPED_AGENT, same_game, shipped_game

SHIPPED = f"{SHIPPED_AGENT} (shipped network)"


def playable() -> dict[str, tuple[str, ...]]:
    """{game id: the config fields a person chooses} of every game the page plays, in
    registration order (the package's games first, then plug-ins): the registered games
    whose spec has `playable` fields (the rest of a spec, e.g. Gomoku's observation planes,
    are the network's or the game's defaults)."""
    return {name: tuple(games.spec_class(name).playable) for name in games.GAMES
            if games.spec_class(name).playable is not None}


@functools.lru_cache(maxsize=32)
def compiled_game(env: Env) -> tuple[Callable, Callable]:
    """(jit(env.init), jit(env.step)) of `env`, shared by every seat and game on it."""
    return jax.jit(env.init), jax.jit(env.step)


@functools.lru_cache(maxsize=32)
def compiled_scores(env: Env) -> Optional[Callable]:
    """jit(env.scores), or None for a game without scores."""
    return jax.jit(env.scores) if hasattr(env, "scores") else None


class SeatsFull(Exception):
    """A new game config needs a seat and every seat the book keeps is in use."""


class Seat:
    """The AI of one game config and its compiled functions.

    Attributes:
      env: the game (its traced options at their defaults); spec: the agent, for people;
      player: its `TimedPlayer`.
      init, step, scores: `jax.jit` of the env's (`compiled_game`, `compiled_scores`;
        scores None for a game without them).
      game_ready: a Future, done when `compile` has compiled init, step and scores.
      job: the Future of `compile` on the compile thread (None: not submitted).
    """

    def __init__(self, env: Env, spec: str, player: TimedPlayer):
        self.env, self.spec, self.player = env, spec, player
        self.init, self.step = compiled_game(env)
        self.scores = compiled_scores(env)
        self.game_ready: concurrent.futures.Future = concurrent.futures.Future()
        self.job: Optional[concurrent.futures.Future] = None

    def __repr__(self) -> str:
        return f"Seat({self.env.id} {self.config_text()}, {self.spec})"

    def config_text(self) -> str:
        spec = self.env.spec
        return ", ".join(f"{k}={v}" for k, v in dataclasses.asdict(spec).items()
                         if k in (spec.playable or ()) and k not in spec.traced)

    def compile(self, key: jax.Array) -> None:
        """Compile the game's functions (then `game_ready` is done), then the player (its
        warm calls timed). Blocks for seconds: the store runs it on its compile thread."""
        try:
            state = self.init(key)
            jax.block_until_ready(self.step(state, np.int32(0)))
            self.env.host_masks(jax.device_get(state))  # what it compiles, off the clock
            if self.scores is not None:
                jax.block_until_ready(self.scores(state))
        except BaseException as e:
            self.game_ready.set_exception(e)
            raise
        self.game_ready.set_result(None)
        self.player.prepare(self.env, key)

    def masks(self, state: Any) -> tuple[np.ndarray, np.ndarray]:
        """(legal, forbidden), bool[A] each, of a host `state`: its legal moves, and the
        empty cells the side to move may not play by a rule a person should see (renju:
        black's forbidden points, with black to move and the game on): the env's
        `host_masks`."""
        return self.env.host_masks(state)

    def ready(self) -> bool:
        """Whether the game and the player are compiled."""
        job = self.job
        return job is not None and job.done() and not job.cancelled() and job.exception() is None


class Choice(NamedTuple):
    """What plays a game config: the env (traced options at their defaults), the agent's
    spec text, the agent, its params, and the game's values of the traced options."""

    env: Env
    spec: str
    agent: Agent
    params: Any
    traced: dict

    @property
    def key(self) -> tuple:
        return (self.env, self.spec)

    def start(self, state: Any) -> Any:
        """A new game's initial (host) state with this game's traced options set (the
        state's leaf keeps its dtype and shape, so compiled code is reused)."""
        return state.replace(**{k: np.asarray(v, np.asarray(getattr(state, k)).dtype)
                                for k, v in self.traced.items()})


def game_spec(game: str, options: dict[str, Any]):
    """The `GameSpec` of `game` with `options` (a subset of its `playable` fields).

    Raises:
      ValueError: an unknown game or option, or a value the game refuses.
    """
    offered = playable()
    if game not in offered:
        raise ValueError(f"unknown game {game!r}; the page plays {sorted(offered)}")
    unknown = sorted(set(options) - set(offered[game]))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for {game}; allowed: "
                         f"{list(offered[game])}")
    return games.spec_class(game)(**options)


class AgentBook:
    """The agents of the web UI (see the module docstring).

    Args:
      agent: an agent spec that plays every game it can (None: the defaults).
      checkpoint, step: a trained run whose network plays its own game.
      ms_per_move: the budget of an anytime search's move (search agents), in ms.
      max_players: compiled game configs kept at once.
      shipped: load the shipped network for 15x15 Gomoku (tests turn it off).
    """

    def __init__(self, agent: Optional[str] = None, checkpoint: Optional[str] = None,
                 step: Optional[int] = None, *, ms_per_move: float = 1000.0,
                 max_players: int = 8, shipped: bool = True):
        if ms_per_move < 0:
            raise ValueError(f"ms_per_move must be >= 0, got {ms_per_move}")
        if max_players < 1:
            raise ValueError(f"max_players must be >= 1, got {max_players}")
        if step is not None and checkpoint is None:
            raise ValueError(f"a step ({step}) needs a checkpoint")
        self.budget_s = ms_per_move / 1000.0
        self.max_players = max_players
        self._lock = threading.RLock()
        self._players: collections.OrderedDict = collections.OrderedDict()
        self._network = None  # the checkpoint's, else (loaded on first use) the shipped one
        self._network_agent: Optional[Agent] = None  # what plays the network's game
        self._network_label = SHIPPED
        self._agent: Optional[Agent] = None  # what plays every other game it can
        self._agent_spec = agent
        self._trained_spec = SHIPPED_AGENT  # the shipped network's agent
        self._shipped = shipped and checkpoint is None
        if checkpoint is not None:
            self._network = load(checkpoint, step)  # ValueError for a bad path
            self._network_agent = self._agent_for_network(agent or TRAINED)
            self._network_label = f"{agent or TRAINED} ({checkpoint})"
            if not (uses_network(self._network_agent) or self._network_agent.requires_network):
                self._agent = self._network_agent  # (e.g. a GMO: it plays any game)
        elif agent is not None and parse_spec(agent)[0] != TRAINED:
            self._agent = make_agent(agent)  # ValueError for a bad spec
            self._shipped = False
        elif agent is not None:  # `trained` without a checkpoint: the shipped network
            self._network_label = f"{agent} (shipped network)"
            self._trained_spec = agent
            self._load_shipped()  # now: a bad spec is an error at start, not in a game

    def _agent_for_network(self, spec: str) -> Agent:
        """The agent of `spec` playing with the network (`specs.network_agent`), or, for an
        agent that has no network at all, that agent (it plays every game it can)."""
        name, config = parse_spec(spec)
        if name != TRAINED and not network_kinds(name):
            return make_agent(spec)
        return network_agent(name, config, self._network)

    def default_spec(self, game: str, options: Optional[dict] = None) -> str:
        """The spec text of the agent that plays `game` with `options`."""
        return self.choose(game, options or {}).spec

    def choose(self, game: str, options: dict[str, Any]) -> Choice:
        """What plays `game` with `options` (validated; loads the shipped network on the
        first Gomoku game). Changes no seat.

        Raises:
          ValueError: an unknown game or option, or a bad value.
        """
        spec = game_spec(game, options)
        with self._lock:
            return self._choose(spec)

    def _choose(self, spec) -> Choice:
        """The `Choice` for a game spec; see the module docstring."""
        if self._network is None and self._shipped and spec.id == shipped_game().id:
            self._load_shipped()  # once, on the first game of the shipped network's game
        traced = {k: getattr(spec, k) for k in spec.traced}
        network = self._network
        if network is not None and same_game(network.game_spec, spec):
            agent = self._network_agent
            return Choice(network.env.for_people(), self._network_label, agent,
                          network.params_for(agent), traced)
        defaults = {f.name: f.default for f in dataclasses.fields(spec) if f.name in traced}
        env = games.from_spec(dataclasses.replace(spec, **defaults)).for_people()
        if self._agent is not None and self._plays(self._agent, env):
            return Choice(env, self._agent_spec, self._agent, None, traced)
        name = default_agent_spec(spec)  # `trained` only on the shipped network's game
        return Choice(env, name, agents.make(name), None, traced)

    def _load_shipped(self) -> None:
        self._network = default_network()
        self._network_agent = self._agent_for_network(self._trained_spec)

    @staticmethod
    def _plays(agent: Agent, env: Env) -> bool:
        try:
            agent.check_game(env)
        except ValueError:
            return False
        return True

    def seat(self, game: str, options: dict[str, Any]) -> Seat:
        """The seat of a game config (made, uncompiled, when new; evicting the least
        recently used seat beyond `max_players`).

        Raises:
          ValueError: an unknown game or option, or a bad value.
        """
        choice = self.choose(game, options)
        return self.lookup(choice) or self.add(choice)

    def make_seat(self, choice: Choice) -> Seat:
        """A new seat for `choice` (the hook tests override)."""
        return Seat(choice.env, choice.spec, TimedPlayer(choice.agent, choice.params))

    def lookup(self, choice: Choice) -> Optional[Seat]:
        """The seat of `choice` if the book keeps one (then the most recently used)."""
        with self._lock:
            seat = self._players.get(choice.key)
            if seat is not None:
                self._players.move_to_end(choice.key)
            return seat

    def add(self, choice: Choice, in_use: Collection[Seat] = ()) -> Seat:
        """A new seat for `choice`, evicting least recently used seats not in `in_use` to
        keep at most `max_players`.

        Raises:
          SeatsFull: the book is full and every seat is in `in_use` (nothing changed).
        """
        with self._lock:
            if choice.key in self._players:
                return self._players[choice.key]
            free = [k for k, s in self._players.items() if s not in in_use]
            excess = len(self._players) + 1 - self.max_players
            if excess > len(free):
                raise SeatsFull(f"this server keeps {self.max_players} compiled game "
                                f"config(s) and live games use them all: {self.seats()}")
            for k in free[:max(excess, 0)]:
                del self._players[k]
            seat = self._players[choice.key] = self.make_seat(choice)
            return seat

    def forget(self, seat: Seat) -> None:
        """Drop `seat` (e.g. its compile failed: the next game on its config tries again)."""
        with self._lock:
            for k in [k for k, s in self._players.items() if s is seat]:
                del self._players[k]

    def seats(self) -> list[str]:
        """The configs of the seats kept, in words (least recently used first)."""
        with self._lock:
            return [f"{s.env.id} ({s.config_text()})" for s in self._players.values()]
