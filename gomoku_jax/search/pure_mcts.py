"""Pure MCTS: UCT with random playouts, the classic baseline (OpenSpiel's MCTSBot, the
reference ladder of Gomoku AlphaZero projects: 1000 ... 5000 playouts).

Every allowed child of a node is visited once before any is revisited, then UCB1:
Q + c · sqrt(ln N / n). Leaves are valued by the evaluator (its agents use random playouts:
`RolloutEvaluator`), finished games by their result, and the move is the most visited
child. This is the worked example of a search plug-in: one module, one registry line.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Optional

import jax
import mctx

from gomoku_jax.configs import NonNegativeFloat
from gomoku_jax.search import selection
from gomoku_jax.search.base import SearchAlgorithm, SearchOutput, VisitSampling, check_tree_memory
from gomoku_jax.search.model import search_tree


@dataclasses.dataclass(frozen=True)
class PureMCTS(VisitSampling, SearchAlgorithm):
    """UCT search.

    Attributes (besides `SearchAlgorithm`'s and `VisitSampling`'s):
      exploration: c in Q + c · sqrt(ln N / n), for Q in [-1, 1] (OpenSpiel's uct_c = 2).
    Defaults differ from the other algorithms' where the classic baseline does: no prior
    shaping, no symmetries, the most visited move.
    """

    name = "pure_mcts"

    prior_shaping: str = "off"
    symmetry: str = "none"
    greedy: bool = True
    exploration: NonNegativeFloat = 2.0

    def __post_init__(self):
        super().__post_init__()
        self._check_sampling()

    def for_play(self) -> "PureMCTS":
        return dataclasses.replace(self, greedy=True)

    def search_model(self, model, params: Any, states: Any, key: jax.Array,
                     num_simulations: int, tree: Optional[mctx.Tree] = None) -> SearchOutput:
        k_root, k_search, k_move = jax.random.split(key, 3)
        root, allowed = model.root(params, k_root, states)
        check_tree_memory(model, root.embedding, num_simulations, self.max_tree_bytes)
        select = functools.partial(selection.uct_selection, exploration=self.exploration,
                                   **selection.solver_kwargs(self))
        tree = search_tree(model, self, params, root, allowed, k_search,
                         num_simulations, select, tree=tree)
        return selection.visit_output(self, model, states, tree, k_move)
