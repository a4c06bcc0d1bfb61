"""Search through mctx, backed by any evaluator, with the seeds' exploration features.

`search(evaluator, config, params, states, key, algorithm)` runs PUCT (`mctx.muzero_policy`)
or Gumbel MuZero (`mctx.gumbel_muzero_policy`) on a batch of env states. The tree's
embeddings are the env states themselves (a board and a few scalars, no observation), and
the recurrent function steps the real env:

- two-player sign through mctx's discount: `-value_discount` per ply (seed 001: 0.8 - 1.0);
- a terminal child returns the game result for the mover as reward, discount 0, value 0;
- mctx masks `invalid_actions` only at the root, so the logits returned for every node mask
  illegal (and hard-proximity-masked) moves themselves.

Seed features, each a `SearchConfig` field with the seed's default:
- Dirichlet noise at the root over the candidate moves only, ε = 0.2, α = (N² / legal) × 0.3
  (adaptive, seed 001) or fixed; drawn here, mctx is called with `dirichlet_fraction=0`
  (mctx would draw it over all N² actions before masking, diluting it).
- proximity-masked priors (seed 000 level 2): "soft" multiplies the prior by the proximity
  mask, "hard" makes moves below `proximity_threshold` invalid, "off"; the mask is all ones
  below 5 stones, so neither applies in the opening.
- a random dihedral transform at every evaluation, the policy mapped back (seed 001), or the
  average over all 8.
- move temperature `τ_t = max(τ0 · decay^t, τ_min)` (0.8, 0.9, 0.05), or greedy play.
- PUCT's Q term (`q_transform`, muzero only): "alphazero" (seed 001) is the mean value
  W/N in [-1, 1] with 0 for an unvisited move; mctx's "parent_and_siblings" and "min_max"
  give an unvisited move the lowest value in sight, so a move with a small prior is
  never tried once a sibling looks fine, which hides short tactical wins (see
  `eval/tactics.py`); "parent" is W/N with an unvisited move at the node's own mean value
  (first-play urgency = parent value, as Leela Zero), which keeps a learned value that is
  biased for one side (all moves near -1, say) from turning that side's search into
  uniform exploration while the other side's search follows its prior.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp
import mctx

from gomoku_jax.features.proximity import proximity_mask
from gomoku_jax.game import rules, symmetry
from gomoku_jax.game.state import State
from gomoku_jax.search.evaluators import Evaluator

PROXIMITY_MODES = ("soft", "hard", "off")
SYMMETRY_MODES = ("random", "average", "none")
ALGORITHMS = ("muzero", "gumbel")
Q_TRANSFORMS = ("alphazero", "parent", "parent_and_siblings", "min_max")
_NEG = jnp.finfo(jnp.float32).min  # not -inf: a softmax over all-masked rows stays finite


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """Search knobs (all static). Defaults are the seeds' values where they give one."""

    dirichlet_fraction: float = 0.2
    dirichlet_alpha: float = 0.3
    adaptive_alpha: bool = True
    proximity: str = "soft"
    proximity_threshold: float = 0.1
    symmetry: str = "random"
    pb_c_init: float = 1.25
    pb_c_base: float = 19652.0
    q_transform: str = "alphazero"
    temperature: float = 0.8
    temperature_decay: float = 0.9
    temperature_min: float = 0.05
    greedy: bool = False
    value_discount: float = 1.0
    max_num_considered_actions: int = 16
    gumbel_scale: float = 1.0
    sample_plies: int = 0
    max_tree_bytes: Optional[int] = None

    def __post_init__(self):
        if self.proximity not in PROXIMITY_MODES:
            raise ValueError(f"proximity must be one of {PROXIMITY_MODES}, got {self.proximity!r}")
        if self.q_transform not in Q_TRANSFORMS:
            raise ValueError(f"q_transform must be one of {Q_TRANSFORMS}, got "
                             f"{self.q_transform!r}")
        if self.symmetry not in SYMMETRY_MODES:
            raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, got {self.symmetry!r}")
        for name in ("dirichlet_fraction", "value_discount"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        for name in ("dirichlet_alpha", "temperature", "temperature_min", "temperature_decay"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if self.max_num_considered_actions < 1 or self.sample_plies < 0:
            raise ValueError("max_num_considered_actions must be >= 1 and sample_plies >= 0")


class SearchOutput(NamedTuple):
    action: jax.Array  # int32[B]
    policy: jax.Array  # float32[B, N*N]: visit distribution (muzero) / improved policy (gumbel)
    value: jax.Array  # float32[B]: the root's value for the side to move


def tree_bytes(batch: int, num_simulations: int, num_actions: int, embedding_bytes: int) -> int:
    """Approximate memory of an mctx tree: B·(S+1)·(24·A + embedding bytes)."""
    return batch * (num_simulations + 1) * (24 * num_actions + embedding_bytes)


def _memory_limit() -> int:
    """Half of the default device's memory (or of the host's RAM on CPU)."""
    try:
        stats = jax.devices()[0].memory_stats() or {}
    except Exception:  # some backends don't report
        stats = {}
    if "bytes_limit" in stats:
        return int(stats["bytes_limit"]) // 2
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def check_tree_memory(states: State, num_simulations: int, config: SearchConfig) -> int:
    """Tree bytes for this batch; ValueError if over `max_tree_bytes` (default: half of the
    device memory). Runs at trace time, on shapes only."""
    batch = states.board.shape[0]
    per_state = sum(x.dtype.itemsize * x.size for x in jax.tree.leaves(states)) // batch
    need = tree_bytes(batch, num_simulations, states.board.shape[-1] ** 2, per_state)
    limit = config.max_tree_bytes if config.max_tree_bytes is not None else _memory_limit()
    if need > limit:
        raise ValueError(
            f"the search tree would need about {need / 2**30:.2f} GiB (batch {batch} x "
            f"{num_simulations + 1} nodes x (24 x {states.board.shape[-1] ** 2} + {per_state}) "
            f"bytes) but the limit is {limit / 2**30:.2f} GiB: lower the batch or "
            f"num_simulations, or raise max_tree_bytes")
    return need


def _transform_states(states: State, g: jax.Array) -> State:
    return jax.vmap(symmetry.transform_state)(states, g)


def evaluate(evaluator: Evaluator, config: SearchConfig, params: Any, states: State,
             key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(logits [B, A], value [B]) with the configured dihedral transforms."""
    batch = states.board.shape[0]
    if config.symmetry == "none":
        return evaluator(params, states, key)
    k_g, k_eval = jax.random.split(key)
    if config.symmetry == "random":
        g = jax.random.randint(k_g, (batch,), 0, symmetry.NUM_SYMMETRIES)
        logits, value = evaluator(params, _transform_states(states, g), k_eval)
        return jax.vmap(symmetry.inverse_transform_policy)(logits, g), value
    probs, values = 0.0, 0.0
    for g in range(symmetry.NUM_SYMMETRIES):
        gs = jnp.full((batch,), g)
        logits, value = evaluator(params, _transform_states(states, gs),
                                  jax.random.fold_in(k_eval, g))
        probs = probs + jax.nn.softmax(jax.vmap(symmetry.inverse_transform_policy)(logits, gs))
        values = values + value
    n = symmetry.NUM_SYMMETRIES
    return jnp.log(probs / n + 1e-30), values / n


def candidate_mask(states: State, config: SearchConfig) -> tuple[jax.Array, jax.Array]:
    """(candidates bool[B, A], proximity float32[B, A]): legal moves, minus those under the
    threshold when the mask is hard (all legal moves if that would leave none)."""
    legal = states.legal_action_mask
    near = jax.vmap(proximity_mask)(states.board).reshape(legal.shape)
    if config.proximity != "hard":
        return legal, near
    kept = legal & (near >= config.proximity_threshold)
    return jnp.where(jnp.any(kept, axis=-1, keepdims=True), kept, legal), near


def masked_logits(logits: jax.Array, states: State, config: SearchConfig
                  ) -> tuple[jax.Array, jax.Array]:
    """(logits with non-candidates at float32 min and, when soft, the proximity prior;
    the candidates bool[B, A])."""
    candidates, near = candidate_mask(states, config)
    if config.proximity == "soft":
        logits = logits + jnp.log(jnp.maximum(near, 1e-6))
    return jnp.where(candidates, logits, _NEG), candidates


def dirichlet_alpha(states: State, config: SearchConfig) -> jax.Array:
    """float32[B]: α = (N² / legal moves) × α0 when adaptive, else α0."""
    legal = jnp.sum(states.legal_action_mask, axis=-1).astype(jnp.float32)
    a = states.board.shape[-1] ** 2
    if not config.adaptive_alpha:
        return jnp.full(legal.shape, config.dirichlet_alpha, jnp.float32)
    return a / jnp.maximum(legal, 1.0) * config.dirichlet_alpha


def add_root_noise(logits: jax.Array, candidates: jax.Array, alpha: jax.Array,
                   fraction: float, key: jax.Array) -> jax.Array:
    """Mix Dir(α) noise drawn over the candidate moves only into the prior:
    `(1 - ε) · softmax(logits) + ε · η`, returned as logits (non-candidates at float32 min)."""
    gamma = jax.random.gamma(key, jnp.broadcast_to(alpha[:, None], logits.shape))
    gamma = jnp.where(candidates, gamma, 0.0)
    noise = gamma / jnp.maximum(jnp.sum(gamma, axis=-1, keepdims=True), 1e-30)
    prior = (1.0 - fraction) * jax.nn.softmax(jnp.where(candidates, logits, _NEG)) \
        + fraction * noise
    return jnp.where(candidates, jnp.log(jnp.maximum(prior, 1e-30)), _NEG)


def move_temperature(move_count: jax.Array, config: SearchConfig) -> jax.Array:
    """τ_t = max(τ0 · decay^t, τ_min) with t the number of stones on the board."""
    decayed = config.temperature * config.temperature_decay ** move_count.astype(jnp.float32)
    return jnp.maximum(decayed, config.temperature_min)


def alphazero_qtransform(tree: mctx.Tree, node_index: jax.Array) -> jax.Array:
    """float32[A]: Q(s, a) = W / N for visited children, 0 for unvisited ones (seed 001),
    unnormalised, as PUCT's value term."""
    visited = tree.children_visits[node_index] > 0
    return jnp.where(visited, tree.qvalues(node_index), 0.0)


def parent_value_qtransform(tree: mctx.Tree, node_index: jax.Array) -> jax.Array:
    """float32[A]: Q(s, a) = W / N for visited children, the node's mean value for
    unvisited ones."""
    visited = tree.children_visits[node_index] > 0
    return jnp.where(visited, tree.qvalues(node_index), tree.node_values[node_index])


def _qtransform(config: SearchConfig):
    if config.q_transform == "alphazero":
        return alphazero_qtransform
    if config.q_transform == "parent":
        return parent_value_qtransform
    if config.q_transform == "min_max":
        return functools.partial(mctx.qtransform_by_min_max, min_value=-1.0, max_value=1.0)
    return mctx.qtransform_by_parent_and_siblings


def _sample(key: jax.Array, probs: jax.Array, temperature: jax.Array) -> jax.Array:
    logits = jnp.where(probs > 0, jnp.log(jnp.maximum(probs, 1e-30)), _NEG)
    return jax.random.categorical(key, logits / temperature[:, None]).astype(jnp.int32)


def search(evaluator: Evaluator, config: SearchConfig, num_simulations: int, params: Any,
           states: State, key: jax.Array, algorithm: str = "muzero") -> SearchOutput:
    """Search from a batch of states (leading axis B) and choose a move for each.

    Args:
      evaluator: `(params, states, key) -> (logits [B, A], value [B])`.
      num_simulations: static. algorithm: "muzero" (PUCT) or "gumbel".
    Raises:
      ValueError (at trace time) when the tree would not fit (see `check_tree_memory`).
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    check_tree_memory(states, num_simulations, config)
    k_root, k_noise, k_search, k_move = jax.random.split(key, 4)
    logits, value = evaluate(evaluator, config, params, states, k_root)
    logits, candidates = masked_logits(logits, states, config)
    if algorithm == "muzero" and config.dirichlet_fraction > 0:
        logits = add_root_noise(logits, candidates, dirichlet_alpha(states, config),
                                config.dirichlet_fraction, k_noise)
    root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)

    def recurrent_fn(params, rng_key, action, embedding):
        parents = embedding
        children = jax.vmap(rules.step)(parents, action)
        reward = jnp.take_along_axis(children.rewards, parents.current_player[:, None],
                                     axis=1)[:, 0]
        child_logits, child_value = evaluate(evaluator, config, params, children, rng_key)
        over = children.terminated
        out = mctx.RecurrentFnOutput(
            reward=reward,
            discount=jnp.where(over, 0.0, -config.value_discount).astype(jnp.float32),
            prior_logits=masked_logits(child_logits, children, config)[0],
            value=jnp.where(over, 0.0, child_value).astype(jnp.float32))
        return out, children

    if algorithm == "muzero":
        out = mctx.muzero_policy(
            params, k_search, root, recurrent_fn, num_simulations,
            invalid_actions=~candidates, dirichlet_fraction=0.0,
            pb_c_init=config.pb_c_init, pb_c_base=config.pb_c_base,
            qtransform=_qtransform(config))
        visits = out.action_weights
        if config.greedy:
            action = jnp.argmax(visits, axis=-1).astype(jnp.int32)
        else:
            action = _sample(k_move, visits, move_temperature(states.move_count, config))
        policy = visits
    else:
        out = mctx.gumbel_muzero_policy(
            params, k_search, root, recurrent_fn, num_simulations,
            invalid_actions=~candidates,
            max_num_considered_actions=config.max_num_considered_actions,
            gumbel_scale=config.gumbel_scale)
        action = out.action.astype(jnp.int32)
        if config.sample_plies > 0:
            visits = out.search_tree.summary().visit_probs
            sampled = _sample(k_move, visits, jnp.ones(visits.shape[:1]))
            action = jnp.where(states.move_count < config.sample_plies, sampled, action)
        policy = out.action_weights
    root_value = out.search_tree.summary().value
    return SearchOutput(action, policy.astype(jnp.float32), root_value.astype(jnp.float32))
