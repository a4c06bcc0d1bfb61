"""Subtree reuse (`search/reuse.py`): rerooting a small hand-built tree, finding the node of
a position, a reused search (legal, deterministic, its statistics kept), and agents that
carry their tree between moves through play."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest
from search_helpers import illegal_interior_visits, late_positions

from gomoku_jax import agents
from gomoku_jax.eval.match import play_match
from gomoku_jax.games.gomoku import winning_colours
from gomoku_jax.search import reuse

U = mctx.Tree.UNVISITED
# One compiled program each for every call of this module (op by op, a reroot compiled
# some 90 primitives).
reroot = jax.jit(reuse.reroot, static_argnums=2)
find_node = jax.jit(reuse.find_node)
find_nodes = jax.jit(jax.vmap(reuse.find_node))
subtree_mask = jax.jit(reuse.subtree_mask)
subtree_masks = jax.jit(jax.vmap(reuse.subtree_mask, in_axes=(None, 0)))


def small_tree() -> mctx.Tree:
    """One board, 7 nodes (6 used), 3 actions:

        0 --a0--> 1 --a1--> 3 --a2--> 5
          --a2--> 2 --a0--> 4
    node i's embedding is 10 * i (a stand-in state), its value i / 10, its visits 7 - i."""
    parents = [-1, 0, 0, 1, 2, 3, -1]
    actions = [-1, 0, 2, 1, 0, 2, -1]
    children = np.full((7, 3), U)
    for node in range(1, 6):
        children[parents[node], actions[node]] = node
    visits = np.array([7, 6, 5, 4, 3, 2, 0])
    child_visits = np.zeros((7, 3), np.int32)
    child_visits[children >= 0] = visits[children[children >= 0]]
    used = (visits > 0)[:, None]  # node 6's row as an unused node's (`tree_loop.empty_tree`)
    return mctx.Tree(
        node_visits=jnp.asarray(visits, jnp.int32),
        raw_values=jnp.asarray(np.arange(7) / 10 * used[:, 0], jnp.float32),
        node_values=jnp.asarray(np.arange(7) / 10 * used[:, 0], jnp.float32),
        parents=jnp.asarray(parents, jnp.int32), action_from_parent=jnp.asarray(actions, jnp.int32),
        children_index=jnp.asarray(children, jnp.int32),
        children_prior_logits=jnp.arange(21, dtype=jnp.float32).reshape(7, 3) * used,
        children_visits=jnp.asarray(child_visits),
        children_rewards=jnp.zeros((7, 3)), children_discounts=-jnp.ones((7, 3)) * used,
        children_values=jnp.arange(21, dtype=jnp.float32).reshape(7, 3) / 100 * used,
        embeddings={"board": jnp.asarray(np.arange(7)[:, None] * 10 * used * np.ones((1, 2)),
                                          jnp.int32)},
        root_invalid_actions=jnp.zeros(3, bool), extra_data=None)


def test_reroot_keeps_the_subtree_in_order_with_its_statistics():
    tree = small_tree()
    new = reroot(tree, jnp.int32(1), 7)
    # Nodes 1, 3, 5 become 0, 1, 2; the rest unused.
    np.testing.assert_array_equal(new.parents, [-1, 0, 1, -1, -1, -1, -1])
    np.testing.assert_array_equal(new.action_from_parent, [-1, 1, 2, -1, -1, -1, -1])
    np.testing.assert_array_equal(new.node_visits, [6, 4, 2, 0, 0, 0, 0])
    np.testing.assert_allclose(new.node_values, [0.1, 0.3, 0.5, 0, 0, 0, 0])
    np.testing.assert_array_equal(new.children_index[:3], [[U, 1, U], [U, U, 2], [U, U, U]])
    np.testing.assert_array_equal(new.children_index[3:], U)
    np.testing.assert_array_equal(new.children_visits[:3], [[0, 4, 0], [0, 0, 2], [0, 0, 0]])
    np.testing.assert_allclose(new.children_prior_logits[:3],
                               np.arange(21).reshape(7, 3)[[1, 3, 5]])
    np.testing.assert_allclose(new.children_values[:3],
                               np.arange(21).reshape(7, 3)[[1, 3, 5]] / 100)
    np.testing.assert_array_equal(new.embeddings["board"][:, 0], [10, 30, 50, 0, 0, 0, 0])
    np.testing.assert_array_equal(new.children_discounts[3:], 0)
    # The other branch; the whole tree from its root is the tree itself.
    other = reroot(tree, jnp.int32(2), 7)
    np.testing.assert_array_equal(other.parents, [-1, 0, -1, -1, -1, -1, -1])
    np.testing.assert_array_equal(other.children_index[0], [1, U, U])
    same = reroot(tree, jnp.int32(0), 7)
    for a, b in zip(jax.tree.leaves(same), jax.tree.leaves(tree)):
        np.testing.assert_array_equal(a, b)


def test_reroot_gives_an_empty_tree_when_absent_or_too_big():
    tree = small_tree()
    for node, max_nodes in ((-1, 7), (1, 2)):
        new = reroot(tree, jnp.int32(node), max_nodes)
        np.testing.assert_array_equal(new.node_visits, 0)
        np.testing.assert_array_equal(new.parents, -1)
        np.testing.assert_array_equal(new.children_index, U)
    assert int(subtree_mask(tree, jnp.int32(1)).sum()) == 3


def subtree_reference(parents: np.ndarray, visits: np.ndarray, node: int) -> np.ndarray:
    """bool[N]: the used nodes with `node` on their walk up the parent links."""
    out = np.zeros(len(parents), bool)
    for i in range(len(parents)):
        j = i
        while j >= 0 and j != node:
            j = parents[j]
        out[i] = node >= 0 and j == node and visits[i] > 0
    return out


def test_subtree_mask_matches_walking_up_the_parents():
    # 64 nodes: a chain (depth 63, the deepest such a tree can be), random trees, and
    # unused nodes at the end; every node as the subtree's root, and none (-1).
    rng = np.random.default_rng(0)
    n = 64
    trees = [np.arange(-1, n - 1)]
    trees += [np.concatenate([[-1], [rng.integers(0, i) for i in range(1, n)]]) for _ in range(3)]
    for parents in trees:
        visits = np.where(np.arange(n) < n - rng.integers(0, 8), 1, 0)
        parents = np.where(visits > 0, parents, -1).astype(np.int32)
        tree = mctx.Tree(node_visits=jnp.asarray(visits, jnp.int32), raw_values=None,
                         node_values=None, parents=jnp.asarray(parents), action_from_parent=None,
                         children_index=None, children_prior_logits=None,
                         children_visits=None, children_rewards=None,
                         children_discounts=None, children_values=None, embeddings=None,
                         root_invalid_actions=None, extra_data=None)
        masks = subtree_masks(tree, jnp.arange(-1, n, dtype=jnp.int32))
        for row, node in zip(np.asarray(masks), range(-1, n)):
            np.testing.assert_array_equal(row, subtree_reference(parents, visits, node))


def test_find_node_compares_every_state_leaf():
    tree = small_tree()
    assert int(find_node(tree, {"board": jnp.array([40, 40])})) == 4
    assert int(find_node(tree, {"board": jnp.array([40, 41])})) == -1
    assert int(find_node(tree, {"board": jnp.array([0, 0])})) == 0
    # unused nodes (node 6, and node 0 once it has no visit) do not count
    unused = tree.replace(node_visits=tree.node_visits.at[0].set(0))
    assert int(find_node(unused, {"board": jnp.array([0, 0])})) == -1


# ----------------------------------------------------------------- searches and agents

SIMS = 16


@pytest.fixture(scope="module")
def game():
    """(env, states [4], a search's trees after the two plies its most visited line
    predicts, and the states they lead to). No threat search at the root: it would only
    make the compile longer (tests/agents/test_anytime.py reuses trees under it)."""
    env, states = late_positions(7, 4, 4, seed=5)
    agent = agents.make("mcts", num_simulations=SIMS, reuse_tree=True, evaluator="uniform",
                        tree_capacity=4 * SIMS, threat_search=0).bind(env)
    act = jax.jit(agent.act_batch)
    trees = jax.jit(jax.vmap(agent.init))(jax.random.split(jax.random.key(0), 4))
    keys = jax.random.split(jax.random.key(1), 4)
    action, trees, _ = act(None, trees, states, keys)

    @jax.jit
    def two_plies(trees, states, action):
        rows = jnp.arange(4)
        after = jax.vmap(env.step)(states, action)
        reply = jnp.argmax(trees.children_visits[rows, trees.children_index[rows, 0, action]],
                           axis=-1)
        return jax.vmap(env.step)(after, reply)

    return env, agent, act, trees, two_plies(trees, states, action)


def test_a_reused_search_keeps_the_subtree_and_adds_its_simulations(game):
    env, agent, act, trees, states = game
    found = find_nodes(trees, states)
    live = ~np.asarray(states.terminated)
    assert (np.asarray(found)[live] > 0).all()
    before = np.asarray(trees.node_visits)[np.arange(4), np.asarray(found)]
    keys = jax.random.split(jax.random.key(2), 4)
    _, new, _ = act(None, trees, states, keys)
    root_visits = np.asarray(new.node_visits[:, 0])
    np.testing.assert_array_equal(root_visits[live], before[live] + SIMS)
    # deterministic, and never an illegal child
    _, again, _ = act(None, trees, states, keys)
    for a, b in zip(jax.tree.leaves(new), jax.tree.leaves(again)):
        np.testing.assert_array_equal(a, b)
    assert illegal_interior_visits(env, agent.search, new)[0] == 0
    used = (np.asarray(new.node_visits) > 0).sum(axis=-1)
    assert (used <= agent.capacity).all() and (used[live] > SIMS + 1).all()


def test_a_position_not_in_the_tree_starts_fresh(game):
    env, agent, act, trees, states = game
    other = late_positions(7, 4, 4, seed=6)[1]
    assert (np.asarray(find_nodes(trees, other)) == -1).all()
    _, new, _ = act(None, trees, other, jax.random.split(jax.random.key(2), 4))
    np.testing.assert_array_equal(new.node_visits[:, 0], SIMS + 1)
    assert int((np.asarray(new.node_visits) > 0).sum(axis=-1).max()) <= SIMS + 1


def test_reuse_needs_our_loop_and_room_for_the_simulations():
    with pytest.raises(ValueError, match="reuse_tree needs the search loop"):
        agents.make("mcts", reuse_tree=True, loop="mctx")
    with pytest.raises(ValueError, match="tree_capacity must be"):
        agents.make("mcts", num_simulations=8, tree_capacity=8)
    assert agents.make("mcts", num_simulations=8).capacity == 17


def test_agents_with_reuse_play_legal_games():
    """PUCT and Gumbel (whose Sequential Halving counts a reused root's new visits only),
    both carrying their trees, play a short match against each other: every move legal (an
    illegal one would end the game as a loss for its mover; the loser's last move is
    checked below). Neither runs the threat search, nor the heuristic evaluator: they
    would only make the compile longer (a reused tree under the threat search's root mask:
    tests/agents/test_anytime.py)."""
    env, _ = late_positions(7, 4, 1, seed=0)
    mcts = agents.make("mcts", num_simulations=SIMS, reuse_tree=True, evaluator="uniform",
                       threat_search=0)
    gumbel = agents.make("gumbel", num_simulations=SIMS, reuse_tree=True, evaluator="uniform",
                         threat_search=0)
    out = jax.jit(play_match, static_argnums=(0, 1, 2, 4))(env, mcts, gumbel,
                                                           jax.random.key(0), 4)
    assert bool(np.all(out.states.terminated))
    # a game that ended by a rule violation would have no five on the board
    for b in range(4):
        board = np.asarray(out.states.board[b])
        winner = int(out.states.winner[b])
        if winner != 0:
            assert winner in winning_colours(board, env.config)
