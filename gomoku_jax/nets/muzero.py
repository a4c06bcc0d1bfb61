"""MuZero's three networks (Schrittwieser et al. 2020) in Flax NNX, used functionally.

    representation h: obs float32[B, H, W, C_in] ─ conv 3×3 (C_in → ch) ─ BN ─ ReLU
                        ─ `blocks` × residual block ─ [conv 1×1 (ch → L)] ─ scale → s
    dynamics g:       s ‖ action planes [B, H, W, P] ─ conv 3×3 (L + P → ch) ─ BN ─ ReLU
                        ─ `blocks` × residual block ─ [conv 1×1 (ch → L)] ─ scale → s'
                      reward: s' ─ conv 1×1 (L → head) ─ BN ─ ReLU ─ dense `reward_hidden`
                        ─ ReLU ─ dense 1 ─ tanh
    prediction f:     policy: s ─ conv 1×1 (L → head) ─ BN ─ ReLU ─ dense → A logits
                      value:  s ─ conv 1×1 (L → head) ─ BN ─ ReLU ─ dense `value_hidden`
                        ─ ReLU ─ dense 1 ─ tanh

The residual blocks are seed 001's (`resnet.ResidualBlock`); the heads are the
AlphaZero ResNet's. The latent s is float32[B, H, W, L], a spatial latent over the board
(L = `latent_channels`, the trunk's `channels` unless set; the bracketed 1×1 projection
is there only when they differ). Every latent is min-max scaled per example to [0, 1]
over all its H·W·L entries, after h and after g, as in the paper, so that the dynamics'
inputs keep one range however deep the unroll (the action planes' range too): s = (x −
min) / (max − min), the range floored at 1e-5 (a constant latent scales to 0). The reward
head reads the scaled s', as f does.

Values and rewards are scalars in [-1, 1] (tanh), as MuZero's board-game networks (no
categorical support): the value for the side to move, the reward the mover's for the
move. Actions enter g as planes (`action_planes.ActionPlanes`: a cell plane, a pass plane,
or a one-hot broadcast). Observations must be [H, W, C] grids of planes (every board game
here); another shape is a ValueError.

As the ResNet, the three modules live in one `MuZeroNet` split into a static graphdef and
`NetVars(params, batch_stats)` pytrees; `MuZeroNetwork` (hashable, no arrays) merges them
inside traced code: `represent`, `dynamics`, `predict` run BatchNorm on its running
averages (inference, as inside search); `apply_train` runs any function of the merged
net in training mode and returns the updated statistics (the unrolled loss).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
from flax import nnx

from gomoku_jax import configs
from gomoku_jax.configs import NonNegativeInt, PositiveInt
from gomoku_jax.nets.action_planes import ActionPlanes
from gomoku_jax.nets.resnet import (
    DTYPES,
    NET_PRESETS,
    NetConfig,
    NetHandle,
    NetVars,
    ResidualBlock,
    batch_norm,
    conv_layer,
)
from gomoku_jax.registry import Registry

LATENT_EPSILON = 1e-5  # the smallest max − min the latent's scaling divides by


@dataclasses.dataclass(frozen=True)
class MuZeroNetConfig:
    """MuZero's network sizes; the fields AlphaZero's `NetConfig` has mean the same here.
    Defaults: the paper's board-game trunk (16 blocks of 256 channels in h and in g) with
    seed 001's heads.

    Attributes:
      blocks: residual blocks in h and in g each. channels: the trunks' width.
      latent_channels: L, the latent's channels (None: `channels`); a smaller latent is a
        smaller search tree (each node holds H·W·L float32).
      head_channels: the 1×1 convs of the policy, value and reward heads.
      value_hidden, reward_hidden: the value and reward heads' hidden dense layers.
      dtype: compute dtype, "float32" or "bfloat16"; params, BatchNorm statistics, the
        latents and the outputs stay float32.
      bn_momentum: BatchNorm running-average momentum, in [0, 1).
    """

    blocks: NonNegativeInt = 16
    channels: PositiveInt = 256
    latent_channels: Optional[PositiveInt] = None
    head_channels: PositiveInt = 32
    value_hidden: PositiveInt = 256
    reward_hidden: PositiveInt = 256
    dtype: str = "float32"
    bn_momentum: float = 0.9

    def __post_init__(self):
        configs.validate(self, "net")
        if self.dtype not in DTYPES:
            raise ValueError(f"net.dtype must be one of {tuple(DTYPES)}, got {self.dtype!r}")
        if not 0.0 <= self.bn_momentum < 1.0:
            raise ValueError(f"net.bn_momentum must be in [0, 1), got {self.bn_momentum!r}")

    @classmethod
    def from_net(cls, net: NetConfig, **changes: Any) -> "MuZeroNetConfig":
        """The MuZero network sized as AlphaZero's `net` (e.g. a `NET_PRESETS` entry), with
        `changes` to the fields (`latent_channels=16`)."""
        shared = {f.name: getattr(net, f.name) for f in dataclasses.fields(net)
                  if f.name in {g.name for g in dataclasses.fields(cls)}}
        return cls(**{**shared, **changes})

    @property
    def latent(self) -> int:
        """L, the latent's channels."""
        return self.latent_channels or self.channels

    def trunk(self) -> NetConfig:
        """The `NetConfig` that `resnet.ResidualBlock` reads (channels, dtype, momentum)."""
        return NetConfig(blocks=self.blocks, channels=self.channels, dtype=self.dtype,
                         bn_momentum=self.bn_momentum)


# MuZero network presets: name -> a `MuZeroNetConfig` (`MUZERO_NET_PRESETS.make("small",
# latent_channels="16")`): AlphaZero's `NET_PRESETS` of the same name, and the paper's.
MUZERO_NET_PRESETS = Registry("muzero network preset", instances=True)
for _name in ("tiny", "small", "medium"):
    MUZERO_NET_PRESETS.register(_name, MuZeroNetConfig.from_net(NET_PRESETS[_name]))
MUZERO_NET_PRESETS.register("paper", MuZeroNetConfig())


def scale_latent(x: jax.Array) -> jax.Array:
    """float32[B, ...] -> float32[B, ...]: each example min-max scaled to [0, 1] over all
    its entries (min 0 and max 1 unless it is constant, then all 0)."""
    x = x.astype(jnp.float32)
    axes = tuple(range(1, x.ndim))
    low, high = x.min(axis=axes, keepdims=True), x.max(axis=axes, keepdims=True)
    return (x - low) / jnp.maximum(high - low, LATENT_EPSILON)


def _flat(x: jax.Array) -> jax.Array:
    return x.reshape(x.shape[0], -1)


class _Trunk(nnx.Module):
    """conv 3×3 (cin → ch) ─ BN ─ ReLU ─ blocks ─ [conv 1×1 (ch → L)] ─ scale:
    float32[B, H, W, cin] -> latent float32[B, H, W, L] in [0, 1]."""

    def __init__(self, config: MuZeroNetConfig, cin: int, rngs: nnx.Rngs):
        trunk, ch = config.trunk(), config.channels
        self.conv, self.bn = conv_layer(cin, ch, 3, trunk, rngs), batch_norm(ch, trunk, rngs)
        self.blocks = nnx.List([ResidualBlock(trunk, rngs) for _ in range(config.blocks)])
        self.project = (nnx.Conv(ch, config.latent, (1, 1), dtype=DTYPES[config.dtype],
                                 rngs=rngs) if config.latent != ch else None)
        self.dtype = DTYPES[config.dtype]

    def __call__(self, x: jax.Array, train: bool) -> jax.Array:
        x = nnx.relu(self.bn(self.conv(x.astype(self.dtype)), use_running_average=not train))
        for block in self.blocks:
            x = block(x, train)
        if self.project is not None:
            x = self.project(x)
        return scale_latent(x)


class _ScalarHead(nnx.Module):
    """conv 1×1 (L → head) ─ BN ─ ReLU ─ dense hidden ─ ReLU ─ dense 1 ─ tanh:
    latent float32[B, H, W, L] -> float32[B] in [-1, 1]."""

    def __init__(self, config: MuZeroNetConfig, cells: int, hidden: int, rngs: nnx.Rngs):
        trunk, head, dtype = config.trunk(), config.head_channels, DTYPES[config.dtype]
        self.conv = conv_layer(config.latent, head, 1, trunk, rngs)
        self.bn = batch_norm(head, trunk, rngs)
        self.hidden = nnx.Linear(head * cells, hidden, dtype=dtype, rngs=rngs)
        self.out = nnx.Linear(hidden, 1, dtype=dtype, rngs=rngs)
        self.dtype = dtype

    def __call__(self, latent: jax.Array, train: bool) -> jax.Array:
        x = nnx.relu(self.bn(self.conv(latent.astype(self.dtype)),
                             use_running_average=not train))
        x = nnx.relu(self.hidden(_flat(x)))
        return jnp.tanh(self.out(x)[:, 0].astype(jnp.float32))


class Representation(nnx.Module):
    """h: `h(obs float32[B, H, W, C_in], train) -> latent float32[B, H, W, L]` in [0, 1]."""

    def __init__(self, config: MuZeroNetConfig, in_planes: int, *, rngs: nnx.Rngs):
        self.trunk = _Trunk(config, in_planes, rngs)

    def __call__(self, obs: jax.Array, train: bool = False) -> jax.Array:
        return self.trunk(obs, train)


class Dynamics(nnx.Module):
    """g: `g(latent float32[B, H, W, L], action int32[B], train) -> (latent' float32[B, H,
    W, L] in [0, 1], reward float32[B] in [-1, 1])`, the reward the mover's for the move."""

    def __init__(self, config: MuZeroNetConfig, actions: ActionPlanes, *, rngs: nnx.Rngs):
        self.actions = actions
        self.trunk = _Trunk(config, config.latent + actions.planes, rngs)
        self.reward = _ScalarHead(config, actions.height * actions.width,
                                  config.reward_hidden, rngs)

    def __call__(self, latent: jax.Array, action: jax.Array, train: bool = False
                 ) -> tuple[jax.Array, jax.Array]:
        x = jnp.concatenate([latent, self.actions.encode(action).astype(latent.dtype)], -1)
        latent = self.trunk(x, train)
        return latent, self.reward(latent, train)


class Prediction(nnx.Module):
    """f: `f(latent float32[B, H, W, L], train) -> (logits float32[B, A], value float32[B]
    in [-1, 1])`, the value for the side to move."""

    def __init__(self, config: MuZeroNetConfig, cells: int, num_actions: int, *,
                 rngs: nnx.Rngs):
        trunk, head, dtype = config.trunk(), config.head_channels, DTYPES[config.dtype]
        self.policy_conv = conv_layer(config.latent, head, 1, trunk, rngs)
        self.policy_bn = batch_norm(head, trunk, rngs)
        self.policy_out = nnx.Linear(head * cells, num_actions, dtype=dtype, rngs=rngs)
        self.value = _ScalarHead(config, cells, config.value_hidden, rngs)
        self.dtype = dtype

    def __call__(self, latent: jax.Array, train: bool = False) -> tuple[jax.Array, jax.Array]:
        p = self.policy_conv(latent.astype(self.dtype))
        p = nnx.relu(self.policy_bn(p, use_running_average=not train))
        logits = self.policy_out(_flat(p)).astype(jnp.float32)
        return logits, self.value(latent, train)


class MuZeroNet(nnx.Module):
    """h, g and f of one game's shapes, as `representation`, `dynamics`, `prediction`."""

    def __init__(self, config: MuZeroNetConfig, observation_shape: tuple[int, int, int],
                 actions: ActionPlanes, *, rngs: nnx.Rngs):
        height, width, in_planes = observation_shape
        self.representation = Representation(config, in_planes, rngs=rngs)
        self.dynamics = Dynamics(config, actions, rngs=rngs)
        self.prediction = Prediction(config, height * width, actions.num_actions, rngs=rngs)


@dataclasses.dataclass(frozen=True)
class MuZeroNetwork(NetHandle):
    """A functional handle on `MuZeroNet` for one game's shapes: hashable (a static
    argument of `jit`), holding no arrays. `variables` is a `resnet.NetVars(params,
    batch_stats)`, the pytree a search passes as `params`.

    network = MuZeroNetwork.for_env(MUZERO_NET_PRESETS["tiny"], env)
    variables = network.init(jax.random.key(0))
    latent = network.represent(variables, obs)                   # float32[B, H, W, L]
    latent, reward = network.dynamics(variables, latent, action)  # ..., float32[B]
    logits, value = network.predict(variables, latent)           # float32[B, A], [B]

    Attributes:
      config: the sizes. observation_shape: (H, W, C_in). num_actions: A.
      pass_action: the game's pass action (None: none), for the action planes.
    """

    config: MuZeroNetConfig = MuZeroNetConfig()
    observation_shape: tuple[int, int, int] = (15, 15, 5)
    num_actions: PositiveInt = 225
    pass_action: Optional[NonNegativeInt] = None

    def __post_init__(self):
        self._set_board_shape("MuZero's networks")
        configs.validate(self)
        if self.pass_action is not None and self.pass_action >= self.num_actions:
            raise ValueError(f"pass_action must be < num_actions {self.num_actions}, got "
                             f"{self.pass_action}")

    @classmethod
    def for_env(cls, config: MuZeroNetConfig, env) -> "MuZeroNetwork":
        """The networks for `env`'s observation shape, actions and pass."""
        return cls(config, tuple(env.observation_shape), env.num_actions, env.pass_action)

    @property
    def actions(self) -> ActionPlanes:
        """How g sees an action (`action_planes.ActionPlanes.for_game`)."""
        return ActionPlanes.for_game(self.observation_shape[:2], self.num_actions,
                                     self.pass_action)

    @property
    def latent_shape(self) -> tuple[int, int, int]:
        """(H, W, L): one latent's shape."""
        return (*self.observation_shape[:2], self.config.latent)

    def _build(self, rngs: nnx.Rngs) -> MuZeroNet:
        return MuZeroNet(self.config, self.observation_shape, self.actions, rngs=rngs)

    def represent(self, variables: NetVars, obs: jax.Array) -> jax.Array:
        """h, inference: latent float32[B, H, W, L] in [0, 1] from obs float32[B, H, W,
        C_in]."""
        return self.merge(variables).representation(obs, train=False)

    def dynamics(self, variables: NetVars, latent: jax.Array, action: jax.Array
                 ) -> tuple[jax.Array, jax.Array]:
        """g, inference: (latent' float32[B, H, W, L], reward float32[B]) from latent and
        action int32[B]."""
        return self.merge(variables).dynamics(latent, action, train=False)

    def predict(self, variables: NetVars, latent: jax.Array) -> tuple[jax.Array, jax.Array]:
        """f, inference: (logits float32[B, A], value float32[B])."""
        return self.merge(variables).prediction(latent, train=False)

    def apply_train(self, params: Any, batch_stats: Any, fn: Callable[[MuZeroNet], Any]
                    ) -> tuple[Any, Any]:
        """Training mode: (fn(net), updated batch_stats), `net` the merged `MuZeroNet`
        whose modules `fn` calls with `train=True` (e.g. an unroll of h, then g and f K
        times): `NetHandle.train_apply`."""
        return self.train_apply(params, batch_stats, fn)
