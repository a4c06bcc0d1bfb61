"""`gomoku-jax launch` run in the background by the multi-process tests
(tests/train/test_multiprocess.py, tests/train/test_muzero_training.py), and the metrics a run
directory holds so far (tests/ is on the import path, as for conftest's helpers)."""

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

# `python -c DIE_WITH_PARENT PID COMMAND...` runs COMMAND, killed (SIGKILL) when the process
# PID that started it ends, as `launch` does to its processes (`launch.die_with_parent`):
# none outlives this test. It is set in the child and not by a `preexec_fn` of this
# multithreaded (JAX) process, where code between fork and exec may deadlock.
DIE_WITH_PARENT = ("import ctypes, os, sys; ctypes.CDLL(None).prctl(1, 9); "
                   "os.getppid() == int(sys.argv[1]) or sys.exit(1); "
                   "os.execv(sys.argv[2], sys.argv[2:])")


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
            [sys.executable, "-c", DIE_WITH_PARENT, str(os.getpid()), sys.executable, "-m",
             "gomoku_jax", "launch", *args],
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
