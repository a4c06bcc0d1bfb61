"""Does a training run killed with SIGKILL at any point resume to exactly the run that was
never killed? For each training algorithm (its `test` preset): one uninterrupted reference
run, then for each kill a fresh run in a subprocess killed either at a failpoint
(`gomoku_jax.train.failpoints`: inside the compiled iteration, half-way through orbax's
checkpoint write, between orbax finishing a step and its integrity.json, between
iterations) or by the parent after a random delay from its start (anywhere: start-up,
compiling, self-play, SGD, a checkpoint), then resumed once in this process. The table
gives, per kill, what was on disk, the step the resume continued from, and whether the
final params and metrics (but the wall-clock fields) equal the reference's.

    python experiments/kill_resume.py                      # 20 kills per algorithm
    python experiments/kill_resume.py --algos gmo --kills 4 --random 0

Each kill costs a subprocess start (importing JAX, the compiled iteration from the
persistent compilation cache) and a resume: about 10-20 s on a 2-core CPU. A progress bar
with an ETA on stderr counts the runs (not with `--no-progress`).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable, Optional

import jax
import numpy as np

from gomoku_jax import compilation_cache, players, progress
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import ALGORITHMS, checkpoint, failpoints, override, preset, train
from gomoku_jax.train.driver import TIMING_KEYS

SETS = ("eval.opponents=", "run.checkpoint_every=1")
# The failpoint kills, in the order they are taken (ITERATION is filled in per kill).
POINTS = ("iteration", "checkpoint_write", "manifest", "checkpoint_done")


@dataclasses.dataclass
class Trial:
    """One kill and its resume."""

    algo: str
    kill: str                 # "kill@POINT:IT" or "random 3.2 s"
    exit: str                 # how the killed process ended: "SIGKILL", "0" (finished first)
    on_disk: list[int]        # the complete steps it left
    partial: int              # orbax temporary directories it left
    resumed_from: Optional[int]  # the step the resume continued from (None: from scratch)
    equal_params: bool
    equal_metrics: bool


def config_for(algo: str, iterations: int):
    return override(preset(ALGORITHMS[algo].test_preset, algo),
                    [*SETS, f"run.iterations={iterations}"])


def command(algo: str, iterations: int, run_dir: pathlib.Path) -> list[str]:
    sets = [x for s in (*SETS, f"run.iterations={iterations}") for x in ("--set", s)]
    return [sys.executable, "-m", "gomoku_jax", "train", "--algo", algo, "--preset",
            ALGORITHMS[algo].test_preset, "--run-dir", str(run_dir), *sets, "--no-progress"]


def launch(cmd: list[str], log: pathlib.Path, failpoint: Optional[str] = None,
           delay: Optional[float] = None) -> tuple[int, float]:
    """Run `cmd` (with $GOMOKU_JAX_FAILPOINTS=failpoint), SIGKILLed after `delay` seconds
    if given and still running; (return code, seconds)."""
    env = {k: v for k, v in os.environ.items() if k != failpoints.ENV_VAR}
    if failpoint:
        env[failpoints.ENV_VAR] = failpoint
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            proc.wait(timeout=delay if delay is not None else 900)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    return proc.returncode, time.perf_counter() - start


def metrics(run_dir: pathlib.Path) -> list[dict]:
    lines = (run_dir / rd.METRICS_FILE).read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in TIMING_KEYS}
            for line in lines]


def params(run_dir: pathlib.Path) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(players.load(run_dir).variables)]


def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def kill(algo: str, iterations: int, run_dir: pathlib.Path, failpoint: Optional[str] = None,
         delay: Optional[float] = None) -> int:
    """Start a fresh run in `run_dir` in a subprocess, killed at `failpoint` or after
    `delay` s; its return code (-9: killed, 0: it finished first)."""
    code, _ = launch(command(algo, iterations, run_dir), run_dir.with_suffix(".log"),
                     failpoint, delay)
    if code not in (0, -signal.SIGKILL):
        raise RuntimeError(f"the run exited with {code}: see {run_dir.with_suffix('.log')}")
    return code


def resume(algo: str, iterations: int, run_dir: pathlib.Path, reference: pathlib.Path,
           what: str, code: int) -> Trial:
    """Look at what the killed run in `run_dir` left, resume it here, compare."""
    ckpts = run_dir / rd.CHECKPOINT_DIR
    on_disk = sorted(rd.manager(run_dir, read_only=True).all_steps()) \
        if ckpts.is_dir() else []
    partial = sum(checkpoint.TMP_MARK in p.name for p in ckpts.iterdir()) \
        if ckpts.is_dir() else 0
    resumed_from = checkpoint.resume_step(run_dir, lambda m: None)[0] if on_disk else None
    train(config_for(algo, iterations), run_dir, progress=False)
    return Trial(algo, what, "SIGKILL" if code else "0", on_disk, partial, resumed_from,
                 same(params(run_dir), params(reference)),
                 metrics(run_dir) == metrics(reference))


def plan(iterations: int, kills: int, randoms: int) -> list[str]:
    """The failpoint kills, `kills - randoms` of them: every point in turn at iteration 2,
    then 3, ..., then 1 (the last iteration's `checkpoint_done` is the end of the run:
    left out), repeating when there are more kills than that."""
    its = [*range(2, iterations + 1), 1]
    order = [f"kill@{p}:{it}" for it in its for p in POINTS
             if not (p == "checkpoint_done" and it == iterations)]
    return [order[i % len(order)] for i in range(max(kills - randoms, 0))]


def run(algos: list[str], iterations: int, kills: int, randoms: int, seed: int,
        work: pathlib.Path, log: Callable[[str], None] = print,
        on_run: Optional[Callable[[], None]] = None,
        points: Optional[list[str]] = None, jobs: int = 1) -> list[Trial]:
    """Every algorithm's kills (`kills`, of which `randoms` after a random delay from the
    start, uniform up to the reference subprocess's wall time; the others at the
    failpoints `points`, default `plan`'s), their rows as they come; `jobs` killed
    subprocesses at a time."""
    rng = random.Random(seed)
    trials = []
    log("| algo | kill | exit | steps on disk | tmp dirs | resumed from | equal params "
        "| equal metrics |")
    log("|---|---|---|---|---|---|---|---|")
    for algo in algos:
        reference = work / f"{algo}-reference"
        train(config_for(algo, iterations), reference, progress=False)
        (on_run or (lambda: None))()
        delays: list[float] = []
        if randoms:  # how long a whole run takes in a subprocess: the random delays' range
            code, seconds = launch(command(algo, iterations, work / f"{algo}-timed"),
                                   work / f"{algo}-timed.log")
            assert code == 0, (work / f"{algo}-timed.log").read_text()[-2000:]
            delays = [rng.uniform(0.5, seconds) for _ in range(randoms)]
            (on_run or (lambda: None))()
        chosen = points if points is not None else plan(iterations, kills, randoms)
        specs = [(f, None) for f in chosen] + \
            [(None, d) for d in delays]
        # `jobs` kills at a time (the random delays are only meaningful one at a time)
        for first in range(0, len(specs), jobs):
            batch = list(enumerate(specs))[first:first + jobs]
            with concurrent.futures.ThreadPoolExecutor(len(batch)) as pool:
                codes = list(pool.map(lambda x: kill(algo, iterations, work / f"{algo}-{x[0]}",
                                                     *x[1]), batch))
            for (i, (failpoint, delay)), code in zip(batch, codes):
                t = resume(algo, iterations, work / f"{algo}-{i}", reference,
                           failpoint or f"random {delay:.1f} s", code)
                trials.append(t)
                log(f"| {algo} | {t.kill} | {t.exit} | {t.on_disk} | {t.partial} | "
                    f"{'-' if t.resumed_from is None else t.resumed_from} | "
                    f"{'yes' if t.equal_params else 'NO'} | "
                    f"{'yes' if t.equal_metrics else 'NO'} |")
                (on_run or (lambda: None))()
    bad = sum(not (t.equal_params and t.equal_metrics) for t in trials)
    log(f"\n{len(trials)} kills, {len(trials) - bad} resumed to the uninterrupted run exactly, "
        f"{bad} did not")
    return trials


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algos", default=",".join(sorted(ALGORITHMS)),
                        help="comma-separated training algorithms (default: all)")
    parser.add_argument("--kills", type=int, default=20, help="kills per algorithm")
    parser.add_argument("--random", type=int, default=12,
                        help="how many of them after a random delay (the rest: failpoints)")
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0, help="of the random delays")
    parser.add_argument("--points", help="comma-separated failpoints to kill at instead of "
                                         "the planned ones, e.g. kill@iteration:2")
    parser.add_argument("--jobs", type=int, default=1,
                        help="killed runs at a time (1 keeps the random delays' timing)")
    parser.add_argument("--work-dir", help="where the runs go (default: a temporary dir)")
    progress.add_argument(parser)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    algos = [a for a in args.algos.split(",") if a]
    unknown = sorted(set(algos) - set(ALGORITHMS))
    if unknown or not algos:
        raise SystemExit(f"error: --algos {args.algos}: known are {', '.join(sorted(ALGORITHMS))}")
    if not 0 <= args.random <= args.kills or args.iterations < 2:
        raise SystemExit("error: needs 0 <= --random <= --kills and --iterations >= 2")
    points = None
    if args.points is not None:
        points = [p for p in args.points.split(",") if p]
        try:
            failpoints.parse(",".join(points))
        except ValueError as e:
            raise SystemExit(f"error: --points: {e}")
        args.kills = len(points) + args.random
    compilation_cache.enable()
    runs = len(algos) * (1 + (args.random > 0) + args.kills)
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(args.work_dir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        shown = progress.shows(not args.no_progress)
        with progress.bar(runs, "kill_resume", "run", enabled=shown) as bar:
            trials = run(algos, args.iterations, args.kills, args.random, args.seed, work,
                         log=progress.printer(bar), on_run=lambda: bar.update(1),
                         points=points, jobs=max(args.jobs, 1))
    return 0 if all(t.equal_params and t.equal_metrics for t in trials) else 1


if __name__ == "__main__":
    sys.exit(main())
