"""Board heuristics as pure JAX maps `f(board, colour) -> [N, N]`: proximity mask, threat
patterns, HeuristicScore, and the cell values built from them."""

from gomoku_jax.games.gomoku.features.cell_values import CellValues, cell_values, position_value
from gomoku_jax.games.gomoku.features.heuristic_score import (
    HeuristicScoreConfig,
    cscore,
    f_range,
    heuristic_score_map,
    score,
    total_score,
)
from gomoku_jax.games.gomoku.features.patterns import (
    CLOSED_THREE,
    FIVE,
    FOUR,
    NONE,
    OPEN_FOUR,
    OPEN_THREE,
    OPEN_TWO,
    PATTERN_NAMES,
    PatternConfig,
    pattern_counts,
    pattern_features,
    pattern_scores,
    threats,
)
from gomoku_jax.games.gomoku.features.proximity import ProximityConfig, proximity_mask

__all__ = [
    "CellValues", "cell_values", "position_value",
    "CLOSED_THREE", "FIVE", "FOUR", "NONE", "OPEN_FOUR", "OPEN_THREE", "OPEN_TWO",
    "PATTERN_NAMES", "HeuristicScoreConfig", "PatternConfig", "ProximityConfig", "cscore",
    "f_range", "heuristic_score_map", "pattern_counts", "pattern_features", "pattern_scores",
    "proximity_mask", "score", "threats", "total_score",
]
