"""`pytest --compile-stats=DIR`: what every test paid to JAX, to find what makes the suite slow.

Compiling is most of the suite's time on a CPU, and `--durations` cannot tell a test that
compiles from one that computes. With `--compile-stats=DIR` every worker appends a JSON line
per test to `DIR/<worker>.jsonl` (write it with `=`: the option is a conftest's, unknown when
pytest first reads the command line, which would take a separate DIR for a test path):

    {"test": nodeid, "wall": s, "compiles": n, "compile_s": s, "trace_s": s, "lower_s": s,
     "cache_hits": n}

(`compiles`: XLA backend compilations, the persistent cache's misses; `compile_s` their
seconds; `trace_s`, `lower_s`: jaxpr tracing and lowering to StableHLO; `cache_hits`:
programs the persistent cache supplied.) A test's fixtures count in the first test that
uses them. Processes a test starts (the CLI, notebooks, several devices) are not counted.
At the end the run prints the tests that compiled most and the totals.

Loaded by conftest.py (its hooks are imported there); `jax.monitoring` listeners cost
nothing measurable, so it is always registered, and writes only when asked.
"""

from __future__ import annotations

import glob
import json
import os
import pathlib
import time

import pytest

_EVENTS = {"/jax/core/compile/backend_compile_duration": "compile_s",
           "/jax/core/compile/jaxpr_trace_duration": "trace_s",
           "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_s"}
_totals = {"compiles": 0, "compile_s": 0.0, "trace_s": 0.0, "lower_s": 0.0, "cache_hits": 0}
_out = []  # the open JSONL file of this worker, when asked


def _on_duration(event: str, duration: float, **kwargs) -> None:
    key = _EVENTS.get(event)
    if key is not None:
        _totals[key] += duration
        if key == "compile_s":
            _totals["compiles"] += 1


def _on_event(event: str, **kwargs) -> None:
    if event == "/jax/compilation_cache/cache_hits":
        _totals["cache_hits"] += 1


def pytest_addoption(parser):
    parser.addoption("--compile-stats", metavar="DIR", default=None,
                     help="write each test's JAX compile counts and seconds to DIR/*.jsonl "
                          "and print the tests that compiled most")


def pytest_configure(config):
    import jax.monitoring

    jax.monitoring.register_event_duration_secs_listener(_on_duration)
    jax.monitoring.register_event_listener(_on_event)
    where = config.getoption("--compile-stats")
    if where:
        path = pathlib.Path(where)
        path.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out.append(open(path / f"{worker}.jsonl", "a"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _out:
        yield
        return
    before, start = dict(_totals), time.perf_counter()
    yield
    record = {"test": item.nodeid, "wall": round(time.perf_counter() - start, 3)}
    record.update({k: round(v - before[k], 3) for k, v in _totals.items()})
    _out[0].write(json.dumps(record) + "\n")
    _out[0].flush()


def read(where: str | os.PathLike) -> list[dict]:
    """Every record under `where` (all workers, all runs appended there)."""
    rows = []
    for name in sorted(glob.glob(os.path.join(where, "*.jsonl"))):
        with open(name) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def pytest_terminal_summary(terminalreporter, config):
    where = config.getoption("--compile-stats")
    if not where or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rows = read(where)
    if not rows:
        return
    tr = terminalreporter
    total = {k: sum(r[k] for r in rows) for k in ("wall", "compiles", "compile_s", "trace_s",
                                                  "lower_s", "cache_hits")}
    tr.write_sep("=", f"JAX compiles per test ({where})")
    tr.write_line(f"{len(rows)} tests, {total['wall']:.0f} s: {total['compiles']} compiles "
                  f"{total['compile_s']:.0f} s, tracing {total['trace_s']:.0f} s, lowering "
                  f"{total['lower_s']:.0f} s, {total['cache_hits']} cache hits")
    tr.write_line(f"{'compile s':>9} {'compiles':>8} {'trace+lower s':>13} {'wall s':>7}  test")
    for r in sorted(rows, key=lambda r: -r["compile_s"])[:25]:
        tr.write_line(f"{r['compile_s']:9.1f} {r['compiles']:8d} "
                      f"{r['trace_s'] + r['lower_s']:13.1f} {r['wall']:7.1f}  {r['test']}")
