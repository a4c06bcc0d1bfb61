"""Where a multi-process run's settings come from (`gomoku_jax.distributed`), and how
`gomoku-jax launch` starts, prefixes and stops its processes (`gomoku_jax.cli.launch`).
The multi-process training itself: tests/train/test_multiprocess.py."""

from __future__ import annotations

import io
import subprocess
import sys
import threading

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
