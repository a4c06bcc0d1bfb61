"""GMO training (seed 002's gradient move optimisation): a value network over (state, move)
with uncertainty, trained on the positions of any agent's games or of an AlphaZero run's
replay buffer."""

from gomoku_jax.train.gmo.config import DataSection, GMOTrainConfig

__all__ = ["DataSection", "GMOTrainConfig"]
