"""The web UI's games: a bounded store of sessions, each a person against an AI; the
compile thread that compiles new game configs; and the one worker thread that runs the
AI's moves.

    store = SessionStore(AgentBook())
    view = store.new("gomoku", {"board_size": 15}, colour="black")
    view = store.move(view["id"], 7 * 15 + 7)             # the AI's reply is scheduled
    view = store.get(view["id"])                          # poll until ai.status is "idle"

Every method returns the game's view (`view.game_view`) or raises `ApiError` with an HTTP
status and a message; a refused request changes nothing. Sessions are isolated (each has
its own states, agent state and key); at most `max_games` live at once (a new game evicts
the least recently used one) and a game untouched for `idle_s` seconds expires.

Work is bounded per request. A new game config (a `Seat`: the game's init/step/scores and
the AI's player) compiles on the compile thread, one at a time, with at most
`max_queued_compiles` waiting behind the one in flight: a new config beyond that is refused
with 429 (`busy`), as it is when the book's `max_players` seats are all used by live games.
Faux Go's komi is not part of a config (a leaf of the game's state), so one seat serves
every komi. The AI's moves run one at a time on the worker thread (one game's search uses
the whole machine) and never wait for a compile: a game whose seat is compiling gets its
AI move scheduled when the compile ends. A move that finishes after its game was taken
back, deleted or expired is dropped. The AI plays only legal moves: a move its agent
returns outside the legal mask (a bug) is replaced by its policy's best legal move, and
the view's `ai.message` says so. The legal moves are the env's `host_masks` (`Seat.masks`),
which may leave out forbidden cells (Gomoku under renju: black's forbidden points): the
view lists them (`forbidden`), a person's move onto one is refused with a 400 naming the
rule (the env's `forbidden_note`), and the AI never plays one.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
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
from gomoku_jax.web.seats import AgentBook, Choice, Seat, SeatsFull

COLOURS = {"black": 1, "white": -1}
RETRY_COMPILE_S = 5  # Retry-After of a new config refused while others compile
RETRY_SEATS_S = 60  # Retry-After of a new config refused while every seat is in use


class ApiError(Exception):
    """A refused request: `status` (4xx) and a message for the person, and HTTP headers
    (e.g. Retry-After of a 429)."""

    def __init__(self, status: int, message: str, headers: Optional[dict] = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


@dataclasses.dataclass
class Session:
    """One game: `states[i]` is the position after `moves[:i]` (host copies of the env's
    state pytree); `ai` the AI's status and its last move's analysis."""

    id: str
    seat: Seat
    config: dict  # the game's config for the view (traced options included)
    human: int  # +1 black, -1 white
    states: list
    moves: list  # of views.Move
    key: jax.Array
    agent_state: Any = None
    ai: views.AiInfo = dataclasses.field(default_factory=views.AiInfo)
    generation: int = 0  # bumped by every change; the worker drops stale results
    last_used: float = 0.0
    _masks: tuple = (None, None)  # (state, its (legal, forbidden) as NumPy bool[A])

    @property
    def env(self) -> Env:
        return self.seat.env

    @property
    def state(self):
        return self.states[-1]

    def to_move(self) -> int:
        return int(self.state.color)

    def masks(self, state: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """(legal, forbidden), bool[A] each, of `state` (default the current one; its masks
        are kept: every poll of the view reads them): `Seat.masks`."""
        state = self.state if state is None else state
        if self._masks[0] is not state:
            self._masks = (state, self.seat.masks(state))
        return self._masks[1]

    def over(self) -> bool:
        return bool(self.state.terminated) or bool(self.state.truncated)

    def busy(self) -> bool:
        return self.ai.status in ("compiling", "thinking")


class SessionStore:
    """The live games (see the module docstring).

    Args:
      book: which agent plays each game config (its `max_players` bounds the seats).
      max_games: live games at most (>= 1).
      max_trees: games whose AI keeps its search tree between moves (the most recently
        used; a tree is tens of MB on big boards; the others' AIs start a new tree).
      idle_s: seconds after which an untouched game expires.
      max_queued_compiles: new configs that may wait behind the one compiling (>= 0).
      seed: the games' keys derive from it.
      clock: monotonic seconds (injectable for tests).
    """

    def __init__(self, book: AgentBook, *, max_games: int = 64, max_trees: int = 8,
                 idle_s: float = 1800.0, max_queued_compiles: int = 2, seed: int = 0,
                 clock: Callable[[], float] = time.monotonic):
        if max_games < 1:
            raise ValueError(f"max_games must be >= 1, got {max_games}")
        if max_trees < 0:
            raise ValueError(f"max_trees must be >= 0, got {max_trees}")
        if idle_s <= 0:
            raise ValueError(f"idle_s must be > 0, got {idle_s}")
        if max_queued_compiles < 0:
            raise ValueError(f"max_queued_compiles must be >= 0, got {max_queued_compiles}")
        self.book = book
        self.max_games, self.max_trees, self.idle_s = max_games, max_trees, idle_s
        self.max_queued_compiles = max_queued_compiles
        self._clock = clock
        self._lock = threading.RLock()
        self._games: collections.OrderedDict[str, Session] = collections.OrderedDict()
        self._counter = itertools.count()
        self._key = jax.random.key(seed)
        self._compiling: set[Seat] = set()  # seats whose compile job has not ended
        self._compiler = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="compile")
        self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ai")

    def close(self) -> None:
        """Stop the compile thread and the AI's worker (work in progress finishes first)."""
        self._compiler.shutdown(wait=True, cancel_futures=True)
        self._worker.shutdown(wait=True, cancel_futures=True)

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._games)

    # -- requests ---------------------------------------------------------------------------

    def new(self, game: str, options: dict, colour: str = "black") -> dict:
        """A new game; the AI moves first when the person is white. Blocks while the
        game's config compiles its game functions (see `open`)."""
        while True:
            out = self.open(game, options, colour)
            if isinstance(out, dict):
                return out
            compile_failure(out)

    def open(self, game: str, options: dict, colour: str = "black"
             ) -> "dict | concurrent.futures.Future":
        """A new game's view, or, when its config's game functions are still compiling, a
        Future to wait for (without a thread: the app awaits it) before calling again.

        Raises:
          ApiError: 400 for a bad game, option or colour; 429 when the config is new and
            the compile queue is full or every seat is used by live games (with
            Retry-After); 500 when the config failed to compile.
        """
        if not isinstance(colour, str) or colour not in COLOURS:
            raise ApiError(400, f"colour must be one of {sorted(COLOURS)}, got {colour!r}")
        try:
            choice = self.book.choose(game, options)  # checked before anything compiles
        except ValueError as e:
            raise ApiError(400, str(e)) from None
        with self._lock:
            self._expire()
            seat = self._seat(choice)
        if not seat.game_ready.done():
            return seat.game_ready
        compile_failure(seat.game_ready)
        key = jax.random.fold_in(self._key, next(self._counter))
        state = choice.start(jax.device_get(seat.init(key)))
        config = {**dataclasses.asdict(seat.env.config), **choice.traced}
        with self._lock:
            self._expire()
            while len(self._games) >= self.max_games:
                self._games.popitem(last=False)[1].generation += 1  # evicted: drop its AI move
            session = Session(secrets.token_urlsafe(16), seat, config, COLOURS[colour],
                              [state], [], key, last_used=self._clock())
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
            legal, forbidden = s.masks()
            if not legal[action] and forbidden[action]:
                raise ApiError(400, f"{s.env.action_to_text(action)} is "
                                    f"{s.env.forbidden_note}: play another point")
            if not legal[action]:
                raise ApiError(400, f"{s.env.action_to_text(action)} is not a legal move "
                                    f"here")
            state = s.state
        new_state = jax.device_get(s.seat.step(state, np.int32(action)))  # outside the lock
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

    def compiling(self) -> int:
        """Configs compiling or waiting to (at most 1 + `max_queued_compiles`)."""
        with self._lock:
            return len(self._compiling)

    # -- internals --------------------------------------------------------------------------

    def _seat(self, choice: Choice) -> Seat:
        """The seat of `choice`, its compile submitted when new; ApiError(429) when that
        needs a compile the queue has no room for, or a seat no live game uses (under the
        lock; a refusal changes nothing)."""
        seat = self.book.lookup(choice)
        if seat is not None and seat.job is not None:
            return seat
        if len(self._compiling) > self.max_queued_compiles:
            raise ApiError(429, f"the server is busy compiling {len(self._compiling)} other "
                                f"game config(s); retry in a few seconds, or start a game on "
                                f"a config it has: {self.book.seats()}",
                           {"Retry-After": str(RETRY_COMPILE_S)})
        if seat is None:
            in_use = {g.seat for g in self._games.values()} | self._compiling
            try:
                seat = self.book.add(choice, in_use)
            except SeatsFull as e:
                raise ApiError(429, f"{e}; start a game on one of those, or retry when a game "
                                    f"ends (games expire after {self.idle_s:.0f} s idle)",
                               {"Retry-After": str(RETRY_SEATS_S)}) from None
        self._compiling.add(seat)
        seat.job = self._compiler.submit(seat.compile, jax.random.key(0))
        seat.job.add_done_callback(functools.partial(self._compiled, seat))
        return seat

    def _compiled(self, seat: Seat, job: concurrent.futures.Future) -> None:
        """A seat's compile job ended (on the compile thread): a failed seat is dropped
        (the next game on its config tries again); its games' AI moves are scheduled by
        the callbacks `_schedule_ai` added."""
        with self._lock:
            self._compiling.discard(seat)
            if job.cancelled() or job.exception() is not None:
                self.book.forget(seat)
                if not seat.game_ready.done():  # cancelled before it started
                    seat.game_ready.set_exception(RuntimeError("the server is closing"))

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
                               and s.to_move() == s.human, config=s.config,
                               scores=s.seat.scores, masks=s.masks())

    def _schedule_ai(self, s: Session) -> None:
        """The AI's move in `s` when it is to move: on the worker now, or (its seat still
        compiling) once the compile ends."""
        if s.over() or s.to_move() == s.human:
            return
        ready = s.seat.ready()
        s.ai = dataclasses.replace(
            s.ai, status="thinking" if ready else "compiling",
            message=None if ready else
            f"compiling {s.seat.spec} for this board (the first game on it only)")
        submit = functools.partial(self._submit_ai, s, s.generation)
        if ready:
            submit()
        else:
            s.seat.job.add_done_callback(lambda _: submit())

    def _submit_ai(self, s: Session, generation: int) -> None:
        with contextlib.suppress(RuntimeError):  # the store is closing
            self._worker.submit(self._ai_move, s, generation)

    def _ai_move(self, s: Session, generation: int) -> None:
        """The AI's move in `s` (on the worker thread)."""
        with self._lock:
            if s.generation != generation:
                return
            state, agent_state = s.state, s.agent_state
            key = jax.random.fold_in(s.key, len(s.moves))
        player, env = s.seat.player, s.env
        try:
            if not s.seat.ready():  # never compile here: the compile failed
                job = s.seat.job
                failure = ("cancelled" if job.cancelled() else
                           job.exception() if job.done() else None)
                raise RuntimeError(f"its compile failed ({failure!r}); start a new game")
            with self._lock:
                if s.generation == generation and s.ai.status == "compiling":
                    s.ai = dataclasses.replace(s.ai, status="thinking", message=None)
            if agent_state is None:
                agent_state = player.init_state(env, key)
            played = player.move(env, state, agent_state, key, budget_s=self.book.budget_s)
            legal = s.masks(state)[0]
            policy = views.policy_of(played.info, played.action, env.num_actions)
            action, message = legal_move(played.action, legal, policy)
            new_state = jax.device_get(s.seat.step(state, np.int32(action)))
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


def compile_failure(game_ready: concurrent.futures.Future) -> None:
    """Wait for a seat's game functions; ApiError(500) when their compile failed."""
    try:
        game_ready.result()
    except Exception as e:
        raise ApiError(500, f"compiling this game config failed: {e!r}") from None


def legal_move(action: int, legal: np.ndarray, policy: np.ndarray) -> tuple[int, Optional[str]]:
    """(`action`, None) when legal, else (the legal action `policy` likes best, a message)."""
    if 0 <= action < legal.size and legal[action]:
        return action, None
    best = int(np.argmax(np.where(legal, policy + 1e-9, -1.0)))
    return best, f"the agent chose an illegal action {action}; played {best} instead"
