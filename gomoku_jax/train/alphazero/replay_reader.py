"""An AlphaZero run's replay buffer read from its checkpoint (what a GMO run learns from with
`data.replay_run`)."""

from __future__ import annotations

import pathlib
from typing import Optional

import jax
import orbax.checkpoint as ocp

from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import replay
from gomoku_jax.train.alphazero.config import AlphaZeroConfig
from gomoku_jax.train.alphazero.samples import example


def load_replay(path: str | pathlib.Path, step: Optional[int] = None,
                device: Optional[jax.Device] = None
                ) -> tuple[replay.Replay, AlphaZeroConfig, int, str]:
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
    run_dir, named = rd.locate(pathlib.Path(path))
    data = rd.config_data(run_dir)
    algo, _ = rd.tags(data)
    if algo != AlphaZeroConfig.algo:
        raise ValueError(f"{run_dir} holds a run of --algo {algo}, not an AlphaZero run")
    try:
        config = AlphaZeroConfig.from_dict(data)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{run_dir / rd.CONFIG_FILE}: not a valid alphazero run config: "
                         f"{e}") from None
    env = config.env()
    mgr, step, where = rd.open_step(run_dir, step if step is not None else named, env,
                                 items=("meta", "state"))
    shapes = jax.eval_shape(lambda: replay.init(example(env), config.replay.capacity))
    target = {"buffer": rd.single_device(shapes, device)}
    rd.check_saved(pathlib.Path(mgr.directory) / str(step) / "state", target,
                   f"{where} does not match its config", partial=True)
    try:
        state = mgr.restore(step, args=ocp.args.Composite(state=ocp.args.PyTreeRestore(
            target, restore_args=ocp.checkpoint_utils.construct_restore_args(target),
            partial_restore=True)))["state"]
    except Exception as e:  # orbax raises several types for a mismatching tree
        raise ValueError(f"{where} does not match its config: {e}") from None
    return state["buffer"], config, step, where
