"""Actions as planes over the board: how a move enters a learned dynamics network.

MuZero's dynamics g(latent, action) sees the action as extra input planes stacked on the
latent (float32[B, H, W, C] ‖ planes float32[B, H, W, P]). Which planes depends only on
the game's shapes (static), chosen by `ActionPlanes.for_game`:

- "cell": every action is a cell, A = H·W (Gomoku, pgx's tic_tac_toe): one plane, 1 at
  the action's cell `(a // W, a % W)` (flat actions `row * W + col`), 0 elsewhere.
- "cell+pass": the cells and then a pass, A = H·W + 1 with the pass the last action
  (Faux Go, Go): two planes, the cell plane (all 0 for the pass) and a pass plane (all 1
  for the pass, all 0 for a placement). A separate plane, so that a pass is never
  confused with a placement the convolutions see at some cell.
- "one_hot": any other action space (pgx's connect_four: 7 columns on a 6×7 board): A
  constant planes, plane a all 1 for action a (a one-hot vector broadcast over the board,
  as MuZero's Atari actions). P = A planes, so it suits small action spaces.

An action outside [0, A) gives all-zero planes (the search never passes one).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import jax
import jax.numpy as jnp

from gomoku_jax import configs
from gomoku_jax.configs import PositiveInt

KINDS = ("cell", "cell+pass", "one_hot")


@dataclasses.dataclass(frozen=True)
class ActionPlanes:
    """The action encoding of one game's shapes (hashable, no arrays).

    Attributes:
      kind: one of `KINDS` (the module docstring says what each draws).
      height, width: the board's H × W (the observation's first two axes).
      num_actions: A.
    """

    kind: str
    height: PositiveInt
    width: PositiveInt
    num_actions: PositiveInt

    def __post_init__(self):
        configs.validate(self)
        cells = self.height * self.width
        need = {"cell": cells, "cell+pass": cells + 1}.get(self.kind)
        if self.kind not in KINDS:
            raise ValueError(f"action plane kind must be one of {KINDS}, got {self.kind!r}")
        if need is not None and self.num_actions != need:
            raise ValueError(f"action planes {self.kind!r} on a {self.height}x{self.width} "
                             f"board need {need} actions, got {self.num_actions}")

    @classmethod
    def for_game(cls, board: tuple[int, int], num_actions: int,
                 pass_action: Optional[int] = None) -> "ActionPlanes":
        """The encoding for a game with a `board` (H, W), A = `num_actions` and its
        `pass_action` (None: none): "cell" when A = H·W, "cell+pass" when A = H·W + 1 and
        the pass is the last action, "one_hot" otherwise."""
        height, width = board
        cells = height * width
        if num_actions == cells and pass_action is None:
            kind = "cell"
        elif num_actions == cells + 1 and pass_action == cells:
            kind = "cell+pass"
        else:
            kind = "one_hot"
        return cls(kind, height, width, num_actions)

    @property
    def planes(self) -> int:
        """P, the planes `encode` gives per action."""
        return {"cell": 1, "cell+pass": 2}.get(self.kind, self.num_actions)

    def encode(self, action: jax.Array) -> jax.Array:
        """float32[B, H, W, P]: the planes of `action` int32[B]."""
        action = jnp.asarray(action, jnp.int32)
        h, w = self.height, self.width
        if self.kind == "one_hot":
            hot = jax.nn.one_hot(action, self.num_actions, dtype=jnp.float32)  # [B, A]
            return jnp.broadcast_to(hot[:, None, None, :], (action.shape[0], h, w, hot.shape[-1]))
        cell = jax.nn.one_hot(action, h * w, dtype=jnp.float32).reshape(-1, h, w, 1)
        if self.kind == "cell":
            return cell
        passed = (action == h * w).astype(jnp.float32)[:, None, None, None]
        return jnp.concatenate([cell, jnp.broadcast_to(passed, cell.shape)], axis=-1)
