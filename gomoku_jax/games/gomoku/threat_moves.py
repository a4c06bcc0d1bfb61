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

Pure JAX over a batch of states, with batch-level `lax.cond`s around the costly parts. A
vmapped while loop runs until its slowest board is done, and a batch-level cond runs its
costly branch for every board when one needs it; on a CPU, where vmap gains little, the
boards therefore go one at a time (`lax.map`), each paying only for its own search: 8-22x
faster at batch 16 on mid-game 15x15 positions (`experiments/bench_vcf.py`).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import jax
import jax.numpy as jnp

from gomoku_jax.games.gomoku.features.patterns import FOUR, OPEN_FOUR, threats
from gomoku_jax.games.gomoku.features.proximity import proximity_mask
from gomoku_jax.games.gomoku.state import State
from gomoku_jax.games.gomoku.vcf import VCFConfig, opponent_vcf, refutations, vcf


def forcing_moves(states: State, max_nodes: int, max_depth: int = 8,
                  max_candidates: int = 16, one_board_at_a_time: Optional[bool] = None
                  ) -> tuple[jax.Array, jax.Array]:
    """(win int32[B]: a move that starts the side to move's VCF, -1 where none was found;
    allowed bool[B, N*N]: the moves worth searching: the legal moves, or the refutations of
    the opponent's VCF where it has one).

    Batched on purpose: the refutation searches (K VCF searches a board) and the search for
    a shortest line run under a batch-level `lax.cond`, only when some board needs them.

    Args:
      states: Gomoku states, leaves [B, ...]; max_nodes, max_depth: each VCF search's
        bounds (`VCFConfig`, static); max_candidates: K refutation candidates (static).
      one_board_at_a_time: `lax.map` over the boards instead of vmap (static); default:
        on the CPU backend only.
    """
    if one_board_at_a_time is None:
        one_board_at_a_time = jax.default_backend() == "cpu"
    if one_board_at_a_time and states.board.shape[0] > 1:
        def one(state: State) -> tuple[jax.Array, jax.Array]:
            out = forcing_moves(jax.tree.map(lambda x: x[None], state), max_nodes, max_depth,
                                max_candidates, one_board_at_a_time=False)
            return jax.tree.map(lambda x: x[0], out)
        return jax.lax.map(one, states)
    cfg = states.config
    n, k, rule = cfg.board_size, cfg.win_length, cfg.rule
    config = VCFConfig(max_depth=max_depth, max_nodes=max_nodes)
    boards, me, over = states.board, states.color, states.terminated
    legal = states.legal_action_mask & ~over[:, None]
    own = jax.vmap(lambda b, c: vcf(b, c, k, rule, config))(boards, me)
    theirs = jax.vmap(lambda b, c: opponent_vcf(b, c, k, rule, config))(boards, me)

    def refute(board, me, legal, their_line):
        line = jnp.zeros((n * n,), bool).at[jnp.where(their_line >= 0, their_line,
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

    def shortest(board, me):  # the first line found may be long: look for a shortest one
        return vcf(board, me, k, rule, dataclasses.replace(config, shortest=True))

    threatened = theirs.found & ~own.found & ~over
    allowed = jax.lax.cond(
        jnp.any(threatened),
        lambda: jnp.where(threatened[:, None],
                          jax.vmap(refute)(boards, me, legal, theirs.line), legal),
        lambda: legal)
    long = own.found & (own.depth > 1) & ~over

    def shorter():
        short = jax.vmap(shortest)(boards, me)
        return jnp.where(long & short.found, short.move, own.move)

    move = jax.lax.cond(jnp.any(long), shorter, lambda: own.move)
    win = jnp.where(own.found & ~over, move, -1).astype(jnp.int32)
    return win, allowed
