"""Training on several processes (jax.distributed over gloo on 127.0.0.1): two processes of
two CPU devices each against one process of four, and a process killed mid-run.

One run of each kind (they take a minute or two on a 2-core machine): the 2-process run is
launched with `gomoku-jax launch`, one of its processes is killed once two iterations are
logged, the launcher must stop the other with a clear error, and the run relaunched with
`--resume` must finish with the same losses and params as the 1-process run."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import threading
import time

import jax
import numpy as np
import pytest

from gomoku_jax import players

ITERATIONS = 4
ARGS = ["--preset", "test", "--set", f"run.iterations={ITERATIONS}",
        "--set", "run.checkpoint_every=1", "--no-progress"]
ARENA = ["--set", "eval.opponents=random", "--set", "eval.games=2"]  # process 0's arena
NO_ARENA = ["--set", "eval.opponents="]  # (the arena changes no training state)


def cpu_env(devices: int) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JAX_COORDINATOR", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"))}
    flags = [f for f in env.get("XLA_FLAGS", "").split()
             if not f.startswith("--xla_force_host_platform_device_count")]
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS=" ".join(
        flags + [f"--xla_force_host_platform_device_count={devices}"]))
    return env


class Launch:
    """`gomoku-jax launch` in the background, its output collected line by line."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gomoku_jax", "launch", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=cpu_env(1),
            start_new_session=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def pids(self, timeout: float = 60) -> dict[int, int]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(r"\[launch\] .*?: (p0 pid \d+.*)", self.output)
            if m:
                return {int(i): int(pid) for i, pid in re.findall(r"p(\d+) pid (\d+)",
                                                                   m.group(1))}
            time.sleep(0.05)
        raise AssertionError(f"launch printed no pids:\n{self.output}")

    def wait(self, timeout: float) -> int:
        try:
            code = self.proc.wait(timeout)
        finally:
            self.stop()
        self.reader.join(5)
        return code

    def stop(self) -> None:
        """Kill the launcher and everything it started, if still running."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def metrics(run: pathlib.Path) -> list[dict]:
    path = run / "metrics.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # a line being written
    return out


def final_params(run: pathlib.Path) -> dict:
    player = players.load(run)
    leaves = jax.tree_util.tree_leaves_with_path(jax.device_get(player.variables))
    return {jax.tree_util.keystr(p): np.asarray(x) for p, x in leaves}


@pytest.fixture(scope="module")
def one_process(tmp_path_factory) -> pathlib.Path:
    """The reference: one process with four devices."""
    run = tmp_path_factory.mktemp("one") / "run"
    proc = subprocess.run([sys.executable, "-m", "gomoku_jax", "train", "--run-dir", str(run),
                           *ARGS, *NO_ARENA], env=cpu_env(4), capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return run


def test_two_processes_match_one_and_a_killed_run_resumes(tmp_path, one_process):
    run = tmp_path / "run"
    first = Launch("--processes", "2", "--cpu-devices", "2", "--grace", "20", "--",
                   "train", "--run-dir", str(run), *ARGS, *ARENA)
    try:
        pids = first.pids()
        deadline = time.monotonic() + 600
        while len(metrics(run)) < 2:
            assert first.proc.poll() is None, f"the run stopped early:\n{first.output}"
            assert time.monotonic() < deadline, first.output
            time.sleep(0.05)
        os.kill(pids[1], signal.SIGKILL)
        code = first.wait(120)
    finally:
        first.stop()
    out = first.output
    assert code == 128 + signal.SIGKILL, out
    assert re.search(r"^\[launch\] failed: .*p1 killed by SIGKILL", out, re.M), out
    # process 0 noticed by itself, in the next collective step, and said how to go on
    assert "[p0] error: process 0 of 2:" in out and "--resume" in out, out
    done = len(metrics(run))
    assert 2 <= done < ITERATIONS, f"killed after {done} iterations: not mid-run"

    again = Launch("--processes", "2", "--cpu-devices", "2", "--", "train", "--run-dir",
                   str(run), "--resume", "--no-progress")
    try:
        assert again.wait(900) == 0, again.output
    finally:
        again.stop()
    out = again.output
    assert "[p0] 2 processes (environment), 4 devices" in out
    assert re.search(r"^\[p0\] \| random \| \d+-\d+-\d+ \| [01]\.\d{3} \|", out, re.M), out
    assert not re.search(r"^\[p1\] \|", out, re.M)  # process 0 alone reports

    two, one = metrics(run), metrics(one_process)
    assert [m["iteration"] for m in two] == list(range(1, ITERATIONS + 1))
    assert [m["trained"] for m in two][1:] == [1.0] * (ITERATIONS - 1)
    for key in ("loss", "policy_loss", "value_loss", "grad_norm", "games", "positions",
                "buffer_size", "sgd_steps"):
        assert [m[key] for m in two] == pytest.approx([m[key] for m in one], rel=1e-4,
                                                      abs=1e-5), key
    a, b = final_params(run), final_params(one_process)
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-3, atol=1e-4, err_msg=name)
