"""Gomoku's heuristic evaluator for search: a prior from the cell values and a position value,
no network. It plugs into the search by name ("heuristic", see
`agents.evaluator_registry`)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax

from gomoku_jax import configs
from gomoku_jax.games.gomoku.features.cell_values import CellValues, cell_values, position_value
from gomoku_jax.games.gomoku.features.heuristic_score import HeuristicScoreConfig
from gomoku_jax.games.gomoku.features.patterns import PatternConfig, forbidden_for
from gomoku_jax.games.gomoku.state import BLACK, State


@dataclasses.dataclass(frozen=True)
class HeuristicWeights:
    """The weights the heuristic player and evaluator share: a cell is worth
    `attack · own + defence · opponent`, own / opponent from `features.cell_values` (threat
    `patterns` plus `score_weight` · HeuristicScore); `value_scale` scales `position_value`."""

    attack: float = 1.0
    defence: float = 0.9
    score_weight: float = 1.0
    value_scale: float = 50.0
    patterns: PatternConfig = PatternConfig()
    heuristic_score: HeuristicScoreConfig = HeuristicScoreConfig()

    def __post_init__(self):
        configs.validate(self)  # the fields of subclasses (the evaluator, the agent) too

    def cell_values(self, board, colour, win_length, rule, forbidden=None) -> CellValues:
        """What a `colour` stone is worth on each cell of `board` with these weights
        (forbidden: renju's forbidden points for black, when known)."""
        return cell_values(board, colour, win_length, rule, self.patterns, self.score_weight,
                           self.heuristic_score, forbidden=forbidden)

    def both_sides(self, state: State) -> tuple[CellValues, CellValues]:
        """(the side to move's cell values, the opponent's), under the game's rule."""
        cfg = state.config
        forbidden = forbidden_for(state.board, BLACK, cfg.rule)  # renju: once for both
        return (self.cell_values(state.board, state.color, cfg.win_length, cfg.rule,
                                 forbidden),
                self.cell_values(state.board, -state.color, cfg.win_length, cfg.rule,
                                 forbidden))


@dataclasses.dataclass(frozen=True)
class HeuristicEvaluator(HeuristicWeights):
    """`evaluator(env, params, states, key) -> (logits float32[B, N*N], value float32[B])`.

    Prior from cell values (`HeuristicWeights`, as the heuristic player's):
    `logits = (attack · own + defence · opponent) / prior_temperature`, plus `win_bonus` on
    a five to complete and half of it on the opponent's five to block; value =
    `position_value` (exact where a five or a double threat decides, else a tanh of the
    best own minus the best opponent cell), for the side to move.
    """

    games: ClassVar[tuple[str, ...]] = ("gomoku",)  # the env ids it evaluates

    prior_temperature: float = 10.0
    win_bonus: float = 50.0

    def single(self, state: State) -> tuple[jax.Array, jax.Array]:
        own, opp = self.both_sides(state)
        legal = state.legal_action_mask
        mix = (self.attack * own.value + self.defence * opp.value).reshape(-1)
        logits = (mix / self.prior_temperature + self.win_bonus * (own.wins.reshape(-1) & legal)
                  + 0.5 * self.win_bonus * (opp.wins.reshape(-1) & legal))
        return logits, position_value(own, opp, legal, self.value_scale)

    def __call__(self, env, params, states, key):
        del env, params, key
        return jax.vmap(self.single)(states)
