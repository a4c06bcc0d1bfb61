"""`BoardEnv`: the parts every square-board game shares, on top of the protocol.

A board game's spec has a `board_size` N and the properties `num_actions` and
`observation_shape`; its actions are the N*N cells (`row * N + col`) and, after them, any
extra actions (a pass) that no symmetry moves. `BoardEnv` derives the env's identity and
sizes from the spec, and gives it the D4 symmetry hooks and `(row, col)` action text.
"""

from __future__ import annotations

import jax
import numpy as np

from gomoku_jax.games import symmetry
from gomoku_jax.games.protocol import Env


class BoardEnv(Env):
    """An `Env` on an N x N board whose spec has `board_size`, `num_actions` and
    `observation_shape` (planes last: [N, N, C])."""

    @property
    def id(self) -> str:
        return self.Spec.id

    @property
    def config(self):
        """The spec (games call it their config)."""
        return self.spec

    @property
    def board_size(self) -> int:
        return self.spec.board_size

    @property
    def num_actions(self) -> int:
        return self.spec.num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return self.spec.observation_shape

    @property
    def num_symmetries(self) -> int:
        return symmetry.NUM_D4

    @property
    def action_permutations(self) -> np.ndarray:
        """D4 on the cells; the actions after them (a pass) stay fixed."""
        n2 = self.board_size * self.board_size
        return symmetry.d4_permutations(self.board_size, extra_actions=self.num_actions - n2)

    def transform_observation(self, obs: jax.Array, g: jax.Array) -> jax.Array:
        return symmetry.transform_planes(obs, g)

    def action_to_text(self, action: int) -> str:
        """`(row, col)` for a cell."""
        row, col = divmod(int(action), self.board_size)
        return f"({row}, {col})"
