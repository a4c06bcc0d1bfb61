"""Seed 001's policy-value ResNet in Flax NNX, used functionally inside compiled code.

Architecture (sizes are `NetConfig` fields):

    obs float32[B, H, W, C] ─ conv 3×3 (C → ch) ─ BN ─ ReLU
      ─ `blocks` × [conv 3×3 ─ BN ─ ReLU ─ conv 3×3 ─ BN ─ + skip ─ ReLU]
      ├─ policy: conv 1×1 (ch → 32) ─ BN ─ ReLU ─ flatten ─ dense → A logits
      └─ value:  conv 1×1 (ch → 32) ─ BN ─ ReLU ─ flatten ─ dense 256 ─ ReLU ─ dense 1 ─ tanh

For any game whose observation is a [H, W, C] grid of planes (Gomoku: N×N×5; pgx's
connect_four: 6×7×2), with A = the game's `num_actions` logits. The module is built once
per (config, observation shape, number of actions) and split into a static
`graphdef` and two pytrees, `NetVars(params, batch_stats)`; `PolicyValueModel.apply` merges
them inside the traced function, so no object graph is walked inside a scan and the search
and the trainer pass plain pytrees around. `apply` runs BatchNorm on its running averages
(inference, as inside search); `apply_train` uses the batch's statistics and returns the
updated averages.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
from flax import nnx

from gomoku_jax import configs
from gomoku_jax.configs import NonNegativeInt, PositiveInt
from gomoku_jax.nets import conv
from gomoku_jax.registry import Registry

DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}


@dataclasses.dataclass(frozen=True)
class NetConfig:
    """ResNet sizes. Defaults are seed 001's network (10 blocks of 128 channels).

    Attributes:
      blocks: residual blocks B. channels: C, the trunk's width.
      head_channels: the 1×1 convs of both heads (seed: 32). value_hidden: the value
        head's hidden dense layer (seed: 256).
      dtype: compute dtype, "float32" or "bfloat16" (for GPUs/TPUs); params, BatchNorm
        statistics and the outputs stay float32.
      bn_momentum: BatchNorm running-average momentum.
    """

    blocks: NonNegativeInt = 10
    channels: PositiveInt = 128
    head_channels: PositiveInt = 32
    value_hidden: PositiveInt = 256
    dtype: str = "float32"
    bn_momentum: float = 0.9  # in [0, 1): checked below

    def __post_init__(self):
        configs.validate(self, "net")
        if self.dtype not in DTYPES:
            raise ValueError(f"net.dtype must be one of {tuple(DTYPES)}, got {self.dtype!r}")
        if not 0.0 <= self.bn_momentum < 1.0:
            raise ValueError(f"net.bn_momentum must be in [0, 1), got {self.bn_momentum!r}")


# Network presets: name -> a `NetConfig`, registered as every plug-in is
# (`NET_PRESETS.register(name, config)`, or `gomoku_jax.plugins.register("network preset",
# name, config)`); `NET_PRESETS.make("small", blocks="3")` is the preset with `blocks` 3.
NET_PRESETS = Registry("network preset", instances=True)
NET_PRESETS.register("tiny", NetConfig(blocks=2, channels=16))
NET_PRESETS.register("small", NetConfig(blocks=4, channels=32))
NET_PRESETS.register("medium", NetConfig(blocks=6, channels=64))
NET_PRESETS.register("seed", NetConfig(blocks=10, channels=128))


def batch_norm(features: int, config: NetConfig, rngs: nnx.Rngs) -> nnx.BatchNorm:
    return nnx.BatchNorm(features, momentum=config.bn_momentum, dtype=DTYPES[config.dtype],
                         rngs=rngs)


def conv_layer(cin: int, cout: int, size: int, config: NetConfig, rngs: nnx.Rngs) -> nnx.Conv:
    # No bias: a BatchNorm follows every conv. `conv.conv_general_dilated`: gradients that
    # XLA:CPU runs at full speed inside the SGD loop.
    return nnx.Conv(cin, cout, (size, size), padding="SAME", use_bias=False,
                    dtype=DTYPES[config.dtype], rngs=rngs,
                    conv_general_dilated=conv.conv_general_dilated)


class ResidualBlock(nnx.Module):
    def __init__(self, config: NetConfig, rngs: nnx.Rngs):
        c = config.channels
        self.conv1, self.bn1 = conv_layer(c, c, 3, config, rngs), batch_norm(c, config, rngs)
        self.conv2, self.bn2 = conv_layer(c, c, 3, config, rngs), batch_norm(c, config, rngs)

    def __call__(self, x: jax.Array, train: bool) -> jax.Array:
        y = nnx.relu(self.bn1(self.conv1(x), use_running_average=not train))
        y = self.bn2(self.conv2(y), use_running_average=not train)
        return nnx.relu(x + y)


class PolicyValueNet(nnx.Module):
    """`net(obs float32[B, H, W, C], train) -> (logits float32[B, A], value float32[B])`."""

    def __init__(self, config: NetConfig, observation_shape: tuple[int, int, int],
                 num_actions: int, *, rngs: nnx.Rngs):
        height, width, in_planes = observation_shape
        c, h, cells = config.channels, config.head_channels, height * width
        dtype = DTYPES[config.dtype]
        self.config = config
        self.stem_conv = conv_layer(in_planes, c, 3, config, rngs)
        self.stem_bn = batch_norm(c, config, rngs)
        self.blocks = nnx.List([ResidualBlock(config, rngs) for _ in range(config.blocks)])
        self.policy_conv = conv_layer(c, h, 1, config, rngs)
        self.policy_bn = batch_norm(h, config, rngs)
        self.policy_out = nnx.Linear(h * cells, num_actions, dtype=dtype, rngs=rngs)
        self.value_conv = conv_layer(c, h, 1, config, rngs)
        self.value_bn = batch_norm(h, config, rngs)
        self.value_hidden = nnx.Linear(h * cells, config.value_hidden, dtype=dtype, rngs=rngs)
        self.value_out = nnx.Linear(config.value_hidden, 1, dtype=dtype, rngs=rngs)

    def __call__(self, obs: jax.Array, train: bool = False) -> tuple[jax.Array, jax.Array]:
        avg = not train
        x = obs.astype(DTYPES[self.config.dtype])
        x = nnx.relu(self.stem_bn(self.stem_conv(x), use_running_average=avg))
        for block in self.blocks:
            x = block(x, train)
        p = nnx.relu(self.policy_bn(self.policy_conv(x), use_running_average=avg))
        logits = self.policy_out(p.reshape(p.shape[0], -1))
        v = nnx.relu(self.value_bn(self.value_conv(x), use_running_average=avg))
        v = nnx.relu(self.value_hidden(v.reshape(v.shape[0], -1)))
        value = jnp.tanh(self.value_out(v)[:, 0].astype(jnp.float32))
        return logits.astype(jnp.float32), value


class NetVars(NamedTuple):
    """The network's variables as two pytrees: trained `params` and BatchNorm's running
    `batch_stats` (both `nnx.State`, float32)."""

    params: Any
    batch_stats: Any


@functools.lru_cache(maxsize=None)
def _graphdef(handle: "NetHandle"):
    abstract = nnx.eval_shape(lambda: handle._build(nnx.Rngs(0)))
    graphdef, _, _ = nnx.split(abstract, nnx.Param, nnx.BatchStat)
    return graphdef


@functools.lru_cache(maxsize=None)
def _jitted_init(handle: "NetHandle"):
    return jax.jit(handle._init)


class NetHandle(abc.ABC):
    """What a functional handle on an NNX network shares (`PolicyValueModel`, MuZero's
    `MuZeroNetwork`): a subclass is a frozen dataclass (hashable: a static argument of
    `jit`, holding no arrays) whose `_build(rngs)` builds the module; the module's static
    graphdef is built once per handle, and its variables travel as `NetVars`."""

    @abc.abstractmethod
    def _build(self, rngs: nnx.Rngs) -> nnx.Module:
        """The module, its variables drawn from `rngs`."""

    def _set_board_shape(self, what: str) -> None:
        """Checks `self.observation_shape` is a board of planes, (H, W, C) positive ints,
        and stores it as a tuple; the error names `what` takes it."""
        shape = tuple(self.observation_shape)
        if len(shape) != 3 or not all(isinstance(d, int) and d > 0 for d in shape):
            raise ValueError(f"{what} take observations of shape [H, W, C] (a board of "
                             f"planes), got {self.observation_shape!r}")
        object.__setattr__(self, "observation_shape", shape)

    @property
    def graphdef(self):
        return _graphdef(self)

    def init(self, key: jax.Array) -> NetVars:
        """Fresh variables (He-style conv init, BatchNorm at identity); compiled once per
        handle (eagerly, the many small initialisers take seconds)."""
        return _jitted_init(self)(key)

    def _init(self, key: jax.Array) -> NetVars:
        _, params, stats = nnx.split(self._build(nnx.Rngs(params=key)), nnx.Param,
                                     nnx.BatchStat)
        return NetVars(params, stats)

    def abstract_vars(self) -> NetVars:
        """Shapes and dtypes of `init`'s result (jax.ShapeDtypeStruct leaves)."""
        return jax.eval_shape(self.init, jax.random.key(0))

    def merge(self, variables: NetVars) -> nnx.Module:
        """The module with `variables`, for inference inside a traced function."""
        return nnx.merge(self.graphdef, variables.params, variables.batch_stats, copy=True)

    def train_apply(self, params: Any, batch_stats: Any, fn: Callable[[nnx.Module], Any]
                    ) -> tuple[Any, Any]:
        """Training mode: (fn(net), updated batch_stats), `net` the merged module whose
        BatchNorms `fn` runs with `train=True`.

        Merges with `copy=True`: the BatchNorms write their running averages, and NNX only
        lets a Variable be written in the trace that created it (here: inside `grad`)."""
        net = nnx.merge(self.graphdef, params, batch_stats, copy=True)
        out = fn(net)
        _, _, new_stats = nnx.split(net, nnx.Param, nnx.BatchStat)
        return out, new_stats

    def num_params(self) -> int:
        """Trained parameters (BatchNorm statistics not counted)."""
        return sum(int(x.size) for x in jax.tree.leaves(self.abstract_vars().params))


@dataclasses.dataclass(frozen=True)
class PolicyValueModel(NetHandle):
    """A functional handle on `PolicyValueNet` for one game's shapes: hashable (a static
    argument of `jit`), holding no arrays.

    model = PolicyValueModel(NET_PRESETS["tiny"], env.observation_shape, env.num_actions)
    variables = model.init(jax.random.key(0))
    logits, value = model.apply(variables, obs)        # float32[B, A], float32[B]
    """

    config: NetConfig = NetConfig()
    observation_shape: tuple[int, int, int] = (15, 15, 5)
    num_actions: PositiveInt = 225

    def __post_init__(self):
        self._set_board_shape("the ResNet's networks")
        configs.validate(self)

    @classmethod
    def for_env(cls, config: NetConfig, env) -> "PolicyValueModel":
        """The model for `env`'s observation shape and number of actions."""
        return cls(config, tuple(env.observation_shape), env.num_actions)

    def _build(self, rngs: nnx.Rngs) -> "PolicyValueNet":
        return PolicyValueNet(self.config, self.observation_shape, self.num_actions,
                              rngs=rngs)

    def apply(self, variables: NetVars, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Inference: (logits float32[B, A], value float32[B]) from obs float32[B, H, W, C]."""
        return self.merge(variables)(obs, train=False)

    def __call__(self, variables: NetVars, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """`apply`. The model itself is the network function agents and evaluators hold:
        unlike the bound method `model.apply` (whose equality is the model's identity),
        equal models compare equal, so agents built from equal configs share compiled code."""
        return self.apply(variables, obs)

    def apply_train(self, params: Any, batch_stats: Any, obs: jax.Array
                    ) -> tuple[tuple[jax.Array, jax.Array], Any]:
        """Training mode (batch statistics): ((logits, value), updated batch_stats)
        (`NetHandle.train_apply`)."""
        return self.train_apply(params, batch_stats, lambda net: net(obs, train=True))

    def flops_per_position(self) -> int:
        """Multiply-adds × 2 of one forward pass on one board (convs and dense layers; the
        BatchNorms, ReLUs and additions are left out)."""
        height, width, cin = self.observation_shape
        c, h, cells = self.config.channels, self.config.head_channels, height * width
        conv3 = 2 * 9 * cells
        macs = conv3 * cin * c + self.config.blocks * 2 * conv3 * c * c
        macs += 2 * (2 * cells * c * h)  # both 1×1 head convs
        macs += 2 * (h * cells) * self.num_actions  # policy dense
        macs += 2 * (h * cells) * self.config.value_hidden + 2 * self.config.value_hidden
        return macs
