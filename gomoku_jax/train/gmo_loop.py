"""The GMO run on the host: iterations, metrics, checkpoints, arena, summary.

    summary = train_gmo(config, run_dir)

The same run directory as an AlphaZero run's (`checkpoint.py`, `loop.py`): config.json
(tagged `"algo": "gmo"`), metrics.jsonl (and TensorBoard when `tensorboardX` is
installed), orbax checkpoints every `run.checkpoint_every` iterations and at the end, and
summary.json with the final arena. Each checkpoint step holds `state/` (the whole
GMOTrainState: a killed run resumes from it and continues as if it had not stopped),
`network/` ({"params": the GMO params as nested dicts}, what `gmo_trained.load` reads),
`previous/` (the params of the last evaluation, the arena's "previous") and `meta/`.
A finished run is left as it is unless the config asks for more iterations (`--resume
--set run.iterations=N`; a resume may change only the keys in `config.RESUMABLE`).
"""

from __future__ import annotations

import json
import pathlib
import time
from typing import Any, Callable, Optional

import jax
import orbax.checkpoint as ocp
from flax import nnx

from gomoku_jax.train import checkpoint
from gomoku_jax.train.gmo import GMOTrainer, GMOTrainState
from gomoku_jax.train.gmo_config import RESUMABLE, GMOTrainConfig, load_config, \
    resumable_changes
from gomoku_jax.train.loop import (SUMMARY_FILE, RunLogger, copy_tree, evaluate, read_summary,
                                   validate_opponents)


def params_dicts(params: Any) -> dict[str, Any]:
    """The GMO params as nested dicts of arrays (no NNX types), as checkpoints hold them."""
    return {"params": nnx.to_pure_dict(params)}


def params_from_dicts(abstract_params: Any, dicts: dict) -> Any:
    """Params shaped like `abstract_params` (an `nnx.State`) filled from `params_dicts`."""
    params = jax.tree.map(lambda x: x, abstract_params)
    nnx.replace_by_pure_dict(params, dicts["params"])
    return params


def _single_device(tree: Any) -> Any:
    sharding = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    return jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding),
                        tree)


def save(mgr: ocp.CheckpointManager, step: int, state: GMOTrainState, previous: Any,
         previous_iteration: int, env) -> None:
    """Save the state, its params, the arena's previous params and the env record at
    `step`, and wait until they are on disk."""
    meta = {**checkpoint.env_record(env), "algo": "gmo", "iteration": int(step),
            "previous_iteration": int(previous_iteration)}
    mgr.save(step, args=ocp.args.Composite(
        state=ocp.args.StandardSave(state),
        network=ocp.args.StandardSave(params_dicts(state.params)),
        previous=ocp.args.StandardSave(params_dicts(previous)),
        meta=ocp.args.JsonSave(meta)))
    mgr.wait_until_finished()


def restore_params(mgr: ocp.CheckpointManager, step: int, item: str, abstract_params: Any,
                   where: str) -> Any:
    """The params saved as `item` ("network" or "previous") at `step`; ValueError if they
    do not fit `abstract_params`."""
    target = _single_device(params_dicts(abstract_params))
    checkpoint.check_saved(pathlib.Path(mgr.directory) / str(step) / item, target,
                           f"{where} does not match its config")
    try:
        dicts = mgr.restore(step, args=ocp.args.Composite(
            **{item: ocp.args.StandardRestore(target)}))[item]
    except Exception as e:  # orbax raises several types for a mismatching tree
        raise ValueError(f"{where} does not match its config: {e}") from None
    return params_from_dicts(abstract_params, dicts)


def restore_state(mgr: ocp.CheckpointManager, trainer: GMOTrainer
                  ) -> tuple[GMOTrainState, Any, int]:
    """(GMOTrainState, the arena's previous params, their iteration) of the latest step;
    ValueError if it does not match the trainer's config or env version."""
    step = mgr.latest_step()
    where = f"checkpoint {step} in {mgr.directory}"
    meta = checkpoint.read_meta(mgr, step)
    checkpoint.check_env(meta, trainer.env, where)
    target = _single_device(trainer.abstract_state())
    checkpoint.check_saved(pathlib.Path(mgr.directory) / str(step) / "state", target,
                           f"{where} does not match this config's train state")
    try:
        state = mgr.restore(step, args=ocp.args.Composite(
            state=ocp.args.StandardRestore(target)))["state"]
    except Exception as e:
        raise ValueError(f"{where} does not match this config's train state: {e}") from None
    previous = restore_params(mgr, step, "previous", target.params, where)
    return state, previous, int(meta.get("previous_iteration", step))


def _check_run_dir(run_dir: pathlib.Path, config: GMOTrainConfig) -> None:
    """ValueError unless `config` may run in `run_dir`: a new directory, the same config,
    or the same run with only resumable keys changed."""
    if not (run_dir / checkpoint.CONFIG_FILE).exists():
        return
    changed = resumable_changes(load_config(run_dir), config)
    if changed:
        raise ValueError(f"{run_dir} holds a run with a different config ({', '.join(changed)} "
                         f"differ); resume it with its own config (gomoku-jax train --run-dir "
                         f"{run_dir} --resume, which may change only {', '.join(RESUMABLE)}) "
                         f"or use a new run directory")


def _has_checkpoints(run_dir: pathlib.Path) -> bool:
    return (run_dir / checkpoint.CHECKPOINT_DIR).is_dir() and \
        checkpoint.manager(run_dir, read_only=True).latest_step() is not None


def train_gmo(config: GMOTrainConfig, run_dir: str | pathlib.Path, *, progress: bool = True,
              stop_after: Optional[int] = None,
              on_iteration: Optional[Callable[[int, dict], None]] = None) -> dict:
    """Run (or resume, or extend) `config` in `run_dir`; returns the summary (also
    `summary.json`). A run that has done `run.iterations` already is not touched: its saved
    summary comes back with `"already_finished": True`.

    Args:
      stop_after: stop once this many iterations are done (in all), as if killed after its
        checkpoint.
      on_iteration: called with (iteration, metrics record) after each iteration.
    Raises:
      ValueError: a run directory of another config or algorithm, a checkpoint of another
        env version, a bad data agent or opponent spec, or a `data.replay_run` that cannot
        be read or does not fit (`GMOTrainer.replay_samples`).
    """
    t_start = time.perf_counter()
    run_dir = pathlib.Path(run_dir)
    _check_run_dir(run_dir, config)
    validate_opponents(config)
    trainer = GMOTrainer(config)
    # A fresh run's state first: its data.replay_run errors come before anything is written.
    state = None if _has_checkpoints(run_dir) else trainer.init()
    mgr = checkpoint.manager(run_dir, config.run.keep_checkpoints)
    if state is None:
        state, previous, previous_iteration = restore_state(mgr, trainer)
    else:
        previous, previous_iteration = copy_tree(state.params), 0
    start = int(state.iteration)
    if start >= config.run.iterations:
        summary = read_summary(run_dir) or {"arena": {}, "iterations": start, "finished": True}
        return {**summary, "already_finished": True}
    checkpoint.save_config(run_dir, config)
    logger = RunLogger(run_dir, start)
    total = min(stop_after or config.run.iterations, config.run.iterations)
    eval_key = jax.random.key(config.run.seed + 1)
    arena: dict = {}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=config.run.iterations, initial=start, unit="it", dynamic_ncols=True)
    try:
        for it in range(start + 1, total + 1):
            t0 = time.perf_counter()
            state, metrics = trainer.iteration(state)
            metrics = {k: float(v) for k, v in jax.device_get(metrics).items()}
            seconds = time.perf_counter() - t0
            record = {"iteration": it, **metrics, "seconds": seconds,
                      "positions_per_second": metrics["positions"] / seconds}
            last = it == config.run.iterations
            if (config.eval.every and it % config.eval.every == 0) or last:
                arena = evaluate(trainer, state.params, previous,
                                 jax.random.fold_in(eval_key, it))
                previous, previous_iteration = copy_tree(state.params), it
                record["arena"] = arena
                record["previous_iteration"] = previous_iteration
            logger.log(record)
            if it % config.run.checkpoint_every == 0 or last or it == total:
                save(mgr, it, state, previous, previous_iteration, trainer.env)
            if on_iteration is not None:
                on_iteration(it, record)
            if bar is not None:
                post = {"nll": f"{metrics['loss']:.3f}", "mse": f"{metrics['value_mse']:.3f}",
                        "pos/s": f"{record['positions_per_second']:.0f}"}
                post.update({k.split(":")[0][:9]: f"{v['score']:.2f}" for k, v in arena.items()})
                bar.set_postfix(post, refresh=False)
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        logger.close()
    finished = int(state.iteration) == config.run.iterations
    summary = {"algo": "gmo", "arena": arena, "iterations": int(state.iteration),
               "wall_seconds": time.perf_counter() - t_start, "finished": finished,
               **checkpoint.env_record(trainer.env)}
    if finished:
        (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=1))
    return summary
