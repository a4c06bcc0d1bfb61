"""Progress bars for long commands: tqdm on stderr, with an ETA, or nothing.

    with progress.bar(total=16, desc="arena", unit="game", enabled=not args.no_progress) as b:
        log = progress.printer(b)  # or progress.printer(b, sys.stderr)
        ...
        log("half 1 done")
        b.update(8)

A bar shows only when it is enabled and stderr is a terminal (so logs, pipes and tests get
no control characters); otherwise `bar` returns a stand-in with the same methods that does
nothing, except `write`, which prints (on stdout by default, as tqdm's). `printer(bar,
file)` prints lines beside either without breaking the bar. `add_argument` gives a command
its `--no-progress` flag.
"""

from __future__ import annotations

import argparse
import os
import sys
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


FORCE = "GOMOKU_JAX_FORCE_PROGRESS"  # "1": bars show on a pipe (gomoku-jax launch's)


def shows(enabled: bool = True) -> bool:
    """Whether a bar would show: `enabled` and stderr a terminal (or the environment's
    `GOMOKU_JAX_FORCE_PROGRESS=1`, which `gomoku-jax launch` sets for the process whose
    output it forwards to a terminal)."""
    return bool(enabled) and (sys.stderr.isatty() or os.environ.get(FORCE) == "1")


def bar(total: Optional[float] = None, desc: str = "", unit: str = "it", initial: float = 0,
        enabled: bool = True, force: bool = False) -> Any:
    """A tqdm bar on stderr with rate and ETA (a silent stand-in unless `shows(enabled)`;
    `force`: show it even when stderr is not a terminal)."""
    if not (force or shows(enabled)):
        return _Silent()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, initial=initial, dynamic_ncols=True,
                file=sys.stderr)


def printer(bar: Any, file: Optional[TextIO] = None) -> Callable[[str], None]:
    """A function that prints a line on `file` (sys.stdout when None, looked up at each
    call) beside `bar` without breaking it: `bar.write` for a tqdm bar, a flushed `print`
    for the stand-in."""
    if isinstance(bar, _Silent):
        def say(text: str) -> None:
            print(text, file=sys.stdout if file is None else file, flush=True)
    else:
        def say(text: str) -> None:
            bar.write(text, file=file)
    return say


def add_argument(parser: argparse.ArgumentParser) -> None:
    """`--no-progress`: no progress bar (none shows anyway when stderr is not a terminal)."""
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (none shows when stderr is not a terminal)")
