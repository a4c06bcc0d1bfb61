"""The JAX Faux Go against the pure-Python reference (`fauxgo_reference.py`, written from
the rules): a thousand and more random games, move by move, must agree on the legal moves, the
board, the enclosures, the captures, the end and the result."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fauxgo_reference import Game

import gomoku_jax

PASS_PROBABILITY = 0.06  # besides the pass's share of the uniform draw: more two-pass ends


@functools.lru_cache(maxsize=None)
def random_games(board_size: int, num_games: int, seed: int, komi: float = 0.0):
    """Every game played to its end with random legal moves: host arrays, time-major:
    actions int32[T, B], and after each move board/owner int8[T, B, N, N], captures
    int32[T, B, 2], terminated bool[T, B], winner int8[T, B]; legal bool[T, B, A] before
    each move."""
    env = gomoku_jax.make("fauxgo", board_size=board_size, komi=komi)
    n2 = env.config.num_cells

    @jax.jit
    def play(key):
        k_init, k_play = jax.random.split(key)
        states = jax.vmap(env.init)(jax.random.split(k_init, num_games))

        def move(states, key):
            k_move, k_pass = jax.random.split(key)
            legal = states.legal_action_mask
            action = jax.random.categorical(k_move, jnp.where(legal, 0.0, -jnp.inf), axis=-1)
            passing = jax.random.bernoulli(k_pass, PASS_PROBABILITY, (num_games,))
            action = jnp.where(passing, n2, action).astype(jnp.int32)
            after = jax.vmap(env.step)(states, action)
            return after, (action, legal, after.board, after.owner, after.captures,
                           after.terminated, after.winner)

        _, record = jax.lax.scan(move, states,
                                 jax.random.split(k_play, env.config.max_plies))
        return record

    return jax.device_get(play(jax.random.key(seed)))


def replay_and_compare(board_size: int, record, game: int, komi: float = 0.0) -> dict:
    """Replays game `game` of `record` in the reference, asserting agreement at every ply;
    returns counts of what happened (capturing moves, forts, self-captures, endings)."""
    actions, legal, board, owner, captures, terminated, winner = (
        x[:, game] for x in record)
    ref = Game(board_size, komi)
    seen = {"captures": 0, "forts": 0, "self_captures": 0, "two_pass_ends": 0,
            "cap_ends": 0}
    taken_before, owned_before = 0, 0
    for t in range(actions.shape[0]):
        where = f"game {game}, ply {t}"
        assert np.flatnonzero(legal[t]).tolist() == ref.legal_moves(), where
        mover = ref.to_move
        lost_before = ref.captured[-mover]
        ref.play(int(actions[t]))
        assert board[t].tolist() == ref.board(), where
        owners = ref.owners()
        assert owner[t].tolist() == owners, where
        assert captures[t].tolist() == [ref.captured[1], ref.captured[-1]], where
        assert bool(terminated[t]) == ref.over, where
        taken = ref.captured[1] + ref.captured[-1]
        owned = sum(v != 0 for row in owners for v in row)
        seen["captures"] += taken > taken_before
        seen["forts"] += taken == taken_before and owned > owned_before
        seen["self_captures"] += ref.captured[-mover] > lost_before
        taken_before, owned_before = taken, owned
        if ref.over:
            assert int(winner[t]) == ref.result, where
            seen["two_pass_ends" if ref.passes >= 2 else "cap_ends"] += 1
            return seen
    raise AssertionError(f"game {game} did not end within the ply cap")


@pytest.mark.slow
@pytest.mark.parametrize("board_size, num_games, komi", [(5, 1000, 0.0), (7, 100, 0.5)])
def test_random_games_match_the_reference_move_by_move(board_size, num_games, komi):
    record = random_games(board_size, num_games, seed=board_size, komi=komi)
    totals: dict = {}
    for game in range(num_games):
        for k, v in replay_and_compare(board_size, record, game, komi).items():
            totals[k] = totals.get(k, 0) + int(v)
    # the games exercised every rule, not just placements
    assert totals["captures"] > num_games // 4 and totals["self_captures"] > 0, totals
    assert totals["forts"] > 0 and totals["two_pass_ends"] > 0, totals
    assert totals["two_pass_ends"] + totals["cap_ends"] == num_games
