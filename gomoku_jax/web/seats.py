"""Which agent plays the AI's side of each game the web UI offers, and its compiled player.

    book = AgentBook()                                  # the default agents
    book = AgentBook(agent="mcts:num_simulations=64")   # mcts wherever it can play
    book = AgentBook(checkpoint="runs/quick")           # the run's network on its game
    seat = book.seat("gomoku", {"board_size": 15})      # -> Seat(env, spec, player)

The agent of a game config, first that applies:

1. `checkpoint`'s network (its own eval agent, `trained`, or `agent` when that is a search
   or policy spec) on the network's game: the same game id and the same `PLAYABLE` fields
   (the env is then the network's, with its own observation planes);
2. `agent` (a spec, `gomoku_jax.agents.specs`) wherever it can play the game;
3. the default (`players.default_agent_spec`, shared with pbrain): Gomoku on the shipped
   network's game (15x15 freestyle five) plays the shipped network's agent, any other Gomoku
   `mcts` (PUCT on the heuristic evaluator with VCF at the root), Faux Go its heuristic AI
   (`fauxgo_heuristic`): the strongest the project measured.

Gomoku is played as `OpeningGomoku` (its search prior follows pbrain's opening rule).
One `TimedPlayer` per game config, compiled once (by the AI's worker thread, see
`sessions`) and kept while at most `max_players` configs are live (least recently used
dropped first), so a new game on a board played before compiles nothing.
"""

from __future__ import annotations

import collections
import threading
from typing import Any, NamedTuple, Optional

from gomoku_jax import agents, games
from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.registry import takes_network
from gomoku_jax.agents.specs import TRAINED, make_agent, network_agent, parse_spec
from gomoku_jax.games.gomoku.opening_rule import OpeningGomoku
from gomoku_jax.games.protocol import Env
from gomoku_jax.io.player import TimedPlayer
from gomoku_jax.players import default_agent_spec, default_network, load, uses_network
from gomoku_jax.players.defaults import PLAYABLE, same_game

# The games the page plays are those of `PLAYABLE`, with the config fields a person chooses
# (the rest, e.g. Gomoku's observation planes, are the network's or the game's defaults).
SHIPPED = "trained (shipped network)"


class Seat(NamedTuple):
    """The AI of one game config: the env it plays, its spec (for people) and its player."""

    env: Env
    spec: str
    player: TimedPlayer


def game_spec(game: str, options: dict[str, Any]):
    """The `GameSpec` of `game` with `options` (a subset of `PLAYABLE[game]`).

    Raises:
      ValueError: an unknown game or option, or a value the game refuses.
    """
    if game not in PLAYABLE:
        raise ValueError(f"unknown game {game!r}; the page plays {sorted(PLAYABLE)}")
    unknown = sorted(set(options) - set(PLAYABLE[game]))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for {game}; allowed: "
                         f"{list(PLAYABLE[game])}")
    return games.spec_class(game)(**options)


def with_opening_rule(env: Env) -> Env:
    """Gomoku as `OpeningGomoku` (the search's prior follows the engines' opening rule: the
    centre on the empty board, near the stones in the first moves, as pbrain's); any other
    game as it is."""
    if env.id != "gomoku":
        return env
    return OpeningGomoku.from_config(env.config)


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
        self._lock = threading.Lock()
        self._players: collections.OrderedDict = collections.OrderedDict()
        self._network = None  # the checkpoint's, else (loaded on first use) the shipped one
        self._network_agent: Optional[Agent] = None  # what plays the network's game
        self._network_label = SHIPPED
        self._agent: Optional[Agent] = None  # what plays every other game it can
        self._agent_spec = agent
        self._trained_spec = TRAINED  # the shipped network's agent
        self._shipped = shipped and checkpoint is None
        if checkpoint is not None:
            self._network = load(checkpoint, step)  # ValueError for a bad path
            self._network_agent = self._agent_for_network(agent or TRAINED)
            self._network_label = f"{agent or TRAINED} ({checkpoint})"
            if not uses_network(self._network_agent):
                self._agent = self._network_agent
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
        if name not in (TRAINED, "gmo") and not takes_network(name):
            return make_agent(spec)
        return network_agent(name, config, self._network)

    def default_spec(self, game: str, options: Optional[dict] = None) -> str:
        """The spec text of the agent that plays `game` with `options`."""
        spec = game_spec(game, options or {})
        with self._lock:
            return self._choose(spec)[1]

    def _choose(self, spec) -> tuple[Env, str, Agent, Any]:
        """(env, spec text, agent, params) for a game spec; see the module docstring."""
        if self._network is None and self._shipped and spec.id == "gomoku":
            self._load_shipped()  # once, on the first Gomoku game
        network = self._network
        if network is not None and same_game(network.game_spec, spec):
            agent = self._network_agent
            return (with_opening_rule(network.env), self._network_label, agent,
                    network.params_for(agent))
        env = with_opening_rule(games.from_spec(spec))
        if self._agent is not None and self._plays(self._agent, env):
            return env, self._agent_spec, self._agent, None
        name = default_agent_spec(spec)  # `trained` only on the shipped network's game
        return env, name, agents.make(name), None

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
        """The AI of a game config (its player uncompiled until first used).

        Raises:
          ValueError: an unknown game or option, or a bad value.
        """
        spec = game_spec(game, options)
        with self._lock:
            env, label, agent, params = self._choose(spec)
            key = (env, label)
            if key in self._players:
                self._players.move_to_end(key)
                return self._players[key]
            seat = Seat(env, label, TimedPlayer(agent, params))
            self._players[key] = seat
            while len(self._players) > self.max_players:
                self._players.popitem(last=False)
            return seat
