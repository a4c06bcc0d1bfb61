"""A Gomocup manager: two pbrain engines, each its own process on pipes, play games from
openings, as a tournament manager (piskvork) runs them.

    a = Side("ours", engine_argv("gomoku-jax pbrain"), timeout_turn_ms=100)
    b = Side("rapfi", engine_argv("pbrain-rapfi"), timeout_turn_ms=30_000,
             info=(("max_node", "1000"),))
    with Manager(GameConfig(15), margin_ms=1000) as m:
        games = m.play_pairs(a, b, openings)     # each opening with both colours

What each engine is sent, the protocol's commands only:

- `START N`, answered `OK` within `start_timeout_s` (an engine may compile or load here);
  then the INFO lines: timeout_turn, timeout_match, max_memory, game_type 1, rule (the
  protocol's bitmask of the config's rule: `RULE_BITS`) and the side's own `info` (e.g. a
  node budget), and `ABOUT`, whose answer (within `start_timeout_s` again: an INFO may make
  an engine compile) both syncs and names the engine. Before every later game: `RESTART`
  (an engine that does not answer it `OK` is started anew), then the same INFO and ABOUT.
- Its first move of a game: `BEGIN` on an empty board, else `BOARD` with every stone so
  far in move order (1 own, 2 the opponent's) and `DONE`; later moves: `TURN x,y` with the
  opponent's last move. With a match clock (timeout_match > 0) `INFO time_left` comes before
  every move; time_left goes down by the wall time of each of the side's moves.
- `END` at the close; a process still alive a few seconds later is killed, its process
  group included (an engine started through a shell script is gone too).

Each move is timed from writing its command to reading the answer, and waited for up to its
limit (timeout_turn, or time_left with a match clock when less; 0: as fast as possible)
plus `margin_ms`. MESSAGE, DEBUG and ERROR lines are kept (the first few of each game) and
skipped.
A game is lost by the side whose move is:

- `time`: no answer within the limit and the margin (the process is killed: it may still be
  thinking, so its state is unknown; it is started anew for the next game);
- `crash`: its output closed (the process ended), or `start`: it could not be started
  again after an earlier failure;
- `error`: an `UNKNOWN ...` answer, or an `ERROR ...` line and no move in time (an ERROR
  line followed by a move is only kept, as a MESSAGE is: engines print warnings so);
  `garbage`: a line that is not `x,y`;
- `illegal`: a cell off the board or occupied; `forbidden`: a point the rule does not
  allow (renju's forbidden points for black: the game's `step` ends the game, mover losing).

Otherwise the game ends as the game's `step` says: five (by the config's rule) or a full
board (a draw). The judge is `Gomoku(config).step`, jitted once per manager, so every rule
the game has is judged exactly as in the rest of the platform.

Coordinates are the protocol's `x,y` (x the column), actions `y * N + x`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Optional, Sequence

import jax
import numpy as np

from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.state import BLACK, WHITE

# The protocol's INFO rule bitmask of each rule the game has.
RULE_BITS = {"freestyle": 0, "exact5": 1, "renju": 4, "caro": 8, "caro_exact5": 9}
# How a game can be lost other than by the opponent's five; `time` and `start` count as
# time losses and start failures, the rest as errors.
FAULTS = ("time", "crash", "start", "error", "garbage", "illegal", "forbidden")
MESSAGES_KEPT = 8  # MESSAGE / DEBUG lines kept per side and game
_MOVE = re.compile(r"\s*(-?[0-9]{1,6})\s*,\s*(-?[0-9]{1,6})\s*")
_INFO_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME = re.compile(r'name\s*=\s*"([^"]*)"')


def engine_argv(command: str) -> tuple[str, ...]:
    """The argv of an engine command line (shell-like quoting): its first word a command
    found on PATH or a path to an executable file. `gomoku-jax ...` runs this package with
    this Python when no `gomoku-jax` is on PATH.

    Raises:
      ValueError: an empty command, or a first word that is not on PATH nor an executable.
    """
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ValueError(f"engine command {command!r}: {e}") from None
    if not argv:
        raise ValueError("the engine command is empty")
    found = shutil.which(argv[0])
    if found:
        return (found, *argv[1:])
    if argv[0] == "gomoku-jax":
        return (sys.executable, "-m", "gomoku_jax", *argv[1:])
    raise ValueError(f"engine {argv[0]!r} is neither a command on PATH nor an executable file "
                     f"(command line {command!r})")


def parse_info(text: str) -> tuple[tuple[str, str], ...]:
    """INFO lines from `KEY=VALUE[,KEY=VALUE...]` text (empty text: none).

    Raises:
      ValueError: a pair without `=`, a key that is not a word, or a value with spaces.
    """
    out = []
    for pair in (p.strip() for p in text.split(",")):
        if not pair:
            continue
        key, eq, value = pair.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not _INFO_KEY.fullmatch(key) or not value or any(c.isspace()
                                                                        for c in value):
            raise ValueError(f"INFO {pair!r}: expected KEY=VALUE (a word, then a value "
                             f"without spaces), e.g. max_node=1000")
        out.append((key, value))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class Side:
    """One engine and its time control.

    Attributes:
      label: its name in records and reports.
      argv: the command that starts it (`engine_argv`).
      timeout_turn_ms: INFO timeout_turn, the longest a move may take (0: as fast as
        possible).
      timeout_match_ms: INFO timeout_match, the match clock of each game (0: none).
      max_memory: INFO max_memory in bytes (0: no limit).
      info: more INFO (key, value) lines, sent after the others (e.g. a node budget).
    """

    label: str
    argv: tuple[str, ...]
    timeout_turn_ms: int
    timeout_match_ms: int = 0
    max_memory: int = 0
    info: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass
class GameRecord:
    """One game between sides a and b (a's view).

    Attributes:
      opening: the opening's index in the set.
      a_black: whether side a played black.
      moves: every move as (x, y), the opening's first; the failed move is not in it.
      result: a's points, 1, 0.5 or 0.
      reason: "five", "draw" (a full board), or the loser's fault (`FAULTS`).
      loser: "a", "b" or None (a draw).
      detail: what the fault was (the answer, the cell, the time), "" otherwise.
      ms: {"a": [...], "b": [...]}: the wall milliseconds of each side's moves.
      messages: {"a": [...], "b": [...]}: their first MESSAGE / DEBUG / ERROR lines.
    """

    opening: int
    a_black: bool
    moves: list
    result: float
    reason: str
    loser: Optional[str]
    detail: str
    ms: dict
    messages: dict

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class EngineFailed(Exception):
    """An engine did not answer as it must: `fault` is one of `FAULTS`."""

    def __init__(self, fault: str, detail: str):
        super().__init__(f"{fault}: {detail}")
        self.fault, self.detail = fault, detail


class Engine:
    """One engine process on pipes. A thread reads its stdout into a queue, so that every
    wait has a deadline; its stderr goes to `stderr` (a file object) or nowhere."""

    def __init__(self, side: Side, board_size: int, rule: str, start_timeout_s: float,
                 stderr: Optional[Any] = None):
        self.side, self.board_size, self.rule = side, board_size, rule
        self.start_timeout_s = start_timeout_s
        self.stderr = stderr
        self.proc: Optional[subprocess.Popen] = None
        self.lines: queue.Queue = queue.Queue()
        self.name = ""
        self.messages: list[str] = []
        self.errors: list[str] = []  # ERROR lines skipped by `answer`

    # ------------------------------------------------------------- the process

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        """Start the process: START, then `setup`. EngineFailed("start", ...) when it
        cannot be run or does not answer OK."""
        self.kill()
        try:
            self.proc = subprocess.Popen(
                list(self.side.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self.stderr if self.stderr is not None else subprocess.DEVNULL,
                text=True, encoding="utf-8", errors="replace", bufsize=1,
                start_new_session=True)
        except OSError as e:
            raise EngineFailed("start", f"cannot run {shlex.join(self.side.argv)}: {e}") from None
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True).start()
        try:
            self.send(f"START {self.board_size}")
            self.expect_ok("START", self.start_timeout_s)
            self.setup()
        except EngineFailed as e:
            self.kill()
            raise EngineFailed("start", e.detail) from None

    @staticmethod
    def _read(proc: subprocess.Popen, lines: queue.Queue) -> None:
        # Each line with the time it was read: a manager starved of CPU may take it from
        # the queue later, and the engine is not to pay for that.
        try:
            for line in proc.stdout:
                lines.put((line.rstrip("\r\n"), time.perf_counter()))
        finally:
            lines.put((None, time.perf_counter()))
            proc.stdout.close()

    def setup(self) -> None:
        """The INFO lines, then ABOUT (answered once every INFO is taken in: a sync)."""
        s = self.side
        for key, value in (("timeout_turn", s.timeout_turn_ms),
                           ("timeout_match", s.timeout_match_ms),
                           ("max_memory", s.max_memory), ("game_type", 1),
                           ("rule", RULE_BITS[self.rule]), *s.info):
            self.send(f"INFO {key} {value}")
        self.send("ABOUT")
        # An INFO gets no answer, but an engine may print an ERROR about one (a value it
        # will not take): skipped, so that it is not read as the answer to what follows.
        line, _ = self.answer(time.perf_counter() + self.start_timeout_s, "ABOUT",
                              skip_errors=True)
        found = _NAME.search(line)
        self.name = found.group(1) if found else line.strip()[:60]

    def new_game(self) -> None:
        """Ready for a new game: RESTART and `setup` when the process runs (started anew
        when it does not answer OK), START otherwise. EngineFailed("start", ...)."""
        self.messages, self.errors = [], []
        if self.alive():
            try:
                self.send("RESTART")
                self.expect_ok("RESTART", self.start_timeout_s)
                self.setup()
                return
            except EngineFailed:
                pass
        self.start()

    def send(self, text: str) -> None:
        """Write one line. EngineFailed("crash", ...) when the pipe is closed."""
        try:
            self.proc.stdin.write(text + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError, AttributeError):
            raise EngineFailed("crash", f"its input closed (exit code {self.exit_code()})"
                               ) from None

    def exit_code(self) -> Optional[int]:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(1.0)
        except subprocess.TimeoutExpired:
            return None

    def answer(self, deadline: float, what: str, skip_errors: bool = False
               ) -> tuple[str, float]:
        """(the next line that is not MESSAGE / DEBUG, perf_counter when the reader read
        it); `skip_errors`: ERROR lines are skipped too (kept in `errors`).

        Raises:
          EngineFailed: "time" when `deadline` (perf_counter) passes first, "crash" when
            the output closes.
        """
        while True:
            try:
                line, now = self.lines.get(timeout=max(0.0, deadline - time.perf_counter()))
            except queue.Empty:
                try:  # the reader may have been slower to wake than this wait
                    line, now = self.lines.get_nowait()
                except queue.Empty:
                    line, now = "", math.inf
            if now > deadline:
                raise EngineFailed("time", f"no answer to {what}")
            if line is None:
                self.lines.put((None, now))
                raise EngineFailed("crash", f"its output closed at {what} (exit code "
                                            f"{self.exit_code()})")
            head = line.strip().split(" ", 1)[0].upper()
            if head in ("MESSAGE", "DEBUG") or (skip_errors and head == "ERROR"):
                if len(self.messages) < MESSAGES_KEPT:
                    self.messages.append(line.strip())
                if head == "ERROR":
                    self.errors.append(line.strip())
                continue
            if not line.strip():
                continue
            return line, now

    def expect_ok(self, what: str, seconds: float) -> None:
        line, _ = self.answer(time.perf_counter() + seconds, what)
        if line.strip().upper() != "OK":
            raise EngineFailed("error", f"answered {line.strip()[:80]!r} to {what}")

    def close(self, wait_s: float = 3.0) -> None:
        """END, then kill it (and its process group) unless it exits within `wait_s`."""
        if self.alive():
            try:
                self.send("END")
                self.proc.stdin.close()
            except (EngineFailed, OSError):
                pass
            try:
                self.proc.wait(wait_s)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def kill(self) -> None:
        """Kill the process and its process group (it leads its own session)."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.kill()
        except ProcessLookupError:
            pass
        self.proc.wait()
        try:
            self.proc.stdin.close()  # stdout is closed by the reader at its end
        except OSError:
            pass
        self.proc = None


class Judge:
    """The game's rules on one board: `Gomoku(config).step`, jitted once (or `step`, that
    function already jitted elsewhere)."""

    def __init__(self, config: GameConfig, step: Optional[Callable] = None):
        self.env = Gomoku.from_config(config)
        self.n = config.board_size
        self._step = step or jax.jit(self.env.step)
        self._init = jax.jit(self.env.init)

    def new(self) -> Any:
        return self._init(jax.random.key(0))

    def step(self, state: Any, action: int) -> tuple[Any, str]:
        """(the state after `action`, what happened: "" the game goes on, "five", "draw",
        or "forbidden": an empty cell the rule does not allow, the mover lost)."""
        after = self._step(state, np.int32(action))
        if not bool(after.terminated):
            return after, ""
        if int(np.asarray(after.board).reshape(-1)[action]) == 0:
            return after, "forbidden"
        return after, "five" if int(after.winner) != 0 else "draw"


class Manager:
    """Plays games between two `Side`s on one game config (see the module docstring).

    Engines are kept between games and pairs of the same `Side` (a RESTART each game), and
    all are ended at `close` (or the end of a `with` block): END, and killed when still
    running `end_wait_s` later."""

    def __init__(self, config: GameConfig, margin_ms: float = 1000.0,
                 start_timeout_s: float = 300.0, stderr: Optional[Any] = None,
                 end_wait_s: float = 3.0, judge: Optional[Judge] = None):
        if config.win_length != 5:
            raise ValueError(f"the Gomocup protocol plays five in a row; the config has "
                             f"win_length {config.win_length}")
        if config.rule not in RULE_BITS:
            raise ValueError(f"rule {config.rule!r} has no INFO rule value; known: "
                             f"{sorted(RULE_BITS)}")
        self.config, self.margin_ms = config, float(margin_ms)
        self.start_timeout_s, self.stderr = float(start_timeout_s), stderr
        self.end_wait_s = float(end_wait_s)
        self.judge = judge or Judge(config)
        self.engines: dict[Side, Engine] = {}

    def __enter__(self) -> "Manager":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """End every engine (killing those that do not exit)."""
        for engine in self.engines.values():
            engine.close(self.end_wait_s)
        self.engines.clear()

    def release(self, side: Side) -> None:
        """End `side`'s engine now (e.g. after its rung)."""
        engine = self.engines.pop(side, None)
        if engine is not None:
            engine.close(self.end_wait_s)

    def engine(self, side: Side) -> Engine:
        if side not in self.engines:
            self.engines[side] = Engine(side, self.config.board_size, self.config.rule,
                                        self.start_timeout_s, self.stderr)
        return self.engines[side]

    def start(self, side: Side) -> str:
        """Start `side`'s engine now (when it is not running); its ABOUT name.
        EngineFailed("start", ...) when it cannot."""
        engine = self.engine(side)
        if not engine.alive():
            engine.start()
        return engine.name

    def play(self, a: Side, b: Side, opening: Sequence[int], a_black: bool,
             index: int = 0) -> GameRecord:
        """One game from `opening` (actions, black first; legal and not over), a playing
        black when `a_black`. Every failure of an engine is a lost game, never an
        exception."""
        if a == b:
            raise ValueError(f"the two sides must differ (give them different labels), got "
                             f"{a.label!r} twice")
        judge, n = self.judge, self.config.board_size
        sides = {"a": a, "b": b}
        colour_of = {"a": BLACK if a_black else WHITE, "b": WHITE if a_black else BLACK}
        ms: dict = {"a": [], "b": []}
        moves: list[tuple[int, int]] = []
        state = judge.new()
        for action in opening:
            state, how = judge.step(state, int(action))
            if how:
                raise ValueError(f"opening {index} {list(opening)} ends the game ({how})")
            moves.append((int(action) % n, int(action) // n))

        def end(reason: str, loser: Optional[str], detail: str = "") -> GameRecord:
            result = 0.5 if loser is None else (0.0 if loser == "a" else 1.0)
            messages = {k: list(self.engines[s].messages) if s in self.engines else []
                        for k, s in sides.items()}
            return GameRecord(index, a_black, [list(m) for m in moves], result, reason,
                              loser, detail, ms, messages)

        for key in ("a", "b"):
            try:
                self.engine(sides[key]).new_game()
            except EngineFailed as e:
                return end("start", key, e.detail)
        told = {"a": False, "b": False}
        clock = {k: float(s.timeout_match_ms) for k, s in sides.items()}
        while True:
            key = "a" if int(state.color) == colour_of["a"] else "b"
            side, engine = sides[key], self.engines[sides[key]]
            limit = float(side.timeout_turn_ms)
            if side.timeout_match_ms > 0:
                limit = min(limit, max(clock[key], 0.0))
            try:
                if side.timeout_match_ms > 0:
                    engine.send(f"INFO time_left {max(int(clock[key]), 0)}")
                if not told[key]:
                    if moves:
                        colour = colour_of[key]
                        engine.send("BOARD")
                        for i, (x, y) in enumerate(moves):
                            mine = (BLACK if i % 2 == 0 else WHITE) == colour
                            engine.send(f"{x},{y},{1 if mine else 2}")
                        what, last = "BOARD", "DONE"
                    else:
                        what, last = "BEGIN", "BEGIN"
                    told[key] = True
                else:
                    what = last = "TURN {},{}".format(*moves[-1])
                t0 = time.perf_counter()
                engine.errors = []
                engine.send(last)
                line, t1 = engine.answer(t0 + (limit + self.margin_ms) / 1000.0, what,
                                         skip_errors=True)
            except EngineFailed as e:
                if e.fault in ("time", "crash"):
                    engine.kill()
                if e.fault == "time":
                    detail = (f"{e.detail} within {limit:g} ms + the margin "
                              f"{self.margin_ms:g} ms")
                    if engine.errors:  # it said why it would not move
                        return end("error", key, f"{engine.errors[-1][:80]!r}, and {detail}")
                    return end("time", key, detail)
                return end(e.fault, key, e.detail)
            spent = 1000.0 * (t1 - t0)
            ms[key].append(round(spent, 3))
            clock[key] -= spent
            text = line.strip()
            if text.upper().startswith("UNKNOWN"):
                return end("error", key, f"answered {text[:80]!r} to {what}")
            found = _MOVE.fullmatch(text)
            if not found:
                return end("garbage", key, f"answered {text[:80]!r} to {what}")
            x, y = int(found.group(1)), int(found.group(2))
            if not (0 <= x < n and 0 <= y < n):
                return end("illegal", key, f"{x},{y} is off the {n}x{n} board")
            action = y * n + x
            if int(np.asarray(state.board).reshape(-1)[action]) != 0:
                return end("illegal", key, f"{x},{y} is occupied")
            state, how = judge.step(state, action)
            if how == "forbidden":
                return end("forbidden", key, f"{x},{y} is forbidden under {self.config.rule}")
            moves.append((x, y))
            if how == "five":
                return end("five", "b" if key == "a" else "a")
            if how == "draw":
                return end("draw", None)

    def play_pairs(self, a: Side, b: Side, openings: Sequence[Sequence[int]], repeats: int = 1,
                   on_game: Optional[Callable[[GameRecord], None]] = None
                   ) -> list[GameRecord]:
        """Every opening `repeats` times with both colours: a black, then b black (a pair
        is games 2i and 2i + 1). `on_game(record)` after each game."""
        games = []
        for index, opening in enumerate(openings):
            for _ in range(repeats):
                for a_black in (True, False):
                    games.append(self.play(a, b, opening, a_black, index))
                    if on_game is not None:
                        on_game(games[-1])
        return games
