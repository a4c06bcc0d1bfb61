"""Agents backed by a named evaluator: tree search with any registered search algorithm,
and the evaluator's prior alone (`policy`)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp

from gomoku_jax.agents import evaluator_registry
from gomoku_jax.agents.base import BatchedAgent
from gomoku_jax.configs import NonNegativeInt, PositiveInt, UnitFloat
from gomoku_jax.games.protocol import Env
from gomoku_jax.games.random_play import random_legal_action
from gomoku_jax.search import reuse, tree_loop
from gomoku_jax.search.base import PRIOR_SHAPING, SYMMETRY_MODES, SearchAlgorithm
from gomoku_jax.search.gumbel import Gumbel
from gomoku_jax.search.prior import evaluate, shape_prior
from gomoku_jax.search.puct import PUCT
from gomoku_jax.search.pure_mcts import PureMCTS


@dataclasses.dataclass(frozen=True)
class _EvaluatorAgent(BatchedAgent):
    """Backed by the evaluator named `evaluator` (`agents.evaluator_registry.EVALUATORS`)
    with its options in `evaluator_config`, an instance of that evaluator's class (None:
    its defaults), e.g. `evaluator="rollout", evaluator_config=RolloutEvaluator(
    num_rollouts=8)`, in a spec `mcts:evaluator=rollout,num_rollouts=8`. "auto" is the
    game's own heuristic evaluator where it has one (Gomoku: "heuristic"), else random
    rollouts; "network" evaluates with `network` (its params are the agent's params);
    neither takes an evaluator_config."""

    network_kinds = ("policy_value",)  # as its evaluator (evaluator="network")

    evaluator: str = "auto"
    evaluator_config: Optional[Any] = None
    network: Optional[Callable] = None

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "evaluator_config", evaluator_registry.config_for(
            self.evaluator, self.evaluator_config))
        evaluator_registry.check(self.evaluator, self.evaluator_config, self.network)

    def check_game(self, env: Env) -> None:
        super().check_game(env)
        evaluator_registry.check(self.evaluator, self.evaluator_config, self.network, env)

    def evaluator_fn(self):
        """The evaluator object for the bound game."""
        return evaluator_registry.make(self.evaluator, self.game, self.network,
                                       self.evaluator_config)


@dataclasses.dataclass(frozen=True)
class SearchAgent(_EvaluatorAgent):
    """Tree search with the algorithm `search` (its class names it: PUCT, Gumbel, pure
    MCTS, ...; see `gomoku_jax.search`) and `num_simulations` simulations per move. The
    default config is PUCT at full strength (no root noise, the most visited move) with an
    unvisited move's Q at its parent's value (`q_transform="parent"`: with seed 001's 0, a
    side under pressure spreads its visits over untried moves, and 8x the simulations
    scored 73% against 1x where "parent" scores 86%; experiments/search_scaling.py);
    self-play passes its own exploration config. `info`: the search policy and the root value.

    With `reuse_tree` the agent state is the last search's tree (`mctx.Tree`, leaves
    [tree_capacity, ...] per game): at the next move the subtree under the node holding the
    position on the board (two plies on: the grandchild of the move played and the reply)
    becomes the search's tree with its statistics (`search.reuse`), or the search starts
    fresh when the position is not in the tree or its subtree leaves no room for
    `num_simulations` new nodes. Root noise, where the config has it, is drawn afresh on a
    reused root. `tree_capacity` 0 means 2 x num_simulations + 1. Needs the
    "gomoku_jax" loop. Off by default (an opt-in for play: arena, tournament, pbrain).

    `threat_search` > 0 runs the game's threat-space search at the root first
    (`Env.forcing_moves` with that node budget; Gomoku: VCF): a forced win found there is
    played, and when the opponent has one the root searches only the moves that refute it.
    0 turns it off (games without the hook ignore it). `vct_nodes` > 0 adds a VCT (victory
    by continuous threats, fours and threes) with that node budget after the VCF (Gomoku:
    `vct_moves.forcing_moves`; freestyle and exact5), and `vct_defend` the refutation of
    the opponent's VCT; off by default (measured: docs/search.md, "VCT at the root").

    The agents `mcts` and `puct` are this class; the other search agents are subclasses
    that only change defaults (`GumbelAgent`, `PureMCTSAgent`, `search_agent_class`).
    """

    search: SearchAlgorithm = PUCT(q_transform="parent").for_play()
    num_simulations: PositiveInt = 64
    reuse_tree: bool = False
    tree_capacity: NonNegativeInt = 0
    threat_search: NonNegativeInt = 512  # a node budget; 0: off
    vct_nodes: NonNegativeInt = 0  # a VCT node budget after the VCF; 0: off
    vct_defend: bool = False

    def __post_init__(self):
        super().__post_init__()
        if not isinstance(self.search, SearchAlgorithm):
            raise ValueError(f"search must be a search algorithm config, got {self.search!r}")
        if self.tree_capacity and self.tree_capacity < self.num_simulations + 1:
            raise ValueError(f"tree_capacity must be 0 (2 x num_simulations + 1) or at least "
                             f"num_simulations + 1 = {self.num_simulations + 1}, got "
                             f"{self.tree_capacity}")
        if self.num_simulations % self.search.leaves_per_step:
            raise ValueError(f"num_simulations ({self.num_simulations}) must be a multiple of "
                             f"the search's leaves_per_step ({self.search.leaves_per_step})")
        if (self.vct_nodes or self.vct_defend) and not self.threat_search:
            raise ValueError("vct_nodes / vct_defend need the threat search on (threat_search "
                             "> 0): the VCT runs after the VCF")
        if self.vct_defend and not self.vct_nodes:
            raise ValueError("vct_defend needs a VCT budget: vct_nodes > 0")
        if self.reuse_tree and self.search.loop != "gomoku_jax":
            raise ValueError("reuse_tree needs the search loop 'gomoku_jax' (mctx's cannot "
                             f"continue a tree), got loop={self.search.loop!r}")

    def check_game(self, env: Env) -> None:
        super().check_game(env)
        if self.vct_nodes and "vct_nodes" not in inspect.signature(env.forcing_moves).parameters:
            raise ValueError(f"vct_nodes: the game {env.id!r} has no VCT search; use 0")

    @property
    def name(self) -> str:
        return self.search.name

    @property
    def capacity(self) -> int:
        """Nodes of the tree carried between moves."""
        return self.tree_capacity or 2 * self.num_simulations + 1

    def init(self, key):
        """None, or with `reuse_tree` an empty tree (leaves [capacity, ...])."""
        if not self.reuse_tree:
            return None
        one = jax.tree.map(lambda x: x[None], self.game.init(key))
        return jax.tree.map(lambda x: x[0], tree_loop.empty_tree(one, self.capacity,
                                                                 self.game.num_actions))

    def forcing_moves(self, states) -> tuple[Optional[jax.Array], Optional[jax.Array]]:
        """(win int32[B], -1 where none; root_mask bool[B, A]) of the game's threat search
        (`threat_search` nodes), or (None, None) when it is off."""
        if not self.threat_search:
            return None, None
        if self.vct_nodes:  # (only games with a VCT take these)
            return self.game.forcing_moves(states, self.threat_search,
                                           vct_nodes=self.vct_nodes, vct_defend=self.vct_defend)
        return self.game.forcing_moves(states, self.threat_search)

    def search_from(self, params, states, key, num_simulations: int, tree=None,
                    root_mask=None):
        """`self.search.search` with this agent's game and evaluator (a `SearchOutput`)."""
        return self.search.search(self.game, self.evaluator_fn(), params, states, key,
                                  num_simulations, tree=tree, root_mask=root_mask)

    def act_batch(self, params, agent_states, states, keys):
        tree = None
        if self.reuse_tree:
            tree = reuse.continue_from(agent_states, states, self.num_simulations)
        win, root_mask = self.forcing_moves(states)
        out = self.search_from(params, states, keys[0], self.num_simulations, tree, root_mask)
        action = out.action if win is None else jnp.where(win >= 0, win, out.action)
        if self.reuse_tree:  # the agent state keeps init's structure and dtypes
            agent_states = out.tree.replace(
                extra_data=None, root_invalid_actions=out.tree.root_invalid_actions.astype(bool))
        return action.astype(jnp.int32), agent_states, {"policy": out.policy,
                                                        "value": out.value}


@dataclasses.dataclass(frozen=True)
class GumbelAgent(SearchAgent):
    """The agent `gumbel`: a `SearchAgent` whose search is Gumbel MuZero at full strength."""

    search: SearchAlgorithm = Gumbel().for_play()


@dataclasses.dataclass(frozen=True)
class PureMCTSAgent(SearchAgent):
    """The agent `pure_mcts`, the classic baseline: a `SearchAgent` with UCT (`PureMCTS`)
    and one random playout per leaf, 1000 simulations, no threat search."""

    search: SearchAlgorithm = PureMCTS().for_play()
    evaluator: str = "rollout"
    num_simulations: PositiveInt = 1000
    threat_search: NonNegativeInt = 0


def search_agent_class(algorithm: type[SearchAlgorithm]) -> type[SearchAgent]:
    """The `SearchAgent` subclass whose default search is `algorithm` at full strength
    (`algorithm().for_play()`): the agent of a search algorithm that has no class of its
    own, so that every registered algorithm is an agent of the same name."""
    return dataclasses.make_dataclass(
        f"{algorithm.__name__}Agent",
        [("search", SearchAlgorithm, dataclasses.field(default=algorithm().for_play()))],
        bases=(SearchAgent,), frozen=True,
        namespace={"__module__": __name__,
                   "__doc__": f"A `SearchAgent` searching with `{algorithm.__name__}`."})


@dataclasses.dataclass(frozen=True)
class PolicyAgent(_EvaluatorAgent):
    """The evaluator's prior alone (e.g. a network's policy head), shaped like the search's
    root prior: its argmax (ties broken at random), or a sample at `temperature` when
    `sample` is True."""

    name = "policy"

    prior_shaping: str = "soft"
    candidate_threshold: UnitFloat = 0.1
    symmetry: str = "random"
    sample: bool = False
    temperature: float = 1.0

    def __post_init__(self):
        super().__post_init__()
        if self.prior_shaping not in PRIOR_SHAPING:
            raise ValueError(f"prior_shaping must be one of {PRIOR_SHAPING}, got "
                             f"{self.prior_shaping!r}")
        if self.symmetry not in SYMMETRY_MODES:
            raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, got {self.symmetry!r}")
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature!r}")

    def act_batch(self, params: Any, agent_states, states, keys):
        k_eval, k_act = jax.random.split(keys[0])
        env = self.game
        logits, value = evaluate(env, self.evaluator_fn(), self.symmetry, params, states,
                                 k_eval)
        logits, _ = shape_prior(env, self, logits, states)
        if self.sample:
            action = jax.random.categorical(k_act, logits / self.temperature)
        else:  # the argmax, ties broken at random
            best = logits == jnp.max(logits, axis=-1, keepdims=True)
            action = random_legal_action(k_act, best)
        return action.astype(jnp.int32), agent_states, {
            "policy": jax.nn.softmax(logits), "value": value}
