"""Load a run's network (any training algorithm's), without the training layer: `load`."""

from __future__ import annotations

import pathlib
from importlib import resources
from typing import Optional

from gomoku_jax import configs, games
from gomoku_jax.games.protocol import GameSpec
from gomoku_jax.players import run_dir
from gomoku_jax.players.base import Player
from gomoku_jax.players.gmo import GMOPlayer
from gomoku_jax.players.muzero import MuZeroPlayer
from gomoku_jax.players.policy_value import PolicyValuePlayer
from gomoku_jax.registry import Registry

# The network shipped with the package: 15x15 freestyle, trained on a 2-core CPU with the
# gomoku15_cpu preset (config.json, metrics.jsonl and summary.json are its run's; the step
# is its checkpoint's). Only the network item of the checkpoint is kept (1.8 MB).
DEFAULT_NETWORK = "gomoku15"


def default_network_path() -> pathlib.Path:
    """The shipped network's run directory (package data of `gomoku_jax.games.gomoku`)."""
    return pathlib.Path(str(resources.files("gomoku_jax.games.gomoku").joinpath(
        "data", "networks", DEFAULT_NETWORK)))


# Kinds of network: kind -> its Player class (registered under its `kind`, as every plug-in
# is: `NETWORKS.register(cls)`, or `gomoku_jax.plugins.register("network kind")`). A kind
# has no config of its own (its run's config sections say its shape).
NETWORKS = Registry("network kind", config_of=None, name_of=lambda cls: getattr(cls, "kind", None)
                    or None)
NETWORKS.register(PolicyValuePlayer)
NETWORKS.register(GMOPlayer)
NETWORKS.register(MuZeroPlayer)


def player_class(kind: str) -> type[Player]:
    """The Player class of a kind of network; ValueError listing the known kinds."""
    return NETWORKS[kind]


def load(path: str | pathlib.Path, step: Optional[int] = None) -> Player:
    """The network of a run directory, its `checkpoints/` directory or `checkpoints/<step>`,
    any training algorithm's.

    Args:
      step: which checkpoint (default: the one `path` names, else the latest).
    Raises:
      ValueError: a path that is not a run, a run without checkpoints, a missing step, a
        corrupt checkpoint (its network or meta files differ from its integrity.json: the
        message names the step and the file), a checkpoint that does not fit its config or
        was made for another env version.
    """
    if step is not None:
        step = configs.check_int("step", step, 0)
    directory, named = run_dir.locate(pathlib.Path(path))
    data = run_dir.config_data(directory)
    algo, kind = run_dir.tags(data)
    cls = player_class(kind)
    game = run_dir.section(data, "game", GameSpec, directory)
    env = games.from_spec(game)
    model = cls.model_for(data, directory, env)
    mgr, step, where = run_dir.open_step(directory, step if step is not None else named, env)
    abstract = cls.abstract_variables(model)
    dicts = run_dir.restore_item(mgr, step, "network",
                                 run_dir.single_device(cls.to_dicts(abstract)), where)
    return cls.from_run(model, cls.from_dicts(abstract, dicts), game, data, directory, step,
                        algo)


def load_for_cli(path: Optional[str], step: Optional[int] = None,
                 flag: str = "--checkpoint", default: bool = False) -> Optional[Player]:
    """`load(path, step)` for a command line: without a path, the shipped network when
    `default` (an agent needs a network) else None; SystemExit("error: ...") for a bad one
    or for a `step` without a path."""
    if path is None:
        if step is not None:
            raise SystemExit(f"error: --step {step} needs {flag} PATH")
        return load(default_network_path()) if default else None
    try:
        return load(path, step)
    except ValueError as e:
        raise SystemExit(f"error: {flag} {path}: {e}")
