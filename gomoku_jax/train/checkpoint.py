"""Run directories and orbax checkpoints: save and resume a run, load its network to play.

A run directory holds:

    config.json          the full TrainConfig (read back by `load_config`)
    metrics.jsonl        one JSON object per iteration (and per evaluation)
    summary.json         the final arena results and wall time
    checkpoints/<step>/  orbax CheckpointManager steps (step = iterations done), each with
        state/           the whole TrainState (params, optimiser, buffer, games, key,
                         iteration), saved leaf by leaf: a killed run resumes from it and
                         reproduces the uninterrupted run
        network/         params and BatchNorm statistics alone, as nested dicts, so
                         `load_network` reads a few MB instead of the buffer

`load_network(path)` accepts the run directory, its `checkpoints/` directory or one step's
directory, and returns what a player needs: (model, variables, config).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Optional

import jax
import orbax.checkpoint as ocp
from flax import nnx

from gomoku_jax.nets.resnet import NetVars, PolicyValueModel
from gomoku_jax.train.config import TrainConfig

CONFIG_FILE = "config.json"
CHECKPOINT_DIR = "checkpoints"


def save_config(run_dir: pathlib.Path, config: TrainConfig) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFIG_FILE).write_text(config.to_json())


def load_config(run_dir: pathlib.Path) -> TrainConfig:
    """The TrainConfig saved in `run_dir`; ValueError if missing or unreadable."""
    path = pathlib.Path(run_dir) / CONFIG_FILE
    if not path.is_file():
        raise ValueError(f"{run_dir} is not a run directory: no {CONFIG_FILE} in it")
    try:
        return TrainConfig.from_dict(json.loads(path.read_text()))
    except (json.JSONDecodeError, ValueError, TypeError) as e:
        raise ValueError(f"{path}: not a valid run config: {e}") from None


def manager(run_dir: pathlib.Path, keep: int = 3, *, read_only: bool = False
            ) -> ocp.CheckpointManager:
    """The run's CheckpointManager (synchronous saves, `keep` most recent steps)."""
    options = ocp.CheckpointManagerOptions(max_to_keep=keep, create=not read_only,
                                           read_only=read_only,
                                           enable_async_checkpointing=False)
    return ocp.CheckpointManager(pathlib.Path(run_dir).absolute() / CHECKPOINT_DIR,
                                 options=options, item_names=("state", "network"))


def _flat(tree: Any) -> dict[str, Any]:
    leaves = jax.tree.leaves(tree)
    return {f"leaf_{i:05d}": leaf for i, leaf in enumerate(leaves)}


def _network_dicts(variables: NetVars) -> dict[str, Any]:
    return {"params": nnx.to_pure_dict(variables.params),
            "batch_stats": nnx.to_pure_dict(variables.batch_stats)}


def save(mgr: ocp.CheckpointManager, step: int, state: Any, variables: NetVars) -> None:
    """Save the TrainState and its network at `step` and wait until it is on disk."""
    mgr.save(step, args=ocp.args.Composite(
        state=ocp.args.StandardSave(_flat(state)),
        network=ocp.args.StandardSave(_network_dicts(variables))))
    mgr.wait_until_finished()


def _check_saved(item_dir: pathlib.Path, target: Any, message: str) -> None:
    """ValueError(message + the differences) unless the arrays saved in `item_dir` have the
    tree, shapes and dtypes of `target`. Checked on the metadata, before restoring: an orbax
    restore that fails part-way leaves reads pending, which warn (or worse) when collected."""
    try:
        saved = ocp.StandardCheckpointHandler().metadata(item_dir).tree
    except Exception:  # no readable metadata: let the restore itself report
        return

    def shapes(tree):
        out = {}
        for path, x in jax.tree_util.tree_flatten_with_path(tree)[0]:
            name = "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path)
            out[name] = (tuple(x.shape), str(x.dtype))
        return out

    want, have = shapes(target), shapes(saved)
    diffs = [f"{k}: saved {have.get(k, 'nothing')}, expected {want.get(k, 'nothing')}"
             for k in sorted(set(want) | set(have)) if want.get(k) != have.get(k)]
    if diffs:
        raise ValueError(f"{message}: {len(diffs)} array(s) differ, e.g. {'; '.join(diffs[:3])}")


def restore_state(mgr: ocp.CheckpointManager, abstract_state: Any,
                  step: Optional[int] = None) -> Any:
    """The TrainState of `step` (default: the latest) with the shapes and shardings of
    `abstract_state` (`AlphaZero.abstract_state()`); ValueError if it does not match."""
    step = mgr.latest_step() if step is None else step
    if step is None:
        raise ValueError(f"no checkpoint in {mgr.directory}")
    leaves, treedef = jax.tree.flatten(abstract_state)
    _check_saved(pathlib.Path(mgr.directory) / str(step) / "state", _flat(abstract_state),
                 f"checkpoint {step} in {mgr.directory} does not match this config's train "
                 f"state")
    try:
        flat = mgr.restore(step, args=ocp.args.Composite(
            state=ocp.args.StandardRestore(_flat(abstract_state))))["state"]
    except Exception as e:  # orbax raises several types for a mismatching tree
        raise ValueError(f"checkpoint {step} in {mgr.directory} does not match this "
                         f"config's train state: {e}") from None
    return jax.tree.unflatten(treedef, [flat[f"leaf_{i:05d}"] for i in range(len(leaves))])


def locate(path: pathlib.Path) -> tuple[pathlib.Path, Optional[int]]:
    """(run directory, step or None for the latest) from a run dir, its checkpoints dir or
    a step dir."""
    path = pathlib.Path(path).absolute()
    if not path.exists():
        raise ValueError(f"checkpoint path {path} does not exist")
    if (path / CONFIG_FILE).is_file():
        return path, None
    if path.name == CHECKPOINT_DIR and (path.parent / CONFIG_FILE).is_file():
        return path.parent, None
    if path.parent.name == CHECKPOINT_DIR and path.name.isdigit() \
            and (path.parent.parent / CONFIG_FILE).is_file():
        return path.parent.parent, int(path.name)
    raise ValueError(f"{path} is not a run directory (with {CONFIG_FILE}), its "
                     f"{CHECKPOINT_DIR}/ directory or a step directory inside it")


def load_network(path: str | pathlib.Path, step: Optional[int] = None
                 ) -> tuple[PolicyValueModel, NetVars, TrainConfig]:
    """(model, variables, config) of a trained network.

    Args:
      path: a run directory, its checkpoints/ directory, or checkpoints/<step>.
      step: which step (default: the one `path` names, else the latest).
    Raises:
      ValueError: a path that is not a run, a run without checkpoints, a missing step, or
        a checkpoint that does not fit the run's config.
    """
    run_dir, named = locate(pathlib.Path(path))
    config = load_config(run_dir)
    from gomoku_jax.train.alphazero import make_model

    model = make_model(config)
    mgr = manager(run_dir, read_only=True)
    step = step if step is not None else named if named is not None else mgr.latest_step()
    if step is None:
        raise ValueError(f"{run_dir} has no checkpoints yet")
    if step not in mgr.all_steps():
        raise ValueError(f"{run_dir} has no checkpoint {step}; it has {sorted(mgr.all_steps())}")
    abstract = model.abstract_vars()
    target = _network_dicts(abstract)
    _check_saved(pathlib.Path(mgr.directory) / str(step) / "network", target,
                 f"checkpoint {step} in {run_dir} does not match its config")
    try:
        dicts = mgr.restore(step, args=ocp.args.Composite(
            network=ocp.args.StandardRestore(target)))["network"]
    except Exception as e:
        raise ValueError(f"checkpoint {step} in {run_dir} does not match its config: {e}") \
            from None
    params, stats = abstract.params, abstract.batch_stats
    nnx.replace_by_pure_dict(params, dicts["params"])
    nnx.replace_by_pure_dict(stats, dicts["batch_stats"])
    return model, NetVars(params, stats), config
