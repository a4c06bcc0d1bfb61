"""Progress for long commands: a tqdm bar on stderr with an ETA, plain lines, or nothing.

    with progress.bar(total=16, desc="arena", unit="game", enabled=not args.no_progress) as b:
        log = progress.printer(b)  # or progress.printer(b, sys.stderr)
        ...
        log("half 1 done")
        b.update(8)

A bar shows when it is enabled and stderr is a terminal. When it is enabled and stderr is
not a terminal (a log file, a pipe, a notebook's subprocess, CI), `bar` returns `Lines`:
plain lines on stderr with no control characters, one at the first update, then at most one
every `LINE_SECONDS`, and one at the end (`train: 12/36 it (33%), 0:58 elapsed, ETA 1:52,
4.7 s/it | loss=2.412, v=0.611, pos/s=213`). When it is disabled (`--no-progress`), `bar`
returns a stand-in with the same methods that does nothing, except `write`, which prints
(on stdout by default, as tqdm's). `printer(bar, file)` prints lines beside any of the
three without breaking the bar. `add_argument` gives a command its `--no-progress` flag.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable, Optional, TextIO


class _Silent:
    """What `bar` returns when no bar shows: tqdm's methods, doing nothing."""

    n = 0

    def update(self, n: float = 1) -> None:
        self.n += n

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def write(self, text: str, file: Optional[TextIO] = None) -> None:
        """Print `text` on `file` (as tqdm's `write`: sys.stdout by default)."""
        print(text, file=sys.stdout if file is None else file, flush=True)

    def close(self) -> None:
        pass

    def __enter__(self) -> "_Silent":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


LINE_SECONDS = 5.0  # off a terminal: at most one progress line this often (and the last)


def _clock(seconds: float) -> str:
    """`seconds` as tqdm writes them: M:SS, or H:MM:SS from an hour."""
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Lines(_Silent):
    """What `bar` returns when enabled and stderr is not a terminal: tqdm's methods, writing
    a plain line on `file` (sys.stderr when None) at the first `update`, then at most one
    every `interval` seconds, and at the end (the update that reaches `total`, or `close`
    after updates not yet reported).

    A line is `desc: n/total unit (p%), elapsed, ETA, rate | postfix`. The rate and the ETA
    count from the first update on (the first step of a command often compiles), from the
    start while there is only one. `clock` is the time in seconds (time.monotonic).
    """

    def __init__(self, total: Optional[float] = None, desc: str = "", unit: str = "it",
                 initial: float = 0, file: Optional[TextIO] = None,
                 interval: float = LINE_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.total, self.desc, self.unit, self.interval = total, desc, unit, interval
        self.n = self.initial = initial
        self.file = sys.stderr if file is None else file
        self.clock = clock
        self.start = clock()
        self.first: Optional[tuple[float, float]] = None  # (time, n) at the first update
        self.printed: Optional[float] = None  # when the last line was written
        self.reported = initial  # n in the last line
        self.postfix = ""
        self.closed = False

    def update(self, n: float = 1) -> None:
        self.n += n
        now = self.clock()
        if self.first is None:
            self.first = (now, self.n)
        if (self.printed is None or now - self.printed >= self.interval
                or (self.total is not None and self.n >= self.total)):
            self._line(now)

    def set_postfix(self, ordered_dict: Optional[dict] = None, refresh: bool = True,
                    **kwargs: Any) -> None:
        items = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{k}={v}" for k, v in items.items())

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = str(s)

    def set_description(self, desc: Optional[str] = None, refresh: bool = True) -> None:
        self.desc = desc or ""

    def close(self) -> None:
        if not self.closed and self.first is not None and self.n != self.reported:
            self._line(self.clock())
        self.closed = True

    def text(self, now: float) -> str:
        """The line for time `now`."""
        n = f"{self.n:g}"
        if self.total:
            count = f"{n}/{self.total:g} {self.unit} ({100 * self.n / self.total:.0f}%)"
        else:
            count = f"{n} {self.unit}"
        parts = [f"{self.desc}: {count}" if self.desc else count,
                 f"{_clock(now - self.start)} elapsed"]
        t0, n0 = self.start, self.initial
        if self.first is not None and self.n > self.first[1] and now > self.first[0]:
            t0, n0 = self.first
        done = self.n - n0
        if done > 0 and now > t0:
            rate = done / (now - t0)
            if self.total and self.n < self.total:
                parts.append(f"ETA {_clock((self.total - self.n) / rate)}")
            parts.append(f"{rate:.2f} {self.unit}/s" if rate >= 1
                         else f"{1 / rate:.2f} s/{self.unit}")
        line = ", ".join(parts)
        return f"{line} | {self.postfix}" if self.postfix else line

    def _line(self, now: float) -> None:
        print(self.text(now), file=self.file, flush=True)
        self.printed, self.reported = now, self.n


FORCE = "GOMOKU_JAX_FORCE_PROGRESS"  # "1": bars show on a pipe (gomoku-jax launch's)


def shows(enabled: bool = True) -> bool:
    """Whether a bar would show: `enabled` and stderr a terminal (or the environment's
    `GOMOKU_JAX_FORCE_PROGRESS=1`, which `gomoku-jax launch` sets for the process whose
    output it forwards to a terminal)."""
    return bool(enabled) and (sys.stderr.isatty() or os.environ.get(FORCE) == "1")


def bar(total: Optional[float] = None, desc: str = "", unit: str = "it", initial: float = 0,
        enabled: bool = True, force: bool = False) -> Any:
    """A tqdm bar on stderr with rate and ETA when `shows(enabled)` (`force`: even when
    stderr is not a terminal); else, when `enabled`, `Lines` (plain lines on stderr every
    few seconds); else a silent stand-in."""
    if not (force or shows(enabled)):
        if enabled:
            return Lines(total=total, desc=desc, unit=unit, initial=initial)
        return _Silent()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, initial=initial, dynamic_ncols=True,
                file=sys.stderr)


def printer(bar: Any, file: Optional[TextIO] = None) -> Callable[[str], None]:
    """A function that prints a line on `file` (sys.stdout when None, looked up at each
    call) beside `bar` without breaking it: `bar.write` for a tqdm bar, a flushed `print`
    for `Lines` and the stand-in."""
    if isinstance(bar, _Silent):
        def say(text: str) -> None:
            print(text, file=sys.stdout if file is None else file, flush=True)
    else:
        def say(text: str) -> None:
            bar.write(text, file=file)
    return say


def add_argument(parser: argparse.ArgumentParser) -> None:
    """`--no-progress`: no progress bar, and no progress lines off a terminal."""
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (when stderr is not a terminal: no progress "
                             "lines)")
