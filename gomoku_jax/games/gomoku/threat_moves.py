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

Pure JAX over a batch of states, in one of two layouts with the same answers:

- batched (the default off the CPU): the searches vmapped over the boards, with
  batch-level `lax.cond`s around the costly parts. A vmapped while loop runs until its
  slowest board is done, and a batch-level cond runs its costly branch for every board
  when one needs it.
- one board at a time (the default on the CPU, where vmap gains little): `lax.map` over
  the boards, each paying only for its own searches (8-22x faster at batch 16 on mid-game
  15x15 positions, `experiments/bench_vcf.py`). A board's searches (its own VCF, the
  opponent's, the shortest line, the K refutation checks) run in turn through a single VCF
  search in a loop, so the program holds one copy of the search instead of four: a search
  agent that uses this hook compiles in about half the time.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Optional

import jax
import jax.numpy as jnp

from gomoku_jax.games.gomoku.features.patterns import FOUR, OPEN_FOUR, threats
from gomoku_jax.games.gomoku.features.proximity import proximity_mask
from gomoku_jax.games.gomoku.state import State
from gomoku_jax.games.gomoku.vcf import (
    Refutations,
    VCFConfig,
    VCFResult,
    collect_refutations,
    opponent_vcf,
    refutation_picks,
    refutations,
    vcf,
)


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
    if one_board_at_a_time:
        return jax.lax.map(functools.partial(_one_board, max_nodes=max_nodes,
                                             max_depth=max_depth,
                                             max_candidates=max_candidates), states)
    cfg = states.config
    k, rule = cfg.win_length, cfg.rule
    config = VCFConfig(max_depth=max_depth, max_nodes=max_nodes)
    boards, me, over = states.board, states.color, states.terminated
    legal = states.legal_action_mask & ~over[:, None]
    own = jax.vmap(lambda b, c: vcf(b, c, k, rule, config))(boards, me)
    theirs = jax.vmap(lambda b, c: opponent_vcf(b, c, k, rule, config))(boards, me)

    def refute(board, me, legal, their_line):
        order = _refutation_order(board, me, k, rule, their_line)
        return _kept(refutations(board, me, legal, k, rule, config, max_candidates, order),
                     legal)

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


def _refutation_order(board: jax.Array, me: jax.Array, k: int, rule: str,
                      their_line: jax.Array) -> jax.Array:
    """float32[N*N]: which of our moves to check first as refutations of the opponent's VCF
    `their_line`: the cells of that line, then our own fours, then by proximity."""
    n = board.shape[-1]
    line = jnp.zeros((n * n,), bool).at[jnp.where(their_line >= 0, their_line,
                                                  n * n)].set(True, mode="drop")
    codes = threats(board, me, k, rule).reshape(n * n, 4)
    my_fours = jnp.any((codes == FOUR) | (codes == OPEN_FOUR), axis=-1)
    return 4.0 * line + 2.0 * my_fours + proximity_mask(board).reshape(-1)


def _kept(out: Refutations, legal: jax.Array) -> jax.Array:
    """bool[N*N]: the root's moves when the opponent has a VCF: the proven refutations;
    none proven: the unresolved ones (the budget ran out), else every move (they all lose to
    a VCF we know of; the search picks the toughest)."""
    rest = jnp.where(jnp.any(out.unknown), out.unknown, legal)
    return jnp.where(jnp.any(out.refutes), out.refutes, rest)


# The searches of one board, in the order they run (`_one_board`); the refutation checks
# follow, one per candidate.
_OWN, _THEIRS, _SHORTEST, _REFUTE = 0, 1, 2, 3


def _one_board(state: State, max_nodes: int, max_depth: int, max_candidates: int
               ) -> tuple[jax.Array, jax.Array]:
    """`forcing_moves` of one board (no batch axis): (win int32[], allowed bool[N*N]).

    Every VCF search of the board goes through one `vcf` call in a while loop over the
    jobs: its own VCF, the opponent's, a shortest line (only when its own is longer than one
    four) and the K refutation checks (only when the opponent has a VCF and it has none; a
    candidate that completes our five needs no check). A job that is not needed is skipped
    by a `lax.cond`; the loop stops after the third job when nothing is threatened. Each
    job's board and attacker follow from the ones before (the refutation candidates from
    the opponent's line), exactly as in the batched layout.
    """
    cfg = state.config
    n, k, rule = cfg.board_size, cfg.win_length, cfg.rule
    a = n * n
    config = VCFConfig(max_depth=max_depth, max_nodes=max_nodes)
    board, me, over = state.board, state.color, state.terminated
    flat = jnp.asarray(board, jnp.int8).reshape(a)
    legal = state.legal_action_mask & ~over
    num_jobs = _REFUTE + min(max_candidates, a)

    def search(job_board, attacker, shortest):
        return vcf(job_board, attacker, k, rule, config, shortest=shortest)

    # a job not run: nothing found, nothing exhausted (and -1 for the moves)
    shapes = jax.eval_shape(search, board, me, jnp.bool_(False))
    nothing = VCFResult(*(jnp.full(x.shape, -1 if x.dtype == jnp.int32 else 0, x.dtype)
                          for x in shapes))
    results = jax.tree.map(lambda x: jnp.stack([x] * num_jobs), nothing)

    def picks_of(results: VCFResult):
        theirs = jax.tree.map(lambda x: x[_THEIRS], results)
        order = _refutation_order(board, me, k, rule, theirs.line)
        return refutation_picks(board, me, legal, k, rule, max_candidates, order)

    def threatened(results: VCFResult) -> jax.Array:
        return results.found[_THEIRS] & ~results.found[_OWN] & ~over

    def run(carry):
        job, results, picks = carry
        own = jax.tree.map(lambda x: x[_OWN], results)
        # the candidates follow from the opponent's line: picked once, at the first check
        picks = jax.lax.cond(job == _REFUTE, lambda r, _: picks_of(r), lambda _, p: p,
                             results, picks)
        r = jnp.clip(job - _REFUTE, 0, picks.moves.shape[0] - 1)
        refuting = job >= _REFUTE
        job_board = jnp.where(refuting, flat.at[picks.moves[r]].set(me), flat).reshape(n, n)
        attacker = jnp.where((job == _THEIRS) | refuting, -me, me).astype(jnp.int8)
        needed = jnp.select(
            [job == _OWN, job == _THEIRS, job == _SHORTEST],
            [~over, ~over & ~own.found, ~over & own.found & (own.depth > 1)],
            threatened(results) & picks.valid[r] & ~picks.five[r])
        res = jax.lax.cond(needed, search, lambda *_: nothing, job_board, attacker,
                           job == _SHORTEST)
        return (job + 1, jax.tree.map(lambda all_, x: all_.at[job].set(x), results, res),
                picks)

    def more(carry):
        job, results, _ = carry
        return (job < _REFUTE) | ((job < num_jobs) & threatened(results))

    # no candidates until the first check picks them
    unpicked = jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype),
                            jax.eval_shape(picks_of, results))
    _, results, picks = jax.lax.while_loop(more, run, (jnp.int32(0), results, unpicked))
    own, short = (jax.tree.map(lambda x: x[j], results) for j in (_OWN, _SHORTEST))
    checks = jax.tree.map(lambda x: x[_REFUTE:], results)
    refuted = _kept(collect_refutations(picks, checks.found, checks.exhausted, a), legal)
    allowed = jnp.where(threatened(results), refuted, legal)
    long = own.found & (own.depth > 1) & ~over
    move = jnp.where(long & short.found, short.move, own.move)
    return jnp.where(own.found & ~over, move, -1).astype(jnp.int32), allowed
