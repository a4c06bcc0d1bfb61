"""What every search algorithm shares: its output, its config base, and the tree-size check.

A search algorithm is a frozen dataclass of its knobs (a subclass of `SearchAlgorithm`)
whose `search` method runs it on a batch of env states:

    out = algorithm.search(env, evaluator, params, states, key, num_simulations)
    out = algorithm.search_model(model, params, states, key, num_simulations)

- `env`: any game (`games.protocol.Env`); the search steps it inside the tree (the env
  model, `env_model.EnvModel`). `search_model` searches any model instead (`model.Model`:
  mctx's root and `recurrent_fn`, e.g. a learned dynamics network).
- `evaluator(env, params, states, key) -> (logits float32[B, A], value float32[B])`, the
  value for each state's side to move in [-1, 1] (`search.evaluators`).
- `states`: leaves with a leading batch axis B; `key` is consumed.
- `out`: a `SearchOutput` (action, policy, root value, and the tree for inspection).

The fields every algorithm has (defined here) shape what the evaluator says; the rest are
the algorithm's own. `for_play()` gives the full-strength copy that playing agents use
(no exploration noise, greedy), while self-play passes its exploration config. Registering
an algorithm: subclass `SearchAlgorithm`, implement `search_model`, register the class.
"""

from __future__ import annotations

import abc
import dataclasses
import os
from typing import Any, ClassVar, NamedTuple, Optional

import jax
import mctx

from gomoku_jax import configs
from gomoku_jax.configs import NonNegativeInt, PositiveInt, UnitFloat
from gomoku_jax.search.env_model import EnvModel

PRIOR_SHAPING = ("soft", "hard", "off")
LOOPS = ("gomoku_jax", "mctx")
SYMMETRY_MODES = ("random", "average", "none")


class SearchOutput(NamedTuple):
    """action int32[B]; policy float32[B, A] (visit distribution, or Gumbel's improved
    policy: the training target); value float32[B] (the root's value for the side to move);
    tree: the `mctx.Tree` the search built (leaves [B, ...]), for inspection."""

    action: jax.Array
    policy: jax.Array
    value: jax.Array
    tree: mctx.Tree


@dataclasses.dataclass(frozen=True)
class SearchAlgorithm(abc.ABC):
    """Base of every search algorithm's config (all static; hashable, so a jit argument).

    Attributes:
      prior_shaping: how the game's `candidate_weights` (Gomoku: seed 000's proximity mask)
        shape the prior at every node: "soft" multiplies it in, "hard" drops the moves whose
        weight is under `candidate_threshold` (all legal moves if that leaves none), "off".
      candidate_threshold: the weight a move needs under "hard" shaping.
      symmetry: at every evaluation, "random" evaluates the position under one random
        element of the game's symmetry group and maps the policy back (seed 001),
        "average" averages over the whole group, "none" evaluates as is.
      value_discount: the value is multiplied by this per ply (seed 001: 0.8 .. 1.0).
      max_tree_bytes: the tree's memory limit (None: half of the device's memory).
      loop: the simulation loop: "gomoku_jax" (`search/tree_loop.py`: a path-only backward,
        O(depth) per simulation, and it continues from a given tree) or "mctx"
        (`mctx.search`, for comparison; the same trees, no tree reuse).
      leaves_per_step: W, leaf parallelism (for play at batch 1): each step of the loop
        descends W times per board with a virtual loss and evaluates the W leaves in one
        batched evaluator call (B·W rows), so a search of S simulations makes S / W calls
        (S must be a multiple of W). Descents of a step that end on the same unvisited edge
        are dropped (fewer nodes and root visits than S). 1: one leaf per call, the loop
        as `mctx.search`. Needs loop "gomoku_jax"; Gumbel refuses W > 1.
      virtual_loss: the virtual visits (each a loss for the edge's chooser) a descent puts
        on its path for the later descents of its step (`loop.apply_virtual_loss`); 0 for
        none. Used only when `leaves_per_step` > 1.
      stop_at_terminal: with our loop, a descent that reaches a game-over node stops there
        and backs its result up again. mctx (and `False`) expands a node under it, so a
        decided line grows one node deeper at every visit: one board's chain of 100 nodes
        made every simulation of a 256-board batch wait for its 100-step descent.
      solver: MCTS-Solver (Winands et al. 2008): wins, losses and draws proven in the tree
        are backed up exactly (a child proven lost for its mover makes its parent won; all
        children proven makes the parent the best of them), proven subtrees are not
        searched again, and selection takes a proven win and never a proven loss while
        another move is open (`tree_loop.path_backward`, `selection.solver_choice`). The
        game's end proves a node; `proof_nodes` proves more. Needs loop "gomoku_jax" and
        `stop_at_terminal`.
      proof_nodes: with the solver, every expanded leaf of the env model is first checked
        by the game's threat proof with this node budget (`Env.leaf_proof`; Gomoku: a VCF
        for the side to move, and an unanswerable double threat against it); a proven leaf
        becomes an absorbing edge with its exact result. 0: off (games without the hook
        prove nothing).
    """

    name: ClassVar[str] = "search"

    prior_shaping: str = "soft"
    candidate_threshold: UnitFloat = 0.1
    symmetry: str = "random"
    value_discount: UnitFloat = 1.0
    max_tree_bytes: Optional[PositiveInt] = None
    loop: str = "gomoku_jax"
    leaves_per_step: PositiveInt = 1
    virtual_loss: NonNegativeInt = 1
    stop_at_terminal: bool = True
    solver: bool = False
    proof_nodes: NonNegativeInt = 0

    def __post_init__(self):
        configs.validate(self, "search")  # every field's type and range, subclasses' too
        if self.solver and (self.loop != "gomoku_jax" or not self.stop_at_terminal):
            raise ValueError(f"solver needs loop='gomoku_jax' and stop_at_terminal=True, got "
                             f"loop={self.loop!r}, stop_at_terminal={self.stop_at_terminal}")
        if self.proof_nodes and not self.solver:
            raise ValueError(f"proof_nodes={self.proof_nodes} (threat proofs at the leaves) "
                             f"needs solver=True to back the proofs up")
        if self.loop not in LOOPS:
            raise ValueError(f"loop must be one of {LOOPS}, got {self.loop!r}")
        if self.leaves_per_step > 1 and self.loop != "gomoku_jax":
            raise ValueError(f"leaves_per_step > 1 (leaf parallelism) needs loop='gomoku_jax', "
                             f"got loop={self.loop!r} with leaves_per_step="
                             f"{self.leaves_per_step}")
        if self.prior_shaping not in PRIOR_SHAPING:
            raise ValueError(f"prior_shaping must be one of {PRIOR_SHAPING}, got "
                             f"{self.prior_shaping!r}")
        if self.symmetry not in SYMMETRY_MODES:
            raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, got {self.symmetry!r}")

    def search(self, env, evaluator, params: Any, states: Any, key: jax.Array,
               num_simulations: int, tree: Optional[mctx.Tree] = None,
               root_mask: Optional[jax.Array] = None) -> SearchOutput:
        """Search the real game from every state of the batch and choose a move for each:
        `search_model` over the env model (`env_model.EnvModel(env, evaluator, self,
        root_mask)`; see the module docstring). `root_mask` bool[B, A]: restrict the root's
        candidates to it too (a board where that leaves none keeps its candidates)."""
        return self.search_model(EnvModel(env, evaluator, self, root_mask), params, states,
                                 key, num_simulations, tree=tree)

    @abc.abstractmethod
    def search_model(self, model, params: Any, states: Any, key: jax.Array,
                     num_simulations: int, tree: Optional[mctx.Tree] = None) -> SearchOutput:
        """Search `model` (a `model.Model`: its `root` and `recurrent_fn`, as mctx's
        policies take them) from every state of the batch and choose a move for each.
        `tree`: continue from this tree (leaves [B, N, ...], N >= S + 1; its root is the
        root's embedding wherever its root is visited, e.g. `reuse.reroot`'s), where it has
        room for the S new nodes; None: a fresh tree of S + 1 nodes. Raises ValueError at
        trace time when the tree would not fit, or for a tree with `loop="mctx"`."""

    def for_play(self) -> "SearchAlgorithm":
        """The full-strength copy of this config: no exploration noise, greedy."""
        return self


@dataclasses.dataclass(frozen=True)
class VisitSampling:
    """How an algorithm that counts visits turns them into a move: the most visited
    (`greedy`), or a sample at temperature τ_t = max(τ0 · decay^t, τ_min), t the game's move
    number (seed 001: 0.8, 0.9, 0.05)."""

    temperature: float = 0.8
    temperature_decay: float = 0.9
    temperature_min: float = 0.05
    greedy: bool = False

    def _check_sampling(self):
        for name in ("temperature", "temperature_min", "temperature_decay"):
            if not getattr(self, name) > 0:  # an open range: past what `Bounds` says
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")


def tree_bytes(batch: int, num_simulations: int, num_actions: int, embedding_bytes: int) -> int:
    """Approximate memory of an mctx tree: B·(S+1)·(24·A + embedding bytes)."""
    return batch * (num_simulations + 1) * (24 * num_actions + embedding_bytes)


def _memory_limit() -> int:
    """Half of the default device's memory (or of the host's RAM on CPU)."""
    try:
        stats = jax.devices()[0].memory_stats() or {}
    except Exception:  # some backends don't report
        stats = {}
    if "bytes_limit" in stats:
        return int(stats["bytes_limit"]) // 2
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def check_tree_memory(model, embedding: Any, num_simulations: int,
                      max_tree_bytes: Optional[int] = None) -> int:
    """Tree bytes for this batch; ValueError if over `max_tree_bytes` (default: half of the
    device memory). `model`: anything with `num_actions` (a model, an env); `embedding`: the
    root's embeddings (leaves [B, ...]; the env model's are the states). Runs at trace time,
    on shapes only."""
    leaves = jax.tree.leaves(embedding)
    batch = leaves[0].shape[0]
    per_state = sum(x.dtype.itemsize * x.size for x in leaves) // batch
    need = tree_bytes(batch, num_simulations, model.num_actions, per_state)
    limit = max_tree_bytes if max_tree_bytes is not None else _memory_limit()
    if need > limit:
        raise ValueError(
            f"the search tree would need about {need / 2**30:.2f} GiB (batch {batch} x "
            f"{num_simulations + 1} nodes x (24 x {model.num_actions} + {per_state}) bytes) "
            f"but the limit is {limit / 2**30:.2f} GiB: lower the batch or num_simulations, "
            f"or raise max_tree_bytes")
    return need
