"""MCTS-Solver (`solver`, `proof_nodes`): every result the search proves is the exact
game-theoretic value, checked against a brute-force minimax over the pure-Python rules on
small boards; a proven win is played; the option's boundaries."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from search_helpers import late_positions

from gomoku_jax import search
from gomoku_jax.search import selection, tree_loop
from gomoku_jax.search.evaluators import UniformEvaluator

SIZE, K = 5, 4  # freestyle: K or more in a row wins
SIMS = 256
MAX_EMPTIES = 11  # brute force stays fast
LINES = ((0, 1), (1, 0), (1, 1), (1, -1))


def wins(board: tuple, action: int, colour: int) -> bool:
    """Whether `colour` playing `action` on `board` (a tuple of SIZE*SIZE cells, 0 empty)
    makes K or more in a row through it."""
    r, c = divmod(action, SIZE)
    for dr, dc in LINES:
        run = 1
        for sign in (1, -1):
            rr, cc = r + sign * dr, c + sign * dc
            while 0 <= rr < SIZE and 0 <= cc < SIZE and board[rr * SIZE + cc] == colour:
                run, rr, cc = run + 1, rr + sign * dr, cc + sign * dc
        if run >= K:
            return True
    return False


@functools.lru_cache(maxsize=None)
def minimax(board: tuple, colour: int) -> int:
    """The exact value (+1 win, 0 draw, -1 loss) for `colour`, to move on `board`
    (brute force over every move; a full board is a draw)."""
    best = -1
    for a in range(len(board)):
        if board[a] == 0:
            best = max(best, move_value(board, colour, a))
            if best == 1:
                break
    return best


def move_value(board: tuple, colour: int, action: int) -> int:
    """The exact value of `action` for `colour`, the mover."""
    if wins(board, action, colour):
        return 1
    after = board[:action] + (colour,) + board[action + 1:]
    return 0 if all(after) else -minimax(after, -colour)


def hard_positions(count: int):
    """(env, states [count]): late positions of 5x5 four-in-a-row with at most MAX_EMPTIES
    empty cells where the side to move cannot win at once (the value needs a search)."""
    env, states = late_positions(SIZE, K, 96, seed=3)
    keep = []
    for b in range(96):
        board = tuple(int(x) for x in np.asarray(states.board[b]).reshape(-1))
        if board.count(0) <= MAX_EMPTIES and not any(
                wins(board, a, int(states.color[b])) for a in range(len(board)) if not board[a]):
            keep.append(b)
    return env, jax.tree.map(lambda x: x[np.array(keep[:count])], states)


@functools.lru_cache(maxsize=None)
def solved_trees(proof_nodes: int, leaves_per_step: int = 1):
    """(env, states [8], SearchOutput) of a solver search (uniform evaluator, SIMS
    simulations, W leaves a step) from `hard_positions`."""
    env, states = hard_positions(8)
    algorithm = search.make("puct", solver=True, proof_nodes=proof_nodes, q_transform="parent",
                            leaves_per_step=leaves_per_step).for_play()
    run = jax.jit(lambda s, k: algorithm.search(env, UniformEvaluator(), None, s, k, SIMS))
    return env, states, run(states, jax.random.key(0))


@pytest.mark.parametrize("proof_nodes, leaves_per_step", [(0, 1), (8, 1), (8, 4)])
def test_every_proven_edge_holds_the_exact_value(proof_nodes, leaves_per_step):
    """Every absorbing edge of every searched node (a game's end, a leaf proof, or a node
    the solver proved from its children) carries in its reward the move's exact value for
    the node's mover; the solver proves nodes above the game's ends and settles roots; with
    leaf parallelism too (descents of a step that cross an edge an earlier one proved)."""
    _, states, out = solved_trees(proof_nodes, leaves_per_step)
    tree = jax.tree.map(np.asarray, out.tree)
    boards, colours = tree.embeddings.board, tree.embeddings.color
    proven_above_end = settled_roots = checked = 0
    for b in range(boards.shape[0]):
        for node in np.flatnonzero(tree.node_visits[b] > 0):
            if tree.embeddings.terminated[b, node]:
                continue
            absorbing = np.asarray(tree_loop.absorbing_children(
                tree.children_index[b, node], tree.children_discounts[b, node]))
            board = tuple(int(x) for x in boards[b, node].reshape(-1))
            for a in np.flatnonzero(absorbing):
                exact = move_value(board, int(colours[b, node]), int(a))
                assert tree.children_rewards[b, node, a] == exact, (b, node, a)
                checked += 1
                child = tree.children_index[b, node, a]
                proven_above_end += int(not tree.embeddings.terminated[b, child])
        proven, exact = tree_loop.node_proof(
            tree.children_index[b, 0], tree.children_prior_logits[b, 0],
            tree.children_rewards[b, 0], tree.children_discounts[b, 0])
        if proven:
            board = tuple(int(x) for x in boards[b, 0].reshape(-1))
            assert exact == minimax(board, int(colours[b, 0]))
            settled_roots += 1
    assert checked > 0 and proven_above_end > 0 and settled_roots > 0


def test_a_proven_win_at_the_root_is_played():
    """Where the root is proven won, the move chosen wins by force (the exact value of the
    move is +1), not merely the most visited."""
    _, states, out = solved_trees(8)
    played = 0
    for b in range(out.action.shape[0]):
        wins, _ = selection.proven_children(jax.tree.map(lambda x: x[b], out.tree), 0)
        if np.any(wins):
            board = tuple(int(x) for x in np.asarray(states.board[b]).reshape(-1))
            assert move_value(board, int(states.color[b]), int(out.action[b])) == 1
            played += 1
    assert played > 0


def test_solver_choice_takes_a_win_and_avoids_a_loss():
    """On one node: a child proven won is taken whatever the scores; a child proven lost
    is never taken while an allowed child is open, and is when all are lost."""
    tree = tree_loop.empty_tree(np.zeros((1, 1), np.int8), 3, 4)
    tree = jax.tree.map(lambda x: x[0] if hasattr(x, "shape") else x, tree)
    tree = tree.replace(children_index=tree.children_index.at[0].set([1, 2, -1, -1]),
                        children_discounts=tree.children_discounts.at[0].set(0.0),
                        children_rewards=tree.children_rewards.at[0].set([-1.0, 1.0, 0, 0]))
    scores = np.array([9.0, 0.0, 5.0, 1.0], np.float32)
    allowed = np.ones(4, bool)
    assert selection.solver_choice(tree, 0, scores, allowed) == 1
    lost = tree.replace(children_rewards=tree.children_rewards.at[0, 1].set(-1.0))
    assert selection.solver_choice(lost, 0, scores, allowed) == 2
    only_lost = np.array([True, True, False, False])
    assert selection.solver_choice(lost, 0, scores, only_lost) == 0


def test_a_root_whose_tried_moves_are_all_lost_plays_the_prior_favourite():
    """Every move the search tried is proven lost (each visited once): the greedy choice is
    the prior's favourite among the allowed moves, not the first of the lost ones; with
    an open move tried, the most visited as before; without the solver, as before."""
    tree = tree_loop.empty_tree(np.zeros((1, 1), np.int8), 3, 4)
    tree = tree.replace(
        children_index=tree.children_index.at[0, 0].set([1, 2, -1, -1]),
        children_visits=tree.children_visits.at[0, 0].set([1, 1, 0, 0]),
        children_rewards=tree.children_rewards.at[0, 0].set([-1.0, -1.0, 0, 0]),
        children_prior_logits=tree.children_prior_logits.at[0, 0].set([0.0, 1.0, 0.5, 3.0]),
        node_visits=tree.node_visits.at[0, :3].set([3, 1, 1]))
    solver = search.make("puct", solver=True).for_play()
    assert int(selection.choose_by_visits(solver, tree, jax.random.key(0))[0]) == 3
    plain = search.make("puct").for_play()
    assert int(selection.choose_by_visits(plain, tree, jax.random.key(0))[0]) == 0
    open_ = tree.replace(children_discounts=tree.children_discounts.at[0, 0, 1].set(-1.0),
                         children_visits=tree.children_visits.at[0, 0, 1].set(2))
    assert int(selection.choose_by_visits(solver, open_, jax.random.key(0))[0]) == 1


@pytest.mark.parametrize("config, message", [
    ({"solver": True, "loop": "mctx"}, "solver needs loop"),
    ({"solver": True, "stop_at_terminal": False}, "solver needs loop"),
    ({"proof_nodes": 8}, "needs solver=True"),
])
def test_solver_config_errors(config, message):
    with pytest.raises(ValueError, match=message):
        search.make("puct", **config)
    with pytest.raises(ValueError, match="solver=False only"):
        search.make("gumbel", solver=True)
