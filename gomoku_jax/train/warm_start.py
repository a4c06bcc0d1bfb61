"""A warm start (`run.init_from`): a fresh run's network taken from another run.

    source = load_network(trainer, config.run.init_from)   # checked before anything runs
    state, record = warm_start(trainer, trainer.init(seed), source)

The new run keeps everything of its fresh state (optimiser moments at zero, an empty
replay, new games, its own key and schedule) but the network: the params (and, for a
policy-value network, the batch statistics) of the checkpoint that `init_from` names, as
`players.load` reads it (integrity, env version and shape checked there). The source must be
a run of the same game (the whole game spec: size, win length, rule, observation and
feature plane), of the same kind of network and of the same shape; anything else is a
ValueError before anything is computed or written.
"""

from __future__ import annotations

import pathlib
from typing import Any

import jax

from gomoku_jax import players
from gomoku_jax.players import run_dir as rd

# The `run.init_from` value that names the network shipped with the package.
DEFAULT = "default"


def source_path(init_from: str) -> pathlib.Path:
    """The path `run.init_from` names ("default": the shipped network's run directory)."""
    if init_from == DEFAULT:
        return players.default_network_path()
    return pathlib.Path(init_from).expanduser()


def _leaves(tree: Any) -> dict[str, tuple[tuple[int, ...], str]]:
    return {jax.tree_util.keystr(path): (tuple(x.shape), str(x.dtype))
            for path, x in jax.tree_util.tree_flatten_with_path(tree)[0]}


def load_network(trainer: Any, init_from: str) -> Any:
    """The `players.Player` that `init_from` names, checked against the trainer's config
    and network (on shapes alone: nothing is computed).

    Raises:
      ValueError: the checkpoint cannot be loaded, or is not of this run's game, kind of
        network or net shape (the message names the arrays and config fields that differ).
    """
    config = trainer.config
    what = f"run.init_from={init_from}"
    try:
        player = players.load(source_path(init_from))
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    if player.kind != config.player:
        raise ValueError(f"{what}: {player.run_dir} holds a {player.kind!r} network; this "
                         f"{config.algo!r} run trains a {config.player!r} one")
    if player.game != config.game:
        raise ValueError(f"{what}: {player.run_dir} was trained on {player.game}, this run "
                         f"plays {config.game}: a warm start needs the same game")
    cls = players.player_class(config.player)
    have = _leaves(cls.to_dicts(player.variables))
    want = _leaves(cls.to_dicts(trainer.network(trainer.abstract_state())))
    if have != want:
        diffs = [f"{k}: saved {have.get(k, 'nothing')}, expected {want.get(k, 'nothing')}"
                 for k in sorted(set(have) | set(want)) if have.get(k) != want.get(k)]
        data = rd.read_config_data(player.run_dir) or {}
        ours = config.to_dict()
        sections = [f"its {s} {data[s]} vs this run's {ours[s]}" for s in config.network_sections
                    if s in data and s in ours and data[s] != ours[s]]
        raise ValueError(f"{what}: the network of {player.run_dir} step {player.step} has "
                         f"another shape than this config's ({len(diffs)} array(s) differ, "
                         f"e.g. {'; '.join(diffs[:3])})"
                         + (f"; {'; '.join(sections)}" if sections else ""))
    return player


def warm_start(trainer: Any, state: Any, player: Any) -> tuple[Any, dict]:
    """(`state` with `player`'s network (`load_network`'s) in place of its own, placed as
    its own was; a record of where it came from: {"run_dir", "step"})."""
    placed = jax.tree.map(lambda new, old: jax.device_put(new, old.sharding),
                          player.variables, trainer.network(state))
    return trainer.with_network(state, placed), {"run_dir": str(player.run_dir),
                                                  "step": int(player.step)}
