"""Gomoku's heuristic player: win, else block, else the best mix of threat patterns and
HeuristicScore for attack and defence (seeds 000, 001 and 003)."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from gomoku_jax.agents.base import Agent, play_best
from gomoku_jax.games.gomoku.features.cell_values import position_value
from gomoku_jax.games.gomoku.features.proximity import proximity_mask
from gomoku_jax.games.gomoku.heuristic_evaluator import HeuristicWeights


@dataclasses.dataclass(frozen=True)
class HeuristicAgent(HeuristicWeights, Agent):
    """Takes an immediate win, else blocks the opponent's five, else maximises

        attack * own(cell) + defence * opponent(cell) + proximity_weight * proximity(cell)

    where own / opponent = Σ over the 4 lines of `patterns.weights[code]` plus
    `score_weight` * HeuristicScore, for a stone of that colour on the cell. Ties are broken
    uniformly at random with the key. `info["value"]`: `features.cell_values.position_value`.
    """

    name = "heuristic"
    games = ("gomoku",)

    proximity_weight: float = 0.5

    def act(self, params, agent_state, state, key):
        legal = state.legal_action_mask
        own, opp = self.both_sides(state)
        near = proximity_mask(state.board, self.patterns.proximity)
        mix = (self.attack * own.value + self.defence * opp.value
               + self.proximity_weight * near).reshape(-1)
        own_wins, opp_wins = own.wins.reshape(-1) & legal, opp.wins.reshape(-1) & legal
        top = jnp.max(mix) + 1.0
        scores = jnp.where(own_wins, top + 2.0, jnp.where(opp_wins, top + 1.0, mix))
        action, policy = play_best(scores, legal, key)
        value = position_value(own, opp, legal, self.value_scale)
        return action, agent_state, {"policy": policy, "value": value}
