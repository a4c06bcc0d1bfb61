"""Properties of Faux Go over random games (hypothesis draws the games): the step commutes
with the D4 symmetries, and invariants hold after every move."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import gomoku_jax
from gomoku_jax.games import symmetry
from gomoku_jax.games.fauxgo import rules

ENV = gomoku_jax.make("fauxgo", board_size=5)
PLIES = 40


@functools.lru_cache(maxsize=None)
def compiled():
    """f(key, g) -> (states after each ply [PLIES], the same game under D4 element g, the
    first game's states under g, their legal masks under g, the sealed cells of the side
    to move in the first game)."""

    def game(key, g):
        def move(carry, k):
            s, t = carry
            legal = s.legal_action_mask
            a = jax.random.categorical(k, jnp.where(legal, 0.0, -jnp.inf)).astype(jnp.int32)
            ta = jnp.where(a == ENV.pass_action, a, symmetry.transform_action(ENV, a, g))
            s, t = ENV.step(s, a), ENV.step(t, ta)
            return (s, t), (s, t)

        start = ENV.init(jax.random.key(0))
        _, (ss, ts) = jax.lax.scan(move, (start, ENV.transform_state(start, g)),
                                   jax.random.split(key, PLIES))
        sealed_o = jax.vmap(lambda s: rules.sealed_cells(s.board, s.owner, s.color))(ss)
        mapped = jax.vmap(lambda s: ENV.transform_state(s, g))(ss)
        masks = jax.vmap(lambda s: symmetry.transform_policy(ENV, s.legal_action_mask, g))(ss)
        return ss, ts, mapped, masks, sealed_o

    return jax.jit(game)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), g=st.integers(0, 7))
def test_games_commute_with_the_symmetries_and_keep_their_invariants(seed, g):
    ss, ts, mapped, masks, sealed = jax.device_get(compiled()(jax.random.key(seed), g))
    for t in range(PLIES):
        s = jax.tree.map(lambda x: x[t], ss)
        image = jax.tree.map(lambda x: x[t], ts)
        # the transformed game is the image of the game
        np.testing.assert_array_equal(mapped.board[t], image.board)
        np.testing.assert_array_equal(mapped.owner[t], image.owner)
        assert s.captures.tolist() == image.captures.tolist()
        assert s.rewards.tolist() == image.rewards.tolist()
        np.testing.assert_array_equal(masks[t], image.legal_action_mask)
        # enclosures are empty cells; captures only grow
        assert not np.any((s.board != 0) & (s.owner != 0))
        if t:
            assert (s.captures >= ss.captures[t - 1]).all()
        # after a placement, the side now to move has no stone in a sealed region (the
        # mover enclosed them all)
        moved = 0 <= int(s.last_action) < ENV.config.num_cells
        if moved and not bool(s.terminated):
            assert not np.any(sealed[t] & (s.board == s.color)), ENV.to_text(s)
