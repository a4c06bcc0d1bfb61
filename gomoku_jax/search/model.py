"""What a search searches: a model, mctx's seam (a root and a `recurrent_fn`), and the loop
that runs a search over one.

Every search algorithm takes a model, as mctx's policies take `root` and `recurrent_fn`:

    out = algorithm.search_model(model, params, states, key, num_simulations)

A model is any object with these attributes (`Model`, a `typing.Protocol`):

- `num_actions: int`, A.
- `root(params, key, states) -> (mctx.RootFnOutput, allowed bool[B, A])`: the root of each
  board of the batch `states` (whatever the model starts from: the env model and a learned
  model both take the real game's states, leaves [B, ...]). `prior_logits` float32[B, A]
  with every action the search may not play at `MASKED`, `value` float32[B] for the side to
  move, `embedding` (leaves [B, ...]) what `recurrent_fn` is called on; `allowed` marks the
  root's candidates (at least one per board).
- `recurrent_fn(params, key, action int32[B], embedding) -> (mctx.RecurrentFnOutput,
  embedding)`: mctx's, unchanged. `reward` float32[B] is the mover's reward for `action`,
  `discount` float32[B] is negative when the side to move changes (two-player zero-sum:
  the child's value is the other player's) and 0 after the game ended (an absorbing node),
  `prior_logits` float32[B, A] (at `MASKED` where the child may not be searched: the
  selection functions never pick those, at any depth), `value` float32[B] for the child's
  side to move.
- `interior_masked: bool`: whether `recurrent_fn` masks illegal actions below the root
  (the env model: yes; a learned model, which does not know the rules inside the tree:
  no, and its interior nodes search every action).
- `legal_moves(states) -> bool[B, A]`: the legal moves at the root (PUCT's adaptive
  Dirichlet α counts them).
- `move_number(states) -> int32[B]`: the plies played at the root (the move temperature,
  Gumbel's `sample_plies`).

Everything the search carries between simulations lives in the `mctx.Tree`, whose
embeddings are the model's (their bytes count in `base.check_tree_memory`). The env model
(`env_model.EnvModel`: the real game stepped inside the tree) is one model; a learned
dynamics network (MuZero) is another. What each supports besides the search itself:
tree reuse between moves finds the position on the board among the tree's embeddings, so
it needs embeddings that are the game's states (the env model); leaf parallelism,
`loop="mctx"` and `stop_at_terminal` work on any model.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Protocol, runtime_checkable

import jax
import mctx

from gomoku_jax.search import tree_loop


@runtime_checkable
class Model(Protocol):
    """What a search algorithm searches (the module docstring gives each member's
    contract)."""

    num_actions: int
    interior_masked: bool

    def root(self, params: Any, key: jax.Array, states: Any
             ) -> tuple[mctx.RootFnOutput, jax.Array]: ...

    def recurrent_fn(self, params: Any, key: jax.Array, action: jax.Array, embedding: Any
                     ) -> tuple[mctx.RecurrentFnOutput, Any]: ...

    def legal_moves(self, states: Any) -> jax.Array: ...

    def move_number(self, states: Any) -> jax.Array: ...


def search_tree(model: Model, algorithm, params: Any, root: mctx.RootFnOutput, allowed: jax.Array,
        key: jax.Array, num_simulations: int, select: Callable,
        root_select: Optional[Callable] = None, extra_data: Any = None,
        tree: Optional[mctx.Tree] = None) -> mctx.Tree:
    """The search over `model` with `algorithm.loop` (`tree_loop.search`, or `mctx.search`
    for "mctx"): `select` picks the action below the root, and at the root too unless
    `root_select` is given; `allowed` bool[B, A] the root's candidates; `tree` a tree to
    continue from (`tree_loop.search`'s); `algorithm.leaves_per_step` and `virtual_loss` go
    to `tree_loop.search` (leaf parallelism), and `stop_at_terminal` and `solver`. Returns
    the tree
    (leaves [B, ...])."""
    kwargs = dict(root=root, recurrent_fn=model.recurrent_fn,
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
                            stop_at_terminal=algorithm.stop_at_terminal,
                            solver=algorithm.solver, **kwargs)
