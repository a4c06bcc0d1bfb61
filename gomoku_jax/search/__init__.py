"""Search algorithms as plug-ins over any env and evaluator, on mctx's data structures.

    algorithm = search.make("puct", dirichlet_fraction=0.0, greedy=True)
    out = algorithm.search(env, evaluator, params, states, key, num_simulations=64)

Adding an algorithm: a module with a frozen `SearchAlgorithm` subclass (its fields are its
config; see `pure_mcts.py`, the worked example) and one line in `ALGORITHMS`. Agents,
self-play, the arena, pbrain and the benchmarks then pick it up by name.
"""

from __future__ import annotations

from typing import Any

from gomoku_jax.registry import Registry
from gomoku_jax.search.base import (
    SearchAlgorithm,
    SearchOutput,
    VisitSampling,
    check_tree_memory,
    tree_bytes,
)
from gomoku_jax.search.evaluators import (
    Evaluator,
    NetworkEvaluator,
    RolloutEvaluator,
    UniformEvaluator,
)
from gomoku_jax.search.gumbel import Gumbel
from gomoku_jax.search.puct import PUCT
from gomoku_jax.search.pure_mcts import PureMCTS

# One line per algorithm: name -> its config class.
ALGORITHMS = Registry("search algorithm", {
    "puct": PUCT,
    "gumbel": Gumbel,
    "pure_mcts": PureMCTS,
})


def make(name: str, **config: Any) -> SearchAlgorithm:
    """A search algorithm by name with its config fields, e.g. `make("puct", greedy=True)`
    (values may be text: `make("puct", greedy="true")`).

    Raises:
      ValueError: an unknown name or field (the message lists the valid ones), or a value
        the algorithm refuses.
    """
    return ALGORITHMS.make(name, **config)


__all__ = ["ALGORITHMS", "Evaluator", "Gumbel", "NetworkEvaluator", "PUCT", "PureMCTS",
           "RolloutEvaluator", "SearchAlgorithm", "SearchOutput", "UniformEvaluator",
           "VisitSampling", "check_tree_memory", "make", "tree_bytes"]
