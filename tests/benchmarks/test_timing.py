"""`benchmarks.timing`: what `time_jitted` measures and how `max_seconds` and `first` cut
and keep its calls, on a fake clock (no real timings are asserted)."""

from __future__ import annotations

import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gomoku_jax.benchmarks import timing


class FakeClock:
    """Stands in for the `time` module inside `timing`: wall time moves only when a fake
    call or compile says so; process CPU time moves at half that rate."""

    def __init__(self):
        self.now = 0.0

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def perf_counter(self) -> float:
        return self.now

    def process_time(self) -> float:
        return self.now / 2


class FakeJitted:
    """A jitted function's interface (`lower(*args).compile()`) on the fake clock: compiling
    takes `compile_s`, call i takes `durations[i]` (the last one repeats) and returns
    args[0] + 1, so threaded calls count up."""

    def __init__(self, clock: FakeClock, compile_s: float, durations: list[float]):
        self.clock, self.compile_s, self.durations = clock, compile_s, durations
        self.lowered_with: list[tuple] = []
        self.calls: list[tuple] = []

    def lower(self, *args):
        self.lowered_with.append(args)
        return types.SimpleNamespace(compile=self._compile)

    def _compile(self):
        self.clock.advance(self.compile_s)
        return self._call

    def _call(self, *args):
        i = min(len(self.calls), len(self.durations) - 1)
        self.calls.append(args)
        self.clock.advance(self.durations[i])
        return np.int32(args[0] + 1)


@pytest.fixture()
def clock(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(timing, "time", clock)
    return clock


def test_time_jitted_measures_compile_warm_up_and_median(clock):
    # warm-up 9 s (not timed), then calls of 1, 3 and 2 s: the median is 2 s
    f = FakeJitted(clock, compile_s=5.0, durations=[9.0, 1.0, 3.0, 2.0])
    first = []
    compile_s, wall, cpu, timed = timing.time_jitted(f, (np.int32(0),), 3, first=first)
    assert (compile_s, wall, cpu, timed) == (5.0, 2.0, 1.0, 3)
    assert first == [1]  # the warm-up call's output, and only that
    assert len(f.lowered_with) == 1 and len(f.calls) == 4
    assert all(args == (0,) for args in f.calls)  # no thread: the same arguments each call


def test_time_jitted_threads_outputs_into_the_next_arguments(clock):
    f = FakeJitted(clock, compile_s=0.0, durations=[1.0])
    seen = []

    def thread(out, args):
        seen.append((int(out), int(args[0])))
        return (out,)

    *_, timed = timing.time_jitted(f, (np.int32(10),), 3, thread)
    assert timed == 3 and [int(a[0]) for a in f.calls] == [10, 11, 12, 13]
    assert seen == [(11, 10), (12, 11), (13, 12)]


@pytest.mark.parametrize("warm_s, max_seconds, repeats, want_timed", [
    (1.0, 3.5, 10, 2),    # (3.5 - 1) // 1 = 2 repeats fit
    (1.0, 100.0, 4, 4),   # never more than asked
    (1.0, 1.5, 10, 1),    # none would fit after the warm-up: at least one
    (2.0, 2.0, 10, 0),    # the warm-up alone used the budget: it is the measurement
    (3.0, 1.0, 10, 0),
])
def test_max_seconds_cuts_the_repeats(clock, warm_s, max_seconds, repeats, want_timed):
    f = FakeJitted(clock, compile_s=7.0, durations=[warm_s, 0.5])
    first = []
    compile_s, wall, cpu, timed = timing.time_jitted(
        f, (np.int32(0),), repeats, max_seconds=max_seconds, first=first)
    assert timed == want_timed and len(f.calls) == 1 + want_timed
    assert compile_s == 7.0 and first == [1]
    if want_timed == 0:  # the warm-up call is reported
        assert (wall, cpu) == (warm_s, warm_s / 2)
    else:
        assert (wall, cpu) == (0.5, 0.25)


def test_time_compiled_is_time_jitted_of_jax_jit(clock, monkeypatch):
    f = FakeJitted(clock, compile_s=4.0, durations=[1.0, 2.0])
    monkeypatch.setattr(timing.jax, "jit", lambda fn: f)
    assert timing.time_compiled(lambda x: x, (np.int32(0),), 2) == (4.0, 2.0, 1.0)


@jax.jit
def _add_one(x):
    return x + 1


def test_time_jitted_on_a_real_jitted_function():
    """The real lower / compile / block path (a trivial function; only the outputs and the
    call count are checked, never a time)."""
    first = []
    x = jnp.arange(3, dtype=jnp.int32)
    compile_s, wall, cpu, timed = timing.time_jitted(
        _add_one, (x,), 2, lambda out, args: (out,), first=first)
    assert timed == 2 and compile_s >= 0 and wall >= 0 and cpu >= 0
    assert len(first) == 1 and np.array_equal(first[0], [1, 2, 3])
    *_, timed = timing.time_jitted(_add_one, (x,), 5, max_seconds=0.0)
    assert timed == 0  # any warm-up is over a zero budget
