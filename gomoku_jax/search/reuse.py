"""Subtree reuse between moves: find the node of the last search's tree that holds the
position now on the board, and make its subtree the next search's tree.

    node = jax.vmap(find_node)(tree, states)            # -1 where the position is absent
    tree = jax.vmap(reroot, in_axes=(0, 0, None))(tree, node, capacity - S)
    out = algorithm.search(env, evaluator, params, states, key, S, tree=tree)

Functions on one board's tree (leaves [N, ...]: vmap them), all jittable, O(N·A) per
move (never per simulation). A tree's nodes are used from index 0 on, parents before
children, each with `node_visits >= 1`; unused nodes are `tree_loop.empty_tree`'s.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import mctx

from gomoku_jax.search import tree_loop

Tree = mctx.Tree


def _leaf_equal(stored: jax.Array, state: jax.Array) -> jax.Array:
    """bool[N]: stored[i] == state over all of its entries (typed keys by their data)."""
    if jax.dtypes.issubdtype(stored.dtype, jax.dtypes.prng_key):
        stored, state = jax.random.key_data(stored), jax.random.key_data(state)
    return jnp.all((stored == state).reshape(stored.shape[0], -1), axis=-1)


def find_node(tree: mctx.Tree, state: Any) -> jax.Array:
    """int32[]: the used node whose embedding (the env state) equals `state` in every leaf,
    the most visited when several do (a transposition), or -1 when none does. Any game:
    only the state's leaves are compared. Two plies after a search the position is one of
    its root's grandchildren, when the search looked at the two moves played.

    Args:
      tree: one board's tree (leaves [N, ...]); state: one env state (leaves [...]).
    """
    match = tree.node_visits > 0
    for stored, leaf in zip(jax.tree.leaves(tree.embeddings), jax.tree.leaves(state)):
        match = match & _leaf_equal(stored, leaf)
    best = jnp.argmax(jnp.where(match, tree.node_visits, -1)).astype(jnp.int32)
    return jnp.where(jnp.any(match), best, -1)


def subtree_mask(tree: mctx.Tree, node: jax.Array) -> jax.Array:
    """bool[N]: the used nodes in the subtree under `node` (itself included; none when
    node < 0). Pointer jumping over the parent links: log2(N) rounds of O(N)."""
    num_nodes = tree.parents.shape[0]

    def jump(_, carry):
        # inside: some ancestor at distance < 2^k is `node`; ancestor: the 2^k-th one.
        inside, ancestor = carry
        safe = jnp.maximum(ancestor, 0)
        return (inside | ((ancestor >= 0) & inside[safe]),
                jnp.where(ancestor >= 0, ancestor[safe], -1))

    # A loop, not unrolled rounds: XLA's CPU loop emitters fuse the unrolled rounds into
    # code that doubles with each round (minutes to compile at N = 8193).
    inside, _ = jax.lax.fori_loop(
        0, max(num_nodes - 1, 1).bit_length(), jump,
        ((jnp.arange(num_nodes) == node) & (node >= 0), tree.parents))
    return inside & (tree.node_visits > 0)


def reroot(tree: mctx.Tree, node: jax.Array, max_nodes: int) -> mctx.Tree:
    """The subtree under `node` as a tree of its own, the same size N: its nodes first, in
    their old order (so parents still precede children; `node` becomes the root, 0), with
    all their statistics, states, priors and edges; the other nodes unused. An empty tree
    (every node unused: the next search starts fresh) when node < 0 or the subtree has more
    than `max_nodes` nodes (pass N - S: the search needs room for S new ones).

    Args:
      tree: one board's tree (leaves [N, ...]); node: int32[]; max_nodes: static int.
    Returns:
      the rerooted tree (root_invalid_actions and extra_data unchanged: the search sets
      them).
    """
    num_nodes = tree.node_visits.shape[0]
    inside = subtree_mask(tree, node)
    count = jnp.sum(inside)
    inside = inside & (count <= max_nodes)
    count = jnp.sum(inside)
    order = jnp.nonzero(inside, size=num_nodes, fill_value=0)[0]  # new -> old index
    new_index = jnp.cumsum(inside) - 1  # old -> new, for the nodes inside
    valid = jnp.arange(num_nodes) < count
    is_root = jnp.arange(num_nodes) == 0
    empty = jax.tree.map(lambda x: x[0], tree_loop.empty_tree(
        jax.tree.map(lambda x: x[None, 0], tree.embeddings), num_nodes, tree.num_actions,
        tree.node_values.dtype))

    def take(x, blank, ordered=False):
        kept = x if ordered else x[order]
        return jnp.where(valid.reshape(valid.shape + (1,) * (kept.ndim - 1)), kept, blank)

    parents = jnp.where(is_root, Tree.NO_PARENT, new_index[jnp.maximum(tree.parents[order], 0)])
    children = tree.children_index[order]
    children = jnp.where(children >= 0, new_index[jnp.maximum(children, 0)], Tree.UNVISITED)
    return tree.replace(
        node_visits=take(tree.node_visits, empty.node_visits),
        raw_values=take(tree.raw_values, empty.raw_values),
        node_values=take(tree.node_values, empty.node_values),
        parents=take(parents, empty.parents, True),
        action_from_parent=take(jnp.where(is_root, Tree.NO_PARENT,
                                          tree.action_from_parent[order]),
                                empty.action_from_parent, True),
        children_index=take(children, empty.children_index, True),
        children_prior_logits=take(tree.children_prior_logits, empty.children_prior_logits),
        children_visits=take(tree.children_visits, empty.children_visits),
        children_rewards=take(tree.children_rewards, empty.children_rewards),
        children_discounts=take(tree.children_discounts, empty.children_discounts),
        children_values=take(tree.children_values, empty.children_values),
        embeddings=jax.tree.map(take, tree.embeddings, empty.embeddings))


def continue_from(tree: mctx.Tree, states: Any, num_simulations: int) -> mctx.Tree:
    """The tree for the next search from `states` (a batch): each board's subtree under
    the node holding its position, kept when it leaves room for `num_simulations` new nodes,
    else empty (that board starts fresh). Leaves [B, N, ...] in and out."""
    capacity = tree.node_visits.shape[1]
    node = jax.vmap(find_node)(tree, states)
    return jax.vmap(reroot, in_axes=(0, 0, None))(tree, node, capacity - num_simulations)
