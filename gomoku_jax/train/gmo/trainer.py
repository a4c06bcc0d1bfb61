"""One GMO training iteration as one compiled function.

    trainer = GMOTrainer(config)                 # static: model, optimiser, data agent
    state = trainer.init()                       # GMOTrainState
    state, metrics = trainer.iteration(state)    # games + buffer + K SGD steps, jitted

The trainer of the "gmo" training algorithm (`train.trainer.Trainer`), run by the run driver
(`train.driver`). `iteration` runs, without leaving the device: `data.games` games to their
end (`data.play_games`, the data agent on both sides), every position with the move
played and the outcome for its mover into the FIFO buffer (`replay.py`'s), then K SGD steps
in a `lax.scan`, each on a uniform batch from the buffer under random symmetries (state
and move together), with dropout on (explicit keys) and one AdamW step on the value's
heteroscedastic Gaussian NLL. The state encoder, the move encoder and the value net are
trained together.

With `data.replay_run` the buffer is filled once, by `init`, with the positions of an
AlphaZero run's replay buffer (`alphazero.replay_reader.load_replay`, `data.from_alphazero`), and
the iterations play no games: they only train (their metrics count 0 games and positions,
and `from_replay_run` is 1).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax
from flax import struct

from gomoku_jax.agents.gmo import GMOAgent
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.nets.gmo import GMOModel, MoveFeatures
from gomoku_jax.players.gmo import gmo_agent
from gomoku_jax.train import augment, optim, replay
from gomoku_jax.train.alphazero.replay_reader import load_replay
from gomoku_jax.train.gmo import data as gmo_data
from gomoku_jax.train.gmo import presets  # noqa: F401  (importing registers them)
from gomoku_jax.train.gmo.config import SELF, GMOTrainConfig
from gomoku_jax.train.mesh import Placement, make_mesh


@struct.dataclass
class GMOTrainState:
    """Everything an iteration reads and writes (all arrays; a checkpoint saves it whole).

    params: the GMO networks' (`GMOModel.init`); opt_state: optax's; buffer: the replay
    buffer of `gmo_data.GMOSample`s; key: uint32[2] raw PRNG key data; iteration: int32[];
    sgd_steps: int32[], optimiser steps taken.
    """

    params: Any
    opt_state: Any
    buffer: replay.Replay
    key: jax.Array
    iteration: jax.Array
    sgd_steps: jax.Array


class LossParts(NamedTuple):
    """Weighted means over a batch (float32[] each): the NLL (the loss), the squared error
    of the value, the clamped log-variance, and sign(v) == sign(z) among decided games."""

    loss: jax.Array
    mse: jax.Array
    log_var: jax.Array
    accuracy: jax.Array


def losses(model: GMOModel, params: Any, obs: jax.Array, moves: MoveFeatures,
           value: jax.Array, weight: jax.Array, key: Optional[jax.Array],
           log_var_range: tuple[float, float]) -> LossParts:
    """The heteroscedastic Gaussian NLL 0.5 (s + (z - v)² e^-s) of a batch, s the
    log-variance clamped to `log_var_range`.

    Args:
      obs: float32[B, *obs_shape]; moves: MoveFeatures[B] of the moves played;
      value: float32[B] the outcomes z; weight: float32[B] (0: padding);
      key: the dropout key (None: dropout off).
    """
    s = model.encode_state(params, obs)
    m = model.encode_moves(params, moves)
    v, log_var = model.value(params, s, m, key)
    log_var = jnp.clip(log_var, *log_var_range)
    err2 = (value - v) ** 2
    nll = 0.5 * (log_var + err2 * jnp.exp(-log_var))
    total = jnp.maximum(jnp.sum(weight), 1e-6)
    decided = weight * (value != 0)
    accuracy = jnp.sum(decided * (jnp.sign(v) == jnp.sign(value))) / jnp.maximum(
        jnp.sum(decided), 1e-6)
    return LossParts(jnp.sum(weight * nll) / total, jnp.sum(weight * err2) / total,
                     jnp.sum(weight * log_var) / total, accuracy)


class GMOTrainer:
    """The static side of a GMO run: config, model, optimiser, data agent and the compiled
    iteration."""

    Config = GMOTrainConfig
    default_preset, test_preset = "gmo_quick", "gmo_test"  # (`train.config.PRESETS`)
    progress = (("nll", "loss"), ("mse", "value_mse"))

    def __init__(self, config: GMOTrainConfig):
        self.config = config
        self.mesh = make_mesh(config.run.devices)
        self.placement = Placement(self.mesh)
        self.placement.check_divides({"data.games": config.data.games,
                                      "optim.batch_size": config.optim.batch_size})
        self.env = config.env()
        self.model = GMOModel.for_env(config.gmo, self.env)
        self.self_play = config.data.agent == SELF
        try:
            data_agent = self.agent() if self.self_play else make_agent(config.data.agent)
            self.data_agent = data_agent.bind(self.env)
        except ValueError as e:
            raise ValueError(f"data.agent {config.data.agent!r}: {e}") from None
        self.optimizer = optim.make_optimizer(config.optim,
                                              config.run.iterations * config.optim.sgd_steps)

    def agent(self) -> GMOAgent:
        """The GMO agent of the run's `gmo` section, bound to its game; its params are
        `network(state)`."""
        return gmo_agent(self.env, self.config.gmo)

    def network(self, state: GMOTrainState) -> Any:
        """The params the trained agent plays with."""
        return state.params

    def with_network(self, state: GMOTrainState, network: Any) -> GMOTrainState:
        """`state` with `network`'s params (a warm start)."""
        return state.replace(params=network)

    def record(self, done: int) -> dict:
        """Nothing besides the metrics."""
        return {}

    # ------------------------------------------------------------------ state

    def _fresh(self, key: jax.Array) -> GMOTrainState:
        k_net, k_run = jax.random.split(key)
        params = self.model.init(k_net)
        return GMOTrainState(
            params=params, opt_state=self.optimizer.init(params),
            buffer=replay.init(gmo_data.example(self.env), self.config.replay.capacity),
            key=jax.random.key_data(k_run), iteration=jnp.int32(0), sgd_steps=jnp.int32(0))

    def abstract_state(self) -> GMOTrainState:
        """Shapes, dtypes and shardings (replicated over the run's devices) of a
        GMOTrainState (a restore target)."""
        return jax.tree.map(
            lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=self.placement.replicated),
            jax.eval_shape(self._fresh, jax.random.key(0)))

    def init(self, seed: Optional[int] = None) -> GMOTrainState:
        """A fresh run's state from `seed` (default `run.seed`), replicated over the run's
        devices as a restored checkpoint is (so both hit the same compiled iteration); with
        `data.replay_run`, its buffer holds that run's positions (`replay_samples`, read
        first: its errors come before anything is computed)."""
        seed = self.config.run.seed if seed is None else seed
        source = self.replay_samples() if self.config.data.replay_run else None
        state = self._jitted_fresh(jax.random.key(seed))
        if source is not None:
            # every process read the same run: its copy becomes the global replicated array
            source = jax.device_put(jax.device_get(source), self.placement.replicated)
            state = state.replace(buffer=self._jitted_add(state.buffer, *source))
        return state

    def replay_samples(self) -> tuple[gmo_data.GMOSample, jax.Array]:
        """(samples [capacity, ...], valid bool[capacity]) of `data.replay_run`'s replay
        buffer: the positions with a move played and a known outcome, oldest first
        (`gmo_data.from_alphazero`; a buffer smaller than them keeps the last ones).

        Raises:
          ValueError: a path that is not an AlphaZero run with a readable checkpoint
            (`load_replay`'s messages; a GMO run is refused), a run of another
            game than `game`, or a replay with no such position or fewer than
            `replay.min_size` of them.
        """
        cfg = self.config
        what = f"data.replay_run {cfg.data.replay_run}"
        try:
            source, run_config, _, where = load_replay(cfg.data.replay_run,
                                                       device=jax.local_devices()[0])
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
        ours, theirs = cfg.to_dict()["game"], run_config.to_dict()["game"]
        if ours != theirs:
            diffs = ", ".join(f"game.{k}: the run's {theirs.get(k)!r}, this config's "
                              f"{ours.get(k)!r}" for k in sorted(set(ours) | set(theirs))
                              if ours.get(k) != theirs.get(k))
            raise ValueError(f"{what}: the run's game is not this config's ({diffs}); set "
                             f"the game.* keys to the run's")
        samples, valid = _jitted_from_alphazero(source)
        count = int(jnp.sum(valid))
        if count == 0:
            raise ValueError(f"{what}: the replay buffer of {where} holds no position with a "
                             f"move played and a known outcome ({int(source.size)} samples); "
                             f"train the run longer, or use a later checkpoint")
        kept = min(count, cfg.replay.capacity)
        if kept < cfg.replay.min_size:
            raise ValueError(f"{what}: {where} gives {kept} positions, fewer than "
                             f"replay.min_size={cfg.replay.min_size}: no iteration would "
                             f"train; lower replay.min_size")
        return samples, valid

    # ------------------------------------------------------------------ the iteration

    def iteration(self, state: GMOTrainState, done: Optional[int] = None
                  ) -> tuple[GMOTrainState, dict]:
        """One iteration: `(GMOTrainState) -> (GMOTrainState, metrics dict of float32[])`,
        jitted; the input state's buffers are donated (`done`, the iterations done before,
        changes nothing here)."""
        return self.jitted_iteration(state)

    @functools.cached_property
    def jitted_iteration(self):
        shardings = self.state_shardings()
        return jax.jit(self._iteration, in_shardings=(shardings,),
                       out_shardings=(shardings, self.placement.replicated), donate_argnums=0)

    @functools.cached_property
    def _jitted_fresh(self):
        return jax.jit(self._fresh, out_shardings=self.state_shardings())

    @functools.cached_property
    def _jitted_add(self):
        return jax.jit(replay.add, out_shardings=self.placement.replicated)

    def state_shardings(self) -> GMOTrainState:
        """Every leaf replicated (the games and batches are sharded inside the iteration)."""
        return jax.tree.map(lambda s: s.sharding, self.abstract_state())

    def _iteration(self, state: GMOTrainState) -> tuple[GMOTrainState, dict]:
        cfg = self.config
        key = jax.random.wrap_key_data(state.key)
        key, k_data, k_train = jax.random.split(key, 3)
        if cfg.data.replay_run:  # the buffer holds a run's replay: no games
            zero = jnp.int32(0)
            stats, buffer = gmo_data.DataStats(zero, zero, zero, zero, zero), state.buffer
        else:
            samples, valid, stats = gmo_data.play_games(
                self.env, self.data_agent, state.params if self.self_play else None, k_data,
                cfg.data.games, cfg.data.random_plies, cfg.data.epsilon,
                shard=lambda tree: self.placement.constrain(tree, self.placement.data))
            buffer = replay.add(state.buffer, samples, valid)
        ready = buffer.size >= cfg.replay.min_size
        (params, opt_state), (parts, grad_norm) = self.sgd_steps(
            state.params, state.opt_state, buffer, k_train, ready)
        steps = state.sgd_steps + jnp.where(ready, cfg.optim.sgd_steps, 0).astype(jnp.int32)
        new_state = GMOTrainState(params, opt_state, buffer, jax.random.key_data(key),
                                  state.iteration + 1, steps)
        metrics = {
            "loss": jnp.mean(parts.loss), "value_mse": jnp.mean(parts.mse),
            "log_var": jnp.mean(parts.log_var), "value_accuracy": jnp.mean(parts.accuracy),
            "grad_norm": jnp.mean(grad_norm), "trained": ready.astype(jnp.float32),
            "games": stats.games, "first_player_wins": stats.first_wins,
            "second_player_wins": stats.second_wins,
            "draws": stats.games - stats.first_wins - stats.second_wins,
            "positions": stats.positions,
            "mean_game_length": stats.positions / jnp.maximum(stats.games, 1),
            "plies": stats.plies, "buffer_size": buffer.size, "sgd_steps": steps,
            "from_replay_run": float(bool(cfg.data.replay_run)),
        }
        return new_state, {k: jnp.asarray(v, jnp.float32) for k, v in metrics.items()}

    def sgd_steps(self, params: Any, opt_state: Any, buffer: replay.Replay, key: jax.Array,
                  ready: jax.Array = True, num_steps: Optional[int] = None):
        """`num_steps` (default `optim.sgd_steps`) SGD steps in one `lax.scan`, each on a
        fresh `training_batch`; while `ready` is False none is computed
        (`optim.train_when`): the params and optimiser state come back unchanged.

        Returns:
          ((params, opt_state), (LossParts [K] before each update, gradient norms [K])).
        """
        steps = self.config.optim if num_steps is None else dataclasses.replace(
            self.config.optim, sgd_steps=num_steps)

        def sgd(carry, key):
            k_batch, k_drop = jax.random.split(key)
            new = self.sgd_step(*carry, self.training_batch(buffer, k_batch), k_drop)
            return new[:2], new[2:]

        return optim.sgd_loop(sgd, (params, opt_state), key, steps, ready)

    def training_batch(self, buffer: replay.Replay, key: jax.Array) -> gmo_data.GMOSample:
        """`optim.batch_size` samples drawn uniformly from the buffer, each under a random
        symmetry when `optim.augment`."""
        k_buf, k_aug = jax.random.split(key)
        batch = replay.sample(buffer, k_buf, self.config.optim.batch_size)
        batch = self.placement.constrain(batch, self.placement.data)
        return augment.augment(self.env, batch, k_aug) if self.config.optim.augment \
            else batch

    def sgd_step(self, params: Any, opt_state: Any, batch: gmo_data.GMOSample,
                 key: jax.Array) -> tuple[Any, Any, LossParts, jax.Array]:
        """One AdamW update on a batch, dropout drawn from `key`:
        (params, opt_state, LossParts before the update, gradient norm)."""
        obs, moves = gmo_data.batch_inputs(self.env, batch)
        optim = self.config.optim

        def loss_fn(p):
            parts = losses(self.model, p, obs, moves, batch.value, batch.weight, key,
                           (optim.log_var_min, optim.log_var_max))
            return parts.loss, parts

        (_, parts), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = self.optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state, parts,
                optax.tree_utils.tree_norm(grads))


_jitted_from_alphazero = jax.jit(gmo_data.from_alphazero)
