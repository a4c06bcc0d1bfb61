"""Where a multi-process run's settings come from (`gomoku_jax.distributed`), and how
`gomoku-jax launch` starts, prefixes and stops its processes (`gomoku_jax.cli.launch`).
The multi-process training itself: tests/train/test_multiprocess.py."""

from __future__ import annotations

import argparse
import io
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import jax
import pytest

from gomoku_jax import distributed
from gomoku_jax.cli import launch

ENV = {"JAX_COORDINATOR_ADDRESS": "10.0.0.1:8476", "JAX_NUM_PROCESSES": "4",
       "JAX_PROCESS_ID": "3"}
SLURM = {"SLURM_JOB_ID": "7", "SLURM_PROCID": "1", "SLURM_NTASKS": "2"}


@pytest.mark.parametrize("args, environ, expected", [
    ((None, None, None), {}, None),
    (("h0:1234", 2, 1), {}, distributed.Cluster("arguments", "h0:1234", 2, 1)),
    (("h0:1234", "2", "0"), ENV, distributed.Cluster("arguments", "h0:1234", 2, 0)),
    ((None, None, None), ENV, distributed.Cluster("environment", "10.0.0.1:8476", 4, 3)),
    ((None, None, None), SLURM, distributed.Cluster("SLURM")),
    ((None, None, None), {**SLURM, "SLURM_NTASKS": "1"}, None),  # one task: one process
    ((None, None, None), {"OMPI_MCA_orte_hnp_uri": "x", "OMPI_COMM_WORLD_SIZE": "8"},
     distributed.Cluster("Open MPI")),
    ((None, None, None), {"TPU_WORKER_HOSTNAMES": "a,b"}, distributed.Cluster("Cloud TPU")),
    ((None, None, None), {"TPU_WORKER_HOSTNAMES": "a"}, None),
    # JAX's own variable alone: JAX looks for the rest in the cluster
    ((None, None, None), {"JAX_COORDINATOR_ADDRESS": "h:1"},
     distributed.Cluster("environment", "h:1")),
])
def test_settings_come_from_arguments_then_environment_then_cluster(args, environ, expected):
    assert distributed.resolve(*args, environ=environ) == expected


@pytest.mark.parametrize("args, environ, message", [
    (("h:1", None, 0), {}, "missing --num-processes"),
    ((None, 2, None), {}, "missing --coordinator, --process-id"),
    (("h", 2, 0), {}, "--coordinator takes HOST:PORT"),
    (("h:0", 2, 0), {}, "port in 1..65535"),
    (("h:1", "two", 0), {}, "--num-processes must be an integer, got 'two'"),
    (("h:1", 0, 0), {}, "--num-processes must be >= 1, got 0"),
    (("h:1", 2, -1), {}, "--process-id must be >= 0, got -1"),
    (("h:1", 2, 5), {}, "--process-id=5 must be < --num-processes=2"),
    ((None, None, None), {**ENV, "JAX_PROCESS_ID": "4"},
     "JAX_PROCESS_ID=4 must be < JAX_NUM_PROCESSES=4"),
    ((None, None, None), {"JAX_COORDINATOR_ADDRESS": "h:1", "JAX_PROCESS_ID": "0"},
     "missing JAX_NUM_PROCESSES"),
])
def test_bad_settings_say_what_is_wrong(args, environ, message):
    with pytest.raises(ValueError, match=message):
        distributed.resolve(*args, environ=environ)


def test_one_process_initializes_nothing(monkeypatch):
    def refuse(**kwargs):
        raise AssertionError("jax.distributed.initialize was called")

    monkeypatch.setattr(distributed.jax.distributed, "initialize", refuse)
    assert distributed.initialize(environ={}) is None
    assert distributed.initialize("h:1", 1, 0, environ={}) is None


def test_a_cpu_run_of_several_processes_compiles_without_the_persistent_cache(monkeypatch):
    """Each process compiles its own programs (on a CPU JAX keys a program by its process
    and writes the cache from process 0 alone: `distributed`'s docstring); other backends
    keep the cache."""
    calls = []
    monkeypatch.setattr(distributed.jax.distributed, "initialize",
                        lambda **kwargs: calls.append(kwargs))
    before = jax.config.jax_enable_compilation_cache
    try:
        for backend, cached in (("gpu", True), ("cpu", False)):
            jax.config.update("jax_enable_compilation_cache", True)
            monkeypatch.setattr(distributed.jax, "default_backend", lambda b=backend: b)
            assert distributed.initialize("h:1", 2, 1, environ={}) == distributed.Cluster(
                "arguments", "h:1", 2, 1)
            assert jax.config.jax_enable_compilation_cache is cached, backend
    finally:
        jax.config.update("jax_enable_compilation_cache", before)
    assert calls == [{"coordinator_address": "h:1", "num_processes": 2, "process_id": 1,
                      "initialization_timeout": 300, "heartbeat_timeout_seconds": 100}] * 2


def test_child_environment():
    env = launch.child_env({"XLA_FLAGS": "--xla_force_host_platform_device_count=8 --other",
                            launch.FORCE_PROGRESS: "1", "KEEP": "x"},
                           "127.0.0.1:5", 3, 2, cpu_devices=2, show_progress=True)
    assert env["KEEP"] == "x" and env["JAX_PLATFORMS"] == "cpu"
    assert env["XLA_FLAGS"] == "--other --xla_force_host_platform_device_count=2"
    assert distributed.resolve(environ=env) == distributed.Cluster(
        "environment", "127.0.0.1:5", 3, 2)
    assert launch.FORCE_PROGRESS not in env  # only process 0 draws the bar
    first = launch.child_env({}, "127.0.0.1:5", 3, 0, cpu_devices=None, show_progress=True)
    assert first[launch.FORCE_PROGRESS] == "1" and "XLA_FLAGS" not in first
    assert 0 < launch.free_port() < 65536


def test_forward_prefixes_lines_and_bar_redraws():
    out = io.BytesIO()
    stream = io.BytesIO(b"one\n\rbar 1\rbar 2\n\nlast without newline")
    launch.forward(stream, b"[p1] ", out, threading.Lock())
    assert out.getvalue() == (b"[p1] one\n\r[p1] bar 1\r[p1] bar 2\n\n"
                              b"[p1] last without newline\n")


def test_a_failed_process_stops_the_others_and_sets_the_status(capfd):
    procs = [subprocess.Popen([sys.executable, "-c", code]) for code in (
        "import time; time.sleep(60)",  # would run on: stopped
        "import sys; sys.exit(3)")]
    procs[1].wait()
    launch.stop(procs, grace=0.2)
    assert procs[0].returncode == -15  # SIGTERM after the grace
    assert launch.failures(procs) == "p0 killed by SIGTERM, p1 exit status 3"
    assert launch.describe(-9) == "killed by SIGKILL" and launch.describe(2) == "exit status 2"


def test_launch_starts_every_process_to_die_with_it(monkeypatch, capfd):
    started, real = [], subprocess.Popen

    def popen(command, **kwargs):
        started.append((command[3:], kwargs.pop("preexec_fn")))
        return real([sys.executable, "-c", "print('done')"], **kwargs)

    monkeypatch.setattr(launch.subprocess, "Popen", popen)
    args = launch.build_parser().parse_args(["--processes", "2", "--", "train", "--x"])
    assert launch.main(args) == 0
    assert started == [(["train", "--x"], launch.die_with_parent)] * 2
    assert capfd.readouterr().out.count("] done") == 2


def test_launch_sees_a_later_process_fail_while_the_first_runs(monkeypatch, capfd):
    """p1 fails at once while p0 would run for a minute: the launcher stops p0 after the
    grace and exits with p1's status, without waiting for p0 to end by itself."""
    real = subprocess.Popen
    codes = iter(["import time; time.sleep(60)", "import sys; sys.exit(3)"])

    def popen(command, **kwargs):
        assert kwargs.pop("preexec_fn") is launch.die_with_parent  # no fork of this process
        return real([sys.executable, "-c", next(codes)], **kwargs)

    monkeypatch.setattr(launch.subprocess, "Popen", popen)
    args = launch.build_parser().parse_args(["--processes", "2", "--grace", "0.5", "--",
                                             "train"])
    start = time.monotonic()
    assert launch.main(args) == 3
    assert time.monotonic() - start < 30  # not p0's minute
    err = capfd.readouterr().err
    assert "p1 exit status 3: stopping the other processes" in err
    assert "failed: p0 killed by SIGTERM, p1 exit status 3" in err


def test_a_heartbeat_timeout_below_one_second_is_refused():
    args = argparse.Namespace(coordinator="h:1", num_processes="2", process_id="0",
                              heartbeat_timeout=0)
    with pytest.raises(ValueError, match="--heartbeat-timeout must be >= 1, got 0"):
        distributed.from_args(args)


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="prctl(PR_SET_PDEATHSIG) is Linux's")
def test_a_process_started_to_die_with_its_parent_does(tmp_path):
    """A parent killed with SIGKILL (no chance to stop its children) takes a child started
    with `launch.die_with_parent` along: no process of a launch outlives it. (The parent is
    a fresh interpreter: this one, with JAX's threads, should not fork to run Python.)"""
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import subprocess, sys, time
        from gomoku_jax.cli.launch import die_with_parent
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                 preexec_fn=die_with_parent)
        print(child.pid, flush=True)
        time.sleep(300)
    """)], stdout=subprocess.PIPE, text=True)
    child = None
    try:
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 60  # the kernel signals at once; this only waits
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(child)
    finally:
        parent.kill()
        parent.wait()
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)
