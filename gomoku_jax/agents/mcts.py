"""Search agents over mctx (`mcts`: PUCT, `gumbel`: Gumbel MuZero) and the `policy` agent
(the evaluator's prior alone), each backed by a named evaluator."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp

from gomoku_jax.agents.base import Agent
from gomoku_jax.game.random_play import random_legal_action
from gomoku_jax.search.evaluators import make_evaluator
from gomoku_jax.search.mcts import (SearchConfig, evaluate, masked_logits, move_temperature,
                                    search)


@dataclasses.dataclass(frozen=True)
class _EvaluatorAgent(Agent):
    """Backed by `make_evaluator(evaluator, network, **dict(evaluator_options))`, e.g.
    `evaluator="rollout", evaluator_options=(("num_rollouts", 8),)`."""

    evaluator: str = "heuristic"
    evaluator_options: tuple[tuple[str, Any], ...] = ()
    network: Optional[Callable] = None
    search_config: SearchConfig = SearchConfig()

    def __post_init__(self):
        self.evaluate  # fail early on a bad name or option

    @property
    def evaluate(self):
        try:
            return make_evaluator(self.evaluator, self.network, **dict(self.evaluator_options))
        except TypeError as e:
            raise ValueError(f"bad evaluator_options for {self.evaluator!r}: {e}") from None

    def act(self, params, agent_state, state, key):
        """One game: the batched search on a batch of one."""
        one = jax.tree.map(lambda x: x[None], (agent_state, state))
        action, new_state, info = self.act_batch(params, one[0], one[1], key[None])
        return action[0], jax.tree.map(lambda x: x[0], new_state), jax.tree.map(
            lambda x: x[0], info)


@dataclasses.dataclass(frozen=True)
class MCTSAgent(_EvaluatorAgent):
    """PUCT search (`mctx.muzero_policy`) with the seeds' exploration features; see
    `gomoku_jax.search.mcts`. `info`: the visit distribution and the root value."""

    name = "mcts"
    num_simulations: int = 64
    algorithm = "muzero"

    def act_batch(self, params, agent_states, states, keys):
        out = search(self.evaluate, self.search_config, self.num_simulations, params, states,
                     keys[0], self.algorithm)
        return out.action, agent_states, {"policy": out.policy, "value": out.value}


@dataclasses.dataclass(frozen=True)
class GumbelAgent(MCTSAgent):
    """Gumbel MuZero search (`mctx.gumbel_muzero_policy`): its move is deterministic given
    the Gumbel noise; `search_config.sample_plies` samples the first plies instead."""

    name = "gumbel"
    algorithm = "gumbel"


@dataclasses.dataclass(frozen=True)
class PolicyAgent(_EvaluatorAgent):
    """The evaluator's prior alone (e.g. a network's policy head): its argmax (ties broken at
    random), or a sample at the search config's move temperature when `sample` is True."""

    name = "policy"
    sample: bool = False

    def act_batch(self, params: Any, agent_states, states, keys):
        cfg = self.search_config
        k_eval, k_act = jax.random.split(keys[0])
        logits, value = evaluate(self.evaluate, cfg, params, states, k_eval)
        logits, _ = masked_logits(logits, states, cfg)
        if self.sample:
            temp = move_temperature(states.move_count, cfg)[:, None]
            action = jax.random.categorical(k_act, logits / temp)
        else:  # the argmax, ties broken at random
            best = logits == jnp.max(logits, axis=-1, keepdims=True)
            action = random_legal_action(k_act, best)
        return action.astype(jnp.int32), agent_states, {
            "policy": jax.nn.softmax(logits), "value": value}
