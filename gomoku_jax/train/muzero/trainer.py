"""One MuZero iteration as one compiled function, data-parallel over a device mesh: the
trainer of the "muzero" training algorithm (`train.trainer.Trainer`), on the shared run
driver.

    trainer = MuZero(config)
    state = trainer.init()
    state, metrics = trainer.iteration(state)

An iteration is AlphaZero's (`alphazero.trainer.AlphaZero`, whose state, shardings,
bootstrap and mesh it shares) with the learned model in three places:

- self-play searches the learned model (`search.muzero_model.MuZeroModel`: the root from
  the real position, the interior on latents) with the run's search algorithm, while the
  real game steps the games (`selfplay.play_model`); bootstrap iterations search the real
  game with the bootstrap evaluator instead;
- the replay holds unroll windows (`samples.windows`), cut from the trajectories of the
  games that ended;
- each SGD step draws a batch of windows, applies one random symmetry per window to its
  position, policies and moves alike, and takes one step on the unrolled loss
  (`learner.sgd_step`).
"""

from __future__ import annotations

from typing import Any, Optional

import jax

from gomoku_jax.agents.muzero import MuZeroAgent
from gomoku_jax.nets.muzero import MuZeroNetwork
from gomoku_jax.nets.resnet import NetVars
from gomoku_jax.search.env_model import EnvModel
from gomoku_jax.search.muzero_model import MuZeroModel
from gomoku_jax.train import augment, replay
from gomoku_jax.train.alphazero import selfplay
from gomoku_jax.train.alphazero.trainer import AlphaZero
from gomoku_jax.train.muzero import (
    learner,
    presets,  # noqa: F401  (importing registers them)
    samples,
)
from gomoku_jax.train.muzero.config import MuZeroConfig


class MuZero(AlphaZero):
    """The static side of a MuZero run: config, the three networks, optimiser, mesh and the
    compiled iteration."""

    Config = MuZeroConfig
    default_preset, test_preset = "muzero_quick", "muzero_test"
    progress = (("loss", "loss"), ("v", "value_loss"), ("r", "reward_loss"))

    @staticmethod
    def make_model(config: MuZeroConfig) -> MuZeroNetwork:
        return MuZeroNetwork.for_env(config.net, config.env())

    def check_game(self) -> None:
        """Nothing past the networks' own check (`MuZeroNetwork` refuses an observation
        that is not [H, W, C] planes): MuZero's replay takes no synthetic examples."""

    @property
    def learned_model(self) -> MuZeroModel:
        """What self-play searches: the networks as the run's search algorithm's model."""
        return MuZeroModel(self.env, self.model, self.config.search)

    def replay_example(self) -> samples.Unroll:
        return samples.example(self.env, self.config.muzero.unroll_steps)

    def play(self, variables: NetVars, games: Any, pending: selfplay.Pending,
             key: jax.Array, bootstrap: bool):
        """Self-play on the learned model (or, bootstrapping, on the real game with the
        bootstrap evaluator): (games, pending, windows [M], valid bool[M], stats)."""
        cfg = self.config
        k_play, k_pad = jax.random.split(key)
        model = (EnvModel(self.env, self.bootstrap_evaluator, cfg.search) if bootstrap
                 else self.learned_model)
        games, pending, traj, stats = selfplay.play_model(
            self.env, cfg.search, model, cfg.selfplay.num_simulations, cfg.selfplay.moves,
            variables, games, pending, k_play)
        windows, valid = samples.windows(traj, cfg.muzero.unroll_steps, self.env.num_actions,
                                         k_pad)
        return games, pending, windows, valid, stats

    @staticmethod
    def loss_metrics(parts: learner.LossParts) -> dict[str, jax.Array]:
        return {"loss": parts.loss, "policy_loss": parts.policy_loss,
                "value_loss": parts.value_loss, "reward_loss": parts.reward_loss,
                "target_entropy": parts.policy_entropy,
                "value_accuracy": parts.value_accuracy}

    def sgd_step(self, params: Any, batch_stats: Any, opt_state: Any,
                 batch: samples.Unroll) -> tuple[Any, Any, Any, learner.LossParts, jax.Array]:
        """One optimiser update on a batch of windows (`learner.sgd_step`, the unrolled
        loss)."""
        return learner.sgd_step(self.env, self.model, self.config.muzero, self.optimizer,
                                params, batch_stats, opt_state, batch)

    def training_batch(self, buffer: replay.Replay, key: jax.Array) -> samples.Unroll:
        """`optim.batch_size` windows drawn uniformly from the buffer, each under a random
        symmetry (its position, its K + 1 policies and its K moves), sharded on "data"."""
        k_buf, k_aug = jax.random.split(key)
        batch = self._constrain(replay.sample(buffer, k_buf, self.config.optim.batch_size),
                                self.data)
        if self.env.num_symmetries == 1:
            return batch
        g = jax.random.randint(k_aug, batch.weight.shape, 0, self.env.num_symmetries)
        return jax.vmap(lambda s, h: augment.transform_sample(self.env, s, h))(batch, g)

    def agent(self, num_simulations: Optional[int] = None) -> MuZeroAgent:
        """The learned model inside the run's search at full strength (no root noise,
        greedy), for the arena; its params are `network(state)`."""
        return MuZeroAgent(env=self.env, network=self.model,
                           search=self.config.search.for_play(),
                           num_simulations=num_simulations
                           or self.config.eval.agent_simulations)
