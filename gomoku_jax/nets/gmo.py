"""GMO's networks (seed 002): a state encoder, a move encoder and a value network with
uncertainty, in Flax NNX, used functionally like the ResNet (`nnx.split` once, `nnx.merge`
inside the traced function).

    state   obs float32[*obs_shape] ─ flatten ─ dense 256 ─ ReLU ─ dense state_dim
    move    [type embedding (8 types: place, pass, 6 reserved)
             ‖ from-position embedding (A + 1 entries, the last is "none": placements)
             ‖ to-position embedding (A entries, one per action)
             ‖ dense(placement count / cells)] ─ dense move_dim
    value   [state ‖ move] ─ dense hidden ─ ReLU ─ dropout ─ dense hidden ─ ReLU ─ dropout
              ├─ dense 1 ─ tanh: the value, for the side to move, of playing the move
              └─ dense 1: the log-variance of that value (heteroscedastic)

Dropout takes an explicit key (None: off), so MC-dropout samples are a `vmap` over keys.
The move is an embedding, so `jax.grad` can move it through the value network (GMO's
gradient ascent) and project it back onto the legal moves.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp
from flax import nnx

from gomoku_jax import configs
from gomoku_jax.configs import NonNegativeFloat, NonNegativeInt, PositiveInt

MOVE_TYPES = 8
PLACE, PASS = 0, 1


@dataclasses.dataclass(frozen=True)
class GMOConfig:
    """GMO's sizes and search knobs; the defaults are seed 002's.

    Attributes:
      state_dim, move_dim, hidden_dim: the encoders' outputs and the value net's width.
      top_k: candidates refined by gradient ascent; optim_steps, lr: the ascent.
      beta, gamma: weights of the uncertainty (sqrt of the MC-dropout variance) and of the
        novelty (distance to the moves played) in the objective.
      exploration_temp: scales both exploration terms (0: the mean value alone).
      dropout_rate: the value net's dropout, in training and in MC-dropout.
      mc_samples: dropout samples per evaluation; novelty_memory_size: moves remembered.
      part_dim: the width of each of the move encoder's four parts before its projection.
    """

    state_dim: PositiveInt = 128
    move_dim: PositiveInt = 128
    hidden_dim: PositiveInt = 256
    top_k: PositiveInt = 5
    optim_steps: NonNegativeInt = 10
    lr: NonNegativeFloat = 0.1
    beta: NonNegativeFloat = 0.3
    gamma: NonNegativeFloat = 0.1
    exploration_temp: NonNegativeFloat = 1.0
    dropout_rate: NonNegativeFloat = 0.1
    mc_samples: PositiveInt = 10
    novelty_memory_size: PositiveInt = 1000
    part_dim: PositiveInt = 32

    def __post_init__(self):
        configs.validate(self, "gmo")  # the agent's fields too, where it is an agent's base
        if self.dropout_rate >= 1:
            raise ValueError(f"dropout_rate must be in [0, 1), got {self.dropout_rate!r}")


class MoveFeatures(NamedTuple):
    """What the move encoder sees of a move (any leading shape).

    kind: int32, PLACE or PASS (MOVE_TYPES entries, the rest reserved); source: int32, the
    from-position, A ("none") for placements; target: int32, the action; count:
    float32, stones placed before the move / cells.
    """

    kind: jax.Array
    source: jax.Array
    target: jax.Array
    count: jax.Array


def dropout(x: jax.Array, rate: float, key: Optional[jax.Array]) -> jax.Array:
    """Inverted dropout with an explicit key; identity when `key` is None or rate is 0."""
    if key is None or rate == 0:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


class StateEncoder(nnx.Module):
    def __init__(self, obs_size: int, config: GMOConfig, *, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(obs_size, 256, rngs=rngs)
        self.out = nnx.Linear(256, config.state_dim, rngs=rngs)

    def __call__(self, obs: jax.Array) -> jax.Array:
        return self.out(nnx.relu(self.hidden(obs)))


class MoveEncoder(nnx.Module):
    def __init__(self, num_actions: int, config: GMOConfig, *, rngs: nnx.Rngs):
        d = config.part_dim
        self.kind = nnx.Embed(MOVE_TYPES, d, rngs=rngs)
        self.source = nnx.Embed(num_actions + 1, d, rngs=rngs)
        self.target = nnx.Embed(num_actions, d, rngs=rngs)
        self.count = nnx.Linear(1, d, rngs=rngs)
        self.out = nnx.Linear(4 * d, config.move_dim, rngs=rngs)

    def __call__(self, move: MoveFeatures) -> jax.Array:
        parts = [self.kind(move.kind), self.source(move.source), self.target(move.target),
                 self.count(move.count[..., None])]
        return self.out(jnp.concatenate(parts, axis=-1))


class GMOValueNetWithUncertainty(nnx.Module):
    def __init__(self, config: GMOConfig, *, rngs: nnx.Rngs):
        h = config.hidden_dim
        self.rate = config.dropout_rate
        self.hidden1 = nnx.Linear(config.state_dim + config.move_dim, h, rngs=rngs)
        self.hidden2 = nnx.Linear(h, h, rngs=rngs)
        self.value = nnx.Linear(h, 1, rngs=rngs)
        self.log_var = nnx.Linear(h, 1, rngs=rngs)

    def __call__(self, state: jax.Array, move: jax.Array, key: Optional[jax.Array] = None
                 ) -> tuple[jax.Array, jax.Array]:
        keys = (None, None) if key is None else tuple(jax.random.split(key))
        x = jnp.concatenate([state, move], axis=-1)
        x = dropout(nnx.relu(self.hidden1(x)), self.rate, keys[0])
        x = dropout(nnx.relu(self.hidden2(x)), self.rate, keys[1])
        return jnp.tanh(self.value(x)[..., 0]), self.log_var(x)[..., 0]


class GMONet(nnx.Module):
    def __init__(self, config: GMOConfig, observation_shape: tuple[int, ...], num_actions: int,
                 *, rngs: nnx.Rngs):
        self.state_encoder = StateEncoder(math.prod(observation_shape), config, rngs=rngs)
        self.move_encoder = MoveEncoder(num_actions, config, rngs=rngs)
        self.value_net = GMOValueNetWithUncertainty(config, rngs=rngs)


@functools.lru_cache(maxsize=None)
def _graphdef(config: GMOConfig, observation_shape: tuple[int, ...], num_actions: int):
    abstract = nnx.eval_shape(lambda: GMONet(config, observation_shape, num_actions,
                                             rngs=nnx.Rngs(0)))
    graphdef, _ = nnx.split(abstract, nnx.Param)
    return graphdef


@dataclasses.dataclass(frozen=True)
class GMOModel:
    """A functional handle on `GMONet` for one game's shapes: hashable, holding no arrays.

    model = GMOModel.for_env(GMOConfig(), env)
    params = model.init(key)
    s = model.encode_state(params, obs)              # float32[..., state_dim]
    m = model.encode_moves(params, features)         # float32[..., move_dim]
    value, log_var = model.value(params, s, m, key)  # float32[...]; key None: no dropout
    """

    config: GMOConfig = GMOConfig()
    observation_shape: tuple[int, ...] = (15, 15, 5)
    num_actions: int = 225

    @classmethod
    def for_env(cls, config: GMOConfig, env) -> "GMOModel":
        return cls(config, tuple(env.observation_shape), env.num_actions)

    @property
    def graphdef(self):
        return _graphdef(self.config, tuple(self.observation_shape), self.num_actions)

    def init(self, key: jax.Array) -> Any:
        """Fresh parameters (an `nnx.State` pytree)."""
        net = GMONet(self.config, tuple(self.observation_shape), self.num_actions,
                     rngs=nnx.Rngs(params=key))
        return nnx.split(net, nnx.Param)[1]

    def _net(self, params) -> GMONet:
        return nnx.merge(self.graphdef, params, copy=True)

    def encode_state(self, params, obs: jax.Array) -> jax.Array:
        """obs float32[..., *observation_shape] -> float32[..., state_dim]."""
        lead = obs.shape[:obs.ndim - len(self.observation_shape)]
        flat = obs.reshape(*lead, -1).astype(jnp.float32)
        return self._net(params).state_encoder(flat)

    def encode_moves(self, params, moves: MoveFeatures) -> jax.Array:
        """MoveFeatures[...] -> float32[..., move_dim]."""
        return self._net(params).move_encoder(moves)

    def value(self, params, state_emb: jax.Array, move_emb: jax.Array,
              key: Optional[jax.Array] = None) -> tuple[jax.Array, jax.Array]:
        """(value, log_var) float32[...] of a move (embedding) in a state (embedding); the
        leading shapes broadcast. `key`: dropout on (MC-dropout, training), None: off."""
        lead = jnp.broadcast_shapes(state_emb.shape[:-1], move_emb.shape[:-1])
        state_emb = jnp.broadcast_to(state_emb, lead + state_emb.shape[-1:])
        move_emb = jnp.broadcast_to(move_emb, lead + move_emb.shape[-1:])
        return self._net(params).value_net(state_emb, move_emb, key)

    def num_params(self) -> int:
        shapes = jax.eval_shape(self.init, jax.random.key(0))
        return sum(int(x.size) for x in jax.tree.leaves(shapes))
