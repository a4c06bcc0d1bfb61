"""One AlphaZero iteration as one compiled function, data-parallel over a device mesh.

    trainer = AlphaZero(config)                  # static: model, optimiser, mesh, shardings
    state = trainer.init()                       # TrainState on the devices
    state, metrics = trainer.iteration(state)    # self-play + buffer + K SGD steps, jitted

The trainer of the "alphazero" training algorithm (`train.trainer.Trainer`): the run driver
(`train.driver`) calls it.

`iteration` runs, without leaving the device: T self-play moves on B boards (`selfplay.play`,
the network inside the run's search algorithm), the value targets of every game that
ended, the FIFO buffer update, then K SGD steps in a `lax.scan`, each drawing a uniform
batch from the buffer (plus the game's fresh synthetic examples), augmenting it with random
elements of the game's symmetry group and taking one AdamW step. The host only sees the
returned metrics. Any game of the platform trains the same way (`config.game`).

Bootstrap (`selfplay.bootstrap_iterations` > 0): the first iterations' self-play searches
with `selfplay.bootstrap_evaluator` (e.g. Gomoku's heuristic) instead of the network; the
rest of the iteration is the same. The choice is a static flag of `_iteration`, so there are
two compiled iterations, picked on the host by iteration number (`bootstraps`), each traced
once.

Devices: `jax.sharding` with one mesh axis "data" over `run.devices` devices (0: all).
The self-play boards and each training batch are sharded along it; params, optimiser state
and the replay buffer are replicated. The code is written for the global batch and XLA
partitions it (GSPMD), inserting the all-reduce of the gradients (and of BatchNorm's batch
statistics); random numbers do not depend on the sharding, so 1 and 8 devices compute the
same thing up to float reduction order.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Optional

import jax
import jax.numpy as jnp
from flax import struct

from gomoku_jax.agents import evaluator_registry as evaluators
from gomoku_jax.agents.search import SearchAgent
from gomoku_jax.nets.resnet import NetVars, PolicyValueModel
from gomoku_jax.players.policy_value import search_agent
from gomoku_jax.search.evaluators import NetworkEvaluator
from gomoku_jax.train import augment, optim, replay
from gomoku_jax.train.alphazero import (
    learner,
    presets,  # noqa: F401  (importing registers them)
    selfplay,
)
from gomoku_jax.train.alphazero.config import AlphaZeroConfig
from gomoku_jax.train.alphazero.samples import Sample, example, from_examples
from gomoku_jax.train.mesh import Placement, make_mesh


@struct.dataclass
class TrainState:
    """Everything an iteration reads and writes (all arrays; a checkpoint saves it whole).

    params / batch_stats: the network's (`NetVars` parts); opt_state: optax's;
    buffer: the replay buffer; games: the self-play games [B] (carried between iterations
    when `selfplay.carry_games`) and pending: their positions so far; key: uint32[2] raw
    PRNG key data; iteration: int32[]; sgd_steps: int32[], optimiser steps taken.
    """

    params: Any
    batch_stats: Any
    opt_state: Any
    buffer: replay.Replay
    games: Any
    pending: selfplay.Pending
    key: jax.Array
    iteration: jax.Array
    sgd_steps: jax.Array

    @property
    def variables(self) -> NetVars:
        return NetVars(self.params, self.batch_stats)


def make_model(config: AlphaZeroConfig) -> PolicyValueModel:
    return PolicyValueModel.for_env(config.net, config.env())


class AlphaZero:
    """The static side of a run: config, model, optimiser, mesh and the compiled iteration."""

    Config = AlphaZeroConfig  # the registry's config; its presets' default and tiny one:
    default_preset, test_preset = "quick", "test"  # (presets: `train.config.PRESETS`)
    progress = (("loss", "loss"), ("v", "value_loss"))  # the progress bar's

    def __init__(self, config: AlphaZeroConfig, mesh: Optional[jax.sharding.Mesh] = None):
        self.config = config
        self.env = config.env()
        self.model = self.make_model(config)
        self.mesh = mesh if mesh is not None else make_mesh(config.run.devices)
        placement = Placement(self.mesh)
        placement.check_divides({"selfplay.games": config.selfplay.games,
                                 "optim.batch_size": config.optim.batch_size})
        self.check_game()
        self.total_sgd_steps = config.run.iterations * config.optim.sgd_steps
        self.optimizer = optim.make_optimizer(config.optim, self.total_sgd_steps)
        config.selfplay.check_game(self.env)
        self.bootstrap_evaluator = (
            evaluators.make(config.selfplay.bootstrap_evaluator, self.env)
            if config.selfplay.bootstrap_iterations else None)
        self.replicated, self.data = placement.replicated, placement.data
        self._constrain = placement.constrain

    @functools.cached_property
    def evaluator(self) -> NetworkEvaluator:
        """The network as self-play's evaluator (what `play` searches the real game with)."""
        return NetworkEvaluator(self.model)

    @staticmethod
    def make_model(config: AlphaZeroConfig) -> PolicyValueModel:
        """The network the run trains."""
        return make_model(config)

    def check_game(self) -> None:
        """ValueError for a config that asks the game for what it lacks."""
        fraction = self.config.replay.synthetic_fraction
        if fraction > 0 and not self.env.has_synthetic_examples:
            raise ValueError(f"replay.synthetic_fraction={fraction} but game {self.env.id!r} "
                             f"generates no synthetic examples: set it to 0")

    def replay_example(self) -> Sample:
        """One unbatched sample of what the replay buffer holds (zeros)."""
        return example(self.env)

    @property
    def sgd_unroll(self) -> int:
        """`optim.unroll`, 0 resolved to all `optim.sgd_steps`."""
        return self.config.optim.scan_unroll

    # ------------------------------------------------------------------ state and shardings

    def _fresh(self, key: jax.Array) -> TrainState:
        k_net, k_games, k_run = jax.random.split(key, 3)
        variables = self.model.init(k_net)
        games = selfplay.new_games(self.env, k_games, self.config.selfplay.games)
        return TrainState(
            params=variables.params, batch_stats=variables.batch_stats,
            opt_state=self.optimizer.init(variables.params),
            buffer=replay.init(self.replay_example(), self.config.replay.capacity),
            games=games,
            pending=selfplay.empty_pending(self.env, games),
            key=jax.random.key_data(k_run), iteration=jnp.int32(0), sgd_steps=jnp.int32(0))

    def abstract_state(self) -> TrainState:
        """Shapes, dtypes and shardings of a TrainState (a restore target)."""
        shapes = jax.eval_shape(self._fresh, jax.random.key(0))
        return jax.tree.map(lambda s, sh: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sh),
                            shapes, self.state_shardings())

    def state_shardings(self) -> TrainState:
        """The games and their pending positions sharded along the batch axis, everything
        else replicated."""
        shapes = jax.eval_shape(self._fresh, jax.random.key(0))
        shardings = jax.tree.map(lambda _: self.replicated, shapes)
        return shardings.replace(games=jax.tree.map(lambda _: self.data, shapes.games),
                                 pending=jax.tree.map(lambda _: self.data, shapes.pending))

    def init(self, seed: Optional[int] = None) -> TrainState:
        """A fresh run's state from `seed` (default `run.seed`), placed on the mesh."""
        seed = self.config.run.seed if seed is None else seed
        return self._jitted_fresh(jax.random.key(seed))

    @functools.cached_property
    def _jitted_fresh(self):
        return jax.jit(self._fresh, out_shardings=self.state_shardings())

    # ------------------------------------------------------------------ the iteration

    def bootstraps(self, iteration: int) -> bool:
        """Whether the iteration that starts from `iteration` iterations done (0-based)
        plays its games with the bootstrap evaluator rather than the network."""
        return iteration < self.config.selfplay.bootstrap_iterations

    def selfplay_evaluator(self, iteration: int) -> str:
        """The name of the evaluator whose search plays iteration `iteration`'s (0-based)
        games: "network", or the bootstrap evaluator's name (resolved: "auto" -> the game's)."""
        if self.bootstraps(iteration):
            return evaluators.resolve(self.config.selfplay.bootstrap_evaluator, self.env)
        return evaluators.NETWORK

    def iteration(self, state: TrainState, done: Optional[int] = None
                  ) -> tuple[TrainState, dict]:
        """One iteration: `(TrainState) -> (TrainState, metrics dict of float32[])`, jitted;
        the input state's buffers are donated. `done`: the iterations done before this one,
        which decides whether it bootstraps (default: `state.iteration`, read back from the
        device; the run driver passes it)."""
        if done is None:
            done = int(state.iteration) if self.bootstrap_evaluator is not None else 0
        return self.jitted_iteration[self.bootstraps(done)](state)

    def record(self, done: int) -> dict:
        """What the metrics record of the iteration after `done` says besides its metrics:
        the evaluator its self-play searched with."""
        return {"selfplay_evaluator": self.selfplay_evaluator(done)}

    def network(self, state: TrainState) -> NetVars:
        """The params the trained agent plays with."""
        return state.variables

    def with_network(self, state: TrainState, network: NetVars) -> TrainState:
        """`state` with `network`'s params and batch statistics (a warm start)."""
        return state.replace(params=network.params, batch_stats=network.batch_stats)

    @functools.cached_property
    def jitted_iteration(self) -> dict:
        """{bootstrap flag: the jitted `(TrainState) -> (TrainState, metrics)`} (each
        compiled on its first call; `.lower` works on them, as benchmarks need)."""
        shardings = self.state_shardings()
        return {flag: jax.jit(functools.partial(self._iteration, bootstrap=flag),
                              in_shardings=(shardings,),
                              out_shardings=(shardings, self.replicated), donate_argnums=0)
                for flag in (False, True)}

    def _iteration(self, state: TrainState, bootstrap: bool = False
                   ) -> tuple[TrainState, dict]:
        cfg = self.config
        key = jax.random.wrap_key_data(state.key)
        key, k_games, k_play, k_train = jax.random.split(key, 4)
        games, pending = state.games, state.pending
        if not cfg.selfplay.carry_games:
            games = selfplay.new_games(self.env, k_games, cfg.selfplay.games)
            pending = selfplay.empty_pending(self.env, games)
        games, pending = self._constrain((games, pending), self.data)
        games, pending, samples, valid, stats = self.play(state.variables, games, pending,
                                                          k_play, bootstrap)
        games, pending = self._constrain((games, pending), self.data)
        buffer = replay.add(state.buffer, samples, valid)

        ready = buffer.size >= cfg.replay.min_size
        (params, batch_stats, opt_state), (parts, grad_norm) = self.sgd_steps(
            state.params, state.batch_stats, state.opt_state, buffer, k_train, ready)
        steps = state.sgd_steps + jnp.where(ready, cfg.optim.sgd_steps, 0).astype(jnp.int32)
        new_state = TrainState(params, batch_stats, opt_state, buffer, games, pending,
                               jax.random.key_data(key), state.iteration + 1, steps)
        finished = jnp.maximum(stats.games, 1)
        metrics = {
            **{name: jnp.mean(part) for name, part in self.loss_metrics(parts).items()},
            "grad_norm": jnp.mean(grad_norm), "trained": ready.astype(jnp.float32),
            "games": stats.games, "first_player_wins": stats.first_wins,
            "second_player_wins": stats.second_wins,
            "draws": stats.games - stats.first_wins - stats.second_wins,
            "mean_game_length": stats.total_length / finished,
            "positions": stats.moves, "samples_kept": stats.written,
            "positions_pending": stats.pending, "positions_dropped": stats.dropped,
            "buffer_size": buffer.size, "sgd_steps": steps,
        }
        return new_state, {k: jnp.asarray(v, jnp.float32) for k, v in metrics.items()}

    def play(self, variables: NetVars, games: Any, pending: selfplay.Pending,
             key: jax.Array, bootstrap: bool) -> tuple[Any, selfplay.Pending, Any, jax.Array,
                                                      selfplay.SelfPlayStats]:
        """One iteration's self-play (`selfplay.play`: `selfplay.moves` searches on every
        board, the network evaluating, or the bootstrap evaluator): (games, pending, samples
        [M], valid bool[M], stats)."""
        cfg = self.config
        evaluator = self.bootstrap_evaluator if bootstrap else self.evaluator
        return selfplay.play(self.env, cfg.search, evaluator, cfg.selfplay.num_simulations,
                             cfg.selfplay.moves, variables, games, pending, key)

    @staticmethod
    def loss_metrics(parts: learner.LossParts) -> dict[str, jax.Array]:
        """{metric name: float32[K]} of the K SGD steps' loss parts."""
        return {"loss": parts.loss, "policy_loss": parts.policy_loss,
                "value_loss": parts.value_loss, "target_entropy": parts.policy_entropy,
                "value_accuracy": parts.value_accuracy}

    def sgd_steps(self, params: Any, batch_stats: Any, opt_state: Any, buffer: replay.Replay,
                  key: jax.Array, ready: jax.Array = True, num_steps: Optional[int] = None):
        """`num_steps` (default `optim.sgd_steps`) SGD steps in one `lax.scan`, each on a
        fresh `training_batch`, unrolled as `sgd_unroll` says. While `ready` is False no step
        is computed (`optim.train_when`): the params, statistics and optimiser state come
        back unchanged, the loss parts and norms as zeros.

        Returns:
          ((params, batch_stats, opt_state), (LossParts [K], gradient norms float32[K])).
        """
        cfg = self.config
        steps = cfg.optim if num_steps is None else dataclasses.replace(cfg.optim,
                                                                       sgd_steps=num_steps)

        def sgd(carry, key):
            new = self.sgd_step(*carry, self.training_batch(buffer, key))
            return new[:3], (new[3], new[4])

        return optim.sgd_loop(sgd, (params, batch_stats, opt_state), key, steps, ready)

    def sgd_step(self, params: Any, batch_stats: Any, opt_state: Any, batch: Sample
                 ) -> tuple[Any, Any, Any, learner.LossParts, jax.Array]:
        """One optimiser update on a training batch (`learner.sgd_step`): (params,
        batch_stats, opt_state, the loss parts before it, the gradient norm)."""
        return learner.sgd_step(self.env, self.model, self.optimizer,
                                self.config.optim.value_weight, params, batch_stats,
                                opt_state, batch)

    def training_batch(self, buffer: replay.Replay, key: jax.Array) -> Sample:
        """`optim.batch_size` samples: uniform from the buffer, `replay.synthetic_fraction`
        of them the game's fresh synthetic examples, each under a random symmetry; sharded
        on "data"."""
        cfg = self.config
        k_buf, k_syn, k_aug = jax.random.split(key, 3)
        n = cfg.optim.batch_size
        n_syn = int(round(cfg.replay.synthetic_fraction * n))
        batch = replay.sample(buffer, k_buf, n - n_syn)
        if n_syn:
            extra = from_examples(self.env.synthetic_examples(k_syn, n_syn))
            batch = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), batch, extra)
        batch = self._constrain(batch, self.data)
        return augment.augment(self.env, batch, k_aug)

    # ------------------------------------------------------------------ playing

    def agent(self, num_simulations: Optional[int] = None) -> SearchAgent:
        """The trained network inside the run's search at full strength (`for_play()`: no
        root noise, greedy), for the arena. Its params are `network(state)`."""
        return search_agent(self.env, self.model, self.config.search,
                            num_simulations or self.config.eval.agent_simulations)
