"""GMO, gradient move optimisation (seed 002), as an agent for any game.

One move, for one board (`act`; batch with `act_batch`, a vmap):
  1. encode the state once and every action (`move_features`) with the move encoder;
  2. score every legal move: objective(m) = mean + exploration_temp * (beta * std +
     gamma * novelty), mean and std over `mc_samples` MC-dropout passes of the value net
     (the same dropout keys for every move and every step, so scores compare), novelty =
     the distance from m to the nearest embedding in the novelty memory (0 when empty);
  3. take the top-k legal moves and run `optim_steps` steps of gradient ascent (`jax.grad`)
     on their embeddings, all k at once, at `lr`;
  4. project each optimised embedding to the legal move of highest cosine similarity,
     re-score the projected moves and play the best;
  5. push the played move's embedding into the novelty memory (a ring buffer, the agent
     state, empty at the start of every game).

`params` are the GMO networks' parameters (`nets.gmo.GMOModel.init`, or a trained run's).
With `params=None` the agent plays with fresh parameters drawn from `init_seed`: an
untrained GMO, useful for plumbing and as a floor, not for strength.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

from gomoku_jax.agents.base import Agent
from gomoku_jax.nets.gmo import PASS, PLACE, GMOConfig, GMOModel, MoveFeatures

_EPS = 1e-8


def move_features(env, state) -> MoveFeatures:
    """MoveFeatures[A] of every action of `env` in `state` (one board): placements are
    PLACE with no from-position, the pass (where the game has one) is PASS; the count is
    `env.move_number(state)` over the number of actions."""
    a = env.num_actions
    actions = jnp.arange(a, dtype=jnp.int32)
    kind = jnp.full((a,), PLACE, jnp.int32)
    if env.pass_action is not None:
        kind = jnp.where(actions == env.pass_action, PASS, kind)
    count = env.move_number(state).astype(jnp.float32) / a
    return MoveFeatures(kind=kind, source=jnp.full((a,), a, jnp.int32), target=actions,
                        count=jnp.broadcast_to(count, (a,)))


def project(embeddings: jax.Array, moves: jax.Array, legal: jax.Array) -> jax.Array:
    """int32[k]: for each embedding (float32[k, D]) the legal move (bool[A]) whose embedding
    (float32[A, D]) has the highest cosine similarity with it."""
    def unit(x):
        return x / (jnp.linalg.norm(x, axis=-1, keepdims=True) + _EPS)

    cosine = unit(embeddings) @ unit(moves).T
    return jnp.argmax(jnp.where(legal, cosine, -jnp.inf), axis=-1).astype(jnp.int32)


class NoveltyMemory(NamedTuple):
    """A ring buffer of the last `size` move embeddings played.

    embeddings: float32[size, move_dim]; count: int32[], embeddings ever pushed (the next
    write goes to `count % size`; entries below min(count, size) are valid).
    """

    embeddings: jax.Array
    count: jax.Array

    @classmethod
    def empty(cls, size: int, dim: int) -> "NoveltyMemory":
        return cls(jnp.zeros((size, dim), jnp.float32), jnp.int32(0))

    def push(self, embedding: jax.Array) -> "NoveltyMemory":
        size = self.embeddings.shape[0]
        return NoveltyMemory(self.embeddings.at[self.count % size].set(embedding),
                             self.count + 1)

    @property
    def valid(self) -> jax.Array:
        """bool[size]: the slots holding an embedding."""
        return jnp.arange(self.embeddings.shape[0]) < self.count

    def novelty(self, emb: jax.Array) -> jax.Array:
        """float32[...]: the L2 distance from each embedding of `emb` [..., dim] to the
        nearest remembered one; 0 while the memory is empty."""
        d2 = jnp.sum((emb[..., None, :] - self.embeddings) ** 2, axis=-1)
        any_valid = self.count > 0
        nearest = jnp.where(any_valid, jnp.min(jnp.where(self.valid, d2, jnp.inf), -1), 0.0)
        return jnp.where(any_valid, jnp.sqrt(nearest + _EPS), 0.0)


class GMOChoice(NamedTuple):
    """What one GMO move computed (for one board): scores float32[A] (the objective, -inf
    on illegal moves), candidates int32[k] (the top-k before ascent), projected int32[k]
    (where each optimised embedding landed), action int32[], mean and std float32[A] (the
    MC-dropout value statistics), moves float32[A, move_dim] (the move embeddings), path
    float32[optim_steps + 1, k, move_dim] (the candidates' embeddings from the start of the
    ascent to its end, `path[-1]` what was projected)."""

    scores: jax.Array
    candidates: jax.Array
    projected: jax.Array
    action: jax.Array
    mean: jax.Array
    std: jax.Array
    moves: jax.Array
    path: jax.Array


@functools.lru_cache(maxsize=8)
def _fresh_params(model: GMOModel, seed: int):
    # jitted: one compile instead of many small eager ones (3.6-10 s -> 2.3 s measured)
    return jax.jit(model.init)(jax.random.key(seed))


@dataclasses.dataclass(frozen=True)
class GMOAgent(GMOConfig, Agent):
    """Seed 002's GMO (the module doc); fields: `GMOConfig`'s plus `init_seed`."""

    name = "gmo"
    network_kinds = ("gmo",)  # a GMO run's encoders and value net

    init_seed: int = 0

    @property
    def model(self) -> GMOModel:
        return GMOModel.for_env(GMOConfig(**{f.name: getattr(self, f.name)
                                             for f in dataclasses.fields(GMOConfig)}),
                                self.game)

    def init(self, key: jax.Array) -> NoveltyMemory:
        del key
        return NoveltyMemory.empty(self.novelty_memory_size, self.move_dim)

    def params_or_fresh(self, params):
        """`params`, or when None the fresh params of `init_seed` (drawn once per model and
        seed, eagerly even inside a trace: a constant of the program, not re-drawn per move)."""
        if params is not None:
            return params
        with jax.ensure_compile_time_eval():
            return _fresh_params(self.model, self.init_seed)

    def objective(self, params, memory: NoveltyMemory, state, key: jax.Array
                  ) -> Callable[[jax.Array], tuple[jax.Array, jax.Array, jax.Array]]:
        """GMO's objective at `state` (one board), the function `choose` scores the moves
        with and ascends: emb float32[..., move_dim] -> (objective, mean, std), each
        float32[...], where objective = mean + exploration_temp * (beta * std + gamma *
        novelty), mean and std the MC-dropout statistics of the value (`mc_samples` masks
        drawn from `key`, the same for every embedding) and novelty the distance to the
        nearest embedding in `memory`."""
        model = self.model
        s = model.encode_state(params, self.game.observe(state))
        mc_keys = jax.random.split(key, self.mc_samples)

        def objective(emb):
            values = jax.vmap(lambda k: model.value(params, s, emb, k)[0])(mc_keys)
            mean, std = jnp.mean(values, 0), jnp.sqrt(jnp.var(values, 0) + _EPS)
            explore = self.beta * std + self.gamma * memory.novelty(emb)
            return mean + self.exploration_temp * explore, mean, std

        return objective

    def choose(self, params, memory: NoveltyMemory, state, key: jax.Array) -> GMOChoice:
        """Steps 1-4 for one board (no memory update)."""
        env = self.game
        objective = self.objective(params, memory, state, key)
        moves = self.model.encode_moves(params, move_features(env, state))  # [A, D]
        legal = state.legal_action_mask
        total, mean, std = objective(moves)
        scores = jnp.where(legal, total, -jnp.inf)
        k = min(self.top_k, env.num_actions)
        _, candidates = jax.lax.top_k(scores, k)
        ascent = jax.grad(lambda e: jnp.sum(objective(e)[0]))

        def step(emb, _):
            emb = emb + self.lr * ascent(emb)
            return emb, emb

        start = moves[candidates]
        optimised, steps = jax.lax.scan(step, start, None, length=self.optim_steps)
        projected = project(optimised, moves, legal)
        action = projected[jnp.argmax(scores[projected])]
        return GMOChoice(scores, candidates.astype(jnp.int32), projected, action, mean, std,
                         moves, jnp.concatenate([start[None], steps]))

    def act(self, params, agent_state, state, key):
        params = self.params_or_fresh(params)
        choice = self.choose(params, agent_state, state, key)
        memory = agent_state.push(choice.moves[choice.action])
        policy = jax.nn.one_hot(choice.action, self.game.num_actions, dtype=jnp.float32)
        return choice.action, memory, {"policy": policy, "value": choice.mean[choice.action]}
