"""Our simulation loop on mctx's data structures: a drop-in for `mctx.search` whose every
simulation costs O(depth·B + B·A), and which can continue from a tree it is given.

    tree = tree_loop.search(params, key, root=root, recurrent_fn=fn,
                            root_action_selection_fn=..., interior_action_selection_fn=...,
                            num_simulations=S, invalid_actions=mask, extra_data=...,
                            tree=None)

Same arguments, same `mctx.Tree`, the same selection and Q-transform functions (mctx's or
ours, `(key, tree, node, depth) -> action` on one board's tree), the same key splitting and
the same simulate / expand / backward semantics as `mctx.search`: with `tree=None` the result
is mctx's tree (tests/search/test_tree_loop.py). One option departs from mctx:
`stop_at_terminal` (the search algorithms turn it on) ends a descent at a game-over node
instead of growing a chain under it. What differs otherwise is how each step touches memory:

- **backward** (`path_backward`): mctx vmaps a per-board `while_loop` that carries the whole
  tree; under vmap the batched predicate turns every step into a select over the whole
  carried [B, N, A] arrays (O(d·B·N·A) per simulation). Here the loop runs over the batch
  with one scalar predicate ("some board is not at the root yet") and gathers / scatters B
  entries per step, in place: O(d·B).
- **selection**: the root step is peeled off (mctx's switching wrapper is a `lax.cond` that,
  vmapped, computes both the root and the interior selection at every depth), and the
  descent is a batched loop whose carry is B scalars; the tree is read, never carried.
- **expand**: gathers the parents' states and scatters one node per board (O(B·A)).

**Capacity.** The tree has `capacity` nodes (the given tree's N, else S + 1) and a board's
nodes are used from index 0 on, each expanded node with `node_visits >= 1`: the next free
node of a board is the number of its nodes with a visit. A search of S simulations on a
board whose tree uses U nodes needs U + S <= capacity: a board whose given tree is empty
(root unvisited) or too big for S more nodes starts fresh (its tree is reset); the others
continue with their statistics (subtree reuse, `search/reuse.py`).

**Leaf parallelism** (`leaves_per_step` W > 1, for play at batch 1): each of the S / W
steps descends W times per board, each descent on the tree with the *virtual losses* of the
step's earlier descents applied (`apply_virtual_loss`: along the path, `virtual_loss` more
visits on every node and edge, and each edge's Q moved toward a loss, -1, for the player
who chose it), so the W descents spread over different leaves; the W leaves of all boards
are then evaluated by ONE `recurrent_fn` call on B·W rows, written at the next free nodes
and backed up one after the other (`path_backward`). The virtual losses live in a scratch
copy of the statistics that is dropped after the descents: the tree's statistics never
hold them. A descent that ends on the same (parent, action) edge as an earlier descent of
its step (a collision) is dropped: no node, no backup, so the root gets 1 + (backed-up
descents) <= 1 + S visits and the tree may use fewer than S + 1 nodes. S must be a
multiple of W. W = 1 is the loop above, unchanged.

**Proofs** (`solver`, MCTS-Solver): an absorbing edge (discount 0) holds an exact result in
its reward. The game's end makes one; so does a model that proves a child (the env model's
threat proofs at expanded leaves, `env_model.py`); and `path_backward` makes the edge into
a node proven from its children. Descents stop at such edges (`stop_at_terminal`) and back
the exact result up without re-expanding, so a proven subtree is never searched again.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import mctx

from gomoku_jax import configs
from gomoku_jax.search.prior import MASKED

Tree = mctx.Tree


def empty_tree(embedding: Any, capacity: int, num_actions: int,
               dtype=jnp.float32) -> mctx.Tree:
    """A tree of `capacity` unused nodes for a batch of boards: every node unvisited
    (`node_visits` 0), no parents or children (-1), zero statistics and embeddings.

    Args:
      embedding: a batch of root embeddings (leaves [B, ...]), for the shapes and dtypes.
      capacity: N, the nodes per board. num_actions: A. dtype: of values and logits.
    Returns:
      mctx.Tree with leaves [B, N, ...]; root_invalid_actions bool[B, A] all False;
      extra_data None.
    """
    batch = jax.tree.leaves(embedding)[0].shape[0]
    nodes, edges = (batch, capacity), (batch, capacity, num_actions)
    return Tree(
        node_visits=jnp.zeros(nodes, jnp.int32), raw_values=jnp.zeros(nodes, dtype),
        node_values=jnp.zeros(nodes, dtype),
        parents=jnp.full(nodes, Tree.NO_PARENT, jnp.int32),
        action_from_parent=jnp.full(nodes, Tree.NO_PARENT, jnp.int32),
        children_index=jnp.full(edges, Tree.UNVISITED, jnp.int32),
        children_prior_logits=jnp.zeros(edges, dtype), children_visits=jnp.zeros(edges, jnp.int32),
        children_rewards=jnp.zeros(edges, dtype), children_discounts=jnp.zeros(edges, dtype),
        children_values=jnp.zeros(edges, dtype),
        embeddings=jax.tree.map(lambda x: jnp.zeros((batch, capacity) + x.shape[1:], x.dtype),
                                embedding),
        root_invalid_actions=jnp.zeros((batch, num_actions), bool), extra_data=None)


def used_nodes(tree: mctx.Tree) -> jax.Array:
    """int32[B]: the nodes each board's tree uses (expanded nodes have a visit)."""
    return jnp.sum(tree.node_visits > 0, axis=-1).astype(jnp.int32)


def kept(tree: mctx.Tree, num_simulations: int) -> jax.Array:
    """bool[B]: the boards whose tree a search of `num_simulations` continues (a visited
    root and room for the new nodes); the others start fresh."""
    return ((tree.node_visits[:, Tree.ROOT_INDEX] > 0)
            & (used_nodes(tree) + num_simulations <= tree.node_visits.shape[1]))


def _rows_where(keep: jax.Array, new: Any, old: Any) -> Any:
    """Per board (leading axis), `new` where keep[b] else `old`, leaf by leaf."""
    return jax.tree.map(
        lambda n, o: jnp.where(keep.reshape(keep.shape + (1,) * (n.ndim - 1)), n, o), new, old)


def set_root(tree: Optional[mctx.Tree], root: mctx.RootFnOutput, num_simulations: int,
             invalid_actions: jax.Array, extra_data: Any) -> tuple[mctx.Tree, jax.Array]:
    """(the tree ready for `num_simulations` more simulations, its used nodes int32[B]).

    A board whose tree has a visited root and room for the simulations keeps its tree and
    statistics; its root gets `root.prior_logits` (so root noise is drawn afresh) and
    `root.embedding`. Any other board starts fresh, as `mctx.search` does: an empty tree
    whose root has one visit, `root.value` and `root.prior_logits`. `tree` None: every board
    starts fresh in a tree of S + 1 nodes."""
    batch, num_actions = root.prior_logits.shape
    rows = jnp.arange(batch)
    capacity = num_simulations + 1 if tree is None else tree.node_visits.shape[1]
    dtype = root.value.dtype if tree is None else tree.node_values.dtype
    fresh = empty_tree(root.embedding, capacity, num_actions, dtype)
    fresh = fresh.replace(
        node_visits=fresh.node_visits.at[:, Tree.ROOT_INDEX].set(1),
        raw_values=fresh.raw_values.at[:, Tree.ROOT_INDEX].set(root.value),
        node_values=fresh.node_values.at[:, Tree.ROOT_INDEX].set(root.value))
    if tree is None:
        tree, used = fresh, jnp.ones((batch,), jnp.int32)
    else:
        keep = kept(tree, num_simulations)
        used = jnp.where(keep, used_nodes(tree), 1)
        tree = _rows_where(keep, tree.replace(root_invalid_actions=fresh.root_invalid_actions,
                                             extra_data=None), fresh)
    tree = tree.replace(
        children_prior_logits=tree.children_prior_logits.at[rows, Tree.ROOT_INDEX].set(
            root.prior_logits.astype(tree.children_prior_logits.dtype)),
        embeddings=jax.tree.map(lambda t, e: t.at[rows, Tree.ROOT_INDEX].set(e),
                                tree.embeddings, root.embedding),
        root_invalid_actions=invalid_actions, extra_data=extra_data)
    return tree, used


def simulate(keys: jax.Array, tree: mctx.Tree, root_select: Callable,
             interior_select: Callable, max_depth: int, stop_at_terminal: bool = False
             ) -> tuple[jax.Array, jax.Array]:
    """Descend every board from the root until an unvisited action or `max_depth` (or, with
    `stop_at_terminal`, a visited child whose edge has discount 0: the game ended there).

    mctx's `simulate` for the batch: each board splits its key at each step and calls
    `root_select(key, tree, node)` at the root, `interior_select(key, tree, node, depth)`
    below (both on one board's tree, vmapped here). The loop runs while some board is still
    descending; its carry is B scalars of each kind.

    Args:
      keys: [B] keys, one per board. max_depth: edges from the root to a leaf, at most.
      stop_at_terminal: stop at a game-over node (static). mctx descends through it (all its
        children are masked, so the first is taken) and expands a child under it: in a
        decided line every visit makes the chain one node deeper, and a batched descent
        waits for its deepest board. Stopped there, the search re-expands the node itself
        (as at `max_depth`: the same state, reward and value 0) and backs its reward up.
    Returns:
      (parent int32[B], action int32[B]): the node reached and the action to expand there
      (already visited when the depth cut-off or a game-over node stopped the descent).
    """
    batch = keys.shape[0]
    rows = jnp.arange(batch)
    split = jax.vmap(jax.random.split)(keys)
    keys, k_select = split[:, 0], split[:, 1]
    node = jnp.full((batch,), Tree.ROOT_INDEX, jnp.int32)
    action = jax.vmap(root_select)(k_select, tree, node).astype(jnp.int32)
    child = tree.children_index[rows, node, action]
    depth = jnp.ones((batch,), jnp.int32)

    def descends(node, action, child, depth):
        ended = stop_at_terminal & (tree.children_discounts[rows, node, action] == 0)
        return (child != Tree.UNVISITED) & (depth < max_depth) & ~ended

    going = descends(node, action, child, depth)

    def step(carry):
        keys, node, action, child, depth, going = carry
        split = jax.vmap(jax.random.split)(keys)
        new_node = jnp.where(going, child, node)
        new_action = jax.vmap(interior_select)(split[:, 1], tree, new_node,
                                               depth).astype(jnp.int32)
        new_child = tree.children_index[rows, new_node, new_action]
        new_depth = depth + 1
        carry = (split[:, 0], new_node, new_action, new_child, new_depth,
                 descends(new_node, new_action, new_child, new_depth))
        old = (keys, node, action, child, depth, going)
        return tuple(jnp.where(going, n, o) for n, o in zip(carry, old))

    carry = (keys, node, action, child, depth, going)
    _, node, action, _, _, _ = jax.lax.while_loop(lambda c: jnp.any(c[-1]), step, carry)
    return node, action


def expand(params: Any, key: jax.Array, tree: mctx.Tree, recurrent_fn: Callable,
           parent: jax.Array, action: jax.Array, child: jax.Array,
           write: Optional[jax.Array] = None) -> mctx.Tree:
    """Evaluate `recurrent_fn` on the parents' states and the actions (the whole batch in
    one call, as mctx) and write node `child` of every board: its prior logits, values,
    one more visit, state, parent and the edge's reward and discount (mctx's `expand`);
    `expand_many` with one leaf per board.

    Args:
      parent, action, child: int32[B]; `child` may be an existing node (max_depth).
      write: bool[B] or None (every board): the boards whose node is written; the others
        are evaluated and left as they are.
    """
    write = jnp.ones(parent.shape, bool) if write is None else write
    return expand_many(params, key, tree, recurrent_fn, parent[None], action[None],
                       child[None], write[None])


def path_backward(tree: mctx.Tree, leaf_index: jax.Array, solver: bool = False) -> mctx.Tree:
    """mctx's backward pass (the same updates, the same result), touching only the path.

    From each board's leaf up to the root: the leaf value is discounted back
    (`v <- r(parent, a) + discount(parent, a) * v`), each parent's node value becomes the
    running mean `(value * visits + v) / (visits + 1)` and its visit count grows by one, and
    the edge (parent, a) gets the child's (already updated) node value and one more visit.

    The loop is written over the batch, not vmapped: its predicate "some board is not at
    the root yet" is one scalar, so a step gathers and scatters B entries in place
    (finished boards write out of range, dropped). The four written arrays ride in the
    loop's carry, but XLA updates loop-carried buffers in place, so a step touches O(B)
    entries. mctx vmaps a per-board while_loop, and vmap turns the batched predicate into
    a copy and select of the whole carried arrays every step: O(B * N * A).

    With `solver` (MCTS-Solver, Winands et al. 2008) the proofs go up first
    (`prove_path`), so that the values backed up from a proven edge are exact.

    Args:
      tree: an mctx.Tree with batch B, N nodes, A actions.
      leaf_index: int[B], the node to back up from on each board (the root: no change).
      solver: back proofs up too (static).
    Returns:
      the tree with node_values, node_visits, children_values, children_visits updated
      (with `solver`, children_rewards and children_discounts of newly proven edges too).
    """
    if solver:
        tree = prove_path(tree, leaf_index)
    batch, num_nodes = tree.node_values.shape
    rows = jnp.arange(batch)
    root = Tree.ROOT_INDEX

    def step(carry):
        node, value, node_values, node_visits, children_values, children_visits = carry
        live = node != root
        parent = jnp.where(live, tree.parents[rows, node], root)
        action = jnp.where(live, tree.action_from_parent[rows, node], 0)
        value = jnp.where(live, tree.children_rewards[rows, parent, action]
                          + tree.children_discounts[rows, parent, action] * value, value)
        visits = node_visits[rows, parent]
        parent_value = (node_values[rows, parent] * visits + value) / (visits + 1.0)
        child_value = node_values[rows, node]
        edge_visits = children_visits[rows, parent, action] + 1
        write = jnp.where(live, parent, num_nodes)  # out of range: dropped
        return (parent, value,
                node_values.at[rows, write].set(parent_value, mode="drop"),
                node_visits.at[rows, write].set(visits + 1, mode="drop"),
                children_values.at[rows, write, action].set(child_value, mode="drop"),
                children_visits.at[rows, write, action].set(edge_visits, mode="drop"))

    leaf = leaf_index.astype(jnp.int32)
    carry = (leaf, tree.node_values[rows, leaf], tree.node_values, tree.node_visits,
             tree.children_values, tree.children_visits)
    carry = jax.lax.while_loop(lambda c: jnp.any(c[0] != root), step, carry)
    return tree.replace(node_values=carry[2], node_visits=carry[3], children_values=carry[4],
                        children_visits=carry[5])


def prove_path(tree: mctx.Tree, leaf_index: jax.Array) -> mctx.Tree:
    """MCTS-Solver's proof step: from each board's leaf, while the edge into the current
    node is absorbing (the game ended there, a leaf proof, or a proof made below), its
    parent is checked for a proof (`node_proof`: a child won for the parent's mover, or
    every allowed child settled); a proven parent's own edge becomes absorbing, discount 0
    and the exact result (for the grandparent's mover) as its reward, and the walk goes on
    up. A proof can only be new where the edge below just settled, so the walk usually
    stops at once (O(B·A) per proven node, nothing else). The root has no edge: its proof
    is read from its children (`selection.proven_children`).

    Args:
      leaf_index: int[B], the node each board's backup starts from.
    Returns:
      the tree with children_rewards and children_discounts of newly proven edges set.
    """
    batch, num_nodes = tree.node_values.shape
    rows = jnp.arange(batch)
    root = Tree.ROOT_INDEX

    def settled(node, discounts):  # bool[B]: the edge into `node` is absorbing
        parent = jnp.where(node != root, tree.parents[rows, node], root)
        action = jnp.where(node != root, tree.action_from_parent[rows, node], 0)
        return (node != root) & (discounts[rows, parent, action] == 0)

    def step(carry):
        node, going, rewards, discounts = carry
        parent = jnp.where(going, tree.parents[rows, node], root)
        proven, exact = node_proof(tree.children_index[rows, parent],
                                   tree.children_prior_logits[rows, parent],
                                   rewards[rows, parent], discounts[rows, parent])
        up = going & proven & (parent != root)
        grand = jnp.where(up, tree.parents[rows, parent], root)
        action = jnp.where(up, tree.action_from_parent[rows, parent], 0)
        sign = jnp.sign(discounts[rows, grand, action])
        new = up & (sign != 0)  # (an edge proven by an earlier backup stays as it is)
        edge = jnp.where(new, grand, num_nodes)  # out of range: dropped
        rewards = rewards.at[rows, edge, action].set((sign * exact).astype(rewards.dtype),
                                                     mode="drop")
        discounts = discounts.at[rows, edge, action].set(0.0, mode="drop")
        return parent, new, rewards, discounts

    leaf = leaf_index.astype(jnp.int32)
    carry = (leaf, settled(leaf, tree.children_discounts), tree.children_rewards,
             tree.children_discounts)
    carry = jax.lax.while_loop(lambda c: jnp.any(c[1]), step, carry)
    return tree.replace(children_rewards=carry[2], children_discounts=carry[3])


def absorbing_children(children_index: jax.Array, children_discounts: jax.Array
                       ) -> jax.Array:
    """bool[..., A]: the expanded children whose edge is absorbing (discount 0): the game
    ended there, or (MCTS-Solver) the child is proven; the edge's reward is then its exact
    value for the parent's mover. Takes the node's rows of the tree's arrays ([..., A])."""
    return (children_index != Tree.UNVISITED) & (children_discounts == 0)


def node_proof(children_index: jax.Array, prior_logits: jax.Array, rewards: jax.Array,
               discounts: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(proven bool[...], exact value for the node's mover float32[...]) of nodes from their
    children's rows ([..., A]): proven by an absorbing child that wins (+1), or by absorbing
    edges on every allowed child (prior logit above `MASKED`), then exactly the best of
    their rewards (-1: every move loses; 0: the best is a draw)."""
    allowed = prior_logits > MASKED
    absorbing = absorbing_children(children_index, discounts) & allowed
    wins = jnp.any(absorbing & (rewards >= 1.0), axis=-1)
    settled = jnp.all(absorbing | ~allowed, axis=-1) & jnp.any(allowed, axis=-1)
    best = jnp.max(jnp.where(absorbing, rewards, -jnp.inf), axis=-1)
    return wins | settled, jnp.where(wins, 1.0, jnp.where(settled, best, 0.0))


def apply_virtual_loss(tree: mctx.Tree, parent: jax.Array, action: jax.Array,
                       virtual_loss: int) -> mctx.Tree:
    """The tree with a virtual loss on each board's path from the root to the edge
    (parent, action) (the leaf edge `simulate` returned).

    On every edge (n, a) of the path: `virtual_loss` more visits on the edge and on node n
    (so a node's child visits still sum to its visits - 1), and the edge's Q, as selection
    reads it (`qvalues` = children_rewards + children_discounts * children_values), moved to
    the mean of its n visits and `virtual_loss` losses (-1) for n's mover: the edge's
    reward is set to `Q' - discount * value`. Writing the reward (not the value) makes the
    loss felt on an unvisited edge (discount still 0) and on an edge that ended the game
    (discount 0) alike. node_values, raw_values and children_values are untouched.

    Only for the descents of one step: the result is scratch, never backed up into.

    Args:
      parent, action: int32[B], the leaf edge of each board. virtual_loss: V >= 0 (static).
    Returns:
      the tree with node_visits, children_visits and children_rewards changed on the paths.
    """
    if virtual_loss == 0:
        return tree
    batch, num_nodes = tree.node_visits.shape
    rows = jnp.arange(batch)
    root = Tree.ROOT_INDEX
    loss = jnp.asarray(-1.0, tree.children_rewards.dtype)

    def step(carry):
        node, action, live, node_visits, children_visits, children_rewards = carry
        n = children_visits[rows, node, action]
        reward = children_rewards[rows, node, action]
        discount = tree.children_discounts[rows, node, action]
        value = tree.children_values[rows, node, action]
        q = reward + discount * value
        q_loss = (q * n + loss * virtual_loss) / (n + virtual_loss)
        write = jnp.where(live, node, num_nodes)  # out of range: dropped
        node_visits = node_visits.at[rows, write].add(virtual_loss, mode="drop")
        children_visits = children_visits.at[rows, write, action].add(virtual_loss,
                                                                      mode="drop")
        children_rewards = children_rewards.at[rows, write, action].set(
            (q_loss - discount * value).astype(children_rewards.dtype), mode="drop")
        up = live & (node != root)
        return (jnp.where(up, tree.parents[rows, node], root),
                jnp.where(up, tree.action_from_parent[rows, node], 0), up,
                node_visits, children_visits, children_rewards)

    carry = (parent.astype(jnp.int32), action.astype(jnp.int32),
             jnp.ones((batch,), bool), tree.node_visits, tree.children_visits,
             tree.children_rewards)
    carry = jax.lax.while_loop(lambda c: jnp.any(c[2]), step, carry)
    return tree.replace(node_visits=carry[3], children_visits=carry[4],
                        children_rewards=carry[5])


def first_of_edge(parent: jax.Array, action: jax.Array) -> jax.Array:
    """bool[W, B]: descent j of board b is the first of the step to reach its edge
    (parent[j, b], action[j, b]); the later ones are collisions."""
    same = (parent[:, None] == parent[None, :]) & (action[:, None] == action[None, :])
    earlier = jnp.tril(jnp.ones(parent.shape[:1] * 2, bool), k=-1)  # [j, i]: i < j
    return ~jnp.any(same & earlier[:, :, None], axis=1)


def expand_many(params: Any, key: jax.Array, tree: mctx.Tree, recurrent_fn: Callable,
                parent: jax.Array, action: jax.Array, child: jax.Array,
                write: jax.Array) -> mctx.Tree:
    """`expand` of W leaves per board with one `recurrent_fn` call on W·B rows (row
    j·B + b is descent j of board b): every row is evaluated, only the rows with `write`
    are written (distinct edges, so distinct children).

    Args:
      parent, action, child: int32[W, B]; write: bool[W, B].
    """
    width, batch = parent.shape
    rows = jnp.broadcast_to(jnp.arange(batch), (width, batch)).reshape(-1)
    parent, action = parent.reshape(-1), action.reshape(-1)
    child = jnp.where(write, child, tree.node_visits.shape[1]).reshape(-1)  # dropped
    edge_parent = jnp.where(write.reshape(-1), parent, tree.node_visits.shape[1])
    embedding = jax.tree.map(lambda x: x[rows, parent], tree.embeddings)
    out, embedding = recurrent_fn(params, key, action, embedding)

    def node_set(x, v):
        return x.at[rows, child].set(v.astype(x.dtype), mode="drop")

    def edge_set(x, v):
        return x.at[rows, edge_parent, action].set(v.astype(x.dtype), mode="drop")

    return tree.replace(
        children_prior_logits=node_set(tree.children_prior_logits, out.prior_logits),
        raw_values=node_set(tree.raw_values, out.value),
        node_values=node_set(tree.node_values, out.value),
        node_visits=tree.node_visits.at[rows, child].add(1, mode="drop"),
        embeddings=jax.tree.map(node_set, tree.embeddings, embedding),
        children_index=edge_set(tree.children_index, child),
        children_rewards=edge_set(tree.children_rewards, out.reward),
        children_discounts=edge_set(tree.children_discounts, out.discount),
        parents=node_set(tree.parents, parent),
        action_from_parent=node_set(tree.action_from_parent, action))


def _settled(tree: mctx.Tree, parent: jax.Array, action: jax.Array) -> jax.Array:
    """bool[...]: the edges (parent, action) (int32[...] over the batch's last axis) that
    lead to an expanded child and are absorbing: with the solver a descent that ends there
    backs the edge's exact reward up again and re-expands nothing."""
    rows = jnp.arange(parent.shape[-1])
    return absorbing_children(tree.children_index[rows, parent, action],
                              tree.children_discounts[rows, parent, action])


def _parallel_body(params: Any, recurrent_fn: Callable, root_select: Callable,
                   interior_select: Callable, max_depth: int, width: int,
                   virtual_loss: int, stop_at_terminal: bool, solver: bool) -> Callable:
    """The loop body of one leaf-parallel step: (step, (key, tree, next free node int32[B]))
    -> the same, with up to W new nodes per board."""

    def body(_, carry):
        key, tree, free = carry
        batch = free.shape[0]
        rows = jnp.arange(batch)
        key, k_simulate, k_expand = jax.random.split(key, 3)
        keys = jax.random.split(k_simulate, width * batch).reshape(width, batch)

        def descend(j, c):
            scratch, parents, actions = c
            parent, action = simulate(keys[j], scratch, root_select, interior_select,
                                      max_depth, stop_at_terminal)
            scratch = apply_virtual_loss(scratch, parent, action, virtual_loss)
            return scratch, parents.at[j].set(parent), actions.at[j].set(action)

        empty = jnp.zeros((width, batch), jnp.int32)
        _, parent, action = jax.lax.fori_loop(0, width, descend, (tree, empty, empty))
        first = first_of_edge(parent, action)
        existing = tree.children_index[rows[None], parent, action]
        new = first & (existing == Tree.UNVISITED)
        child = jnp.where(new, free + jnp.cumsum(new, axis=0) - 1, existing)
        write = first & ~_settled(tree, parent, action) if solver else first
        tree = expand_many(params, k_expand, tree, recurrent_fn, parent, action, child, write)
        leaf = jnp.where(first, child, Tree.ROOT_INDEX)  # the root: no backup
        tree = jax.lax.fori_loop(0, width, lambda j, t: path_backward(t, leaf[j], solver),
                                 tree)
        return key, tree, free + jnp.sum(new, axis=0).astype(jnp.int32)

    return body


def search(params: Any, rng_key: jax.Array, *, root: mctx.RootFnOutput, recurrent_fn: Callable,
           root_action_selection_fn: Callable, interior_action_selection_fn: Callable,
           num_simulations: int, max_depth: Optional[int] = None,
           invalid_actions: Optional[jax.Array] = None, extra_data: Any = None,
           tree: Optional[mctx.Tree] = None, loop_fn: Any = None, leaves_per_step: int = 1,
           virtual_loss: int = 1, stop_at_terminal: bool = False,
           solver: bool = False) -> mctx.Tree:
    """`mctx.search` with a path-only backward, continuing from `tree` where it can.

    Args (as `mctx.search`'s, plus `tree`):
      root: RootFnOutput (prior_logits [B, A], value [B], embedding leaves [B, ...]).
      recurrent_fn: (params, key, action int32[B], embedding) -> (RecurrentFnOutput, embedding).
      root_action_selection_fn: (key, tree, node) -> action, on one board's tree.
      interior_action_selection_fn: (key, tree, node, depth) -> action, on one board's tree.
      num_simulations: S (static). max_depth: default capacity - 1 (mctx: S).
      invalid_actions: [B, A], 1/True = invalid at the root (default none).
      tree: None (a fresh tree of S + 1 nodes, exactly mctx's) or a tree of N >= S + 1
        nodes whose root is `root`'s state on the boards where it is visited; those boards
        keep their statistics when U + S <= N (U their used nodes), the others start fresh
        (see the module docstring). Its root's prior becomes `root.prior_logits`.
      loop_fn: accepted for mctx's signature (its policies pass it) and ignored: the loop
        is a `lax.fori_loop`.
      leaves_per_step: W (static), the leaves evaluated per board by one `recurrent_fn`
        call (leaf parallelism, see the module docstring); 1: the loop as `mctx.search`.
      virtual_loss: V >= 0 (static), the virtual visits (each a loss) a descent puts on its
        path for the step's later descents (`apply_virtual_loss`); 0: none (all descents
        of a step see the same tree, for comparison). Unused when W = 1.
      stop_at_terminal: a descent stops at a visited game-over node (discount 0 on its
        edge) and backs its reward up again, instead of expanding a node under it as mctx
        does (`simulate`); False: mctx's semantics. Either way a new node takes the next
        free index, so the used nodes stay contiguous (mctx leaves a hole at a max_depth
        stop).
      solver: MCTS-Solver (static; needs `stop_at_terminal`): proofs are backed up
        (`path_backward`), and a descent that stops at an absorbing edge backs its exact
        reward up without evaluating anything. The selection functions read the proofs
        (`selection.py`, their `solver` option).
    Returns:
      mctx.Tree (leaves [B, N, ...]); a fresh search's nodes are its simulations in order
      (with W > 1: in the order of the steps, and of the descents within a step).
    Raises:
      ValueError: a given tree with fewer than S + 1 nodes; W < 1, S not a multiple of W,
        V < 0, or `solver` without `stop_at_terminal`.
    """
    del loop_fn
    leaves_per_step = configs.check_int("leaves_per_step", leaves_per_step, 1)
    if num_simulations % leaves_per_step:
        raise ValueError(f"num_simulations ({num_simulations}) must be a multiple of "
                         f"leaves_per_step ({leaves_per_step}): the search runs "
                         f"num_simulations / leaves_per_step steps of leaves_per_step leaves")
    virtual_loss = configs.check_int("virtual_loss", virtual_loss, 0)
    if solver and not stop_at_terminal:
        raise ValueError("solver needs stop_at_terminal: a descent must stop at a proven "
                         "(absorbing) edge")
    batch = root.prior_logits.shape[0]
    if invalid_actions is None:
        invalid_actions = jnp.zeros_like(root.prior_logits)
    capacity = num_simulations + 1 if tree is None else tree.node_visits.shape[1]
    if capacity < num_simulations + 1:
        raise ValueError(f"a tree of {capacity} nodes cannot hold {num_simulations} "
                         f"simulations (it needs at least {num_simulations + 1})")
    tree, used = set_root(tree, root, num_simulations, invalid_actions, extra_data)
    max_depth = capacity - 1 if max_depth is None else max_depth
    rows = jnp.arange(batch)
    if leaves_per_step > 1:
        body = _parallel_body(params, recurrent_fn, root_action_selection_fn,
                              interior_action_selection_fn, max_depth, leaves_per_step,
                              virtual_loss, stop_at_terminal, solver)
        return jax.lax.fori_loop(0, num_simulations // leaves_per_step, body,
                                 (rng_key, tree, used))[1]

    def body(_, carry):
        key, tree, free = carry
        key, k_simulate, k_expand = jax.random.split(key, 3)
        parent, action = simulate(jax.random.split(k_simulate, batch), tree,
                                  root_action_selection_fn, interior_action_selection_fn,
                                  max_depth, stop_at_terminal)
        child = tree.children_index[rows, parent, action]
        new = child == Tree.UNVISITED
        child = jnp.where(new, free, child)
        write = ~_settled(tree, parent, action) if solver else None
        tree = expand(params, k_expand, tree, recurrent_fn, parent, action, child, write)
        return key, path_backward(tree, child, solver), free + new.astype(jnp.int32)

    return jax.lax.fori_loop(0, num_simulations, body, (rng_key, tree, used))[1]
