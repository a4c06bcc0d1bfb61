"""What a stone on each cell is worth to one colour, and a position value built from it.

Shared by the heuristic player (`agents/heuristic.py`) and the heuristic evaluator that backs
the search (`search/evaluators.py`), so both read a position the same way.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from gomoku_jax.games.gomoku.config import CARO_RULES
from gomoku_jax.games.gomoku.features.heuristic_score import (
    HeuristicScoreConfig,
    heuristic_score_map,
    lookup_heuristic_score,
)
from gomoku_jax.games.gomoku.features.lines import window_index
from gomoku_jax.games.gomoku.features.patterns import (
    FIVE,
    FOUR,
    OPEN_FOUR,
    PatternConfig,
    forbidden_for,
    lookup_threats,
    threats,
    use_threat_table,
)


class CellValues(NamedTuple):
    """For a stone of one colour on each cell (all [N, N]):

    value: float32, Σ over the 4 lines of `patterns.weights[code]` + score_weight ·
      HeuristicScore; wins: bool, the stone completes a five; double_threats: bool, the
      stone leaves two or more distinct cells that would each complete a five (an open
      four, or fours on two lines), so it wins in 3 plies unless the opponent can make a
      five first.
    """

    value: jax.Array
    wins: jax.Array
    double_threats: jax.Array


def cell_values(board: jax.Array, colour: jax.Array, win_length: int, rule: str,
                patterns: PatternConfig = PatternConfig(), score_weight: float = 1.0,
                heuristic_score: HeuristicScoreConfig = HeuristicScoreConfig(),
                method: str = "auto", forbidden: Optional[jax.Array] = None) -> CellValues:
    """board: int8[N, N]; colour: int8[] (+1 / -1).

    The threat codes follow `rule` (`patterns.threats`); under renju a point forbidden for
    black is worth nothing to black (value 0, no win, no threat): black cannot play it.
    forbidden: bool[N, N], black's forbidden points when the caller has them (renju only;
    default: computed here).

    method: how the threat codes and HeuristicScore are computed: "table" looks both up with
    one `window_index` of reach k (`lookup_threats`, `lookup_heuristic_score`; caro's
    threat table takes a base-4 index of its own); "scan" evaluates them on the line planes;
    "auto" (default) is "table" while the threat table fits (k <= 6; caro k <= 5), else
    `threats` and `heuristic_score_map` each choose.
    """
    k = win_length
    barred = forbidden_for(board, colour, rule, forbidden)
    if use_threat_table(k, method, rule):
        index = window_index(board, colour, k)
        walled = window_index(board, colour, k, walls=True) if rule in CARO_RULES else index
        codes = lookup_threats(walled, board, k, rule, colour, barred)
        score = lookup_heuristic_score(index, board, k, heuristic_score, reach=k)
    else:
        codes = threats(board, colour, k, rule, method, barred)
        score = heuristic_score_map(board, colour, k, heuristic_score, method)
    value = jnp.sum(jnp.take(jnp.asarray(patterns.weights, jnp.float32), codes, mode="clip"),
                    axis=-1)
    value = value + score_weight * score
    if barred is not None:
        value = jnp.where(barred, 0.0, value)
    double = jnp.any(codes == OPEN_FOUR, axis=-1) | (jnp.sum(codes == FOUR, axis=-1) >= 2)
    return CellValues(value, jnp.any(codes == FIVE, axis=-1), double)


def position_value(own: CellValues, opp: CellValues, legal: jax.Array,
                   value_scale: float) -> jax.Array:
    """float32[]: the side to move's outlook from its (`own`) and the opponent's cell values
    (legal: bool[N*N]). Exact where a short threat sequence decides: +1 with a five to
    complete, -1 facing two fives it cannot both block, +1 with a double threat to make when
    the opponent has no five to complete; else tanh((best own - best opponent) / scale)."""
    flat = lambda x: x.reshape(-1) & legal  # noqa: E731
    own_wins, opp_wins, own_double = flat(own.wins), flat(opp.wins), flat(own.double_threats)
    best_own = jnp.max(jnp.where(legal, own.value.reshape(-1), 0.0))
    best_opp = jnp.max(jnp.where(legal, opp.value.reshape(-1), 0.0))
    value = jnp.tanh((best_own - best_opp) / value_scale)
    value = jnp.where(jnp.any(own_double) & ~jnp.any(opp_wins), 1.0, value)
    value = jnp.where(jnp.sum(opp_wins) >= 2, -1.0, value)
    return jnp.where(jnp.any(own_wins), 1.0, value).astype(jnp.float32)
