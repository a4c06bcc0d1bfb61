"""Checkpoints of a training run: the write side of the run directory
(`gomoku_jax.players.run_dir` has the format and the read side), and the resume.

Each step holds `state/` (the trainer's whole state, saved by leaf name in orbax's pytree
structure: a killed run resumes from it and reproduces the uninterrupted run, and a state
whose fields were renamed fails to load with the names that differ), `network/` and
`previous/` (the trained network and the arena's previous one, in the form of the
algorithm's kind of network: `Player.to_dicts`) and `meta/` (the env record, the algorithm,
the iteration of `previous`).
"""

from __future__ import annotations

import os
import pathlib
from typing import Any, Optional

import orbax.checkpoint as ocp

from gomoku_jax import players
from gomoku_jax.players import run_dir as rd


def save_config(run_dir: pathlib.Path, config: Any) -> None:
    """config.json, replaced atomically (the other processes of a run may be reading it)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / f".{rd.CONFIG_FILE}.tmp"
    tmp.write_text(config.to_json())
    os.replace(tmp, run_dir / rd.CONFIG_FILE)


def save(mgr: ocp.CheckpointManager, step: int, trainer: Any, state: Any, previous: Any,
         previous_iteration: int) -> None:
    """Save the trainer's state, its network, the arena's previous network and the env
    record at `step`, and wait until it is on disk."""
    config = trainer.config
    player = players.player_class(config.player)
    meta = {**rd.env_record(trainer.env), rd.ALGO_KEY: config.algo,
            rd.PLAYER_KEY: config.player, "iteration": int(step),
            "previous_iteration": int(previous_iteration)}
    mgr.save(step, args=ocp.args.Composite(
        state=ocp.args.StandardSave(state),
        network=ocp.args.StandardSave(player.to_dicts(trainer.network(state))),
        previous=ocp.args.StandardSave(player.to_dicts(previous)),
        meta=ocp.args.JsonSave(meta)))
    mgr.wait_until_finished()


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
