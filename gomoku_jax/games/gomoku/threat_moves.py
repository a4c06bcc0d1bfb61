"""Forced wins at the root, for play: the side to move's VCF, and the moves that refute the
opponent's (`vcf.py`). Gomoku's `Env.forcing_moves` hook, which search agents call before
they search.

- If the side to move has a VCF within the bounds, its first move wins by force: play it,
  or rather the first move of a shortest VCF (a second, iteratively deepened search with the
  same budget; the first line found stands if that one runs out).
- Else, if the opponent would have one were it to move, the root's candidates shrink to the
  moves after which it no longer has one (`vcf.refutations`, over the K most likely: the
  cells of the opponent's line, then our own fours, then by proximity). When none of those
  K refutes, the root keeps the moves whose check ran out of budget, or else every move
  (a move we did not check is no better than one that loses: the search decides).

One board, pure JAX; `lax.cond` skips the refutation searches when the opponent has no VCF
(under `vmap` both branches run, so call it unbatched at batch 1).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from gomoku_jax.games.gomoku.features.patterns import FOUR, OPEN_FOUR, threats
from gomoku_jax.games.gomoku.features.proximity import proximity_mask
from gomoku_jax.games.gomoku.state import State
from gomoku_jax.games.gomoku.vcf import VCFConfig, opponent_vcf, refutations, vcf


def forcing_moves(state: State, max_nodes: int, max_depth: int = 8,
                  max_candidates: int = 16) -> tuple[jax.Array, jax.Array]:
    """(win int32[]: a move that starts the side to move's VCF, -1 if none was found;
    allowed bool[N*N]: the moves worth searching: the legal moves, or the refutations of
    the opponent's VCF when it has one).

    Args:
      state: one Gomoku state (not batched); max_nodes, max_depth: each VCF search's
        bounds (`VCFConfig`, static); max_candidates: K refutation candidates (static).
    """
    cfg = state.config
    n, k, rule = cfg.board_size, cfg.win_length, cfg.rule
    config = VCFConfig(max_depth=max_depth, max_nodes=max_nodes)
    board, me = state.board, state.color
    legal = state.legal_action_mask & ~state.terminated
    own = vcf(board, me, k, rule, config)
    theirs = opponent_vcf(board, me, k, rule, config)

    def refute(_):
        line = jnp.zeros((n * n,), bool).at[jnp.where(theirs.line >= 0, theirs.line,
                                                      n * n)].set(True, mode="drop")
        codes = threats(board, me, k, rule).reshape(n * n, 4)
        my_fours = jnp.any((codes == FOUR) | (codes == OPEN_FOUR), axis=-1)
        near = proximity_mask(board).reshape(-1)
        order = 4.0 * line + 2.0 * my_fours + near
        out = refutations(board, me, legal, k, rule, config, max_candidates, order)
        # No proven refutation: the unresolved ones (the budget ran out), else every move
        # (they all lose to a VCF we know of; the search picks the toughest).
        rest = jnp.where(jnp.any(out.unknown), out.unknown, legal)
        return jnp.where(jnp.any(out.refutes), out.refutes, rest)

    def shortest(_):  # the first line found may be long: look for a shortest one
        short = vcf(board, me, k, rule, dataclasses.replace(config, shortest=True))
        return jnp.where(short.found, short.move, own.move)

    threatened = theirs.found & ~own.found & ~state.terminated
    allowed = jax.lax.cond(threatened, refute, lambda _: legal, None)
    move = jax.lax.cond(own.found & (own.depth > 1), shortest, lambda _: own.move, None)
    win = jnp.where(own.found & ~state.terminated, move, -1).astype(jnp.int32)
    return win, allowed
