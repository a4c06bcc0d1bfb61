"""Networks: seed 001's policy-value ResNet (Flax NNX, used through split/merge)."""

from gomoku_jax.nets.resnet import NET_PRESETS, NetConfig, NetVars, PolicyValueModel, PolicyValueNet

__all__ = ["NET_PRESETS", "NetConfig", "NetVars", "PolicyValueModel", "PolicyValueNet"]
