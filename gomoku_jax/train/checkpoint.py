"""Checkpoints of a training run: the write side of the run directory
(`gomoku_jax.players.run_dir` has the format and the read side), and the resume.

Each step holds `state/` (the trainer's whole state, saved by leaf name in orbax's pytree
structure: a killed run resumes from it and reproduces the uninterrupted run, and a state
whose fields were renamed fails to load with the names that differ), `network/` and
`previous/` (the trained network and the arena's previous one, in the form of the
algorithm's kind of network: `Player.to_dicts`) and `meta/` (the env record, the algorithm,
the iteration of `previous`), and, once orbax has finished the step, `integrity.json`
(`run_dir.write_manifest`).

What a kill leaves, and how a resume reads it (orbax 0.12, synchronous saves): orbax writes
a step into `<step>.orbax-checkpoint-tmp/` and renames it to `<step>/` once every item is
written, so a kill mid-save leaves only the temporary directory, which `latest_step`
ignores (and orbax would remove when it saves that step again; `clean_partial` removes it
at once). A kill between the rename and the manifest leaves a complete step without one,
read unchecked. A step that fails its manifest is moved out of `checkpoints/` by the
resume (`set_aside`): orbax silently skips saving a step at or below the latest one, and
would count a bad newer step among the `keep_checkpoints` it keeps, deleting the good one
the run resumed from.
"""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
import threading
import time
from typing import Any, Callable, Optional

import orbax.checkpoint as ocp

from gomoku_jax import players
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import failpoints

SET_ASIDE_DIR = "corrupt_checkpoints"
TMP_MARK = ".orbax-checkpoint-tmp"


class CheckpointError(RuntimeError):
    """A checkpoint could not be written (a full disk, most likely); the steps before it
    are intact."""


class _MetaHandler(ocp.JsonCheckpointHandler):
    """orbax's JSON handler with the `checkpoint_write` failpoint: `meta` is the last item
    a save starts, so the step's temporary directory is half written when it fires."""

    async def async_save(self, directory, *args, **kwargs):
        step = pathlib.Path(str(directory)).parent.name.split(".")[0]
        if step.isdigit():
            failpoints.hit("checkpoint_write", int(step))
        return await super().async_save(directory, *args, **kwargs)


def writer(run_dir: pathlib.Path, keep: int) -> ocp.CheckpointManager:
    """The run's CheckpointManager for training (`run_dir.manager`, its failpoint in)."""
    registry = ocp.handlers.DefaultCheckpointHandlerRegistry()
    meta = _MetaHandler()
    registry.add("meta", ocp.args.JsonSave, meta)
    registry.add("meta", ocp.args.JsonRestore, meta)
    for item in ("state", "network", "previous"):
        handler = ocp.StandardCheckpointHandler()
        registry.add(item, ocp.args.StandardSave, handler)
        registry.add(item, ocp.args.StandardRestore, handler)
    return rd.manager(run_dir, keep, handler_registry=registry)


def save_config(run_dir: pathlib.Path, config: Any) -> None:
    """config.json, replaced atomically (the other processes of a run may be reading it)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / f".{rd.CONFIG_FILE}.tmp"
    tmp.write_text(config.to_json())
    os.replace(tmp, run_dir / rd.CONFIG_FILE)


def save(mgr: ocp.CheckpointManager, step: int, trainer: Any, state: Any, previous: Any,
         previous_iteration: int, primary: bool = True) -> None:
    """Save the trainer's state, its network, the arena's previous network and the env
    record at `step`, wait until it is on disk, and (`primary`: process 0) write its
    integrity.json.

    Raises:
      CheckpointError: the step could not be written (e.g. OSError ENOSPC); what was
        written of it is removed, and the steps before it are intact.
    """
    config = trainer.config
    player = players.player_class(config.player)
    meta = {**rd.env_record(trainer.env), rd.ALGO_KEY: config.algo,
            rd.PLAYER_KEY: config.player, "iteration": int(step),
            "previous_iteration": int(previous_iteration)}
    directory = pathlib.Path(mgr.directory)
    threads, finished = set(threading.enumerate()), False
    try:
        saved = mgr.save(step, args=ocp.args.Composite(
            state=ocp.args.StandardSave(state),
            network=ocp.args.StandardSave(player.to_dicts(trainer.network(state))),
            previous=ocp.args.StandardSave(player.to_dicts(previous)),
            meta=ocp.args.JsonSave(meta)))
        mgr.wait_until_finished()
        if not saved:  # orbax skips a step at or below its latest
            raise CheckpointError(f"orbax did not save checkpoint {step} in {directory} "
                                  f"(it has {mgr.all_steps()})")
        finished = True
        failpoints.hit("manifest", step)
        if primary:
            rd.write_manifest(directory / str(step))
    except Exception as e:
        _settle(mgr, threads)
        if primary:
            clean_partial(directory, step, finished)
        if isinstance(e, CheckpointError):
            raise
        first = (str(e).strip().splitlines() or [""])[0][:300]
        raise CheckpointError(f"could not write checkpoint {step} in {directory} "
                              f"({type(e).__name__}: {first}); the run stopped there, and "
                              f"the checkpoints before it are intact. {_hint(e)}") from e


def restore(mgr: ocp.CheckpointManager, trainer: Any, step: Optional[int] = None
            ) -> tuple[Any, Any, int]:
    """(the trainer's state, the arena's previous network, its iteration) of `step`
    (default: the latest), with the shapes and shardings of `trainer.abstract_state()`;
    ValueError if it does not match, or was made for another env or env version."""
    step = mgr.latest_step() if step is None else step
    if step is None:
        raise ValueError(f"no checkpoint in {mgr.directory}")
    where = f"checkpoint {step} in {mgr.directory}"
    meta = rd.read_meta(mgr, step)
    rd.check_env(meta, trainer.env, where)
    state = rd.restore_item(mgr, step, "state", trainer.abstract_state(), where,
                            "this config's train state")
    player = players.player_class(trainer.config.player)
    abstract = player.abstract_variables(trainer.model)
    # placed as the trained network is (replicated over the run's devices, of every
    # process), so that all processes save it alike
    placed = player.to_dicts(trainer.network(trainer.abstract_state()))
    dicts = rd.restore_item(mgr, step, "previous", placed, where)
    return state, player.from_dicts(abstract, dicts), int(meta.get("previous_iteration", step))


def _settle(mgr: ocp.CheckpointManager, threads: set) -> None:
    """Wait for what a failed save left running: when one item's write fails, orbax's
    threads for the others go on writing (and re-create the temporary directory) after the
    error reached us."""
    try:
        mgr.wait_until_finished()
    except Exception:  # the same failure again
        pass
    for thread in set(threading.enumerate()) - threads:
        try:
            thread.join(timeout=30)
        except Exception:  # orbax's threads re-raise their error on join
            pass


def _hint(e: BaseException) -> str:
    if (isinstance(e, OSError) and e.errno == errno.ENOSPC) or "No space left" in str(e):
        return "The disk is full: free space, then resume with --resume."
    return "Resume with --resume once the cause is fixed."


def clean_partial(directory: pathlib.Path, step: Optional[int] = None,
                  finished: bool = False) -> None:
    """Remove what a failed or killed save left in `directory` (a checkpoints/ dir): the
    temporary directories orbax writes in (of `step`, or all), and, when orbax `finished`
    step `step` but its integrity.json is missing (it could not be written), that step
    rather than leave it to pass as complete."""
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        return
    for path in directory.iterdir():
        if TMP_MARK in path.name and (step is None or path.name.split(".")[0] == str(step)):
            shutil.rmtree(path, ignore_errors=True)
    if step is not None and finished:
        done = directory / str(step)
        if done.is_dir() and not (done / rd.MANIFEST_FILE).exists():
            shutil.rmtree(done, ignore_errors=True)


def resume_step(run_dir: pathlib.Path, log: Callable[[str], None]
                ) -> tuple[Optional[int], list[int]]:
    """(the newest step of `run_dir` that passes its integrity check, the newer steps that
    fail it), or (None, those) when none passes; `log` says which steps are bad and why,
    and when the step is read unchecked (it has no integrity.json)."""
    directory = pathlib.Path(run_dir).absolute() / rd.CHECKPOINT_DIR
    bad: list[int] = []
    steps = sorted(rd.manager(run_dir, read_only=True).all_steps(), reverse=True)
    for step in steps:
        try:
            checked = rd.verify_step(directory / str(step))
        except ValueError as e:
            log(f"{e}; not resuming from it")
            bad.append(step)
            continue
        if bad:
            log(f"resuming from checkpoint {step}, the newest complete one")
        if not checked:
            log(f"checkpoint {step} in {run_dir} has no {rd.MANIFEST_FILE} (written by an "
                f"older gomoku_jax, or killed just after orbax finished it): resuming from it "
                f"unchecked")
        return step, bad
    return None, bad


def set_aside(run_dir: pathlib.Path, steps: list[int], log: Callable[[str], None]) -> None:
    """Move bad checkpoint steps out of `checkpoints/` into `corrupt_checkpoints/` (kept
    for a look, never read again)."""
    run_dir = pathlib.Path(run_dir).absolute()
    for step in steps:
        target = run_dir / SET_ASIDE_DIR / f"{step}-{time.strftime('%Y%m%d-%H%M%S')}"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(run_dir / rd.CHECKPOINT_DIR / str(step), target)
        log(f"moved checkpoint {step} to {target}")
