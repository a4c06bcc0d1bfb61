"""Run directories and orbax checkpoints: save and resume a run, load its network to play.

A run directory holds:

    config.json          the full TrainConfig (read back by `load_config`)
    metrics.jsonl        one JSON object per iteration (and per evaluation)
    summary.json         the final arena results and wall time
    checkpoints/<step>/  orbax CheckpointManager steps (step = iterations done), each with
        state/           the whole TrainState (params, optimiser, buffer, games and their
                         pending positions, key, iteration), saved by leaf name in orbax's
                         own pytree structure: a killed run resumes from it and reproduces
                         the uninterrupted run, and a state whose fields were renamed fails
                         to load with the names that differ
        network/         params and BatchNorm statistics alone, as nested dicts, so
                         `load_network` reads a few MB instead of the buffer
        previous/        the network of the last evaluation (the arena's "previous")
        meta/            JSON: the env's id, version and config, the package version, the
                         iteration of `previous`

Loading a checkpoint made for another env, or for another version of its env, is a
ValueError that says which; `load_network(path)` accepts the run directory, its
`checkpoints/` directory or one step's directory and returns what a player needs;
`load_replay(path)` the same paths and returns the run's replay buffer alone (what a GMO
run learns from with `data.replay_run`). A train state saved by an older gomoku_jax that
lacks a leaf added since (`ADDED_LEAVES`: the samples' `action`) cannot be resumed nor its
replay read, and the error says so; its network still loads.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Optional

import jax
import orbax.checkpoint as ocp
from flax import nnx

import gomoku_jax
from gomoku_jax.nets.resnet import NetVars, PolicyValueModel
from gomoku_jax.train import replay
from gomoku_jax.train.config import TrainConfig
from gomoku_jax.train.samples import example

CONFIG_FILE = "config.json"
CHECKPOINT_DIR = "checkpoints"
ITEMS = ("state", "network", "previous", "meta")

# Train-state leaves added after checkpoints were first written, with what a checkpoint
# without them predates.
_BEFORE_ACTIONS = "replay samples recorded the move played (`Sample.action`)"
ADDED_LEAVES = {"buffer/data/action": _BEFORE_ACTIONS, "pending/action": _BEFORE_ACTIONS}


def save_config(run_dir: pathlib.Path, config: TrainConfig) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFIG_FILE).write_text(config.to_json())


def load_config(run_dir: pathlib.Path) -> TrainConfig:
    """The TrainConfig saved in `run_dir`; ValueError if missing, unreadable or another
    algorithm's (a GMO run's)."""
    path = pathlib.Path(run_dir) / CONFIG_FILE
    if not path.is_file():
        raise ValueError(f"{run_dir} is not a run directory: no {CONFIG_FILE} in it")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a valid run config: {e}") from None
    if isinstance(data, dict) and data.get("algo", "alphazero") != "alphazero":
        raise ValueError(f"{run_dir} holds a run of --algo {data['algo']}, not an AlphaZero "
                         f"run")
    try:
        return TrainConfig.from_dict(data)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{path}: not a valid run config: {e}") from None


def manager(run_dir: pathlib.Path, keep: int = 3, *, read_only: bool = False
            ) -> ocp.CheckpointManager:
    """The run's CheckpointManager (synchronous saves, `keep` most recent steps)."""
    options = ocp.CheckpointManagerOptions(max_to_keep=keep, create=not read_only,
                                           read_only=read_only,
                                           enable_async_checkpointing=False)
    return ocp.CheckpointManager(pathlib.Path(run_dir).absolute() / CHECKPOINT_DIR,
                                 options=options, item_names=ITEMS)


def env_record(env) -> dict:
    """What a checkpoint records of its game and of the code that made it."""
    return {"env": env.describe(), "package_version": gomoku_jax.__version__}


def network_dicts(variables: NetVars) -> dict[str, Any]:
    """The network's variables as nested dicts of arrays (no NNX types)."""
    return {"params": nnx.to_pure_dict(variables.params),
            "batch_stats": nnx.to_pure_dict(variables.batch_stats)}


def save(mgr: ocp.CheckpointManager, step: int, state: Any, variables: NetVars,
         previous: NetVars, previous_iteration: int, env) -> None:
    """Save the TrainState (by leaf name), its network, the arena's previous network and
    the env record at `step`, and wait until it is on disk."""
    meta = {**env_record(env), "iteration": int(step),
            "previous_iteration": int(previous_iteration)}
    mgr.save(step, args=ocp.args.Composite(
        state=ocp.args.StandardSave(state),
        network=ocp.args.StandardSave(network_dicts(variables)),
        previous=ocp.args.StandardSave(network_dicts(previous)),
        meta=ocp.args.JsonSave(meta)))
    mgr.wait_until_finished()


def _path_name(path) -> str:
    return "/".join(str(getattr(k, "name", getattr(k, "key", getattr(k, "idx", k))))
                    for k in path)


def check_saved(item_dir: pathlib.Path, target: Any, message: str,
                partial: bool = False) -> None:
    """ValueError(message + the differences) unless the arrays saved in `item_dir` have the
    leaf names, shapes and dtypes of `target` (with `partial`: at least `target`'s, more may
    be saved). A missing leaf of `ADDED_LEAVES` is reported as what it is: a checkpoint of
    an older gomoku_jax. Checked on the metadata, before restoring: an orbax restore that
    fails part-way leaves reads pending, which warn when collected."""
    try:
        saved = ocp.StandardCheckpointHandler().metadata(item_dir).tree
    except Exception:  # no readable metadata: let the restore itself report
        return

    def shapes(tree):
        return {_path_name(path): (tuple(x.shape), str(x.dtype))
                for path, x in jax.tree_util.tree_flatten_with_path(tree)[0]}

    want, have = shapes(target), shapes(saved)
    if partial:
        have = {k: v for k, v in have.items() if k in want}
    for name, cause in ADDED_LEAVES.items():
        if name in want and name not in have and have:
            raise ValueError(f"{message}: it was written before {cause} and has no {name!r}; "
                             f"it cannot be resumed nor its replay read (its network still "
                             f"loads to play): retrain with this gomoku_jax")
    diffs = [f"{k}: saved {have.get(k, 'nothing')}, expected {want.get(k, 'nothing')}"
             for k in sorted(set(want) | set(have)) if want.get(k) != have.get(k)]
    if diffs:
        raise ValueError(f"{message}: {len(diffs)} array(s) differ, e.g. {'; '.join(diffs[:3])}")


def read_meta(mgr: ocp.CheckpointManager, step: int) -> dict:
    """The checkpoint's meta record ({} for a checkpoint that has none)."""
    if not (pathlib.Path(mgr.directory) / str(step) / "meta").exists():
        return {}
    return mgr.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))["meta"]


def check_env(meta: dict, env, where: str) -> None:
    """ValueError unless the checkpoint was made for `env` at its current version."""
    saved = meta.get("env")
    if not saved:
        raise ValueError(f"{where} records no env (made before checkpoints did); it cannot be "
                         f"checked against {env.id} {env.version}: retrain")
    if saved.get("id") != env.id:
        raise ValueError(f"{where} was made for game {saved.get('id')!r}, not {env.id!r}")
    if saved.get("version") != env.version:
        raise ValueError(f"{where} was made for {env.id} version {saved.get('version')!r}; this "
                         f"gomoku_jax has version {env.version!r} of that game, whose rules or "
                         f"observation differ: retrain, or use the gomoku_jax version "
                         f"{meta.get('package_version')} that made it")


def _restore_dicts(mgr: ocp.CheckpointManager, step: int, item: str, target: dict,
                   where: str) -> dict:
    check_saved(pathlib.Path(mgr.directory) / str(step) / item, target,
                f"{where} does not match its config")
    try:
        return mgr.restore(step, args=ocp.args.Composite(
            **{item: ocp.args.StandardRestore(target)}))[item]
    except Exception as e:  # orbax raises several types for a mismatching tree
        raise ValueError(f"{where} does not match its config: {e}") from None


def restore_state(mgr: ocp.CheckpointManager, abstract_state: Any, model: PolicyValueModel,
                  env, step: Optional[int] = None) -> tuple[Any, NetVars, int]:
    """(TrainState, the arena's previous network, its iteration) of `step` (default: the
    latest), with the shapes and shardings of `abstract_state`; ValueError if it does not
    match, or was made for another env or env version."""
    step = mgr.latest_step() if step is None else step
    if step is None:
        raise ValueError(f"no checkpoint in {mgr.directory}")
    where = f"checkpoint {step} in {mgr.directory}"
    meta = read_meta(mgr, step)
    check_env(meta, env, where)
    check_saved(pathlib.Path(mgr.directory) / str(step) / "state", abstract_state,
                f"{where} does not match this config's train state")
    try:
        state = mgr.restore(step, args=ocp.args.Composite(
            state=ocp.args.StandardRestore(abstract_state)))["state"]
    except Exception as e:
        raise ValueError(f"{where} does not match this config's train state: {e}") from None
    previous = network_from_dicts(model, _restore_dicts(
        mgr, step, "previous", network_dicts(model.abstract_vars()), where))
    return state, previous, int(meta.get("previous_iteration", step))


def load_replay(path: str | pathlib.Path, step: Optional[int] = None,
                device: Optional[jax.Device] = None
                ) -> tuple[replay.Replay, TrainConfig, int, str]:
    """(replay buffer, config, step, "checkpoint S in DIR") of an AlphaZero run's
    checkpoint: the `buffer` of its train state alone (`Sample`s, leaves [capacity, ...]),
    on `device` (default: the first).

    Args:
      path: a run directory, its checkpoints/ directory, or checkpoints/<step>.
      step: which step (default: the one `path` names, else the latest).
    Raises:
      ValueError: a path that is not an AlphaZero run (a GMO run's included), a run without
        checkpoints, a missing step, a checkpoint of another env version, one whose buffer
        does not fit the run's config, or one saved before samples recorded the move played.
    """
    run_dir, named = locate(pathlib.Path(path))
    config = load_config(run_dir)
    env = config.env()
    mgr, step, where = open_step(run_dir, step if step is not None else named, env)
    sharding = jax.sharding.SingleDeviceSharding(device or jax.devices()[0])
    shapes = jax.eval_shape(lambda: replay.init(example(env), config.replay.capacity))
    target = {"buffer": jax.tree.map(
        lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding), shapes)}
    check_saved(pathlib.Path(mgr.directory) / str(step) / "state", target,
                f"{where} does not match its config", partial=True)
    try:
        state = mgr.restore(step, args=ocp.args.Composite(state=ocp.args.PyTreeRestore(
            target, restore_args=ocp.checkpoint_utils.construct_restore_args(target),
            partial_restore=True)))["state"]
    except Exception as e:  # orbax raises several types for a mismatching tree
        raise ValueError(f"{where} does not match its config: {e}") from None
    return state["buffer"], config, step, where


def network_from_dicts(model: PolicyValueModel, dicts: dict) -> NetVars:
    abstract = model.abstract_vars()
    params, stats = abstract.params, abstract.batch_stats
    nnx.replace_by_pure_dict(params, dicts["params"])
    nnx.replace_by_pure_dict(stats, dicts["batch_stats"])
    return NetVars(params, stats)


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
                 ) -> tuple[PolicyValueModel, NetVars, TrainConfig, int]:
    """(model, variables, config, step) of a trained network.

    Args:
      path: a run directory, its checkpoints/ directory, or checkpoints/<step>.
      step: which step (default: the one `path` names, else the latest).
    Raises:
      ValueError: a path that is not a run, a run without checkpoints, a missing step, a
        checkpoint that does not fit the run's config, or one made for another env version.
    """
    run_dir, named = locate(pathlib.Path(path))
    config = load_config(run_dir)
    model = PolicyValueModel.for_env(config.net, config.env())
    mgr, step, where = open_step(run_dir, step if step is not None else named, config.env())
    dicts = _restore_dicts(mgr, step, "network", network_dicts(model.abstract_vars()), where)
    return model, network_from_dicts(model, dicts), config, step


def open_step(run_dir: pathlib.Path, step: Optional[int], env
              ) -> tuple[ocp.CheckpointManager, int, str]:
    """(read-only manager, step, "checkpoint S in DIR") for reading checkpoint `step`
    (default: the latest) of a run of `env`, any kind of run.

    Raises:
      ValueError: no checkpoints, a missing step, or a checkpoint of another env or env
        version.
    """
    mgr = manager(run_dir, read_only=True)
    step = mgr.latest_step() if step is None else step
    if step is None:
        raise ValueError(f"{run_dir} has no checkpoints yet")
    if step not in mgr.all_steps():
        raise ValueError(f"{run_dir} has no checkpoint {step}; it has {sorted(mgr.all_steps())}")
    where = f"checkpoint {step} in {run_dir}"
    check_env(read_meta(mgr, step), env, where)
    return mgr, int(step), where
