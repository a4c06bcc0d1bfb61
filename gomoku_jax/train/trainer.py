"""What a training algorithm's trainer gives the run driver (`driver.train`).

    trainer = trainer_for(config)          # one per config and process: compiled once
    state = trainer.init()
    state, metrics = trainer.iteration(state, done)

A trainer is the static side of a run: its config, env, model and optimiser and the
compiled iteration. Everything else a run does (iterations, metrics, TensorBoard, the
progress bar, checkpoints, resume and extend, the arena, the summary, the multi-host guard)
is the driver's, the same for every algorithm.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Optional, Protocol

from gomoku_jax.agents.base import Agent
from gomoku_jax.games.protocol import Env


class Trainer(Protocol):
    """The trainer of one training algorithm's config.

    Attributes:
      config: the run's config (a `train.config.TrainingConfig`).
      env: the run's game.
      model: the network being trained (its kind is `config.player`'s).
      progress: (label, metric) pairs the progress bar shows.
    """

    config: Any
    env: Env
    model: Any
    progress: tuple[tuple[str, str], ...]

    def init(self, seed: Optional[int] = None) -> Any:
        """A fresh run's state from `seed` (default `run.seed`), placed where the iteration
        expects it."""

    def abstract_state(self) -> Any:
        """Shapes, dtypes and shardings of the state: the restore target of a resume."""

    def iteration(self, state: Any, done: Optional[int] = None) -> tuple[Any, dict]:
        """One compiled iteration: (state, {metric: float32[]}); `done` is the number of
        iterations before it (None: read from the state). The input state is donated."""

    def agent(self) -> Agent:
        """The agent it trains, at full strength (no noise, greedy), for the arena."""

    def network(self, state: Any) -> Any:
        """The params that agent plays with, from a state."""

    def with_network(self, state: Any, network: Any) -> Any:
        """`state` with `network` (of `network(state)`'s structure and placement) in place of
        its own: a warm start (`train.warm_start`)."""

    def record(self, done: int) -> dict:
        """Host-side fields of the metrics record of the iteration after `done` iterations
        (JSON values)."""


def trainer_for(config: Any) -> Trainer:
    """The trainer of `config` (its algorithm's, `algorithms.ALGORITHMS`), one per config in
    a process, so a resumed or extended run (or a second run of the same config) reuses its
    compiled iteration. Configs that differ only in what the trainer never reads (the seed,
    which `init` takes, the checkpoint schedule, and the warm start, which the driver
    applies) share one: a sweep over seeds compiles once."""
    run = dataclasses.replace(config.run, seed=0, checkpoint_every=1, keep_checkpoints=1,
                              init_from="")
    return _trainer(dataclasses.replace(config, run=run))


@functools.lru_cache(maxsize=8)
def _trainer(config: Any) -> Trainer:
    from gomoku_jax.train.algorithms import ALGORITHMS

    return ALGORITHMS[config.algo](config)
