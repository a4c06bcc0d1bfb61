"""The env model: the real game stepped inside the tree, valued by an evaluator (a
`model.Model`).

The tree's embeddings are the env states themselves (no observation planes), so a node
costs its state's bytes; `recurrent_fn` steps the env and evaluates the children:

- reward: the mover's reward for the move (nonzero when it ends the game);
- discount: 0 after the end (an absorbing node, value 0), else ∓`value_discount`: negative
  when the side to move changes (two-player zero-sum), positive when it does not;
- prior logits: the evaluator's, shaped and masked (`prior.shape_prior`), so that no
  illegal or hard-masked child is ever searched (`selection.py` reads the mask).

With `proof_nodes` > 0 (the MCTS-Solver's leaf proofs) every child is first checked by the
game's threat proof (`Env.leaf_proof`): a child proven won or lost for its side to move is
written as the game's end would be (discount 0, value 0, the exact result as the mover's
reward), so the search treats it as settled (`tree_loop.py`, "Proofs").

The search algorithm's shared fields (`SearchAlgorithm`: `symmetry`, `prior_shaping`,
`candidate_threshold`, `value_discount`) say how the evaluator is called and its prior
shaped; `root_mask` restricts the root further (e.g. to the refutations of the opponent's
forced win).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import jax
import jax.numpy as jnp
import mctx

from gomoku_jax.games.protocol import is_over, reward_of
from gomoku_jax.search.prior import MASKED, evaluate, shape_prior


@dataclasses.dataclass(frozen=True, eq=False)
class EnvModel:
    """The model of `env` valued by `evaluator`, shaped as `algorithm` says.

    Attributes:
      env: the game (`games.protocol.Env`).
      evaluator: `(env, params, states, key) -> (logits float32[B, A], value float32[B])`.
      algorithm: the search's config (a `SearchAlgorithm`: its shared fields).
      root_mask: bool[B, A] or None: the root's candidates are also restricted to it,
        except on a board where that would leave no candidate.
    """

    env: Any
    evaluator: Any
    algorithm: Any
    root_mask: Optional[jax.Array] = None

    interior_masked = True

    @property
    def num_actions(self) -> int:
        return self.env.num_actions

    def root(self, params: Any, key: jax.Array, states: Any
             ) -> tuple[mctx.RootFnOutput, jax.Array]:
        """(the root with its shaped, masked prior; candidates bool[B, A]); the embedding
        is `states`."""
        logits, value = evaluate(self.env, self.evaluator, self.algorithm.symmetry, params,
                                 states, key)
        logits, allowed = shape_prior(self.env, self.algorithm, logits, states)
        if self.root_mask is not None:
            kept = allowed & self.root_mask
            allowed = jnp.where(jnp.any(kept, axis=-1, keepdims=True), kept, allowed)
            logits = jnp.where(allowed, logits, MASKED)
        return mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states), allowed

    def recurrent_fn(self, params: Any, key: jax.Array, action: jax.Array, states: Any
                     ) -> tuple[mctx.RecurrentFnOutput, Any]:
        """mctx's `recurrent_fn` over the real env: the children of `states` by `action`
        int32[B], evaluated."""
        env, algorithm = self.env, self.algorithm
        children = jax.vmap(env.step)(states, action)
        logits, value = evaluate(env, self.evaluator, algorithm.symmetry, params, children,
                                 key)
        logits, _ = shape_prior(env, algorithm, logits, children)
        over = is_over(children)
        sign = jnp.where(children.current_player == states.current_player, 1.0, -1.0)
        reward = reward_of(children, states.current_player).astype(jnp.float32)
        if algorithm.proof_nodes:  # a proven child: absorbing, its result the edge's reward
            proof = env.leaf_proof(children, algorithm.proof_nodes).astype(jnp.float32)
            proven = (proof != 0) & ~over
            reward = jnp.where(proven, sign * proof, reward)
            over = over | proven
        out = mctx.RecurrentFnOutput(
            reward=reward,
            discount=jnp.where(over, 0.0, sign * algorithm.value_discount).astype(jnp.float32),
            prior_logits=logits,
            value=jnp.where(over, 0.0, value).astype(jnp.float32))
        return out, children

    def legal_moves(self, states: Any) -> jax.Array:
        """bool[B, A]: the states' legal moves."""
        return states.legal_action_mask

    def move_number(self, states: Any) -> jax.Array:
        """int32[B]: the plies played in each state."""
        return jax.vmap(self.env.move_number)(states)
