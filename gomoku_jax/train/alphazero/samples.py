"""The training sample: a position, its policy target, its value target and the move played."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from gomoku_jax.games.protocol import Examples, State
from gomoku_jax.train.augment import NO_ACTION


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
      action: int32[], the move actually played from the position in self-play (what the
        AlphaZero loss does not use, and what a GMO run trained on the replay learns from);
        `NO_ACTION` (-1) where none was: a game's synthetic examples, padding.
    """

    state: State
    policy: jax.Array
    value: jax.Array
    weight: jax.Array
    value_weight: jax.Array
    action: jax.Array


def example(env) -> Sample:
    """One unbatched zero sample shaped like `env`'s (`replay.init`'s example)."""
    state = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype),
                         jax.eval_shape(env.init, jax.random.key(0)))
    zero = jnp.float32(0)
    return Sample(state=state, policy=jnp.zeros((env.num_actions,), jnp.float32), value=zero,
                  weight=zero, value_weight=zero, action=jnp.int32(NO_ACTION))


def from_examples(examples: Examples) -> Sample:
    """Samples of a game's generated examples (`env.synthetic_examples`), with no move
    played (`NO_ACTION`)."""
    return Sample(state=examples.state, policy=examples.policy, value=examples.value,
                  weight=examples.weight, value_weight=examples.value_weight,
                  action=jnp.full(jnp.shape(examples.value), NO_ACTION, jnp.int32))
