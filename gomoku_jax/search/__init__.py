"""Search: mctx PUCT / Gumbel MuZero over the real env, backed by any evaluator."""

from gomoku_jax.search.evaluators import (EVALUATORS, HeuristicEvaluator, NetworkEvaluator,
                                          RolloutEvaluator, UniformEvaluator, make_evaluator)
from gomoku_jax.search.mcts import (SearchConfig, SearchOutput, add_root_noise,
                                    alphazero_qtransform, parent_value_qtransform,
                                    candidate_mask, check_tree_memory, dirichlet_alpha,
                                    move_temperature, search, tree_bytes)

__all__ = [
    "EVALUATORS", "HeuristicEvaluator", "NetworkEvaluator", "RolloutEvaluator", "SearchConfig",
    "SearchOutput", "UniformEvaluator", "add_root_noise", "alphazero_qtransform", "candidate_mask", "check_tree_memory",
    "parent_value_qtransform",
    "dirichlet_alpha", "make_evaluator", "move_temperature", "search", "tree_bytes",
]
