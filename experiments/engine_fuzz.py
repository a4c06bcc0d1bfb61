"""The engine under a tournament manager: a protocol fuzz of `gomoku-jax pbrain` over pipes.

    python experiments/engine_fuzz.py                     # 10^4 lines, the default engine
    python experiments/engine_fuzz.py --lines 300 --sizes 7 --engine-args=--max-nodes=257

The engine runs as a manager runs it: a subprocess (`python -m gomoku_jax pbrain`, the
default engine unless `--engine-args` says otherwise) read and written over pipes, one line
at a time, with a watchdog on every line that must be answered. The lines are random:
mostly a game in progress (TURN near the stones, BEGIN, BOARD blocks, TAKEBACK, RESTART,
START of the `--sizes`), mixed with malformed and out-of-order lines (bad coordinates,
occupied cells, commands before START, broken BOARD blocks, X,Y,FIELD outside one, random
bytes, unknown commands) and INFO lines, most with a short timeout_turn (`--turn-ms`), some
absurd (timeout_turn 0 / -1 / 10^30 / text, time_left negative, max_memory tiny or huge,
rule bitmasks of every kind).

Every line is checked against `Reference`, a model of the protocol written from
`gomoku_jax.io.pbrain`'s docstring (not from its code): whether an answer comes, which
kind (a move, OK, ERROR, UNKNOWN, ABOUT's line), and for a move that it is legal: on an
empty cell of the current position, a position where a move is due (stone counts of
alternating play, no winning line under the rule, a free cell), the centre on an empty
board and within distance 2 of a stone with 1 to 4 stones, and under renju never black's
forbidden point. The rule of each INFO rule bitmask, and what wins under it (caro's blocked
five, renju's exact five for black), are the docstring's; whether a cell is forbidden for
black is the one thing taken from the package (`io.forbidden`, itself checked against a
reference written from the RIF rules in the tests). It counts:

- crashes: the process ended (it is started again, and the run goes on);
- stalls: no answer within the line's limit (the line is then waited for up to
  `--stall-s` more, else the process is killed and started again);
- illegal moves, and wrong answers (a move where the reference says ERROR or the other way
  round, an answer to a line that takes none, `internal error`);
- per kind of line, the answer times against their limit: a move's limit is its time as
  the protocol gives it (timeout_turn, or pbrain's share of time_left when timeout_match is
  set: the budget before its safety factor) plus `--margin-ms`; START compiles (its own,
  longer limit `--compile-s`, as Gomocup gives START), and so does the first move after an
  INFO rule or max_memory that changes what is compiled (reported apart); every other
  answer is due within the margin.

The time is the wall time from writing the line to reading its answer, as a manager sees
it, on a machine that may be shared: rerun a line over its limit before calling it slow.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import queue
import random
import re
import subprocess
import sys
import threading
import time
from typing import Optional, Sequence

import numpy as np

from gomoku_jax import progress
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report

MOVE = re.compile(r"([0-9]+),([0-9]+)")
XY = re.compile(r"([0-9]{1,4})\s*,\s*([0-9]{1,4})")
XYF = re.compile(r"([0-9]{1,4})\s*,\s*([0-9]{1,4})\s*,\s*([0-9]{1,4})")
SIZE = re.compile(r"[0-9]{1,4}")
INFO_INT = re.compile(r"[+-]?[0-9]{1,40}")
INT_KEYS = ("timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule")
MAX_INFO = 10**15
MIN_SIZE, MAX_SIZE = 5, 20
DEFAULT_TURN_MS = 30_000  # the protocol's timeout_turn before any INFO says one
PRINTABLE = re.compile(r"[ -~]+")
TERMINAL = re.compile(r"OK|[0-9]+,[0-9]+|(ERROR|UNKNOWN) .*|name=\".*")


# ------------------------------------------------------------------ the engine process

class EngineDied(Exception):
    """The engine's stdout closed (the process ended)."""


class Engine:
    """`python -m gomoku_jax pbrain ARGS` on pipes; a thread reads its stdout into a queue,
    so that every wait has a deadline (the watchdog)."""

    def __init__(self, args: Sequence[str] = (), stderr_path: Optional[str] = None):
        self.args = list(args)
        self._stderr = open(stderr_path or os.devnull, "a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gomoku_jax", "pbrain", *self.args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            text=True, encoding="utf-8", errors="replace", bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\r\n"))
        self.lines.put(None)

    def send(self, text: str) -> None:
        """Write `text` (its line ending included) and flush."""
        try:
            self.proc.stdin.write(text)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise EngineDied() from None

    def answer(self, deadline: float) -> tuple[list[str], bool]:
        """(lines up to and including the next terminal answer, in time): MESSAGE lines
        are collected before it; ([...], False) when `deadline` (perf_counter) passed
        first; EngineDied when stdout closed."""
        got: list[str] = []
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.perf_counter()))
            except queue.Empty:
                return got, False
            if line is None:
                self.lines.put(None)
                raise EngineDied()
            got.append(line)
            if TERMINAL.fullmatch(line):
                return got, True

    def rss_kb(self) -> Optional[int]:
        """VmRSS of the engine process in kB (/proc/PID/status), None when unknown."""
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def close(self, wait_s: float = 10.0) -> Optional[int]:
        """END, then wait; kill when it does not exit. Returns the exit code."""
        try:
            self.send("END\n")
            self.proc.stdin.close()
        except (EngineDied, OSError):
            pass
        try:
            code = self.proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._stderr.close()
        return code


# ------------------------------------------------------------------ the reference model

def rule_of(mask: int) -> str:
    """The rule pbrain's docstring gives an INFO rule bitmask (mask >= 0)."""
    if mask & 4:
        return "renju"
    if mask & 8:
        return "caro_exact5" if mask & 1 else "caro"
    return "exact5" if mask & 1 else "freestyle"


def black_of(board: np.ndarray) -> int:
    """The colour (+1/-1) of black, the side that moved first, on a board of alternating
    play with +1 to move (equal counts: +1 moved first)."""
    return 1 if int((board == 1).sum()) == int((board == -1).sum()) else -1


def five(board: np.ndarray, side: int, rule: str, black: int = 1) -> bool:
    """Whether `side` (+1/-1) has a winning line under `rule`: 5 or more in a row; exactly
    5 under exact5 and caro_exact5, and for black (`black`: its colour) under renju; under
    caro and caro_exact5 not blocked at both ends by the other side's stones (the edge is
    no block)."""
    n = board.shape[0]
    mine = board == side
    exact = rule in ("exact5", "caro_exact5") or (rule == "renju" and side == black)
    caro = rule in ("caro", "caro_exact5")

    def theirs(yy: int, xx: int) -> bool:
        return 0 <= yy < n and 0 <= xx < n and board[yy, xx] == -side

    for dy, dx in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for y in range(n):
            for x in range(n):
                if not mine[y, x]:
                    continue
                py, px = y - dy, x - dx
                if 0 <= py < n and 0 <= px < n and mine[py, px]:
                    continue  # not the start of a run
                length = 0
                while 0 <= y + length * dy < n and 0 <= x + length * dx < n \
                        and mine[y + length * dy, x + length * dx]:
                    length += 1
                if length < 5 or (length > 5 and exact):
                    continue
                if caro and theirs(py, px) and theirs(y + length * dy, x + length * dx):
                    continue
                return True
    return False


def playable(board: np.ndarray, rule: str) -> bool:
    """Whether a move is due on `board` (+1 ours, -1 theirs, us to move)."""
    own, opp = int((board == 1).sum()), int((board == -1).sum())
    if not (own == opp or opp == own + 1) or own + opp == board.size:
        return False
    black = black_of(board)
    return not (five(board, 1, rule, black) or five(board, -1, rule, black))


def forbidden_stone(before: np.ndarray, side: int, y: int, x: int, rule: str) -> bool:
    """Whether `side`'s stone on (y, x), put on `before`, is black's on a forbidden point
    under renju (black: the side to move when the counts are equal)."""
    if rule != "renju" or int((before == side).sum()) != int((before == -side).sum()):
        return False
    from gomoku_jax.io.forbidden import forbidden_for_black

    return bool(forbidden_for_black(before * side)[y * before.shape[0] + x])


@dataclasses.dataclass
class Expect:
    """What the reference expects of a line: `answer` False (no answer line), or the
    allowed terminal kinds; `kind` names the line for the timing table; `position` is the
    position a move would be played on (None: no move is due)."""

    answer: bool
    kinds: frozenset = frozenset()
    kind: str = ""
    position: Optional[np.ndarray] = None


class Reference:
    """The protocol as pbrain's docstring states it, on its own board (+1 ours, -1 the
    opponent's, [y, x]): `expect(line)` before sending it, `update(line, expect, answer)`
    after its answer (the terminal line, or None for a line that takes none)."""

    def __init__(self):
        self.size: Optional[int] = None
        self.board: Optional[np.ndarray] = None
        self.pending: Optional[np.ndarray] = None  # a BOARD being received
        self.rule = "freestyle"
        self.pending_last: Optional[tuple[int, int]] = None  # the BOARD's last opponent stone
        self.limits: dict[str, int] = {}
        self.compile_due = False  # an INFO since the last answer may have compiled
        self._max_memory = 0

    # the time a move may take
    def move_limit_s(self, board: np.ndarray) -> float:
        """The protocol's time for a move on `board` (pbrain's budget before its safety
        factor and margin): timeout_turn, or time_left's share with a match clock."""
        limits = [self.limits.get("timeout_turn", DEFAULT_TURN_MS) / 1000]
        if self.limits.get("timeout_match", 0) > 0 and "time_left" in self.limits:
            own = int((board == 1).sum())
            limits.append(self.limits["time_left"] / 1000 / max(10, 20 - own))
        return min(limits)

    def _move_or_error(self, board: np.ndarray, kind: str) -> Expect:
        if playable(board, self.rule):
            return Expect(True, frozenset({"move"}), kind, board)
        return Expect(True, frozenset({"ERROR"}), kind)

    def expect(self, line: str) -> Expect:
        text = line.strip()
        if not text:
            return Expect(False)
        parts = text.split(None, 1)
        word, arg = parts[0].upper(), (parts[1].strip() if len(parts) > 1 else "")
        error = Expect(True, frozenset({"ERROR"}), word if word in COMMANDS else "other")
        if self.pending is not None and word != "INFO":
            if word == "DONE" and text.upper() == "DONE":
                last = self.pending_last
                if last is not None and int((self.pending == -1).sum()) == int(
                        (self.pending == 1).sum()) + 1:  # black (theirs) moved last
                    before = self.pending.copy()
                    before[last] = 0
                    if forbidden_stone(before, -1, *last, self.rule):
                        return Expect(True, frozenset({"ERROR"}), "DONE")
                return self._move_or_error(self.pending, "DONE")
            m = XYF.fullmatch(text)
            if m is None:
                return Expect(True, frozenset({"ERROR"}), "BOARD line")
            x, y, f = map(int, m.groups())
            if x >= self.size or y >= self.size or f not in (1, 2) or self.pending[y, x]:
                return Expect(True, frozenset({"ERROR"}), "BOARD line")
            return Expect(False, kind="BOARD line")
        started = self.size is not None
        if word == "INFO":
            p = arg.split(None, 1)
            if not p:
                return error
            key, value = p[0].lower(), (p[1].strip() if len(p) > 1 else "")
            if key in INT_KEYS and (not INFO_INT.fullmatch(value) or (
                    int(value) < 0 and key != "time_left")):
                return error
            return Expect(False, kind="INFO")
        if word in ("START", "RECTSTART"):
            if word == "START":
                n = int(arg) if SIZE.fullmatch(arg) else -1
            else:
                m = XY.fullmatch(arg)
                n = int(m.group(1)) if m and int(m.group(1)) == int(m.group(2)) else -1
            ok = MIN_SIZE <= n <= MAX_SIZE
            return Expect(True, frozenset({"OK" if ok else "ERROR"}), "START")
        if word == "ABOUT":
            return Expect(True, frozenset({"ERROR" if arg else "ABOUT"}), "ABOUT")
        if word in ("RESTART", "BEGIN", "TURN", "BOARD", "TAKEBACK") and not started:
            return error
        if word == "RESTART":
            return Expect(True, frozenset({"ERROR" if arg else "OK"}), "RESTART")
        if word == "BEGIN":
            if arg or self.board.any():
                return error
            return self._move_or_error(self.board, "BEGIN")
        if word in ("TURN", "TAKEBACK"):
            m = XY.fullmatch(arg)
            if m is None:
                return error
            x, y = map(int, m.groups())
            if x >= self.size or y >= self.size:
                return error
            if word == "TAKEBACK":
                return Expect(True, frozenset({"OK" if self.board[y, x] else "ERROR"}),
                              "TAKEBACK")
            if self.board[y, x]:
                return error
            if forbidden_stone(self.board, -1, y, x, self.rule):
                return error
            board = self.board.copy()
            board[y, x] = -1
            return self._move_or_error(board, "TURN")
        if word == "BOARD":
            return error if arg else Expect(False, kind="BOARD")
        if word == "DONE":
            return error
        if word == "END":
            return Expect(False, kind="END")
        if XYF.fullmatch(text):
            return Expect(True, frozenset({"ERROR"}), "other")
        return Expect(True, frozenset({"UNKNOWN"}), "other")

    def update(self, line: str, expect: Expect, answer: Optional[str]) -> None:
        """Apply `line` when the engine took it (`answer`: the terminal line, None when
        none came): stones, INFO values, START's new board."""
        text = line.strip()
        parts = text.split(None, 1)
        word = parts[0].upper() if parts else ""
        arg = parts[1].strip() if len(parts) > 1 else ""
        kind = None if answer is None else answer_kind(answer)
        if expect.answer:
            self.compile_due = False
        if kind == "ERROR" and self.pending is not None and word != "INFO":
            self.pending = None  # a refused line in a BOARD discards it
        if kind in ("ERROR", "UNKNOWN") or not text:
            return
        if self.pending is not None and word != "INFO":
            if word == "DONE":
                board, self.pending = self.pending, None
                if kind == "move":
                    self.board = board
            else:
                x, y, f = map(int, XYF.fullmatch(text).groups())
                self.pending[y, x] = 1 if f == 1 else -1
                if f == 2:
                    self.pending_last = (y, x)
        elif word == "INFO":
            p = arg.split(None, 1)
            key, value = p[0].lower(), (p[1].strip() if len(p) > 1 else "")
            if key in INT_KEYS:
                number = int(value)
                if key == "rule" and number >= 0:
                    rule = rule_of(number)
                    self.compile_due |= rule != self.rule and self.size is not None
                    self.rule = rule
                elif key == "max_memory":
                    number = min(number, MAX_INFO)
                    self.compile_due |= number != self._max_memory and self.size is not None
                    self._max_memory = number
                self.limits[key] = max(number, 0) if key in ("rule", "game_type") else \
                    min(max(number, 0), MAX_INFO)
        elif word in ("START", "RECTSTART") and kind == "OK":
            n = int(arg) if word == "START" else int(XY.fullmatch(arg).group(1))
            self.size, self.board, self.pending = n, np.zeros((n, n), np.int8), None
        elif word == "RESTART":
            self.board[:] = 0
        elif word == "BOARD" and answer is None:
            self.pending, self.pending_last = np.zeros_like(self.board), None
        elif word == "TAKEBACK":
            x, y = map(int, XY.fullmatch(arg).groups())
            self.board[y, x] = 0
        elif word == "TURN" and kind == "move":
            x, y = map(int, XY.fullmatch(arg).groups())
            self.board[y, x] = -1
        if kind == "move":
            x, y = map(int, MOVE.fullmatch(answer).groups())
            self.board[y, x] = 1


COMMANDS = ("START", "RECTSTART", "RESTART", "BEGIN", "TURN", "BOARD", "DONE", "TAKEBACK",
            "INFO", "ABOUT", "END")


def answer_kind(line: str) -> str:
    if line == "OK":
        return "OK"
    if MOVE.fullmatch(line):
        return "move"
    if line.startswith("name="):
        return "ABOUT"
    return line.split(None, 1)[0]


def move_problem(position: np.ndarray, x: int, y: int, rule: str = "freestyle"
                 ) -> Optional[str]:
    """Why the move x,y on `position` (us to move) breaks the rules or the opening rule
    (None: it does not)."""
    n = position.shape[0]
    if not (0 <= x < n and 0 <= y < n) or position[y, x]:
        return f"{x},{y} is off the board or occupied"
    if forbidden_stone(position, 1, y, x, rule) and not all(
            forbidden_stone(position, 1, int(yy), int(xx), rule)
            for yy, xx in np.argwhere(position == 0)):  # all forbidden: any move (a loss)
        return f"{x},{y} is black's forbidden point under renju"
    stones = np.argwhere(position != 0)
    if len(stones) == 0 and (x, y) != (n // 2, n // 2):
        return f"{x},{y} on the empty board is not the centre"
    if 1 <= len(stones) <= 4 and np.min(np.maximum(abs(stones[:, 0] - y),
                                                  abs(stones[:, 1] - x))) > 2:
        return f"{x},{y} is further than 2 from the {len(stones)} stones"
    return None


# ------------------------------------------------------------------ the line generator

ENDINGS = ("\n", "\n", "\n", "\r\n", "  \n", " \r\n")
GARBAGE = "TURNBOADESIKFX,0123456789 \t-xé\x00\x7f\u2603"


class Lines:
    """Random protocol lines, mostly a game in progress on the reference's board."""

    def __init__(self, rng: random.Random, sizes: Sequence[int], turn_ms: Sequence[int]):
        self.rng, self.sizes, self.turn_ms = rng, list(sizes), list(turn_ms)

    def next(self, ref: Reference) -> str:
        r, rng = self.rng.random(), self.rng
        if ref.size is None:
            return rng.choice([f"START {rng.choice(self.sizes)}"] * 3 + [self.junk(ref)])
        if ref.limits.get("timeout_turn", 0) > 10_000 and rng.random() < 0.6:
            return f"INFO timeout_turn {rng.choice(self.turn_ms)}"  # a long turn, briefly
        if ref.pending is not None:
            return self.board_line(ref)
        if r < 0.50:
            return self.game(ref)
        if r < 0.62:
            return self.info(ref)
        if r < 0.66:
            return "BOARD"
        if r < 0.70:
            return self.takeback(ref)
        if r < 0.72:
            size = rng.choice(self.sizes + [self.sizes[0]] * 4)
            return rng.choice([f"START {size}", f"RECTSTART {size},{size}", "START 20"])
        return self.junk(ref)

    def near(self, board: np.ndarray) -> tuple[int, int]:
        """An empty cell within distance 2 of a stone (the centre on an empty board)."""
        n = board.shape[0]
        stones = np.argwhere(board != 0)
        if len(stones) == 0:
            return n // 2, n // 2
        for _ in range(20):
            y, x = stones[self.rng.randrange(len(stones))] + [self.rng.randint(-2, 2)
                                                              for _ in range(2)]
            if 0 <= x < n and 0 <= y < n and not board[y, x]:
                return int(x), int(y)
        empty = np.argwhere(board == 0)
        y, x = empty[self.rng.randrange(len(empty))] if len(empty) else (0, 0)
        return int(x), int(y)

    def game(self, ref: Reference) -> str:
        board = ref.board
        if not playable(board, ref.rule) and board.any() or (board != 0).mean() > 0.5:
            return "RESTART"
        if not board.any() and self.rng.random() < 0.5:
            return "BEGIN"
        x, y = self.near(board)
        return f"TURN {x},{y}"

    def board_line(self, ref: Reference) -> str:
        rng, pending = self.rng, ref.pending
        r = rng.random()
        stones = int((pending != 0).sum())
        if r < 0.03:
            return self.junk(ref)
        if r < 0.06:
            return self.info(ref)
        if r < 0.10 + 0.06 * stones or stones > 12:
            return "DONE" if rng.random() < 0.95 else rng.choice(["done", "DONE DONE", " DONE "])
        own, opp = int((pending == 1).sum()), int((pending == -1).sum())
        field = 2 if opp <= own else 1
        if rng.random() < 0.06:
            field = rng.choice([0, 3, 1, 2, 7])
        x, y = self.near(pending)
        if rng.random() < 0.05:
            x, y = rng.choice([(x, ref.size), (ref.size + 2, y)])
        return f"{x},{y},{field}"

    def takeback(self, ref: Reference) -> str:
        stones = np.argwhere(ref.board != 0)
        if len(stones) and self.rng.random() < 0.7:
            y, x = stones[self.rng.randrange(len(stones))]
        else:
            x, y = self.rng.randrange(ref.size + 2), self.rng.randrange(ref.size)
        return f"TAKEBACK {x},{y}"

    def info(self, ref: Reference) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.55:
            return f"INFO timeout_turn {rng.choice(self.turn_ms)}"
        if r < 0.75:
            key = rng.choice(["time_left", "timeout_match"])
            value = rng.choice(["0", "-500", "-1", "100000", "5000", "180000", "300",
                                "1000000000"])
            return f"INFO {key} {value}"
        if r < 0.86:
            value = rng.choice(["-1", "1" + "0" * 30, "999999999999999", "abc", "5000.5",
                                "1e3", "", "0", " 200 ", "+100", "1" + "0" * 45])
            return f"INFO timeout_turn {value}"
        if r < 0.91:
            value = rng.choice(["0", "1", "2", "4", "8", "9", "16", "31", "-1", "1" + "0" * 30,
                                "x"])
            return f"INFO rule {value}"
        if r < 0.94:
            value = rng.choice(["0", "1", "350000000", "1" + "0" * 30, "-5", "abc"])
            return f"INFO max_memory {value}"
        key = rng.choice(["game_type", "folder", "evaluate", "zzz", "", "TIMEOUT_TURN"])
        value = rng.choice(["1", "C:\\tmp", "-3", "", "7,7", str(rng.choice(self.turn_ms))])
        return f"INFO {key} {value}".rstrip() if key else "INFO"

    def junk(self, ref: Reference) -> str:
        rng = self.rng
        n = ref.size or 15
        coord = lambda: rng.choice([rng.randrange(n + 3), -1, 99, "a", "", " 1", 10**5])  # noqa: E731
        r = rng.random()
        if r < 0.25:
            line = rng.choice([f"TURN {coord()},{coord()}", f"TAKEBACK {coord()},{coord()}",
                               f"{coord()},{coord()},{rng.choice([1, 2, 3, 'x'])}"])
        elif r < 0.45:
            line = rng.choice(["BEGIN", "DONE", "RESTART now", "ABOUT", "ABOUT me", "BOARD 1",
                               "TURN", "START", "START x", "START 4", "START 21", "START -5",
                               "START 15 15", "RECTSTART 15,16", "RECTSTART 5,9", "SWAP2BOARD",
                               "PLAY 1,1", "SUGGEST 1,1", "DONE DONE", "INFO", "TAKEBACK 2"])
        elif r < 0.80:
            line = "".join(rng.choice(GARBAGE) for _ in range(rng.randrange(1, 24)))
        else:
            line = rng.choice(["x" * 5000, "TURN " + "9" * 300 + ",1", "\u2603", "turn 1,1",
                               "Begin", "  restart  ", "\t", "", "about", "info rule"])
        if rng.random() < 0.3:
            line = line.lower()
        if line.split() and line.split()[0].upper() == "END":  # END would end the run
            line = "N" + line
        return line


# ------------------------------------------------------------------ the run

@dataclasses.dataclass
class Timing:
    seconds: list = dataclasses.field(default_factory=list)
    over: int = 0  # answers later than their limit
    worst_over_s: float = -np.inf  # the largest time - limit
    limit_s: list = dataclasses.field(default_factory=list)

    def add(self, seconds: float, limit_s: float) -> None:
        self.seconds.append(seconds)
        self.limit_s.append(limit_s)
        self.over += seconds > limit_s
        self.worst_over_s = max(self.worst_over_s, seconds - limit_s)


@dataclasses.dataclass
class Result:
    lines: int = 0
    answered: int = 0
    moves: int = 0
    answers: dict = dataclasses.field(default_factory=dict)  # terminal kind -> count
    crashes: int = 0
    stalls: int = 0
    illegal: list = dataclasses.field(default_factory=list)
    wrong: list = dataclasses.field(default_factory=list)
    timings: dict = dataclasses.field(default_factory=dict)  # kind -> Timing
    seconds: float = 0.0
    engine_starts: int = 0
    end_s: float = 0.0  # from END to the process's exit


def timing_kind(expect: Expect, answer: str, compile_due: bool) -> str:
    kind = answer_kind(answer)
    if compile_due:
        return f"first answer after INFO rule / max_memory (may compile): {kind}"
    if expect.kind == "START" and kind == "OK":
        return "START (compiles)"
    if kind == "move":
        return f"move: {expect.kind}"
    return f"{expect.kind or 'other'} -> {kind}"


def run(lines: int, sizes: Sequence[int], turn_ms: Sequence[int], seed: int,
        engine_args: Sequence[str], margin_s: float, compile_s: float, stall_s: float,
        stderr_path: Optional[str] = None, on_line=None, log=print) -> Result:
    rng = random.Random(seed)
    gen = Lines(rng, sizes, turn_ms)
    result = Result()
    t0 = time.perf_counter()

    def start() -> tuple[Engine, Reference]:
        result.engine_starts += 1
        ref = Reference()
        engine = Engine(engine_args, stderr_path)
        # Loading (the network) before the first line is not on any clock: wait for ABOUT.
        engine.send("ABOUT\n")
        got, ok = engine.answer(time.perf_counter() + compile_s)
        if not ok or not got[-1].startswith("name="):
            raise SystemExit(f"error: the engine did not answer ABOUT: {got}")
        for line in (f"INFO timeout_turn {turn_ms[0]}",):  # as managers do, before START
            engine.send(line + "\n")
            ref.update(line, ref.expect(line), None)
        return engine, ref

    def resync(engine: Engine, ref: Reference) -> None:
        """After an answer the reference did not expect: ABOUT twice (in a BOARD the first
        is an ERROR that ends it), read up to ABOUT's answer and on until a second passes
        without a line, then a new game."""
        for _ in range(2):
            engine.send("ABOUT\n")
        got, ok = engine.answer(time.perf_counter() + stall_s)
        while ok and not got[-1].startswith("name="):
            got, ok = engine.answer(time.perf_counter() + stall_s)
        if not ok:
            raise EngineDied()
        while engine.answer(time.perf_counter() + 1.0)[0]:
            pass
        ref.pending = None
        if ref.size is not None:
            engine.send("RESTART\n")
            engine.answer(time.perf_counter() + stall_s)
            ref.update("RESTART", ref.expect("RESTART"), "OK")

    engine, ref = start()
    try:
        for i in range(lines):
            line = gen.next(ref)
            ending = rng.choice(ENDINGS)
            expect = ref.expect(line)
            compile_due = ref.compile_due
            result.lines += 1
            if on_line:
                on_line(result)
            if expect.kind == "END":  # never sent: END ends the run (checked at the close)
                continue
            if not expect.answer:
                try:
                    engine.send(line + ending)
                    ref.update(line, expect, None)
                except EngineDied:
                    result.crashes += 1
                    log(f"crash: the engine died at line {i} {line!r}")
                    engine.close(1)
                    engine, ref = start()
                continue
            if compile_due or expect.kind == "START":
                limit = compile_s
            elif expect.position is not None:
                limit = ref.move_limit_s(expect.position) + margin_s
            else:
                limit = margin_s
            limit = min(limit, 3600.0)  # a huge timeout_turn: the watchdog waits an hour
            sent = time.perf_counter()
            try:
                engine.send(line + ending)
                got, in_time = engine.answer(sent + limit)
                if not in_time:
                    log(f"late: no answer to line {i} {line!r} within {limit:.2f} s")
                    more, in_time = engine.answer(sent + limit + stall_s)
                    got += more
                    if not in_time:
                        result.stalls += 1
                        log(f"stall: no answer to line {i} {line!r} within {limit:.2f} s + "
                            f"{stall_s:g} s")
                        raise EngineDied()
            except EngineDied:
                result.crashes += 1
                log(f"crash or hang: line {i} {line!r}; the engine is started again")
                engine.close(1)
                engine, ref = start()
                continue
            seconds = time.perf_counter() - sent
            terminal = got[-1]
            kind = answer_kind(terminal)
            result.answered += 1
            result.answers[kind] = result.answers.get(kind, 0) + 1
            wrong = len(result.wrong)
            for other in got:
                if not PRINTABLE.fullmatch(other):
                    result.wrong.append((i, line, f"not one printable ASCII line: {other!r}"))
            for other in got[:-1]:
                if not other.startswith("MESSAGE "):
                    result.wrong.append((i, line, f"unexpected line {other!r}"))
            if "internal error" in terminal:
                result.wrong.append((i, line, terminal))
            if kind not in expect.kinds:
                result.wrong.append((i, line, f"{terminal!r}, expected {sorted(expect.kinds)}"))
            for problem in result.wrong[wrong:]:
                log(f"wrong answer: line {problem[0]} {problem[1]!r}: {problem[2]}")
            if kind == "move":
                result.moves += 1
                x, y = map(int, MOVE.fullmatch(terminal).groups())
                if expect.position is None:
                    result.illegal.append((i, line, f"{terminal}: no move was due"))
                    log(f"illegal: {terminal} answers line {i} {line!r}, no move was due")
                else:
                    problem = move_problem(expect.position, x, y, ref.rule)
                    if problem:
                        result.illegal.append((i, line, problem))
                        log(f"illegal: line {i} {line!r}: {problem}")
            tk = timing_kind(expect, terminal, compile_due)
            result.timings.setdefault(tk, Timing()).add(seconds, limit)
            ref.update(line, expect, terminal)
            if kind not in expect.kinds:
                try:
                    resync(engine, ref)
                except EngineDied:
                    result.crashes += 1
                    engine.close(1)
                    engine, ref = start()
    finally:
        t = time.perf_counter()
        code = engine.close(compile_s)  # a trailing INFO rule may be compiling
        result.end_s = time.perf_counter() - t
        if code not in (0, None):
            result.crashes += 1
            log(f"the engine exited with {code} after END ({result.end_s:.1f} s)")
    result.seconds = time.perf_counter() - t0
    return result


def report(result: Result, args: argparse.Namespace) -> str:
    answers = ", ".join(f"{k} {v}" for k, v in sorted(result.answers.items()))
    summary = markdown_table(
        ["lines", "answered", "moves", "answers", "crashes", "stalls", "illegal moves",
         "wrong answers", "engine starts", "wall s"],
        [[str(result.lines), str(result.answered), str(result.moves), answers,
          str(result.crashes), str(result.stalls), str(len(result.illegal)),
          str(len(result.wrong)), str(result.engine_starts), f"{result.seconds:.0f}"]])
    rows = []
    for kind, t in sorted(result.timings.items()):
        s = np.asarray(t.seconds)
        limits = np.asarray(t.limit_s)
        rows.append([kind, str(len(s)), f"{1000 * np.median(s):.0f}",
                     f"{1000 * np.percentile(s, 99):.0f}", f"{1000 * s.max():.0f}",
                     f"{1000 * limits.min():.0f}..{1000 * limits.max():.0f}"
                     if limits.max() < 1e6 else f"{1000 * limits.min():.0f}..huge",
                     f"{1000 * t.worst_over_s:+.0f}", str(t.over)])
    timing = markdown_table(["line -> answer", "count", "median ms", "p99 ms", "worst ms",
                             "limit ms", "worst (time - limit) ms", "over limit"], rows)
    problems = [f"- line {i} `{line!r}`: {why}" for i, line, why in
                (result.illegal + result.wrong)[:20]]
    return "\n\n".join([
        f"Engine fuzz: {result.lines} lines, seed {args.seed}, sizes {args.sizes}, engine "
        f"`pbrain {' '.join(args.engine_args) or '(default)'}`; a move's limit is its "
        f"protocol time plus {args.margin_ms} ms, START's and the first move after an INFO "
        f"rule / max_memory change {args.compile_s:g} s, other answers {args.margin_ms} ms.",
        summary, timing, f"END to exit: {result.end_s:.1f} s."]
        + (["Problems (the first 20):", "\n".join(problems)] if problems else []))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=10_000, help="protocol lines to send")
    parser.add_argument("--sizes", default="15,20,9",
                        help="board sizes START uses, the first most (default %(default)s)")
    parser.add_argument("--turn-ms", default="100,50,200,300,0,150",
                        help="the usual INFO timeout_turn values (ms), the first sent first")
    parser.add_argument("--margin-ms", type=int, default=250,
                        help="time an answer may take past its limit (default %(default)s)")
    parser.add_argument("--compile-s", type=float, default=300.0,
                        help="START's limit (it compiles), and the first move's after an INFO "
                             "that compiles (default %(default)s)")
    parser.add_argument("--stall-s", type=float, default=120.0,
                        help="after a stall, how long to wait more before killing the engine")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engine-args", default="",
                        help="flags for `gomoku-jax pbrain`, space separated (default: none, "
                             "the default engine)")
    parser.add_argument("--stderr", metavar="PATH", help="append the engine's stderr here")
    parser.add_argument("--out", help="write the markdown report here")
    parser.add_argument("--json", help="write the counts and timings as JSON here")
    progress.add_argument(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",")]
    turn_ms = [int(s) for s in args.turn_ms.split(",")]
    args.engine_args = args.engine_args.split()
    with progress.bar(total=args.lines, desc="fuzz", unit="line",
                      enabled=not args.no_progress) as bar:
        log = progress.printer(bar, sys.stderr)

        def on_line(r: Result) -> None:
            bar.update(1)
            if r.lines % 50 == 0:
                bar.set_postfix_str(f"moves {r.moves}, crashes {r.crashes}, stalls {r.stalls}, "
                                    f"illegal {len(r.illegal)}, wrong {len(r.wrong)}")

        result = run(args.lines, args.sizes, turn_ms, args.seed, args.engine_args,
                     args.margin_ms / 1000, args.compile_s, args.stall_s, args.stderr,
                     on_line, log)
    text = report(result, args)
    print(text)
    record = {"lines": result.lines, "answered": result.answered, "moves": result.moves,
              "answers": result.answers, "crashes": result.crashes, "stalls": result.stalls,
              "illegal": [list(map(str, p)) for p in result.illegal],
              "wrong": [list(map(str, p)) for p in result.wrong],
              "timings": {k: {"seconds": t.seconds, "limit_s": t.limit_s, "over": t.over}
                          for k, t in result.timings.items()},
              "seconds": result.seconds}
    write_report(text, args.out, args.json, record)
    bad = result.crashes or result.stalls or result.illegal or result.wrong
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
