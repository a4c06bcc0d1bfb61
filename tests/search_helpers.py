"""Positions and checks shared by the search tests (tests/ is on the import path, as for
conftest's helpers)."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np

import gomoku_jax
from gomoku_jax import search
from gomoku_jax.games.gomoku import winning_colours
from gomoku_jax.games.random_play import random_legal_action
from gomoku_jax.search.prior import candidates


def stack(states):
    """The states (one game each) as one batch, NumPy leaves (no compile)."""
    return jax.tree.map(lambda *x: np.stack(x), *states)


@dataclasses.dataclass(frozen=True)
class PeakedEvaluator:
    """All prior mass on the lowest legal action (its logit `peak` above the rest, whose
    prior underflows to 0, as a confident network's or heuristic's does) and one value
    everywhere. With a positive value every visited child looks bad for the parent's mover
    (Q = -value), the situation of a lost position: then the unvisited children, legal and
    illegal alike, look best."""

    value: float = 0.5
    peak: float = 200.0

    def __call__(self, env, params, states, key):
        legal = states.legal_action_mask
        first = jnp.arange(env.num_actions) == jnp.argmax(legal, axis=-1, keepdims=True)
        return (jnp.where(first, self.peak, 0.0).astype(jnp.float32),
                jnp.full(legal.shape[:1], self.value, jnp.float32))


@functools.lru_cache(maxsize=None)
def late_positions(board_size: int, win_length: int, count: int, seed: int):
    """(env, states [count]): live positions after 40-70% of the board was filled by
    random play."""
    env = gomoku_jax.make("gomoku", board_size=board_size, win_length=win_length)
    a = env.num_actions

    @jax.jit
    def play(key):
        k_init, k_play, k_len = jax.random.split(key, 3)
        plies = jax.random.randint(k_len, (), a * 2 // 5, a * 7 // 10)

        def body(i, state):
            nxt = env.step(state, random_legal_action(jax.random.fold_in(k_play, i),
                                                      state.legal_action_mask))
            return jax.tree.map(lambda x, y: jnp.where(i < plies, x, y), nxt, state)

        return jax.lax.fori_loop(0, a, body, env.init(k_init))

    out = []
    key = jax.random.key(seed)
    while len(out) < count:
        key, k = jax.random.split(key)
        state = play(k)
        if not bool(state.terminated):
            out.append(state)
    return env, stack(out)


@functools.lru_cache(maxsize=None)
def candidates_fn(env, shaping: str, threshold: float):
    """Jitted `states -> candidates bool[B, A]` (`search.prior.candidates`), once per
    config."""
    return jax.jit(lambda states: candidates(env, shaping, threshold, states)[0])


def illegal_interior_visits(env, algorithm, tree) -> tuple[int, int]:
    """(visits on children that were illegal or hard-masked in their node's state, all
    child visits) over the expanded live nodes of a batched mctx tree."""
    states = jax.tree.map(lambda x: np.asarray(x).reshape((-1,) + x.shape[2:]),
                          tree.embeddings)
    allowed = candidates_fn(env, algorithm.prior_shaping, algorithm.candidate_threshold)(states)
    visits = np.asarray(tree.children_visits)
    allowed = np.asarray(allowed).reshape(visits.shape)
    live = (np.asarray(tree.node_visits) > 0) & ~np.asarray(states.terminated).reshape(
        visits.shape[:2])
    searched = (visits > 0) & live[..., None]
    return int((searched & ~allowed).sum()), int(searched.sum())


def four_positions(env, kind: str, count: int, seed: int):
    """(states [count], answers bool[count, A]): black to move on `env` (Gomoku) with a
    four of black's ("win": every cell that completes a line is an answer) or white's lone
    four ("block": the one cell that stops it, and black has no win of its own), plus a few
    scattered stones; answers checked by the pure-Python rules (`winning_colours`)."""
    n, k = env.board_size, env.config.win_length
    rng = np.random.default_rng(seed)
    colour = 1 if kind == "win" else -1
    states, answers = [], []

    def completing(board, stone):
        cells = np.flatnonzero(board.reshape(-1) == 0)
        return [a for a in cells if stone in winning_colours(
            np.where(np.arange(n * n).reshape(n, n) == a, stone, board), env.config)]

    while len(states) < count:
        board = np.zeros((n, n), np.int8)
        r, c = rng.integers(0, n), rng.integers(0, n - k + 1)
        board[r, c:c + k - 1] = colour
        free = [tuple(x) for x in np.argwhere(board == 0)]
        rng.shuffle(free)
        # Black to move: as many black stones as white ones, the four's included.
        extra = int(rng.integers(1, 4))
        extra_black, extra_white = (extra, extra + k - 1) if colour == 1 else \
            (extra + k - 1, extra)
        for i, cell in enumerate(free[:extra_black + extra_white]):
            board[cell] = 1 if i < extra_black else -1
        try:
            state = env.from_board(board, "black")
        except ValueError:
            continue
        wins = completing(board, colour)
        if not wins or (kind == "block" and (len(wins) != 1 or completing(board, 1))):
            continue
        states.append(state)
        answers.append(np.isin(np.arange(n * n), wins))
    return stack(states), np.stack(answers)


def random_tree(seed: int, batch: int, num_nodes: int, num_actions: int) -> mctx.Tree:
    """A random mctx tree: node i's parent is i-1 (half the time, for deep paths) or any
    earlier node, random statistics everywhere (float32 values, int32 visits)."""
    rng = np.random.default_rng(seed)
    idx = np.arange(num_nodes)
    chain = rng.random((batch, num_nodes)) < 0.5
    anywhere = (rng.random((batch, num_nodes)) * np.maximum(idx, 1)).astype(np.int32)
    parents = np.where(chain, idx - 1, anywhere).astype(np.int32)
    parents[:, 0] = mctx.Tree.NO_PARENT
    actions = rng.integers(0, num_actions, (batch, num_nodes)).astype(np.int32)
    actions[:, 0] = mctx.Tree.NO_PARENT
    edges = (batch, num_nodes, num_actions)

    def f32(shape, low=-1.0, high=1.0):
        return jnp.asarray(rng.uniform(low, high, shape), jnp.float32)

    def i32(shape):
        return jnp.asarray(rng.integers(0, 20, shape), jnp.int32)

    return mctx.Tree(
        node_visits=i32((batch, num_nodes)), raw_values=f32((batch, num_nodes)),
        node_values=f32((batch, num_nodes)), parents=jnp.asarray(parents),
        action_from_parent=jnp.asarray(actions),
        children_index=jnp.full(edges, mctx.Tree.UNVISITED, jnp.int32),
        children_prior_logits=f32(edges), children_visits=i32(edges),
        children_rewards=f32(edges), children_discounts=f32(edges, -1.0, 0.0),
        children_values=f32(edges), embeddings=jnp.zeros((batch, num_nodes, 3)),
        root_invalid_actions=jnp.zeros((batch, num_actions)), extra_data=None)


@dataclasses.dataclass(frozen=True)
class NoisyEvaluator:
    """Random logits and values (from the key): a search with no structure to lean on."""

    def __call__(self, env, params, states, key):
        batch = states.legal_action_mask.shape[0]
        k_logits, k_value = jax.random.split(key)
        return (2.0 * jax.random.normal(k_logits, (batch, env.num_actions)),
                jax.random.uniform(k_value, (batch,), minval=-1.0, maxval=1.0))


# ----------------------------------------------------------------- reference searches

REFERENCE_SIMS = 64

# The searches that several modules check, each compiled once per session: our loop
# against mctx's (tests/search/test_tree_loop.py), no visit on a masked child
# (test_masking.py), W = 1 as the loop before leaf parallelism (test_leaf_parallel.py).
# mctx's semantics at a game-over node (`stop_at_terminal=False`), so that both loops
# build the same tree. The peaked evaluator puts a search in a lost position, where an
# unmasked selection walks into illegal children (test_masking.py's control).
REFERENCE = {
    "puct-noisy-min_max-hard": ("puct", NoisyEvaluator(),  # root noise on
                                dict(q_transform="min_max", symmetry="none",
                                     prior_shaping="hard", candidate_threshold=0.5)),
    "puct-peaked-alphazero": ("puct", PeakedEvaluator(),
                              dict(q_transform="alphazero", symmetry="random",
                                   dirichlet_fraction=0.0)),
    "gumbel-peaked": ("gumbel", PeakedEvaluator(), dict(symmetry="none")),
    "pure_mcts-peaked": ("pure_mcts", PeakedEvaluator(), dict()),
}


def reference_positions():
    """(env, states [16]): live 7x7 four-in-a-row positions, 40-70% filled, so that games
    end inside the trees (absorbing nodes, discount 0)."""
    return late_positions(7, 4, 16, seed=0)


def reference_root_mask(env, algorithm, states) -> np.ndarray:
    """bool[B, A], the searches' `root_mask`: boards 0-2 restricted to two of their root
    candidates, board 3 to cells that are none of them (so it keeps them all), the other
    boards unrestricted."""
    allowed = np.asarray(candidates_fn(env, algorithm.prior_shaping,
                                       algorithm.candidate_threshold)(states))
    mask = np.ones_like(allowed)
    for b in range(3):
        mask[b] = False
        mask[b, np.flatnonzero(allowed[b])[:2]] = True
    mask[3] = ~allowed[3]
    return mask


@functools.lru_cache(maxsize=None)
def reference_search(name: str, **changes):
    """(algorithm, root_mask, SearchOutput on the host) of `REFERENCE[name]`, its fields
    updated with `changes` (e.g. loop="mctx"), on `reference_positions()` with
    `reference_root_mask`, `REFERENCE_SIMS` simulations (cached)."""
    algorithm_name, evaluator, fields = REFERENCE[name]
    algorithm = search.make(algorithm_name, **{"stop_at_terminal": False, **fields, **changes})
    env, states = reference_positions()
    mask = reference_root_mask(env, algorithm, states)
    out = jax.jit(lambda s, k, m: algorithm.search(env, evaluator, None, s, k, REFERENCE_SIMS,
                                                   root_mask=m))(
        states, jax.random.key(7), jnp.asarray(mask))
    return algorithm, mask, jax.device_get(out)


def assert_same_tree(ours: mctx.Tree, theirs: mctx.Tree):
    """The same tree, array for array (values to float32 rounding)."""
    for name in ("node_visits", "parents", "action_from_parent", "children_index",
                 "children_visits"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name), name)
    for name in ("raw_values", "node_values", "children_prior_logits", "children_values",
                 "children_rewards", "children_discounts"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    for a, b in zip(jax.tree.leaves(ours.embeddings), jax.tree.leaves(theirs.embeddings)):
        np.testing.assert_array_equal(a, b)
