"""The run directory, read side: what a training run leaves on disk and how a program that
plays (pbrain, the web UI, export, tactics, the arena) finds its network in it.

    config.json          the run's config: {"algo": NAME, "player": KIND, section: {...}}
    metrics.jsonl        one JSON object per iteration
    summary.json         the final arena results and wall time
    checkpoints/<step>/  orbax CheckpointManager steps (step = iterations done), each with
        state/           the trainer's whole state (only the training layer reads it)
        network/         what a player needs, as nested dicts of arrays (a few MB)
        previous/        the network of the last evaluation (the arena's "previous")
        meta/            JSON: the env's id, version and config, the package version, the
                         iteration of `previous`
        integrity.json   the size and SHA-256 of every other file of the step, written once
                         orbax has finished the step; a step is checked against it before it
                         is read (`verify_step`), and a step without one (older runs) is read
                         unchecked

`algo` names the training algorithm (`gomoku_jax.train.ALGORITHMS`) and `player` the kind of
network its checkpoints hold (`gomoku_jax.players.NETWORKS`); a run written before they were
recorded is an AlphaZero run with a policy-value network. The training layer writes with the
same names (`gomoku_jax.train.checkpoint`).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
from typing import Any, Optional

import jax
import orbax.checkpoint as ocp

import gomoku_jax
from gomoku_jax import configs, games, search
from gomoku_jax.games.protocol import GameSpec
from gomoku_jax.search.base import SearchAlgorithm

CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"
CHECKPOINT_DIR = "checkpoints"
ITEMS = ("state", "network", "previous", "meta")
ALGO_KEY, PLAYER_KEY = "algo", "player"
MANIFEST_FILE = "integrity.json"
# What a config.json without the tags holds (every run before they were written).
LEGACY_ALGO, LEGACY_PLAYERS = "alphazero", {"gmo": "gmo"}
DEFAULT_PLAYER = "policy_value"


def _algorithm_class(name: str) -> type:
    if name not in search.ALGORITHMS:
        raise ValueError(f"unknown search algorithm {name!r}; available: "
                         f"{sorted(search.ALGORITHMS)}")
    return search.ALGORITHMS[name]


# The polymorphic config sections: a game by its id, a search algorithm by its name.
KINDS: configs.Kinds = {
    GameSpec: configs.Kind("id", games.spec_class, lambda spec: spec.id),
    SearchAlgorithm: configs.Kind("algorithm", _algorithm_class, lambda alg: alg.name),
}


def read_config_data(run_dir: pathlib.Path) -> Optional[dict]:
    """The JSON data of `run_dir`'s config.json, or None when there is none; ValueError for
    one that is not a JSON object."""
    path = pathlib.Path(run_dir) / CONFIG_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a valid run config: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a valid run config: {data!r}")
    return data


def config_data(run_dir: pathlib.Path) -> dict:
    """`read_config_data`, or ValueError when `run_dir` holds no config.json."""
    data = read_config_data(run_dir)
    if data is None:
        raise ValueError(f"{run_dir} is not a run directory: no {CONFIG_FILE} in it")
    return data


def tags(data: dict) -> tuple[str, str]:
    """(algo, player kind) a run config's data records (see the module docstring)."""
    algo = str(data.get(ALGO_KEY, LEGACY_ALGO))
    return algo, str(data.get(PLAYER_KEY, LEGACY_PLAYERS.get(algo, DEFAULT_PLAYER)))


def run_algo(run_dir: pathlib.Path) -> Optional[str]:
    """The training algorithm of the run in `run_dir`, None when it holds no config.json."""
    data = read_config_data(run_dir)
    return None if data is None else tags(data)[0]


def section(data: dict, name: str, cls: type, run_dir: pathlib.Path, default: Any = None) -> Any:
    """Config section `name` of a run config's data as `cls` (its defaults when absent);
    ValueError naming the file for a bad one."""
    try:
        return configs.from_dict(cls, data.get(name, {}), name, KINDS, default)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{pathlib.Path(run_dir) / CONFIG_FILE}: not a valid run config: "
                         f"{e}") from None


def locate(path: pathlib.Path) -> tuple[pathlib.Path, Optional[int]]:
    """(run directory, step or None for the latest) from a run dir, its checkpoints dir or
    a step dir; ValueError for anything else."""
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


def manager(run_dir: pathlib.Path, keep: int = 3, *, read_only: bool = False,
            handler_registry: Any = None) -> ocp.CheckpointManager:
    """The run's CheckpointManager (synchronous saves, `keep` most recent steps); with a
    `handler_registry` (the training writer's), its items' handlers come from there."""
    options = ocp.CheckpointManagerOptions(max_to_keep=keep, create=not read_only,
                                           read_only=read_only,
                                           enable_async_checkpointing=False)
    directory = pathlib.Path(run_dir).absolute() / CHECKPOINT_DIR
    if handler_registry is not None:
        return ocp.CheckpointManager(directory, options=options,
                                     handler_registry=handler_registry)
    return ocp.CheckpointManager(directory, options=options, item_names=ITEMS)


def has_checkpoints(run_dir: pathlib.Path) -> bool:
    return (pathlib.Path(run_dir) / CHECKPOINT_DIR).is_dir() and \
        manager(run_dir, read_only=True).latest_step() is not None


def env_record(env) -> dict:
    """What a checkpoint records of its game and of the code that made it."""
    return {"env": env.describe(), "package_version": gomoku_jax.__version__}


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


# Train-state leaves added after checkpoints were first written, with what a checkpoint
# without them predates.
_BEFORE_ACTIONS = "replay samples recorded the move played (`Sample.action`)"
ADDED_LEAVES = {"buffer/data/action": _BEFORE_ACTIONS, "pending/action": _BEFORE_ACTIONS}


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


def single_device(tree: Any, device: Optional[jax.Device] = None) -> Any:
    """ShapeDtypeStructs of `tree` placed on `device` (default: the first): a restore
    target."""
    sharding = jax.sharding.SingleDeviceSharding(device or jax.devices()[0])
    return jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding),
                        tree)


def restore_item(mgr: ocp.CheckpointManager, step: int, item: str, target: Any,
                 where: str, what: str = "its config") -> Any:
    """Item `item` ("network", "previous", "state") of checkpoint `step`, shaped like
    `target`; ValueError "<where> does not match <what>: ..." when it does not fit."""
    message = f"{where} does not match {what}"
    check_saved(pathlib.Path(mgr.directory) / str(step) / item, target, message)
    try:
        return mgr.restore(step, args=ocp.args.Composite(
            **{item: ocp.args.StandardRestore(target)}))[item]
    except Exception as e:  # orbax raises several types for a mismatching tree
        raise ValueError(f"{message}: {e}") from None


def open_step(run_dir: pathlib.Path, step: Optional[int], env,
              items: tuple[str, ...] = ("meta", "network")
              ) -> tuple[ocp.CheckpointManager, int, str]:
    """(read-only manager, step, "checkpoint S in DIR") for reading the `items` of
    checkpoint `step` (default: the latest) of a run of `env`, any kind of run, checked
    against the step's integrity.json first (`verify_step`).

    Raises:
      ValueError: no checkpoints, a missing step, a corrupt one (naming the file), or a
        checkpoint of another env or env version.
    """
    mgr = manager(run_dir, read_only=True)
    step = mgr.latest_step() if step is None else step
    if step is None:
        raise ValueError(f"{run_dir} has no checkpoints yet")
    if step not in mgr.all_steps():
        raise ValueError(f"{run_dir} has no checkpoint {step}; it has {sorted(mgr.all_steps())}")
    where = f"checkpoint {step} in {run_dir}"
    verify_step(pathlib.Path(mgr.directory) / str(step), items, where)
    check_env(read_meta(mgr, step), env, where)
    return mgr, int(step), where


def _sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest(directory: pathlib.Path) -> dict:
    """{relative path: {"size": bytes, "sha256": hex}} of every file under a step
    directory but the manifest itself."""
    directory = pathlib.Path(directory)
    return {path.relative_to(directory).as_posix(): {"size": path.stat().st_size,
                                                     "sha256": _sha256(path)}
            for path in sorted(directory.rglob("*"))
            if path.is_file() and not path.name.lstrip(".").startswith(MANIFEST_FILE)}


def write_manifest(directory: pathlib.Path) -> None:
    """Write `directory`'s integrity.json (through a temporary file and a rename, so that
    it is either whole or absent), flushed to disk."""
    directory = pathlib.Path(directory)
    files = manifest(directory)
    tmp = directory / f".{MANIFEST_FILE}.tmp"
    with tmp.open("w") as f:
        json.dump({"files": files}, f, indent=0)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, directory / MANIFEST_FILE)


def verify_step(directory: pathlib.Path, items: Optional[tuple[str, ...]] = None,
                where: Optional[str] = None) -> bool:
    """Check a step directory against its integrity.json: True when it has one and every
    file it lists (of `items` only, when given: the item directories a reader opens) has
    its size and SHA-256; False for a step without one (written before manifests were, or
    killed between orbax finishing it and the manifest). ValueError naming the step and
    the first bad file otherwise: a checkpoint cut short or changed on disk, which orbax
    would often load without a word."""
    directory = pathlib.Path(directory)
    where = where or f"checkpoint {directory.name} in {directory.parent.parent}"
    path = directory / MANIFEST_FILE
    if not path.exists():
        return False
    try:
        files = json.loads(path.read_text())["files"]
        files = {str(name): (int(v["size"]), str(v["sha256"])) for name, v in files.items()}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError,
            ValueError, AttributeError) as e:
        raise ValueError(f"{where} is corrupt: its {MANIFEST_FILE} is unreadable "
                         f"({type(e).__name__}: {e})") from None
    for name, (size, digest) in files.items():
        if items is not None and name.split("/")[0] not in items:
            continue
        file = directory / name
        if not file.is_file():
            raise ValueError(f"{where} is corrupt: {name} is missing")
        if file.stat().st_size != size:
            raise ValueError(f"{where} is corrupt: {name} has {file.stat().st_size} bytes, "
                             f"{size} were written")
        if _sha256(file) != digest:
            raise ValueError(f"{where} is corrupt: {name} differs from what was written "
                             f"(its SHA-256 does not match {MANIFEST_FILE})")
    return True


def read_summary(run_dir: pathlib.Path) -> Optional[dict]:
    """The run's summary.json, or None."""
    path = pathlib.Path(run_dir) / SUMMARY_FILE
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
