"""Networks: seed 001's policy-value ResNet and MuZero's three networks (Flax NNX, used
through split/merge)."""

from gomoku_jax.nets.action_planes import ActionPlanes
from gomoku_jax.nets.muzero import MUZERO_NET_PRESETS, MuZeroNetConfig, MuZeroNetwork
from gomoku_jax.nets.resnet import NET_PRESETS, NetConfig, NetVars, PolicyValueModel, PolicyValueNet

__all__ = ["MUZERO_NET_PRESETS", "NET_PRESETS", "ActionPlanes", "MuZeroNetConfig",
           "MuZeroNetwork", "NetConfig", "NetVars", "PolicyValueModel", "PolicyValueNet"]
