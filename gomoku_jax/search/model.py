"""The search's model of the game: the real env, stepped inside the tree.

The tree's embeddings are the env states themselves (no observation planes), so a node
costs its state's bytes; `recurrent_fn` steps the env and evaluates the children:

- reward: the mover's reward for the move (nonzero when it ends the game);
- discount: 0 after the end (an absorbing node, value 0), else ∓`value_discount`: negative
  when the side to move changes (two-player zero-sum), positive when it does not;
- prior logits: the evaluator's, shaped and masked (`evaluate.shape_prior`), so that no
  illegal or hard-masked child is ever searched (`selection.py` reads the mask).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import mctx

from gomoku_jax.games.protocol import is_over, reward_of
from gomoku_jax.search import tree_loop
from gomoku_jax.search.prior import MASKED, evaluate, shape_prior


def root_output(env, evaluator, algorithm, params: Any, states: Any, key: jax.Array,
                root_mask: Optional[jax.Array] = None) -> tuple[mctx.RootFnOutput, jax.Array]:
    """(the root for mctx with its shaped, masked prior; candidates bool[B, A]).

    root_mask: bool[B, A] or None: where given, the root's candidates are also restricted to
    it (e.g. the moves that refute the opponent's forced win), except on a board where that
    would leave no candidate."""
    logits, value = evaluate(env, evaluator, algorithm.symmetry, params, states, key)
    logits, allowed = shape_prior(env, algorithm, logits, states)
    if root_mask is not None:
        kept = allowed & root_mask
        allowed = jnp.where(jnp.any(kept, axis=-1, keepdims=True), kept, allowed)
        logits = jnp.where(allowed, logits, MASKED)
    return mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states), allowed


def recurrent_fn(env, evaluator, algorithm):
    """mctx's `recurrent_fn(params, key, action [B], states) -> (RecurrentFnOutput, children)`
    over the real env."""

    def fn(params, key, action, states):
        children = jax.vmap(env.step)(states, action)
        logits, value = evaluate(env, evaluator, algorithm.symmetry, params, children, key)
        logits, _ = shape_prior(env, algorithm, logits, children)
        over = is_over(children)
        sign = jnp.where(children.current_player == states.current_player, 1.0, -1.0)
        out = mctx.RecurrentFnOutput(
            reward=reward_of(children, states.current_player).astype(jnp.float32),
            discount=jnp.where(over, 0.0, sign * algorithm.value_discount).astype(jnp.float32),
            prior_logits=logits,
            value=jnp.where(over, 0.0, value).astype(jnp.float32))
        return out, children

    return fn


def run(env, evaluator, algorithm, params: Any, root: mctx.RootFnOutput, allowed: jax.Array,
        key: jax.Array, num_simulations: int, select: Callable,
        root_select: Optional[Callable] = None, extra_data: Any = None,
        tree: Optional[mctx.Tree] = None) -> mctx.Tree:
    """The search over the env model with `algorithm.loop` (`tree_loop.search`, or
    `mctx.search` for "mctx"): `select` picks the action below the root, and at the root too
    unless `root_select` is given; `allowed` bool[B, A] the root's candidates; `tree` a tree to
    continue from (`tree_loop.search`'s); `algorithm.leaves_per_step` and `virtual_loss` go
    to `tree_loop.search` (leaf parallelism), and `stop_at_terminal`. Returns the tree
    (leaves [B, ...])."""
    kwargs = dict(root=root, recurrent_fn=recurrent_fn(env, evaluator, algorithm),
                  root_action_selection_fn=root_select or functools.partial(select, depth=0),
                  interior_action_selection_fn=select, num_simulations=num_simulations,
                  invalid_actions=~allowed, extra_data=extra_data)
    if algorithm.loop == "mctx":
        if tree is not None:
            raise ValueError("loop='mctx' cannot continue a search from a tree (mctx issue "
                             "#51): use loop='gomoku_jax' for tree reuse")
        if algorithm.leaves_per_step != 1:
            raise ValueError("loop='mctx' evaluates one leaf per simulation: leaves_per_step="
                             f"{algorithm.leaves_per_step} needs loop='gomoku_jax'")
        return mctx.search(params, key, **kwargs)
    return tree_loop.search(params, key, tree=tree, leaves_per_step=algorithm.leaves_per_step,
                       virtual_loss=algorithm.virtual_loss,
                       stop_at_terminal=algorithm.stop_at_terminal, **kwargs)
