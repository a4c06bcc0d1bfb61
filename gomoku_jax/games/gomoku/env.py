"""The Gomoku environment: the game protocol (`games.protocol.Env`) over a static config."""

from __future__ import annotations

from typing import Iterable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.games import symmetry
from gomoku_jax.games.board import BoardEnv
from gomoku_jax.games.gomoku import leaf_proof, positions, rules, threat_moves, vct_moves
from gomoku_jax.games.gomoku.config import FeaturePlane, GameConfig
from gomoku_jax.games.gomoku.features.proximity import ProximityConfig, proximity_mask
from gomoku_jax.games.gomoku.forbidden import RENJU_NOTE, renju_cells
from gomoku_jax.games.gomoku.observe import observe
from gomoku_jax.games.gomoku.openings import DEFAULT_OPENINGS, opening_actions
from gomoku_jax.games.gomoku.render import to_svg, to_text
from gomoku_jax.games.gomoku.state import BLACK, State
from gomoku_jax.games.gomoku.tactical_examples import tactical_examples
from gomoku_jax.games.protocol import Examples

VERSION = "v1"
OPENING = ProximityConfig()  # its opening_stones: the engines' opening rule's extent
NEAR = 2  # in the opening, moves within this Chebyshev distance of a stone


class Gomoku(BoardEnv):
    """Gomoku on an N x N board, k in a row, under one of `config.RULES` (freestyle,
    exact5, renju, caro, caro_exact5); pgx's Env conventions.

    Black (+1) moves first, white is -1, empty 0; `action = row * N + col`. Two player ids
    0 and 1: `init(key)` draws which one plays black (as pgx does), `rewards[player_id]`.

    Outcomes (all inside `jit`):
      - a winning line through the new stone, as the rule defines it (k or more for
        "freestyle", exactly k for "exact5", black exactly five and white five or more for
        "renju", not blocked at both ends by the opponent for the caro rules): +1 to the
        mover, -1 to the opponent, `winner` set to the mover's colour;
      - a full board without a winning line: a draw, zero rewards, `winner` 0;
      - an illegal action (an occupied cell, outside [0, N*N), or under renju black's
        forbidden point, which `legal_action_mask` leaves out): the board is untouched,
        the game ends and the mover loses (-1, opponent +1), as in pgx;
      - stepping a terminated state returns it unchanged with zero rewards; its
        `legal_action_mask` is all True, so masked policies never divide by zero.

    Hooks: the D4 symmetries, seed 000's proximity mask as candidate weights, the 8
    three-stone openings, the synthetic tactical training examples (seed 000 level 3), VCF
    at the root for play (`forcing_moves`) and at the search's leaves (`leaf_proof`); for
    people, `OpeningGomoku` (`for_people`) and renju's forbidden points (`host_masks`).
    All methods are pure functions of their arguments; batch them with `jax.vmap`.
    """

    Spec = GameConfig
    version = VERSION

    def __init__(self, board_size: int = 15, win_length: int = 5, rule: str = "freestyle",
                 observation: str = "absolute", feature_plane: str | FeaturePlane = "none"):
        super().__init__(GameConfig(board_size, win_length, rule, observation, feature_plane))

    @classmethod
    def from_config(cls, config: GameConfig) -> "Gomoku":
        return cls.from_spec(config)

    def init(self, key: jax.Array) -> State:
        """A new game (empty board, black to move); `key` draws black's player id."""
        return rules.init(self.config, key)

    def step(self, state: State, action: jax.Array, key: Optional[jax.Array] = None) -> State:
        """Play `action` (int[]) for the side to move. `key` is unused (Gomoku is
        deterministic) and accepted for pgx compatibility."""
        del key
        return rules.step(state, action)

    def observe(self, state: State, player_id: Optional[jax.Array] = None, *,
                canonical: Optional[bool] = None) -> jax.Array:
        """float32[..., N, N, C] network planes; see `gomoku_jax.games.gomoku.observe`."""
        return observe(state, player_id, canonical=canonical)

    # ------------------------------------------------------------------ hooks

    def transform_state(self, state: State, g: jax.Array) -> State:
        """The board and the last moves under D4 element g (-1, or an off-board action that
        ended a game, stays as it is); colours, counts and outcomes are invariant."""
        last = state.last_moves
        on_board = (last >= 0) & (last < self.num_actions)
        moved = symmetry.transform_action(self, jnp.where(on_board, last, 0), g)
        return state.replace(board=symmetry.transform_board(state.board, g),
                             last_moves=jnp.where(on_board, moved, last))

    def candidate_weights(self, state: State) -> jax.Array:
        """Seed 000's proximity mask: 1 / 0.5 / 0.2 / 0.05 by distance to the nearest stone
        (all ones in the opening)."""
        return proximity_mask(state.board).reshape(-1)

    @property
    def max_game_length(self) -> int:
        return self.num_actions

    def move_number(self, state: State) -> jax.Array:
        return state.move_count

    def default_openings(self) -> tuple[tuple[int, ...], ...]:
        """The 8 three-stone openings near the centre (`openings.DEFAULT_OPENINGS`)."""
        return opening_actions(DEFAULT_OPENINGS, self.board_size)

    def forcing_moves(self, states: State, max_nodes: int, vct_nodes: int = 0,
                      vct_defend: bool = False) -> tuple[jax.Array, jax.Array]:
        """VCF at the root of a batch: the side to move's winning four, or the refutations
        of the opponent's VCF (`threat_moves.forcing_moves`); with `vct_nodes` > 0 (a VCT
        node budget, static) then the side to move's VCT, and with `vct_defend` the
        refutations of the opponent's (`vct_moves.forcing_moves`; freestyle and exact5)."""
        if vct_nodes:
            return vct_moves.forcing_moves(states, max_nodes, vct_nodes, defend=vct_defend)
        return threat_moves.forcing_moves(states, max_nodes)

    def leaf_proof(self, states: State, max_nodes: int) -> jax.Array:
        """int8[B]: +1 the side to move has a VCF within `max_nodes`, -1 it faces two five
        cells it cannot both block, 0 unknown (`leaf_proof.leaf_proof`)."""
        return leaf_proof.leaf_proof(states, max_nodes)

    def synthetic_examples(self, key: jax.Array, num: int) -> Examples:
        """Seed 000's tactical examples (complete-five and block-four), see `tactical.py`."""
        return tactical_examples(self.config, key, num)

    def for_people(self) -> "OpeningGomoku":
        """This game as `OpeningGomoku` (the search's prior follows the engines' opening
        rule, as pbrain's)."""
        return OpeningGomoku.from_config(self.config)

    def host_masks(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """Under renju, black's forbidden points with black to move and the game on, and the
        legal cells that follow (`forbidden.renju_cells`: one compiled scan of the board, not
        the state's eager mask); other rules: the state's mask, nothing forbidden."""
        if self.config.rule != "renju":
            return super().host_masks(state)
        black = int(state.color) == BLACK and not bool(state.terminated)
        return renju_cells(np.asarray(state.board), black)

    @property
    def forbidden_note(self) -> str:
        return RENJU_NOTE if self.config.rule == "renju" else super().forbidden_note

    def to_text(self, state: State) -> str:
        return to_text(state)

    def to_svg(self, state: State, **kwargs) -> str:
        return to_svg(state, **kwargs)

    # ------------------------------------------------------------------ construction

    def from_board(self, board, to_move=None, *, allow_terminal: bool = False,
                   black_player: int = 0) -> State:
        """A State for a position given as int[N, N]; see `positions.from_board`."""
        return positions.from_board(self.config, board, to_move,
                                    allow_terminal=allow_terminal, black_player=black_player)

    def from_moves(self, moves: Iterable, key: Optional[jax.Array] = None, *,
                   allow_terminal: bool = False, black_player: int = 0) -> State:
        """The State after `moves` (actions or (row, col) pairs); see `positions.from_moves`.
        `key` is unused: black's player id is `black_player`."""
        del key
        return positions.from_moves(self.config, moves, allow_terminal=allow_terminal,
                                    black_player=black_player)


def opening_weights(board: jax.Array, config: ProximityConfig = OPENING) -> jax.Array:
    """float32[N, N] candidate weights with the engines' opening rule (jittable): on the
    empty board 1 / (1 + d), d the Chebyshev distance to the centre (N // 2, N // 2)
    (seed 000's centre weighting); with 1 .. opening_stones - 1 stones the proximity mask
    of the first `NEAR` rings only (1.0, 0.5; 0 farther); then seed 000's proximity mask."""
    n = board.shape[-1]
    stones = jnp.sum(board != 0)
    line = jnp.abs(jnp.arange(n) - n // 2)
    centre = 1.0 / (1.0 + jnp.maximum(line[:, None], line[None, :]).astype(jnp.float32))
    near = proximity_mask(board, ProximityConfig(distance_weights=config.distance_weights[:NEAR],
                                                 far_weight=0.0, opening_stones=0))
    return jnp.where(stones == 0, centre,
                     jnp.where(stones < config.opening_stones, near, proximity_mask(board,
                                                                                    config)))


class OpeningGomoku(Gomoku):
    """Gomoku whose candidate weights (the search's prior shaping) follow the engines'
    opening rule (`opening_weights`) instead of the proximity mask's all-ones opening
    exception, which had the search answer an empty board at the edge; the game itself is
    Gomoku's. What plays people and other programs (pbrain, the web UI: `for_people`)."""

    def candidate_weights(self, state) -> jax.Array:
        return opening_weights(state.board).reshape(-1)

    def for_people(self) -> "OpeningGomoku":
        return self
