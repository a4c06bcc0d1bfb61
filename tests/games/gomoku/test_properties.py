"""Property tests: random legal games keep the game's invariants, and D4 symmetry of outcomes.

Each hypothesis example draws a seed (and how clustered the games are); NumPy turns it into a
batch of move orders, each a random permutation of the cells, so every game is legal until it
ends and always ends (at the latest when the board is full). The batch is played in one
compiled call and every state of every game is checked, vectorised over the batch where
possible. The win check is compared with the independent full-board NumPy scan
`positions.winning_colours`.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import gomoku_jax
from gomoku_jax.games import symmetry
from gomoku_jax.games.gomoku import rules
from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.gomoku.positions import winning_colours

# (board_size, win_length, rule): small boards so that games end often and draws occur.
CONFIGS = [
    pytest.param((15, 5, "freestyle"), id="15x15-k5-freestyle"),
    pytest.param((9, 5, "exact5"), id="9x9-k5-exact5"),
    pytest.param((7, 4, "freestyle"), id="7x7-k4-freestyle"),
    pytest.param((7, 4, "exact5"), id="7x7-k4-exact"),
    pytest.param((6, 5, "freestyle"), id="6x6-k5-freestyle-draws"),
]

BATCH = 32  # games per hypothesis example in the invariant test
SYM_BATCH = 48  # games per example in the symmetry test (x 8 symmetries, BATCH at a time)

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
# 0: uniform random move order; larger: moves cluster around a random point (more lines,
# more overlines, shorter games).
SPREADS = st.sampled_from([0.0, 0.5, 2.0])

# Deterministic; no shrinking: a smaller seed is not a simpler batch of games, and a failing
# example's message already names the game and step.
SETTINGS = dict(deadline=None, derandomize=True, database=None,
                phases=(Phase.explicit, Phase.generate))


def make_env(cfg) -> gomoku_jax.Gomoku:
    n, k, rule = cfg
    return gomoku_jax.make("gomoku", board_size=n, win_length=k, rule=rule)


@functools.lru_cache(maxsize=None)
def play_as(env: gomoku_jax.Gomoku):
    """Like `compiled(env).play`, but black's player id is given per game.

    play(actions int32[B, T], black_player int32[B]) -> states after each move, [T, B] leaves.
    """

    @jax.jit
    def play(actions, black_player):
        start = jax.vmap(lambda p: rules.initial_state(env.config, p))(black_player)

        def body(states, a):
            states = jax.vmap(env.step)(states, a)
            return states, states

        return jax.lax.scan(body, start, actions.T)[1]

    return play


def random_move_orders(rng: np.random.Generator, batch: int, n: int,
                       spread: float) -> np.ndarray:
    """int32[batch, n*n]: each row a random permutation of the cells (a legal move order)."""
    rows, cols = np.divmod(np.arange(n * n), n)
    centre = rng.uniform(0, n - 1, (batch, 2, 1))
    dist = np.maximum(np.abs(rows - centre[:, 0]), np.abs(cols - centre[:, 1])) / n
    keys = rng.random((batch, n * n)) + spread * dist
    orders = np.argsort(keys, axis=1).astype(np.int32)
    assert (np.sort(orders, axis=1) == np.arange(n * n)).all()
    return orders


def to_host(tree):
    return jax.tree.map(np.asarray, tree)


def check_invariants(config: GameConfig, actions: np.ndarray, black_player: np.ndarray,
                     traj) -> tuple[np.ndarray, np.ndarray]:
    """Assert every invariant on a trajectory ([T, B] leaves) of games played from the empty
    board with `actions` [B, T] (each row a legal move order). Returns (end step, winner)."""
    n, num_actions = config.board_size, config.num_actions
    num_games, num_steps = actions.shape
    tr = to_host(traj)
    board = tr.board.reshape(num_steps, num_games, num_actions).astype(np.int32)
    steps = np.arange(num_steps)[:, None]  # [T, 1]
    games = np.arange(num_games)

    # Every game ends (by the full board at the latest) and stays ended.
    assert tr.terminated[-1].all()
    assert (tr.terminated[1:] >= tr.terminated[:-1]).all(), "terminated went back to False"
    end = np.argmax(tr.terminated, axis=0)  # [B]: the step that ended each game
    live = steps <= end  # [T, B]: steps that played a move on a live state
    assert live.sum() == (end + 1).sum()

    # The board evolves by exactly one stone of the mover's colour at the action's cell,
    # black on even (0-based) steps, white on odd ones; nothing else changes.
    mover = np.where(steps % 2 == 0, 1, -1)  # [T, 1]
    prev = np.concatenate([np.zeros_like(board[:1]), board[:-1]])
    want_delta = np.zeros_like(board)
    tt, bb = np.nonzero(live)
    want_delta[tt, bb, actions[bb, tt]] = mover[tt, 0]
    np.testing.assert_array_equal(board - prev, want_delta)

    # Colours alternate: stone counts, side to move, move_count.
    blacks, whites = (board == 1).sum(-1), (board == -1).sum(-1)
    assert np.isin(blacks - whites, (0, 1)).all()
    np.testing.assert_array_equal(tr.move_count, blacks + whites)
    np.testing.assert_array_equal(np.where(live, tr.move_count, steps + 1),
                                  np.broadcast_to(steps + 1, live.shape))
    np.testing.assert_array_equal(tr.color, np.where(blacks == whites, 1, -1))
    # ... and `color` flips on every live step (the one that ends the game included).
    prev_color = np.concatenate([np.ones_like(tr.color[:1]), tr.color[:-1]])
    np.testing.assert_array_equal(tr.color, np.where(live, -prev_color, prev_color))

    # Player ids: fixed per game, and current_player follows the colour to move.
    np.testing.assert_array_equal(tr.black_player,
                                  np.broadcast_to(black_player, tr.black_player.shape))
    np.testing.assert_array_equal(
        np.asarray(traj.current_player),
        np.where(tr.color == 1, tr.black_player, 1 - tr.black_player))
    np.testing.assert_array_equal(np.asarray(traj.last_action)[live], actions.T[live])
    assert not np.asarray(traj.truncated).any()

    # Legal moves: the empty cells while live, everything once terminated.
    np.testing.assert_array_equal(
        np.asarray(traj.legal_action_mask),
        np.where(tr.terminated[..., None], True, board == 0))

    # Terminated iff the independent full-board scan finds a winning line or the board is
    # full; the winner is the scan's colour. Checked on every board a live step produced.
    # The scan is slow in Python, so it skips boards known to have no line: stones are only
    # added (checked above), so a k-run, once there, stays, and the freestyle scan is
    # monotone along a game; an exact-k line is a k-run. So every board before the first
    # one with a k-run (found by bisection with the freestyle scan) has no line under
    # either rule, and the boards from there to the end are scanned one by one.
    freestyle = dataclasses.replace(config, rule="freestyle")
    want_terminated = np.zeros_like(tr.terminated)
    want_winner = np.zeros_like(tr.winner)
    for b in range(num_games):
        lo, hi = 0, end[b] + 1  # the first step with a k-run is in [lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            if winning_colours(board[mid, b].reshape(n, n), freestyle):
                hi = mid
            else:
                lo = mid + 1
        want_terminated[:lo, b] = blacks[:lo, b] + whites[:lo, b] == num_actions
        for t in range(lo, end[b] + 1):
            found = winning_colours(board[t, b].reshape(n, n), config)
            assert len(found) <= 1, f"game {b} step {t}: both colours have a line"
            want_winner[t, b] = found.pop() if found else 0
            want_terminated[t, b] = want_winner[t, b] != 0 or blacks[t, b] + whites[t, b] \
                == num_actions
    np.testing.assert_array_equal(np.where(live, tr.terminated, False), want_terminated)
    np.testing.assert_array_equal(np.where(live, tr.winner, 0), want_winner)
    winner = tr.winner[end, games]
    # Only the mover can have won; a draw needs the full board.
    assert ((winner == 0) | (winner == mover[end, 0])).all()
    assert ((winner != 0) | (end == num_actions - 1)).all()

    # Rewards: zero except on the terminating step, where they are +-1 by player id
    # (0 for a draw); always zero-sum.
    assert (tr.rewards.sum(-1) == 0).all()
    at_end = steps == end  # [T, B]
    assert (tr.rewards[~at_end] == 0).all()
    end_rewards = tr.rewards[end, games]  # [B, 2]
    np.testing.assert_array_equal(end_rewards[games, black_player], winner)
    np.testing.assert_array_equal(end_rewards[games, 1 - black_player], -winner)

    # Once terminated, the state never changes (rewards go back to zero).
    after = steps > end
    for name in ("board", "color", "black_player", "last_moves", "move_count", "winner",
                 "terminated", "truncated"):
        leaf = getattr(tr, name)
        frozen = leaf[end, games]  # the terminal state of each game
        same = (leaf == frozen[None]).reshape(num_steps, num_games, -1).all(-1)
        assert same[after].all(), f"{name} changed after the game ended"
    return end, winner


@pytest.mark.parametrize("cfg", CONFIGS)
@settings(max_examples=8, **SETTINGS)
@given(seed=SEEDS, spread=SPREADS)
def test_random_legal_games_keep_invariants(cfg, seed, spread):
    env = make_env(cfg)
    n = env.board_size
    rng = np.random.default_rng(seed)
    actions = random_move_orders(rng, BATCH, n, spread)
    black_player = rng.integers(0, 2, BATCH).astype(np.int32)
    play = play_as(env)
    traj = play(actions, black_player)
    end, _ = check_invariants(env.config, actions, black_player, traj)

    # After the end, any action at all (occupied, off the board, negative) is a no-op.
    after = np.arange(n * n)[None, :] > end[:, None]
    junk = rng.integers(-3, n * n + 3, actions.shape).astype(np.int32)
    replay = play(np.where(after, junk, actions), black_player)
    names = ("board", "color", "black_player", "last_moves", "move_count", "winner",
             "rewards", "terminated", "truncated")
    assert len(jax.tree.leaves(traj)) == len(names)  # every leaf is compared
    for name, a, b in zip(names, jax.tree.leaves(to_host(traj)),
                          jax.tree.leaves(to_host(replay))):
        np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.parametrize("cfg", CONFIGS)
@settings(max_examples=6, **SETTINGS)
@given(seed=SEEDS, spread=SPREADS)
def test_outcome_invariant_under_d4(cfg, seed, spread):
    env = make_env(cfg)
    n, num_actions = env.board_size, env.num_actions
    rng = np.random.default_rng(seed)
    actions = random_move_orders(rng, SYM_BATCH, n, spread)
    assert env.num_symmetries == symmetry.NUM_D4 == 8
    g = np.arange(env.num_symmetries)
    moved = np.asarray(symmetry.transform_action(env, actions[None], g[:, None, None]))
    assert moved.shape == (8, SYM_BATCH, num_actions)
    np.testing.assert_array_equal(moved[0], actions)  # g = 0 is the identity
    # Each transformed order is again a permutation of the cells, hence legal.
    assert (np.sort(moved, axis=-1) == np.arange(num_actions)).all()

    # Played BATCH games at a time through the invariant test's compiled function.
    orders = moved.reshape(8 * SYM_BATCH, num_actions)
    chunks = [to_host(play_as(env)(orders[i:i + BATCH], np.zeros(BATCH, np.int32)))
              for i in range(0, len(orders), BATCH)]
    traj = jax.tree.map(lambda *x: np.concatenate(x, axis=1), *chunks)
    terminated = np.asarray(traj.terminated).reshape(num_actions, 8, SYM_BATCH)
    assert terminated[-1].all()
    end = np.argmax(terminated, axis=0)  # [8, B]
    final = jax.tree.map(lambda x: np.asarray(x[-1]).reshape(8, SYM_BATCH, *x.shape[2:]),
                         traj)
    np.testing.assert_array_equal(end, np.broadcast_to(end[0], end.shape))
    np.testing.assert_array_equal(final.winner, np.broadcast_to(final.winner[0], (8, SYM_BATCH)))
    np.testing.assert_array_equal(final.rewards,
                                  np.broadcast_to(final.rewards[0], final.rewards.shape))
    # The final boards are the transformed final board of the original game.
    perms = env.action_permutations  # perm[g][i]: the source cell landing on cell i
    base = final.board[0].reshape(SYM_BATCH, num_actions)
    for k in range(8):
        np.testing.assert_array_equal(final.board[k].reshape(SYM_BATCH, num_actions),
                                      base[:, perms[k]], err_msg=f"symmetry {k}")


@pytest.mark.parametrize("cfg", CONFIGS)
def test_generated_games_cover_wins_draws_and_overlines(cfg):
    """The move orders the property tests use do reach the interesting endings: wins for
    both colours, draws on the 6x6 / k=5 board, and, under the exact rule, overlines that
    must not end the game (a run longer than k on a board that is still live)."""
    env = make_env(cfg)
    n, k, rule = cfg
    rng = np.random.default_rng(1234)
    actions = random_move_orders(rng, BATCH, n, 0.5)
    black_player = rng.integers(0, 2, BATCH).astype(np.int32)
    traj = play_as(env)(actions, black_player)
    end, winner = check_invariants(env.config, actions, black_player, traj)
    assert (winner == 1).any() and (winner == -1).any()
    if (n, k) == (6, 5):
        assert (winner == 0).any()
        assert (end[winner == 0] == n * n - 1).all()
    if rule == "exact5":
        freestyle = GameConfig(n, k, "freestyle")
        board = np.asarray(traj.board)
        # a k-run stays once made (see check_invariants), so a game had one on a live
        # board before its last move iff the board before its last move has one
        overlines = sum(bool(winning_colours(board[end[b] - 1, b], freestyle))
                        for b in range(BATCH))
        assert overlines > 0
