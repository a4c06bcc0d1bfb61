"""Timing helpers: wall time and process CPU time of compiled calls, and markdown tables."""

from __future__ import annotations

import dataclasses
import os
import platform
import statistics
import time
from typing import Any, Callable, Optional, Sequence

import jax


@dataclasses.dataclass
class Measurement:
    """Rates of one benchmarked configuration (medians over repeats)."""

    system: str
    variant: str
    batch: int
    steps_per_call: int
    compile_s: float
    wall_s: float  # median wall seconds per call
    cpu_s: float  # median process CPU seconds per call
    note: str = ""

    @property
    def work(self) -> int:
        return self.batch * self.steps_per_call

    @property
    def per_wall_s(self) -> float:
        return self.work / self.wall_s

    @property
    def per_cpu_s(self) -> float:
        return self.work / self.cpu_s


def time_compiled(fn: Callable, args: Sequence[Any], repeats: int,
                  thread: Callable[[Any, Sequence[Any]], Sequence[Any]] | None = None
                  ) -> tuple[float, float, float]:
    """(compile seconds, median wall s per call, median CPU s per call) of `jax.jit(fn)`.

    Compile time is lowering + compiling, measured apart from the runs. One untimed warm-up
    call follows. `thread(out, args)` may derive the next call's arguments from the last
    output (e.g. carry the game states on), so repeats don't replay finished games.
    """
    return time_jitted(jax.jit(fn), args, repeats, thread)[:3]


def time_jitted(jitted: Callable, args: Sequence[Any], repeats: int,
                 thread: Optional[Callable[[Any, Sequence[Any]], Sequence[Any]]] = None,
                 max_seconds: Optional[float] = None, first: Optional[list] = None
                 ) -> tuple[float, float, float, int]:
    """Like `time_compiled` for an already-jitted function, keeping its own shardings and
    donation: (compile s, median wall s, median process CPU s per call, timed calls), after
    one untimed warm-up call. `thread(out, args)` gives the next call's arguments (needed
    when the function donates its inputs).

    With `max_seconds`, the repeats are cut so that warm-up + repeats fit in it (at least
    one); when the warm-up alone took longer, it is reported as the only call (0 timed).
    `first`, a list, receives the warm-up call's output.
    """
    t0 = time.perf_counter()
    compiled = jitted.lower(*args).compile()
    compile_s = time.perf_counter() - t0
    w0, c0 = time.perf_counter(), time.process_time()
    out = jax.block_until_ready(compiled(*args))
    warm_wall, warm_cpu = time.perf_counter() - w0, time.process_time() - c0
    if first is not None:
        first.append(out)
    if max_seconds is not None:
        if warm_wall >= max_seconds:
            return compile_s, warm_wall, warm_cpu, 0
        repeats = max(1, min(repeats, int((max_seconds - warm_wall) / warm_wall)))
    walls, cpus = [], []
    for _ in range(repeats):
        if thread is not None:
            args = thread(out, args)
        w0, c0 = time.perf_counter(), time.process_time()
        out = jax.block_until_ready(compiled(*args))
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return compile_s, statistics.median(walls), statistics.median(cpus), repeats


def time_python(fn: Callable[[], int], repeats: int) -> tuple[float, float, int]:
    """(median wall s, median CPU s, work units) of a plain Python callable returning its work."""
    walls, cpus, work = [], [], 0
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        work = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), work


def fmt_rate(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def parse_int_list(text: str, flag: str) -> list[int]:
    """Comma-separated positive ints from a command-line flag, or SystemExit saying so."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or any(v < 1 for v in values):
        raise SystemExit(f"error: {flag} takes comma-separated positive integers, got {text!r}")
    return values


def describe_machine() -> str:
    devices = ", ".join(sorted({d.device_kind for d in jax.devices()}))
    return (f"jax {jax.__version__} on {jax.default_backend()} ({devices}); "
            f"{len(os.sched_getaffinity(0))} of {os.cpu_count()} CPU cores in use; "
            f"Python {platform.python_version()}")


def pin_cpus(count: int) -> None:
    """Restrict this process to `count` of its cores; call before JAX creates its backend."""
    available = sorted(os.sched_getaffinity(0))
    if not 1 <= count <= len(available):
        raise SystemExit(f"error: --cpus must be in 1..{len(available)}, got {count}")
    os.sched_setaffinity(0, available[:count])


def setup_run(board_size: int, cpus: int | None) -> None:
    """Check the board size (SystemExit with the reason) and pin the CPUs if asked."""
    import gomoku_jax

    try:
        gomoku_jax.make("gomoku", board_size=board_size)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    if cpus is not None:
        pin_cpus(cpus)
