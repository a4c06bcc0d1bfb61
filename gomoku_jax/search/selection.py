"""Action selection inside the tree, on mctx's `Tree`, with masked children never chosen.

mctx masks `invalid_actions` only at the root: below it, a child whose prior is zero is
still chosen whenever its transformed Q beats the visited children's scores, so a search
in a bad position walks through occupied cells (which `step` scores as a loss) and
hard-masked moves. The functions here compute mctx's scores and then mask every child whose
prior logit is the `MASKED` sentinel, at every depth (mctx's interface: `(rng_key, tree,
node_index, depth) -> action`, one unbatched tree).

Also here: the Q transforms beyond mctx's, and how a move is drawn from the visit counts.
"""

from __future__ import annotations

from typing import Optional

import chex
import jax
import jax.numpy as jnp
import mctx
from mctx._src import seq_halving

from gomoku_jax.search import tree_loop
from gomoku_jax.search.base import SearchOutput
from gomoku_jax.search.prior import MASKED


def allowed_children(tree: mctx.Tree, node_index: jax.Array) -> jax.Array:
    """bool[A]: the children of a node the search may visit (prior logit not MASKED)."""
    return tree.children_prior_logits[node_index] > MASKED


def masked_argmax(scores: jax.Array, allowed: jax.Array) -> jax.Array:
    """int32[]: the argmax of `scores` over the allowed entries."""
    return jnp.argmax(jnp.where(allowed, scores, -jnp.inf)).astype(jnp.int32)


def proven_children(tree: mctx.Tree, node_index: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(wins bool[A], losses bool[A]) of a node: its children whose edge is absorbing
    (the game ended, or the solver proved the child: `tree_loop.absorbing_children`) with
    a win, a loss for the node's mover. Their Q is exact."""
    absorbing = tree_loop.absorbing_children(tree.children_index[node_index],
                                             tree.children_discounts[node_index])
    rewards = tree.children_rewards[node_index]
    return absorbing & (rewards >= 1.0), absorbing & (rewards <= -1.0)


def solver_choice(tree: mctx.Tree, node_index: jax.Array, scores: jax.Array,
                  allowed: jax.Array) -> jax.Array:
    """int32[]: the action of a selection that reads proofs (MCTS-Solver): a child proven
    won is taken (its value is exact: the descent stops there and backs the win up); a
    child proven lost is never taken while some allowed child is not; otherwise the argmax
    of `scores` float32[A] over `allowed` bool[A]."""
    wins, losses = proven_children(tree, node_index)
    open_ = allowed & ~losses
    allowed = jnp.where(jnp.any(open_), open_, allowed)
    return masked_argmax(jnp.where(wins & allowed, jnp.inf, scores), allowed)


def solver_kwargs(algorithm) -> dict:
    """{"solver": True} for an algorithm with the solver on, else {}: a selection function
    is called with `solver` only when it must read proofs (one swapped in for comparison
    need not take it)."""
    return {"solver": True} if algorithm.solver else {}


def puct_selection(rng_key, tree: mctx.Tree, node_index, depth, *, pb_c_init: float,
                   pb_c_base: float, qtransform, solver: bool = False) -> jax.Array:
    """PUCT (AlphaZero / MuZero): argmax of Q + c(N) · P · sqrt(N) / (1 + n), with
    c(N) = c_init + log((N + c_base + 1) / c_base), a 1e-7 random tie-break, masked
    children excluded at every depth; with `solver`, proven children as `solver_choice`."""
    del depth
    visits = tree.children_visits[node_index]
    node_visits = tree.node_visits[node_index]
    pb_c = pb_c_init + jnp.log((node_visits + pb_c_base + 1.0) / pb_c_base)
    prior = jax.nn.softmax(tree.children_prior_logits[node_index])
    policy_score = jnp.sqrt(node_visits) * pb_c * prior / (visits + 1)
    noise = 1e-7 * jax.random.uniform(rng_key, (tree.num_actions,))
    scores = qtransform(tree, node_index) + policy_score + noise
    if solver:
        return solver_choice(tree, node_index, scores, allowed_children(tree, node_index))
    return masked_argmax(scores, allowed_children(tree, node_index))


def gumbel_interior_selection(rng_key, tree: mctx.Tree, node_index, depth, *,
                              qtransform) -> jax.Array:
    """Full Gumbel MuZero's deterministic interior selection (visits follow
    softmax(prior + completed Q)), masked children excluded."""
    del rng_key, depth
    visits = tree.children_visits[node_index]
    logits = tree.children_prior_logits[node_index]
    probs = jax.nn.softmax(logits + qtransform(tree, node_index))
    scores = probs - visits / (1 + jnp.sum(visits))
    return masked_argmax(scores, allowed_children(tree, node_index))


@chex.dataclass(frozen=True)
class ReusedGumbelData:
    """Gumbel's extra data on a reused tree: root_gumbel float32[B, A] (mctx's), and
    root_start_visits int32[B, A], the root's child visits when this search started."""

    root_gumbel: jax.Array
    root_start_visits: jax.Array


def gumbel_root_selection(rng_key, tree: mctx.Tree, node_index, *, num_simulations: int,
                          max_num_considered_actions: int, qtransform) -> jax.Array:
    """mctx's `gumbel_muzero_root_action_selection` (Gumbel top-k and Sequential Halving,
    mctx's tables and scores) counting only the visits since `root_start_visits`
    (`ReusedGumbelData`): on a reused root, the halving of this search's S simulations
    starts over while the completed Q keeps every visit. Equal to mctx's when the start
    visits are zero."""
    del rng_key
    visits = tree.children_visits[node_index] - tree.extra_data.root_start_visits
    table = jnp.array(seq_halving.get_table_of_considered_visits(
        max_num_considered_actions, num_simulations))
    valid = jnp.sum(~tree.root_invalid_actions.astype(bool)).astype(jnp.int32)
    considered = table[jnp.minimum(max_num_considered_actions, valid), jnp.sum(visits)]
    scores = seq_halving.score_considered(considered, tree.extra_data.root_gumbel,
                                          tree.children_prior_logits[node_index],
                                          qtransform(tree, node_index), visits)
    return jnp.argmax(jnp.where(tree.root_invalid_actions, -jnp.inf, scores)).astype(jnp.int32)


def decisive_children(tree: mctx.Tree, node_index: jax.Array) -> jax.Array:
    """bool[A]: the expanded children whose move ended the game with a win for the node's
    mover, or (MCTS-Solver) that are proven won: the wins of `proven_children`, the exact
    best moves there."""
    return proven_children(tree, node_index)[0]


def uct_selection(rng_key, tree: mctx.Tree, node_index, depth, *, exploration: float,
                  solver: bool = False) -> jax.Array:
    """UCT (UCB1 applied to trees): every allowed child is visited once, in random order
    (ties broken by the prior), before any is revisited; then argmax of
    Q + c · sqrt(ln N / n), Q the mean result in [-1, 1] for the node's mover. A child whose
    move won the game is always chosen (a decisive move: its value is exact), so a lost
    position's mean moves toward -1 as soon as the winning reply is found. With `solver`,
    proven children as `solver_choice`."""
    del depth
    visits = tree.children_visits[node_index]
    node_visits = tree.node_visits[node_index].astype(jnp.float32)
    noise = jax.random.uniform(rng_key, (tree.num_actions,))
    ucb = tree.qvalues(node_index) + exploration * jnp.sqrt(
        jnp.log(jnp.maximum(node_visits, 1.0)) / jnp.maximum(visits, 1))
    prior = jax.nn.softmax(tree.children_prior_logits[node_index])
    unvisited = 1e9 + prior + 1e-3 * noise
    scores = jnp.where(visits == 0, unvisited, ucb + 1e-7 * noise)
    scores = jnp.where(decisive_children(tree, node_index), 2e9, scores)
    if solver:
        return solver_choice(tree, node_index, scores, allowed_children(tree, node_index))
    return masked_argmax(scores, allowed_children(tree, node_index))


def alphazero_qtransform(tree: mctx.Tree, node_index: jax.Array) -> jax.Array:
    """float32[A]: Q(s, a) = W / N for visited children, 0 for unvisited ones (seed 001),
    unnormalised, as PUCT's value term."""
    visited = tree.children_visits[node_index] > 0
    return jnp.where(visited, tree.qvalues(node_index), 0.0)


def parent_value_qtransform(tree: mctx.Tree, node_index: jax.Array) -> jax.Array:
    """float32[A]: Q(s, a) = W / N for visited children, the node's mean value for
    unvisited ones (first-play urgency = the parent's value, as Leela Zero)."""
    visited = tree.children_visits[node_index] > 0
    return jnp.where(visited, tree.qvalues(node_index), tree.node_values[node_index])


def _when_all_lost(tree: mctx.Tree, scores: jax.Array) -> jax.Array:
    """float32[B, A]: `scores`, or on a root where every move the search tried is proven
    lost the prior's logits over the allowed moves: the solver's visits then tell the moves
    nothing apart (each lost move is visited once, proven and left, the next untried one
    taken), and the prior's favourite is the natural resistance (the block of a four, say,
    whose proof covers the rest of the line)."""
    root = tree.ROOT_INDEX
    invalid = tree.root_invalid_actions.astype(bool)
    allowed = jax.vmap(allowed_children, in_axes=(0, None))(tree, root) & ~invalid
    _, losses = jax.vmap(proven_children, in_axes=(0, None))(tree, root)
    tried = allowed & (tree.children_visits[:, root] > 0)
    all_lost = jnp.any(tried, -1, keepdims=True) & ~jnp.any(tried & ~losses, -1, keepdims=True)
    prior = jnp.where(allowed, tree.children_prior_logits[:, root], -jnp.inf)
    return jnp.where(all_lost, prior, scores)


def move_temperature(move_number: jax.Array, temperature: float, decay: float,
                     minimum: float) -> jax.Array:
    """τ_t = max(τ0 · decay^t, τ_min) with t the move number."""
    decayed = temperature * decay ** move_number.astype(jnp.float32)
    return jnp.maximum(decayed, minimum)


def sample_visits(key: jax.Array, probs: jax.Array, temperature: jax.Array) -> jax.Array:
    """int32[B]: an action drawn ∝ probs^(1/τ) (probs [B, A], temperature [B])."""
    logits = jnp.where(probs > 0, jnp.log(jnp.maximum(probs, 1e-30)), MASKED)
    return jax.random.categorical(key, logits / temperature[:, None]).astype(jnp.int32)


def choose_by_visits(sampling, tree: mctx.Tree, key: jax.Array,
                     move_number: Optional[jax.Array] = None) -> jax.Array:
    """int32[B]: when `sampling.greedy`, a root move that wins the game at once if the
    search found one (or, with the solver, a proven win), else the most visited (ties
    broken by the higher Q; with the solver, the prior's favourite where every move tried
    is proven lost: `_when_all_lost`); otherwise a
    sample ∝ visits^(1/τ) at the move temperature of each root's move number
    (`VisitSampling`; `move_number` int32[B], needed then)."""
    summary = tree.summary()
    visit_probs = summary.visit_probs
    if sampling.greedy:
        # Q in [-1, 1] adds less than one visit: it only breaks ties between counts.
        scores = summary.visit_counts + 0.25 * (jnp.clip(summary.qvalues, -1, 1) + 1)
        # A reused root may hold visits of moves this search's root no longer allows.
        scores = jnp.where((summary.visit_counts > 0) & ~tree.root_invalid_actions.astype(bool),
                           scores, -1.0)
        decisive = jax.vmap(decisive_children, in_axes=(0, None))(tree, tree.ROOT_INDEX)
        scores = jnp.where(decisive, 1e9, scores)
        if getattr(sampling, "solver", False):
            scores = _when_all_lost(tree, scores)
        return jnp.argmax(scores, axis=-1).astype(jnp.int32)
    if move_number is None:
        raise ValueError("sampling a move at the move temperature needs the roots' "
                         "move_number")
    temperature = move_temperature(move_number, sampling.temperature,
                                   sampling.temperature_decay, sampling.temperature_min)
    return sample_visits(key, visit_probs, temperature)


def visit_output(sampling, model, states, tree: mctx.Tree, key: jax.Array) -> SearchOutput:
    """The output of a search of `model` from `states` that counts visits: the move of
    `choose_by_visits`, the visit distribution as the policy, the root's value."""
    summary = tree.summary()
    move_number = None if sampling.greedy else model.move_number(states)
    return SearchOutput(choose_by_visits(sampling, tree, key, move_number),
                        summary.visit_probs.astype(jnp.float32),
                        summary.value.astype(jnp.float32), tree)
