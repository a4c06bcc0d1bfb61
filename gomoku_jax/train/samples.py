"""The training sample: a position, its policy target and its value target."""

from __future__ import annotations

import jax
from flax import struct

from gomoku_jax.games.protocol import Examples, State


@struct.dataclass
class Sample:
    """One training example (or a batch: a leading axis on every leaf).

    The position is kept as the env's state (for Gomoku an int8 board and a few scalars,
    ~N² bytes), not as observation planes: the planes are made by `env.observe` when a
    batch is drawn, after the symmetry augmentation, so a buffer of 10⁵ 15×15 positions
    takes ~25 MB.

    Attributes:
      state: the position, with the side to move to play.
      policy: float32[A], the policy target (the search's visit distribution, or a
        one-hot / uniform over the winning cells for a tactical example); sums to 1 over
        legal moves.
      value: float32[], the outcome for the side to move (+1 win, 0 draw, -1 loss).
      weight: float32[], 1 for a real sample, 0 for padding (ignored by the loss).
      value_weight: float32[], 1 when `value` is a known target, 0 to train the policy only.
    """

    state: State
    policy: jax.Array
    value: jax.Array
    weight: jax.Array
    value_weight: jax.Array


def from_examples(examples: Examples) -> Sample:
    """Samples of a game's generated examples (`env.synthetic_examples`)."""
    return Sample(state=examples.state, policy=examples.policy, value=examples.value,
                  weight=examples.weight, value_weight=examples.value_weight)
