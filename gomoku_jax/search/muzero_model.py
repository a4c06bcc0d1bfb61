"""The MuZero model: a learned representation, dynamics and prediction searched as a
`model.Model` (Schrittwieser et al. 2020; searched by `puct` it is MuZero, by `gumbel`
Gumbel MuZero).

The root starts from the real game: the states are observed (`env.observe`), h gives the
latent and f its prior and value; the prior is shaped by the game's candidate weights and
masked to the legal moves as the env model's root (`prior.shape_prior` with the
algorithm's `prior_shaping` and `candidate_threshold`), and the candidates are the root's
`allowed`. Below the root the search runs on latents only (embeddings float32[B, H, W,
L]): g steps a latent by an action, f values it, and nothing knows the rules there:

- prior logits: f's, unmasked (`interior_masked` is False: every action is searched);
- reward: g's, the mover's reward for the move, in [-1, 1];
- discount: −`value_discount` at every step. Turns alternate in every game this models,
  so the child's value (for its own side to move) is the other player's, the env model's
  sign convention. A game where a move may keep the turn is not modelled (its sign would
  have to be learned too), and neither is the end of the game: a learned latent has no
  "game over", so a node below a finished game goes on as f and g say (MuZero's training
  teaches them an absorbing continuation: zero reward, zero value);
- value: f's, for the child's side to move.

The algorithm's `symmetry` is not applied (as "none"): a latent is no game state the
symmetry hooks could transform, and a symmetric root would put the tree's actions in
another frame than the board's (a learned model gets its symmetries from training
augmentation instead). `params` is the network's variables (`nets.NetVars`), passed
through `search_model(params=...)` as any evaluator's.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import mctx

from gomoku_jax.search.prior import shape_prior


@dataclasses.dataclass(frozen=True)
class MuZeroModel:
    """The learned model of `env` (hashable: a static argument of `jit`).

    Attributes:
      env: the game (`games.protocol.Env`): its states are the root's, its observation h's
        input, its legal moves and candidate weights the root's prior shaping.
      network: the three networks (e.g. a `nets.MuZeroNetwork`): `represent(params, obs
        float32[B, *obs_shape]) -> latent`, `dynamics(params, latent, action int32[B]) ->
        (latent, reward float32[B])`, `predict(params, latent) -> (logits float32[B, A],
        value float32[B])`.
      algorithm: the search's config (a `SearchAlgorithm`): `prior_shaping` and
        `candidate_threshold` shape the root's prior, `value_discount` the discount.
    """

    env: Any
    network: Any
    algorithm: Any

    interior_masked = False

    @property
    def num_actions(self) -> int:
        return self.env.num_actions

    def root(self, params: Any, key: jax.Array, states: Any
             ) -> tuple[mctx.RootFnOutput, jax.Array]:
        """(the root of the real `states`, its prior shaped and masked to the candidates,
        embedding the latent float32[B, H, W, L]; candidates bool[B, A])."""
        del key
        latent = self.network.represent(params, jax.vmap(self.env.observe)(states))
        logits, value = self.network.predict(params, latent)
        logits, allowed = shape_prior(self.env, self.algorithm, logits, states)
        return mctx.RootFnOutput(prior_logits=logits, value=value.astype(jnp.float32),
                                 embedding=latent), allowed

    def recurrent_fn(self, params: Any, key: jax.Array, action: jax.Array, latent: jax.Array
                     ) -> tuple[mctx.RecurrentFnOutput, jax.Array]:
        """mctx's `recurrent_fn` on latents: the children of `latent` by `action` int32[B]
        (g), evaluated (f)."""
        del key
        latent, reward = self.network.dynamics(params, latent, action)
        logits, value = self.network.predict(params, latent)
        discount = jnp.full(action.shape, -self.algorithm.value_discount, jnp.float32)
        out = mctx.RecurrentFnOutput(reward=reward.astype(jnp.float32), discount=discount,
                                     prior_logits=logits.astype(jnp.float32),
                                     value=value.astype(jnp.float32))
        return out, latent

    def legal_moves(self, states: Any) -> jax.Array:
        """bool[B, A]: the real states' legal moves."""
        return states.legal_action_mask

    def move_number(self, states: Any) -> jax.Array:
        """int32[B]: the plies played in each real state."""
        return jax.vmap(self.env.move_number)(states)
