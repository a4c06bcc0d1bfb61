"""The run driver: one host loop for every training algorithm.

    summary = train(config, run_dir)        # any algorithm's config (`train.ALGORITHMS`)

Each iteration is one compiled call (`Trainer.iteration`); between calls the host logs the
metrics (a progress bar with an ETA on a terminal, a plain line every few seconds on stderr
otherwise, `metrics.jsonl`, TensorBoard when `tensorboardX` is installed), saves an orbax
checkpoint every `run.checkpoint_every` iterations and plays the arena every `eval.every`
iterations and at the end: the trained agent at full strength against each opponent in
`eval.opponents` ("previous" is the agent with the params of the evaluation before, or the
initial ones; checkpoints keep them, so a resumed run meets the same one). A run directory
that already has checkpoints is resumed from the latest one that passes its integrity check
(`checkpoint.resume_step`; newer, corrupt ones are set aside, saying so on stderr), with the
metrics written after it dropped, so a killed run continues as if it had not stopped.

Faults (docs/training.md, "Faults"): one process trains in a run directory at a time
(`lock.run_lock`); an iteration with a NaN or an Inf in its metrics or params stops the
run before anything of it is written (`finite.NonFiniteError`); a checkpoint that cannot
be written stops it with the earlier ones intact (`checkpoint.CheckpointError`).
`failpoints` makes each of these happen on purpose, for tests.

A fresh run with `run.init_from` starts from another run's network (`warm_start`; the
first metrics record says which checkpoint); its resume reads its own checkpoints.

A finished run is left as it is (its summary included) unless the config asks for more
iterations: `--resume --set run.iterations=N` extends it (a resume may change only the
keys in `config.RESUMABLE`).

In a multi-process run (`gomoku_jax.distributed`) every process calls `train` with the same
config; only process 0 writes the config, the metrics and the summary and plays the arena
(on its own copy of the params), and every process takes part in each iteration and
checkpoint. When one of those fails there, most likely because another process stopped,
`ProcessLost` says so and how to resume.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import sys
import time
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import orbax.checkpoint as ocp

from gomoku_jax import progress as progress_bar
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import checkpoint, failpoints, finite
from gomoku_jax.train.algorithms import load_config
from gomoku_jax.train.arena import evaluate, validate_opponents
from gomoku_jax.train.config import RESUMABLE, resumable_changes
from gomoku_jax.train.lock import run_lock
from gomoku_jax.train.trainer import trainer_for
from gomoku_jax.train.warm_start import load_network, warm_start

# The wall-clock fields of a metrics record: everything else is the same when a run is
# killed and resumed.
TIMING_KEYS = ("seconds", "compile_seconds", "games_per_second", "positions_per_second")


class RunLogger:
    """metrics.jsonl (truncated to `start` iterations on resume) and TensorBoard; writes
    nothing unless `primary` (process 0 of a multi-process run)."""

    def __init__(self, run_dir: pathlib.Path, start: int, primary: bool = True):
        self.path = run_dir / rd.METRICS_FILE
        self.primary = primary
        self.board = None
        if not primary:
            return
        kept = []
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a kill
                if record.get("iteration", 0) <= start:
                    kept.append(line)
        # through a new file and a rename: a kill or a full disk here keeps the old one
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text("".join(line + "\n" for line in kept))
        os.replace(tmp, self.path)
        try:
            from tensorboardX import SummaryWriter

            self.board = SummaryWriter(str(run_dir / "tensorboard"))
        except ImportError:
            pass

    def log(self, record: dict) -> None:
        if not self.primary:
            return
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")
        if self.board is not None:
            step = record["iteration"]
            for k, v in record.items():
                if isinstance(v, (int, float)) and k != "iteration":
                    self.board.add_scalar(k, v, step)

    def close(self) -> None:
        if self.board is not None:
            try:
                self.board.close()
            except OSError as e:  # a full disk: metrics.jsonl is the record, and an error
                # in flight (the checkpoint's, say) must not be masked by this one
                print(f"[train] warning: TensorBoard events not flushed: {e}",
                      file=sys.stderr, flush=True)


class CompileTimer:
    """Seconds JAX spends tracing, lowering and compiling (or fetching from the persistent
    cache), summed from `jax.monitoring`'s duration events while it is open; `take()`
    returns the sum since the last take. An iteration's `seconds` minus this is what it
    cost to run, whatever the compilation cache held."""

    EVENTS = ("/jax/core/compile/jaxpr_trace_duration",
              "/jax/core/compile/jaxpr_to_mlir_module_duration",
              "/jax/core/compile/backend_compile_duration")

    def __init__(self):
        self.seconds = 0.0
        jax.monitoring.register_event_duration_secs_listener(self._listen)

    def _listen(self, event: str, duration: float, **kwargs: Any) -> None:
        if event in self.EVENTS:
            self.seconds += duration

    def take(self) -> float:
        seconds, self.seconds = self.seconds, 0.0
        return seconds

    def close(self) -> None:
        jax.monitoring.unregister_event_duration_listener(self._listen)


def copy_tree(tree: Any) -> Any:
    """A copy that outlives the state: `iteration` donates (frees) its input's buffers."""
    return jax.tree.map(jnp.copy, tree)


class ProcessLost(RuntimeError):
    """A multi-process run lost one of its processes."""


def local_copy(tree: Any) -> Any:
    """This process's copy of a replicated tree (on its first device), for what it
    computes alone, such as the arena of process 0; `tree` itself on a single process."""
    if jax.process_count() == 1:
        return tree
    return jax.tree.map(lambda x: x.addressable_data(0) if isinstance(x, jax.Array) else x,
                        tree)


@contextlib.contextmanager
def collective(it: int, what: str):
    """Around a step every process of a run takes together (an iteration, a checkpoint):
    on several processes, an error there most likely means another process stopped, and
    it becomes a `ProcessLost` that says so and how to resume."""
    try:
        yield
    except Exception as e:
        if jax.process_count() == 1:
            raise
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise ProcessLost(
            f"process {jax.process_index()} of {jax.process_count()}: {what} of iteration "
            f"{it} failed, most likely because another process stopped ({type(e).__name__}: "
            f"{first[:300]}). Start every process again with the same command and --resume: "
            f"the run continues from its last checkpoint") from e


def check_run_dir(run_dir: pathlib.Path, config: Any) -> None:
    """ValueError unless `config` may run in `run_dir`: a new directory, the same config,
    or the same run with only resumable keys changed (`config.RESUMABLE`: e.g. extending
    it with more iterations)."""
    if not (run_dir / rd.CONFIG_FILE).exists():
        return
    saved = load_config(run_dir)
    if type(saved) is not type(config):
        raise ValueError(f"{run_dir} holds a run of --algo {saved.algo}, not {config.algo}: "
                         f"use another run directory")
    changed = resumable_changes(saved, config)
    if changed:
        raise ValueError(f"{run_dir} holds a run with a different config ({', '.join(changed)} "
                         f"differ); resume it with its own config (gomoku-jax train --run-dir "
                         f"{run_dir} --resume, which may change only {', '.join(RESUMABLE)}) "
                         f"or use a new run directory")


def train(config: Any, run_dir: str | pathlib.Path, *, progress: bool = True,
          stop_after: Optional[int] = None,
          on_iteration: Optional[Callable[[int, dict], None]] = None,
          stop_when: Optional[Callable[[int, dict], bool]] = None) -> dict:
    """Run (or resume, or extend) `config` in `run_dir`; returns the summary (also
    `summary.json`). A run that has done `run.iterations` already is not touched: its saved
    summary comes back with `"already_finished": True`.

    Args:
      config: any training algorithm's config (`train.ALGORITHMS`).
      stop_after: stop once this many iterations are done (in all, counting those of
        earlier sessions), as if killed after its checkpoint; for tests and time limits.
      on_iteration: called with (iteration, metrics record) after each iteration.
      stop_when: called with (iteration, metrics record) after each iteration; True stops
        the run there, after a checkpoint, as `stop_after` does (e.g. a wall-clock budget).
        On several processes it must answer the same on every one.
    Raises:
      ProcessLost: on several processes, an iteration or a checkpoint failed (another
        process stopped, most likely); the run resumes from its last checkpoint.
      ValueError: a run directory made with another algorithm or config (other than its
        resumable keys), a checkpoint of another env version, a bad opponent spec, what
        the algorithm's trainer refuses (e.g. GMO's `data.replay_run`), no checkpoint
        that passes its integrity check, or (`lock.RunDirBusy`) another process training
        in `run_dir`.
      finite.NonFiniteError: an iteration's metrics or params hold a NaN or an Inf; its
        metrics line and checkpoint are not written.
      checkpoint.CheckpointError: a checkpoint could not be written (a full disk); the
        earlier ones are intact.
    """
    t_start = time.perf_counter()
    run_dir = pathlib.Path(run_dir)
    check_run_dir(run_dir, config)
    validate_opponents(config)
    trainer = trainer_for(config)
    # A fresh run's state first (warm-started from `run.init_from`): its errors come before
    # anything is written. A resume reads the network from its own checkpoint.
    state, source = None, None
    if not rd.has_checkpoints(run_dir):
        network = load_network(trainer, config.run.init_from) if config.run.init_from else None
        state = trainer.init(config.run.seed)
        if network is not None:
            state, source = warm_start(trainer, state, network)
    primary = jax.process_index() == 0
    # process 0 holds the lock for all: the others share the directory legitimately
    with run_lock(run_dir) if primary else contextlib.nullcontext():
        return _run(config, run_dir, trainer, state, primary, t_start, progress=progress,
                    stop_after=stop_after, on_iteration=on_iteration, stop_when=stop_when,
                    init_from=source)


def _say(message: str) -> None:
    print(f"[train] {message}", file=sys.stderr, flush=True)


def _open(config: Any, run_dir: pathlib.Path, trainer: Any, state: Any, primary: bool
          ) -> tuple[Any, Any, Any, int, Optional[int]]:
    """(checkpoint writer, state, previous network, its iteration, step resumed from or
    None) of a fresh run (`state` given) or of a resume from the newest checkpoint that
    passes its integrity check; the steps that fail it are set aside and what a killed
    save left is removed first (process 0), so orbax neither skips nor deletes around
    them."""
    say = _say if primary else (lambda message: None)
    step, bad = (None, []) if state is not None else checkpoint.resume_step(run_dir, say)
    if state is None and step is None:
        raise ValueError(f"no checkpoint in {run_dir / rd.CHECKPOINT_DIR} passes its "
                         f"integrity check ({', '.join(map(str, bad))} are corrupt): nothing "
                         f"to resume; move that directory away to start the run again")
    if primary:
        checkpoint.set_aside(run_dir, bad, say)
        checkpoint.clean_partial(run_dir / rd.CHECKPOINT_DIR)
    if jax.process_count() > 1:
        ocp.multihost.sync_global_processes("gomoku_jax_train_open")
    mgr = checkpoint.writer(run_dir, config.run.keep_checkpoints)
    if state is not None:
        return mgr, state, copy_tree(trainer.network(state)), 0, None
    state, previous, previous_iteration = checkpoint.restore(mgr, trainer, step)
    return mgr, state, previous, previous_iteration, step


def _run(config: Any, run_dir: pathlib.Path, trainer: Any, state: Any, primary: bool,
         t_start: float, *, progress: bool, stop_after: Optional[int],
         on_iteration: Optional[Callable[[int, dict], None]],
         stop_when: Optional[Callable[[int, dict], bool]],
         init_from: Optional[dict] = None) -> dict:
    mgr, state, previous, previous_iteration, saved = _open(config, run_dir, trainer, state,
                                                            primary)
    start = int(state.iteration)
    if start >= config.run.iterations:
        summary = rd.read_summary(run_dir) or {"arena": {}, "iterations": start,
                                               "finished": True}
        return {**summary, "already_finished": True}
    if primary:
        checkpoint.save_config(run_dir, config)
    logger = RunLogger(run_dir, start, primary)
    total = config.run.iterations if stop_after is None else min(stop_after,
                                                                 config.run.iterations)
    eval_key = jax.random.key(config.run.seed + 1)
    arena: dict = {}
    # a bar on a terminal; off one (a log file, a pipe, CI) a line every few seconds
    bar = progress_bar.bar(total=config.run.iterations, initial=start, desc="train",
                           unit="it", enabled=progress and primary)
    stopping = False
    compiling = CompileTimer()
    try:
        for it in range(start + 1, total + 1):
            compiling.take()
            t0 = time.perf_counter()
            with collective(it, "the iteration"):
                state, metrics = trainer.iteration(state, it - 1)
                failpoints.hit("iteration", it)
                if failpoints.hit("params", it) == "nan":
                    state = finite.poison(state)
                # this process's copy of the (replicated) params: a program of its own,
                # with no collective for every process to join
                metrics, params_finite = jax.device_get(
                    (metrics, finite.all_finite(local_copy(trainer.network(state)))))
                metrics = {k: float(v) for k, v in metrics.items()}
            if failpoints.hit("loss", it) == "nan":
                metrics["loss"] = float("nan")
            finite.check(it, metrics, bool(params_finite), saved, run_dir)
            seconds = time.perf_counter() - t0
            record = {"iteration": it, **metrics, **trainer.record(it - 1),
                      "seconds": seconds,
                      "games_per_second": metrics.get("games", 0.0) / seconds,
                      "positions_per_second": metrics.get("positions", 0.0) / seconds}
            record["compile_seconds"] = compiling.take()
            if it == 1 and init_from is not None:
                record["init_from"] = init_from
            last = it == config.run.iterations
            if (config.eval.every and it % config.eval.every == 0) or last:
                params = trainer.network(state)
                if primary:
                    arena = evaluate(trainer, local_copy(params), local_copy(previous),
                                     jax.random.fold_in(eval_key, it))
                    record["arena"] = arena
                previous, previous_iteration = copy_tree(params), it
                record["previous_iteration"] = previous_iteration
            logger.log(record)
            stopping = stop_when is not None and stop_when(it, record)
            if it % config.run.checkpoint_every == 0 or last or it == total or stopping:
                with collective(it, "the checkpoint"):
                    checkpoint.save(mgr, it, trainer, state, previous, previous_iteration,
                                    primary)
                saved = it
                failpoints.hit("checkpoint_done", it)
            if on_iteration is not None:
                on_iteration(it, record)
            post = {label: f"{metrics[key]:.3f}" for label, key in trainer.progress}
            post["pos/s"] = f"{record['positions_per_second']:.0f}"
            post.update({k.split(":")[0][:9]: f"{v['score']:.2f}" for k, v in arena.items()})
            bar.set_postfix(post, refresh=False)
            bar.update(1)
            if stopping:
                break
    finally:
        bar.close()
        compiling.close()
        logger.close()
    finished = int(state.iteration) == config.run.iterations
    summary = {"algo": config.algo, "arena": arena, "iterations": int(state.iteration),
               "wall_seconds": time.perf_counter() - t_start, "finished": finished,
               **rd.env_record(trainer.env)}
    if primary and finished:
        (run_dir / rd.SUMMARY_FILE).write_text(json.dumps(summary, indent=1))
    return summary
