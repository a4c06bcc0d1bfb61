"""Threat proofs at the search's leaves (Gomoku's `Env.leaf_proof` hook, for the
MCTS-Solver's `proof_nodes`): what a cheap, sound check proves about the side to move.

- +1, won: the side to move has a VCF within the budget (`vcf.py`; a five on the board's
  next move is a VCF of depth 0).
- -1, lost: the opponent has two or more five cells and the side to move none: it can
  block one, and the opponent completes another. (Not under the caro rules, where a stone
  past the end of a run can kill a five cell: there only the VCF proves.)
- 0: nothing proven, and on a finished game.

The opponent's VCF is not a proof of a loss: the side to move may have a defence (a four of
its own, a block inside the line), which only a search of every reply could rule out. The
solver proves those positions in the tree, from the children's proofs.

Pure JAX over a batch of states: the VCF searches one board at a time (`lax.map`) on the
CPU, where a vmapped while loop waits for its slowest board, and vmapped elsewhere (as
`threat_moves.forcing_moves`).
"""

from __future__ import annotations

import functools
from typing import Optional

import jax
import jax.numpy as jnp

from gomoku_jax.games.gomoku.config import CARO_RULES
from gomoku_jax.games.gomoku.features.patterns import five_cells
from gomoku_jax.games.gomoku.state import State
from gomoku_jax.games.gomoku.vcf import VCFConfig, vcf

MAX_DEPTH = 8  # fours in a proving VCF, at most (as the root's)


def leaf_proof(states: State, max_nodes: int, max_depth: int = MAX_DEPTH,
               one_board_at_a_time: Optional[bool] = None) -> jax.Array:
    """int8[B]: +1 the side to move wins by force, -1 it loses by force, 0 unknown (see the
    module docstring).

    Args:
      states: Gomoku states, leaves [B, ...]. max_nodes, max_depth: the VCF's bounds
        (`VCFConfig`, static). one_board_at_a_time: `lax.map` over the boards instead of
        vmap (static); default: on the CPU backend only.
    """
    if one_board_at_a_time is None:
        one_board_at_a_time = jax.default_backend() == "cpu"
    cfg = states.config
    one = functools.partial(_one_board, win_length=cfg.win_length, rule=cfg.rule,
                            config=VCFConfig(max_depth=max_depth, max_nodes=max_nodes))
    args = (states.board, states.color, states.terminated | states.truncated)
    if one_board_at_a_time:
        return jax.lax.map(lambda a: one(*a), args)
    return jax.vmap(one)(*args)


def _one_board(board: jax.Array, me: jax.Array, over: jax.Array, win_length: int, rule: str,
               config: VCFConfig) -> jax.Array:
    """int8[]: `leaf_proof` of one board (int8[N, N], `me` the side to move)."""
    won = vcf(board, me, win_length, rule, config).found
    if rule in CARO_RULES:
        lost = jnp.bool_(False)
    else:  # `won` covers a five cell of our own
        lost = jnp.sum(five_cells(board, -me, win_length, rule)) >= 2
    proof = jnp.where(won, 1, jnp.where(lost, -1, 0))
    return jnp.where(over, 0, proof).astype(jnp.int8)
