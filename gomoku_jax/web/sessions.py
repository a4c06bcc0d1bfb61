"""The web UI's games: a bounded store of sessions, each a person against an AI, and the
one worker thread that runs the AI's moves (compiling first when its game is new).

    store = SessionStore(AgentBook())
    view = store.new("gomoku", {"board_size": 15}, colour="black")
    view = store.move(view["id"], {"row": 7, "col": 7})   # the AI's reply is scheduled
    view = store.get(view["id"])                          # poll until ai.status is "idle"

Every method returns the game's view (`view.game_view`) or raises `ApiError` with an HTTP
status and a message; a refused request changes nothing. Sessions are isolated (each has
its own states, agent state and key); at most `max_games` live at once (a new game evicts
the least recently used one) and a game untouched for `idle_s` seconds expires. The AI's
moves run one at a time on the worker thread, because one game's search uses the whole
machine; a move that finishes after its game was taken back, deleted or expired is dropped.
The AI plays only legal moves: a move its agent returns outside the legal mask (a bug) is
replaced by its policy's best legal move, and the view's `ai.message` says so.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import functools
import itertools
import secrets
import threading
import time
from typing import Any, Callable, Optional

import jax
import numpy as np

from gomoku_jax.games.protocol import Env
from gomoku_jax.web import view as views
from gomoku_jax.web.seats import AgentBook, Seat

COLOURS = {"black": 1, "white": -1}


class ApiError(Exception):
    """A refused request: `status` (4xx) and a message for the person."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@functools.lru_cache(maxsize=32)
def compiled_game(env: Env) -> tuple[Callable, Callable]:
    """(jit(env.init), jit(env.step)) of `env`, shared by every game on it."""
    return jax.jit(env.init), jax.jit(env.step)


@dataclasses.dataclass
class Session:
    """One game: `states[i]` is the position after `moves[:i]` (host copies of the env's
    state pytree); `ai` the AI's status and its last move's analysis."""

    id: str
    seat: Seat
    human: int  # +1 black, -1 white
    states: list
    moves: list  # of views.Move
    key: jax.Array
    agent_state: Any = None
    ai: views.AiInfo = dataclasses.field(default_factory=views.AiInfo)
    generation: int = 0  # bumped by every change; the worker drops stale results
    last_used: float = 0.0

    @property
    def env(self) -> Env:
        return self.seat.env

    @property
    def state(self):
        return self.states[-1]

    def to_move(self) -> int:
        return int(self.state.color)

    def over(self) -> bool:
        return bool(self.state.terminated) or bool(self.state.truncated)

    def busy(self) -> bool:
        return self.ai.status in ("compiling", "thinking")


class SessionStore:
    """The live games (see the module docstring).

    Args:
      book: which agent plays each game config.
      max_games: live games at most (>= 1).
      max_trees: games whose AI keeps its search tree between moves (the most recently
        used; a tree is tens of MB on big boards; the others' AIs start a new tree).
      idle_s: seconds after which an untouched game expires.
      seed: the games' keys derive from it.
      clock: monotonic seconds (injectable for tests).
    """

    def __init__(self, book: AgentBook, *, max_games: int = 64, max_trees: int = 8,
                 idle_s: float = 1800.0, seed: int = 0,
                 clock: Callable[[], float] = time.monotonic):
        if max_games < 1:
            raise ValueError(f"max_games must be >= 1, got {max_games}")
        if max_trees < 0:
            raise ValueError(f"max_trees must be >= 0, got {max_trees}")
        if idle_s <= 0:
            raise ValueError(f"idle_s must be > 0, got {idle_s}")
        self.book = book
        self.max_games, self.max_trees, self.idle_s = max_games, max_trees, idle_s
        self._clock = clock
        self._lock = threading.RLock()
        self._games: collections.OrderedDict[str, Session] = collections.OrderedDict()
        self._counter = itertools.count()
        self._key = jax.random.key(seed)
        self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ai")

    def close(self) -> None:
        """Stop the AI's worker (a move in progress finishes first)."""
        self._worker.shutdown(wait=True, cancel_futures=True)

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._games)

    # -- requests ---------------------------------------------------------------------------

    def new(self, game: str, options: dict, colour: str = "black") -> dict:
        """A new game; the AI moves first when the person is white."""
        if colour not in COLOURS:
            raise ApiError(400, f"colour must be one of {sorted(COLOURS)}, got {colour!r}")
        try:
            seat = self.book.seat(game, options)
        except ValueError as e:
            raise ApiError(400, str(e)) from None
        init, _ = compiled_game(seat.env)
        key = jax.random.fold_in(self._key, next(self._counter))
        state = jax.device_get(init(key))
        views.warm(seat.env, state)
        with self._lock:
            self._expire()
            while len(self._games) >= self.max_games:
                self._games.popitem(last=False)[1].generation += 1  # evicted: drop its AI move
            session = Session(secrets.token_urlsafe(9), seat, COLOURS[colour], [state], [], key,
                              last_used=self._clock())
            self._games[session.id] = session
            self._schedule_ai(session)
            return self._view(session)

    def get(self, game_id: str) -> dict:
        with self._lock:
            return self._view(self._session(game_id))

    def move(self, game_id: str, action: int) -> dict:
        """The person's move `action` (validated), then the AI's reply is scheduled."""
        with self._lock:
            s = self._session(game_id)
            self._check_turn(s)
            if not 0 <= action < s.env.num_actions:
                raise ApiError(400, f"action {action} is outside 0..{s.env.num_actions - 1}")
            if not bool(s.state.legal_action_mask[action]):
                raise ApiError(400, f"{s.env.action_to_text(action)} is not a legal move "
                                    f"here")
            state = s.state
        _, step = compiled_game(s.env)
        new_state = jax.device_get(step(state, np.int32(action)))  # outside the lock
        with self._lock:
            if self._games.get(game_id) is not s or s.state is not state:
                raise ApiError(409, "the game changed while the move was applied; reload it")
            self._push(s, action, new_state, "human")
            self._schedule_ai(s)
            return self._view(s)

    def takeback(self, game_id: str) -> dict:
        """Undo the person's last move and the AI's replies after it."""
        with self._lock:
            s = self._session(game_id)
            if s.busy():
                raise ApiError(409, "the AI is moving; take back when it has played")
            last = max((i for i, m in enumerate(s.moves) if m.by == "human"), default=None)
            if last is None:
                raise ApiError(409, "there is no move of yours to take back")
            del s.moves[last:]
            del s.states[last + 1:]
            s.generation += 1
            s.agent_state = None  # the AI's tree belonged to the later position
            s.ai = views.AiInfo()
            return self._view(s)

    def delete(self, game_id: str) -> None:
        with self._lock:
            self._session(game_id)
            self._games.pop(game_id).generation += 1

    # -- internals --------------------------------------------------------------------------

    def _session(self, game_id: str) -> Session:
        self._expire()
        s = self._games.get(game_id) if isinstance(game_id, str) else None
        if s is None:
            raise ApiError(404, f"no game {game_id!r} (games expire after {self.idle_s:.0f} s "
                                f"idle, and the oldest goes when {self.max_games} are live)")
        s.last_used = self._clock()
        self._games.move_to_end(game_id)
        return s

    def _expire(self) -> None:
        limit = self._clock() - self.idle_s
        for game_id in [g for g, s in self._games.items() if s.last_used < limit]:
            self._games.pop(game_id).generation += 1

    def _check_turn(self, s: Session) -> None:
        if s.over():
            raise ApiError(409, "the game is over: start a new game or take back")
        if s.busy() or s.to_move() != s.human:
            raise ApiError(409, "it is not your turn: the AI is to move")

    def _push(self, s: Session, action: int, state, by: str) -> None:
        colour = "black" if s.to_move() == 1 else "white"
        text = "pass" if action == s.env.pass_action else s.env.action_to_text(action)
        s.moves.append(views.Move(len(s.moves) + 1, colour, action, text, by))
        s.states.append(state)
        s.generation += 1

    def _view(self, s: Session) -> dict:
        return views.game_view(s.id, s.env, s.state, s.human, s.moves, s.ai, s.seat.spec,
                               your_turn=not s.over() and not s.busy()
                               and s.to_move() == s.human)

    def _schedule_ai(self, s: Session) -> None:
        if s.over() or s.to_move() == s.human:
            return
        prepared = s.seat.player.prepared(s.env)
        s.ai = dataclasses.replace(
            s.ai, status="thinking" if prepared else "compiling",
            message=None if prepared else
            f"compiling {s.seat.spec} for this board (the first game on it only)")
        self._worker.submit(self._ai_move, s, s.generation)

    def _ai_move(self, s: Session, generation: int) -> None:
        """The AI's move in `s` (on the worker thread)."""
        with self._lock:
            if s.generation != generation:
                return
            state, agent_state = s.state, s.agent_state
            key = jax.random.fold_in(s.key, len(s.moves))
        player, env = s.seat.player, s.env
        try:
            if not player.prepared(env):
                player.prepare(env, key)
                with self._lock:
                    if s.generation == generation:
                        s.ai = dataclasses.replace(s.ai, status="thinking", message=None)
            if agent_state is None:
                agent_state = player.init_state(env, key)
            played = player.move(env, state, agent_state, key, budget_s=self.book.budget_s)
            legal = np.asarray(state.legal_action_mask)
            policy = views.policy_of(played.info, played.action, env.num_actions)
            action, message = legal_move(played.action, legal, policy)
            _, step = compiled_game(env)
            new_state = jax.device_get(step(state, np.int32(action)))
            sims = played.simulations if played.simulations is not None else getattr(
                player.variants[played.variant], "num_simulations", None)
            value = played.info.get("value")
            ai = views.AiInfo("idle", message, None if value is None else float(value),
                              policy, 1000.0 * played.seconds, sims)
        except Exception as e:  # the game stays as it was; the page shows the error
            with self._lock:
                if s.generation == generation:
                    s.ai = dataclasses.replace(s.ai, status="error",
                                               message=f"the AI failed: {e!r}")
            return
        with self._lock:
            if s.generation != generation:
                return
            s.agent_state = played.agent_state
            self._push(s, action, new_state, "ai")
            s.ai = ai
            self._bound_trees()

    def _bound_trees(self) -> None:
        """Keep the agent states (search trees) of the `max_trees` most recently used games."""
        kept = 0
        for other in reversed(self._games.values()):
            if other.agent_state is not None:
                kept += 1
                if kept > self.max_trees:
                    other.agent_state = None


def legal_move(action: int, legal: np.ndarray, policy: np.ndarray) -> tuple[int, Optional[str]]:
    """(`action`, None) when legal, else (the legal action `policy` likes best, a message)."""
    if 0 <= action < legal.size and legal[action]:
        return action, None
    best = int(np.argmax(np.where(legal, policy + 1e-9, -1.0)))
    return best, f"the agent chose an illegal action {action}; played {best} instead"
