"""The heuristic player: win, else block, else the best mix of threat patterns and
HeuristicScore for attack and defence (seeds 000, 001 and 003)."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from gomoku_jax.agents.base import Agent, play_best
from gomoku_jax.features.heuristic_score import HeuristicScoreConfig, heuristic_score_map
from gomoku_jax.features.patterns import FIVE, PatternConfig, threats
from gomoku_jax.features.proximity import proximity_mask


@dataclasses.dataclass(frozen=True)
class HeuristicAgent(Agent):
    """Takes an immediate win, else blocks the opponent's five, else maximises

        attack * own(cell) + defence * opponent(cell) + proximity_weight * proximity(cell)

    where own / opponent = Σ over the 4 lines of `patterns.weights[code]` plus
    `score_weight` * HeuristicScore, for a stone of that colour on the cell. Ties are broken
    uniformly at random with the key. `info["value"]`: +1 with a win on the board, -1 when
    the opponent has two or more fives to block, else tanh((best own - best opponent) /
    value_scale).
    """

    name = "heuristic"
    attack: float = 1.0
    defence: float = 0.9
    score_weight: float = 1.0
    proximity_weight: float = 0.5
    value_scale: float = 50.0
    patterns: PatternConfig = PatternConfig()
    heuristic_score: HeuristicScoreConfig = HeuristicScoreConfig()

    def cell_values(self, board, colour, win_length, rule):
        """(float32[N, N] value of a `colour` stone on each cell, bool[N, N] wins there)."""
        codes = threats(board, colour, win_length, rule)
        value = jnp.sum(jnp.asarray(self.patterns.weights, jnp.float32)[codes], axis=-1)
        value = value + self.score_weight * heuristic_score_map(board, colour, win_length,
                                                                self.heuristic_score)
        return value, jnp.any(codes == FIVE, axis=-1)

    def act(self, params, agent_state, state, key):
        cfg = state.config
        legal = state.legal_action_mask
        me = state.color
        own, own_wins = self.cell_values(state.board, me, cfg.win_length, cfg.rule)
        opp, opp_wins = self.cell_values(state.board, -me, cfg.win_length, cfg.rule)
        near = proximity_mask(state.board, self.patterns.proximity)
        mix = (self.attack * own + self.defence * opp + self.proximity_weight * near).reshape(-1)
        own_wins, opp_wins = own_wins.reshape(-1) & legal, opp_wins.reshape(-1) & legal
        top = jnp.max(mix) + 1.0
        scores = jnp.where(own_wins, top + 2.0, jnp.where(opp_wins, top + 1.0, mix))
        action, policy = play_best(scores, legal, key)
        value = jnp.tanh((jnp.max(jnp.where(legal, own.reshape(-1), 0.0))
                          - jnp.max(jnp.where(legal, opp.reshape(-1), 0.0))) / self.value_scale)
        value = jnp.where(jnp.any(own_wins), 1.0,
                          jnp.where(jnp.sum(opp_wins) >= 2, -1.0, value))
        return action, agent_state, {"policy": policy, "value": value.astype(jnp.float32)}
