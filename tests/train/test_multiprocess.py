"""Training on several processes (jax.distributed over gloo on 127.0.0.1): GMO's test
preset on two processes of two CPU devices each against the same run on one device, and a
process killed mid-run.
One run (a minute or so on a 2-core machine): it is launched with `gomoku-jax launch`, one of
its processes is killed once two iterations are logged, the other must stop with a clear
error (once its next collective fails, or at the latest once the distributed service
declares the killed one dead: `--heartbeat-timeout` 20 s, in which this process runs the
reference on one device, without the arena; the launcher gives it a grace of 60 s to say
so before it stops it), and the run relaunched with `--resume` must finish with the
metrics and params of the run on one device (what may differ:
tests/sharded_runs.py). GMO's is the cheapest iteration to compile (twice in each process:
a multi-process run compiles without the persistent cache, see `gomoku_jax.distributed`);
AlphaZero's sharded iteration is tests/train/test_alphazero.py's (8 devices in one
process)."""
from __future__ import annotations

import os
import pathlib
import re
import signal
import time

import pytest
import sharded_runs
from launching import Launch, metrics

from gomoku_jax import players, train

ITERATIONS = 3
# The arena (process 0's alone, at the end) changes no training state: the reference on one
# device plays none (its programs would be most of the reference's compiles).
SETS = [f"run.iterations={ITERATIONS}", "eval.opponents=random", "eval.games=2"]
CONFIG = train.override(train.preset("gmo_test", "gmo"), SETS)
REFERENCE = train.override(CONFIG, ["eval.opponents="])
ARGS = ["--algo", "gmo", "--preset", "gmo_test", *[x for s in SETS for x in ("--set", s)],
        "--no-progress"]


def final_params(run: pathlib.Path) -> dict:
    return sharded_runs.leaves(players.load(run).variables)


@pytest.mark.slow
def test_two_processes_match_one_device_and_a_killed_run_resumes(tmp_path):
    run, one_device = tmp_path / "run", tmp_path / "one"
    first = Launch("--processes", "2", "--cpu-devices", "2", "--grace", "60", "--",
                   "train", "--run-dir", str(run), "--heartbeat-timeout", "20", *ARGS)
    try:
        pids = first.pids()
        deadline = time.monotonic() + 600
        while len(metrics(run)) < 2:
            assert first.proc.poll() is None, f"the run stopped early:\n{first.output}"
            assert time.monotonic() < deadline, first.output
            time.sleep(0.05)
        os.kill(pids[1], signal.SIGKILL)
        # The reference, the run in this process on its one device without the arena (the
        # gmo_test preset's programs, which the other GMO tests compile), while process 0
        # notices that process 1 is gone (its next collective fails, or at the latest the
        # distributed service declares it dead: its heartbeat timeout), idle.
        train.train(REFERENCE, one_device, progress=False)
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

    two, one = metrics(run), metrics(one_device)
    assert [m["iteration"] for m in two] == list(range(1, ITERATIONS + 1))
    assert all(m["trained"] == 1.0 for m in two)
    sharded_runs.assert_metrics_match(two, one)
    sharded_runs.assert_leaves_match(final_params(run), final_params(one_device),
                                     CONFIG.optim.learning_rate,
                                     ITERATIONS * CONFIG.optim.sgd_steps)
