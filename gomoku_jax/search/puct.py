"""PUCT: AlphaZero's search (mctx's MuZero selection) with the seeds' exploration features,
masked children excluded at every depth.

Root: the shaped prior (`prior_shaping`), plus Dirichlet noise over the candidates only
(ε = `dirichlet_fraction`, α adaptive); interior: PUCT with the configured Q term; move:
the most visited (greedy) or a sample at the move temperature.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Optional

import jax
import mctx

from gomoku_jax.configs import UnitFloat
from gomoku_jax.search import noise, selection
from gomoku_jax.search.base import SearchAlgorithm, SearchOutput, VisitSampling, check_tree_memory
from gomoku_jax.search.model import search_tree

Q_TRANSFORMS = ("alphazero", "parent", "parent_and_siblings", "min_max")


def qtransform(name: str):
    """The Q transform called `name`: "alphazero" (seed 001: the mean value W/N in [-1, 1],
    0 for an unvisited move), "parent" (W/N, an unvisited move at the node's own mean
    value), or mctx's "parent_and_siblings" and "min_max" (which give an unvisited move the
    lowest value in sight, so a move with a small prior is never tried once a sibling looks
    fine: that hides short tactical wins)."""
    if name == "alphazero":
        return selection.alphazero_qtransform
    if name == "parent":
        return selection.parent_value_qtransform
    if name == "min_max":
        return functools.partial(mctx.qtransform_by_min_max, min_value=-1.0, max_value=1.0)
    return mctx.qtransform_by_parent_and_siblings


@dataclasses.dataclass(frozen=True)
class PUCT(VisitSampling, SearchAlgorithm):
    """PUCT search. Defaults are seed 001's exploration (self-play); `for_play()` turns the
    noise off and plays the most visited move.

    Attributes (besides `SearchAlgorithm`'s and `VisitSampling`'s):
      pb_c_init, pb_c_base: PUCT's exploration constants (mctx's defaults).
      q_transform: see `qtransform`.
      dirichlet_fraction, dirichlet_alpha, adaptive_alpha: root noise ε, α0, and α =
        (A / legal moves) × α0 when adaptive (seed 001: 0.2, 0.3, adaptive).
    """

    name = "puct"

    pb_c_init: float = 1.25
    pb_c_base: float = 19652.0
    q_transform: str = "alphazero"
    dirichlet_fraction: UnitFloat = 0.2
    dirichlet_alpha: float = 0.3
    adaptive_alpha: bool = True

    def __post_init__(self):
        super().__post_init__()
        self._check_sampling()
        if self.q_transform not in Q_TRANSFORMS:
            raise ValueError(f"q_transform must be one of {Q_TRANSFORMS}, got "
                             f"{self.q_transform!r}")
        if not self.dirichlet_alpha > 0:
            raise ValueError(f"dirichlet_alpha must be > 0, got {self.dirichlet_alpha!r}")

    def for_play(self) -> "PUCT":
        return dataclasses.replace(self, dirichlet_fraction=0.0, greedy=True)

    def search_model(self, model, params: Any, states: Any, key: jax.Array,
                     num_simulations: int, tree: Optional[mctx.Tree] = None) -> SearchOutput:
        k_root, k_noise, k_search, k_move = jax.random.split(key, 4)
        root, allowed = model.root(params, k_root, states)
        check_tree_memory(model, root.embedding, num_simulations, self.max_tree_bytes)
        if self.dirichlet_fraction > 0:
            alpha = noise.dirichlet_alpha(model.legal_moves(states), self.dirichlet_alpha,
                                          self.adaptive_alpha)
            root = root.replace(prior_logits=noise.add_root_noise(
                root.prior_logits, allowed, alpha, self.dirichlet_fraction, k_noise))
        select = functools.partial(selection.puct_selection, pb_c_init=self.pb_c_init,
                                   pb_c_base=self.pb_c_base,
                                   qtransform=qtransform(self.q_transform),
                                   **selection.solver_kwargs(self))
        tree = search_tree(model, self, params, root, allowed, k_search,
                         num_simulations, select, tree=tree)
        return selection.visit_output(self, model, states, tree, k_move)
