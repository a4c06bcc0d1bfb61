"""Search algorithms as plug-ins over any env and evaluator, on mctx's data structures.

    algorithm = search.make("puct", dirichlet_fraction=0.0, greedy=True)
    out = algorithm.search(env, evaluator, params, states, key, num_simulations=64)
    out = algorithm.search_model(model, params, states, key, num_simulations=64)

`search` searches the real game (the env model, `EnvModel`); `search_model` any `Model`
(mctx's root and `recurrent_fn`: a learned dynamics network, as `MuZeroModel`;
`search/model.py` gives the protocol).

Adding an algorithm: a module with a frozen `SearchAlgorithm` subclass (its fields are its
config; see `pure_mcts.py`, the worked example) and one registration,
`ALGORITHMS.register(name, cls)` (from outside the package:
`gomoku_jax.plugins.register("search algorithm", name)`, docs/plugins.md). Agents,
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
from gomoku_jax.search.env_model import EnvModel
from gomoku_jax.search.evaluators import (
    Evaluator,
    NetworkEvaluator,
    RolloutEvaluator,
    UniformEvaluator,
)
from gomoku_jax.search.gumbel import Gumbel
from gomoku_jax.search.model import Model
from gomoku_jax.search.muzero_model import MuZeroModel
from gomoku_jax.search.puct import PUCT
from gomoku_jax.search.pure_mcts import PureMCTS

# name -> its config class, registered as every plug-in is (`ALGORITHMS.register(name, cls)`,
# or `gomoku_jax.plugins.register("search algorithm")` from outside the package).
ALGORITHMS = Registry("search algorithm")
ALGORITHMS.register("puct", PUCT)
ALGORITHMS.register("gumbel", Gumbel)
ALGORITHMS.register("pure_mcts", PureMCTS)


def make(name: str, **config: Any) -> SearchAlgorithm:
    """A search algorithm by name with its config fields, e.g. `make("puct", greedy=True)`
    (values may be text: `make("puct", greedy="true")`).

    Raises:
      ValueError: an unknown name or field (the message lists the valid ones), or a value
        the algorithm refuses.
    """
    return ALGORITHMS.make(name, **config)


__all__ = ["ALGORITHMS", "EnvModel", "Evaluator", "Gumbel", "Model", "MuZeroModel",
           "NetworkEvaluator", "PUCT", "PureMCTS", "RolloutEvaluator", "SearchAlgorithm",
           "SearchOutput", "UniformEvaluator", "VisitSampling", "check_tree_memory", "make",
           "tree_bytes"]
