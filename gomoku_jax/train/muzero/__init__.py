"""MuZero training (Schrittwieser et al. 2020) and, with the `gumbel` search, Gumbel MuZero
(Danihelka et al. 2022): self-play that searches a learned model of the game, trajectories
in a replay buffer, and the K-step unrolled loss of the representation, dynamics and
prediction networks, one compiled iteration on the shared run driver."""

from gomoku_jax.train.muzero.config import MuZeroConfig, MuZeroSection
from gomoku_jax.train.muzero.samples import Unroll

__all__ = ["MuZeroConfig", "MuZeroSection", "Unroll"]
