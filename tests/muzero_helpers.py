"""The tiny MuZero network that the network's tests and the model's tests share (tests/ is
on the import path, as for conftest's helpers): initialised once per session."""

from __future__ import annotations

import functools

import jax

import gomoku_jax
from gomoku_jax.nets.muzero import MuZeroNetConfig, MuZeroNetwork

# 1 block of 8 channels and a latent of 6 (a 1×1 projection from the trunk's 8), small heads.
TINY = MuZeroNetConfig(blocks=1, channels=8, latent_channels=6, head_channels=4,
                       value_hidden=16, reward_hidden=16)


@functools.lru_cache(maxsize=None)
def tiny_muzero():
    """(env, network, variables): 5×5 Gomoku (four in a row), the `TINY` MuZero network
    for it, and its variables from key 0 (compiled once: `network.init`)."""
    env = gomoku_jax.make("gomoku", board_size=5, win_length=4)
    network = MuZeroNetwork.for_env(TINY, env)
    return env, network, network.init(jax.random.key(0))
