"""Forced wins by threats at the root, for play: the VCF of `threat_moves.forcing_moves`
first, then the side to move's VCT (`vct.py`), and optionally the moves that refute the
opponent's VCT. Gomoku's `Env.forcing_moves` hook calls it when a search agent asks for a
VCT budget (`SearchAgent.vct_nodes` > 0).

In order, per board:

1. The VCF at the root (`threat_moves.forcing_moves`, `max_nodes`): its winning four, or
   the refutations of the opponent's VCF as the root's moves.
2. No VCF win: the side to move's VCT (`vct_nodes`, `vct_depth`; to depth 2 first, a three
   and then a double, so a short win is not hidden by a longer line that the depth-first
   search meets first; then to the full depth: `VCTConfig.first_depth`). A VCT found is a
   forced
   win (its proof answers every defender reply, the defender's counter-fours included), so
   its first move is played, also when the opponent has a VCF of its own.
3. With `defend`, no win and no VCF threat against us: the opponent's VCT if we passed.
   When it has one, the root keeps the moves after which it has none (the opponent's VCT
   searched again after each of the K most likely: its first move, the cells near it on
   its lines, our own fours and threes, by proximity). None of those K proven: the moves
   whose check ran out of budget, or else every legal move, as `threat_moves` does.

Batch-level `lax.cond`s skip what no board needs; on the CPU the boards go one at a time
(`lax.map`), as in `threat_moves`.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import jax
import jax.numpy as jnp

from gomoku_jax import configs
from gomoku_jax.games.gomoku import threat_moves
from gomoku_jax.games.gomoku.features.patterns import (
    FIVE,
    FOUR,
    OPEN_FOUR,
    OPEN_THREE,
    threats,
)
from gomoku_jax.games.gomoku.features.proximity import proximity_mask
from gomoku_jax.games.gomoku.state import State
from gomoku_jax.games.gomoku.vct import VCTConfig, check_rule, near_cells, opponent_vct, vct


def forcing_moves(states: State, max_nodes: int, vct_nodes: int, vct_depth: int = 6,
                  defend: bool = False, max_candidates: int = 8,
                  one_board_at_a_time: Optional[bool] = None
                  ) -> tuple[jax.Array, jax.Array]:
    """(win int32[B]: a move that starts a VCF or a VCT of the side to move, -1 where none
    was found; allowed bool[B, N*N]: the moves worth searching).

    Args:
      states: Gomoku states, leaves [B, ...] (freestyle or exact5: ValueError otherwise).
      max_nodes: each VCF search's budget (`threat_moves.forcing_moves`); vct_nodes,
        vct_depth: each VCT search's (`VCTConfig`); all static.
      defend: also restrict the root to the refutations of the opponent's VCT (static).
      max_candidates: K moves checked as refutations (static).
      one_board_at_a_time: `lax.map` over the boards (default: on the CPU backend only).
    """
    cfg = states.config
    n, k, rule = cfg.board_size, cfg.win_length, cfg.rule
    check_rule(k, rule)
    configs.check_int("vct_nodes", vct_nodes, 1)
    configs.check_int("max_candidates", max_candidates, 1)
    configs.check_int("vct_depth", vct_depth, 2)
    config = VCTConfig(max_depth=vct_depth, max_nodes=vct_nodes)
    if one_board_at_a_time is None:
        one_board_at_a_time = jax.default_backend() == "cpu"
    if one_board_at_a_time and states.board.shape[0] > 1:
        def one(state: State) -> tuple[jax.Array, jax.Array]:
            out = forcing_moves(jax.tree.map(lambda x: x[None], state), max_nodes, vct_nodes,
                                vct_depth, defend, max_candidates, one_board_at_a_time=True)
            return jax.tree.map(lambda x: x[0], out)
        return jax.lax.map(one, states)

    # (a batch of one when one board at a time: the VCF's one-board layout)
    win, allowed = threat_moves.forcing_moves(states, max_nodes,
                                              one_board_at_a_time=one_board_at_a_time)
    boards, me, over = states.board, states.color, states.terminated
    legal = states.legal_action_mask & ~over[:, None]
    searching = (win < 0) & ~over
    # (a win by one three first: depth-first search may meet a longer line first)
    own_config = dataclasses.replace(config, first_depth=min(2, vct_depth))
    own = jax.lax.cond(
        jnp.any(searching),
        lambda: jax.vmap(lambda b, c: vct(b, c, k, rule, own_config).move)(boards, me),
        lambda: jnp.full(win.shape, -1, jnp.int32))
    win = jnp.where(searching & (own >= 0), own, win).astype(jnp.int32)
    if not defend:
        return win, allowed

    def refute(board, me, legal, their_move):
        a = n * n
        near = jnp.zeros((a + 1,), bool).at[jnp.asarray(near_cells(n, k))[
            jnp.maximum(their_move, 0)]].set(True)[:a]
        codes = threats(board, me, k, rule).reshape(a, 4)
        mine = jnp.any((codes == FOUR) | (codes == OPEN_FOUR) | (codes == OPEN_THREE), axis=-1)
        five = jnp.any(codes == FIVE, axis=-1)
        order = (4.0 * (jnp.arange(a) == their_move) + 2.0 * near + mine
                 + proximity_mask(board).reshape(-1))
        score = jnp.where(legal, order, -jnp.inf)
        top, picks = jax.lax.top_k(score, min(max_candidates, a))
        valid = top > -jnp.inf
        picks = picks.astype(jnp.int32)
        after = jax.vmap(lambda m: board.reshape(a).at[m].set(me).reshape(n, n))(picks)
        res = jax.vmap(lambda b: opponent_vct(b, me, k, rule, config))(after)
        five = five[picks]  # our five ends the game: it refutes everything
        refutes = valid & (five | (~res.found & ~res.exhausted))
        unknown = valid & ~five & res.exhausted

        def scatter(x):
            return jnp.zeros((a,), bool).at[jnp.where(valid, picks, a)].set(x, mode="drop")

        refutes, unknown = scatter(refutes), scatter(unknown)
        rest = jnp.where(jnp.any(unknown), unknown, legal)
        return jnp.where(jnp.any(refutes), refutes, rest)

    unthreatened = searching & (win < 0) & ~jnp.any(allowed != legal, axis=-1)
    theirs = jax.lax.cond(
        jnp.any(unthreatened),
        lambda: jax.vmap(lambda b, c: opponent_vct(b, c, k, rule, config))(boards, me).move,
        lambda: jnp.full(win.shape, -1, jnp.int32))
    threatened = unthreatened & (theirs >= 0)
    allowed = jax.lax.cond(
        jnp.any(threatened),
        lambda: jnp.where(threatened[:, None],
                          jax.vmap(refute)(boards, me, legal, theirs), allowed),
        lambda: allowed)
    return win, allowed
