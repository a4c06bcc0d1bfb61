"""The 8 symmetries of the square (`gomoku_jax.games.symmetry`, D4) on boards, observation
planes, policies and actions; Gomoku's symmetry hooks (`action_permutations`,
`transform_state`, `transform_observation`), and the invariance of the rules under them."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import play_moves

import gomoku_jax
from gomoku_jax.games import symmetry
from gomoku_jax.games.symmetry import NUM_D4

SIZES = [5, 6, 9, 15]  # 6: an even board, whose centre is not a cell
ELEMENTS = list(range(NUM_D4))
ENVS = {n: gomoku_jax.make("gomoku", board_size=n) for n in SIZES}


def reference(board: np.ndarray, g: int) -> np.ndarray:
    """The documented element g on the two leading axes: rot90 g % 4 times, then fliplr."""
    out = np.rot90(board, g % 4, axes=(0, 1))
    if g >= 4:
        out = np.flip(out, axis=1)
    return out


def random_board(n, seed):
    return np.random.default_rng(seed).integers(-1, 2, size=(n, n)).astype(np.int8)


@pytest.mark.parametrize("n", SIZES)
def test_transforms_match_numpy_reference_and_invert(n):
    env = ENVS[n]
    rng = np.random.default_rng(n)
    board = random_board(n, n)
    obs = rng.normal(size=(n, n, 6)).astype(np.float32)
    policy = rng.uniform(size=n * n).astype(np.float32)
    for g in ELEMENTS:
        ref_board = reference(board, g)
        got = np.asarray(symmetry.transform_board(jnp.asarray(board), g))
        np.testing.assert_array_equal(got, ref_board, err_msg=f"g={g}")
        assert got.dtype == np.int8
        np.testing.assert_array_equal(
            np.asarray(symmetry.inverse_transform_board(jnp.asarray(ref_board), g)), board)

        got_obs = np.asarray(symmetry.transform_planes(jnp.asarray(obs), g))
        np.testing.assert_array_equal(got_obs, reference(obs, g))
        np.testing.assert_array_equal(
            np.asarray(symmetry.inverse_transform_planes(jnp.asarray(got_obs), g)), obs)
        # the env's observation hook is the same map
        np.testing.assert_array_equal(
            np.asarray(env.transform_observation(jnp.asarray(obs), g)), got_obs)

        got_pol = np.asarray(symmetry.transform_policy(env, jnp.asarray(policy), g))
        np.testing.assert_array_equal(got_pol, reference(policy.reshape(n, n), g).reshape(-1))
        np.testing.assert_array_equal(
            np.asarray(symmetry.inverse_transform_policy(env, jnp.asarray(got_pol), g)), policy)
        # a policy and its board transform alike
        np.testing.assert_array_equal(
            got_pol.reshape(n, n),
            np.asarray(symmetry.transform_board(jnp.asarray(policy.reshape(n, n)), g)))


@pytest.mark.parametrize("n", SIZES)
def test_inverse_element_undoes_g(n):
    board = jnp.asarray(np.arange(n * n, dtype=np.int32).reshape(n, n))  # all cells distinct
    inverses = np.asarray(symmetry.d4_inverse(jnp.arange(NUM_D4)))
    assert set(inverses.tolist()) == set(ELEMENTS)  # a bijection of the group
    for g in ELEMENTS:
        h = int(inverses[g])
        assert int(symmetry.d4_inverse(h)) == g
        there = symmetry.transform_board(board, g)
        np.testing.assert_array_equal(np.asarray(symmetry.transform_board(there, h)), board)
        np.testing.assert_array_equal(
            np.asarray(symmetry.transform_board(symmetry.transform_board(board, h), g)), board)
        np.testing.assert_array_equal(np.asarray(symmetry.inverse_transform_board(board, g)),
                                      np.asarray(symmetry.transform_board(board, h)))


@pytest.mark.parametrize("n", SIZES)
def test_group_closure_and_faithfulness(n):
    board = jnp.asarray(np.arange(n * n, dtype=np.int32).reshape(n, n))
    images = np.stack([np.asarray(symmetry.transform_board(board, g)) for g in ELEMENTS])
    # 8 distinct images, element 0 is the identity
    assert len({im.tobytes() for im in images}) == NUM_D4
    np.testing.assert_array_equal(images[0], np.asarray(board))
    table = np.zeros((8, 8), int)
    for g1, g2 in itertools.product(ELEMENTS, ELEMENTS):
        composed = np.asarray(symmetry.transform_board(jnp.asarray(images[g1]), g2))
        matches = [h for h in ELEMENTS if np.array_equal(images[h], composed)]
        assert len(matches) == 1, (g1, g2)
        table[g1, g2] = matches[0]
    # a group table: every row and column is a permutation (Latin square)
    for i in ELEMENTS:
        assert sorted(table[i]) == ELEMENTS and sorted(table[:, i]) == ELEMENTS
    # D4 is not abelian
    assert not np.array_equal(table, table.T)
    # each static table is a permutation of the cells, and is the env's action table
    perms = symmetry.d4_permutations(n)
    assert perms.shape == (8, n * n) and perms.dtype == np.int32
    for g in ELEMENTS:
        assert sorted(perms[g].tolist()) == list(range(n * n))
    env = ENVS[n]
    assert env.num_symmetries == NUM_D4
    np.testing.assert_array_equal(np.asarray(env.action_permutations), perms)
    np.testing.assert_array_equal(perms[0], np.arange(n * n))  # row 0 is the identity
    # a gather with row g moves a board like transform_board
    for g in ELEMENTS:
        np.testing.assert_array_equal(np.asarray(board).reshape(-1)[perms[g]],
                                      images[g].reshape(-1))
    # inverse_permutations undoes every row
    inverse = symmetry.inverse_permutations(perms)
    assert inverse.shape == perms.shape and inverse.dtype == np.int32
    for g in ELEMENTS:
        np.testing.assert_array_equal(perms[g][inverse[g]], np.arange(n * n))
        np.testing.assert_array_equal(inverse[g][perms[g]], np.arange(n * n))


@pytest.mark.parametrize("extra", [1, 2])
def test_extra_actions_are_fixed_by_every_element(extra):
    n = 5
    perms = symmetry.d4_permutations(n, extra_actions=extra)
    assert perms.shape == (8, n * n + extra)
    np.testing.assert_array_equal(perms[:, :n * n], symmetry.d4_permutations(n))
    np.testing.assert_array_equal(perms[:, n * n:],
                                  np.broadcast_to(np.arange(n * n, n * n + extra), (8, extra)))
    inverse = symmetry.inverse_permutations(perms)
    np.testing.assert_array_equal(inverse[:, n * n:], perms[:, n * n:])


@pytest.mark.parametrize("n", SIZES)
def test_transform_action_agrees_with_transform_board(n):
    env = ENVS[n]
    actions = jnp.arange(n * n, dtype=jnp.int32)
    one_stone = jax.nn.one_hot(actions, n * n, dtype=jnp.int8).reshape(n * n, n, n)
    for g in ELEMENTS:
        moved = jax.vmap(symmetry.transform_board, (0, None))(one_stone, g)
        where = np.asarray(moved).reshape(n * n, n * n).argmax(axis=1)
        np.testing.assert_array_equal(np.asarray(moved).reshape(n * n, -1).sum(1), 1)
        np.testing.assert_array_equal(np.asarray(symmetry.transform_action(env, actions, g)),
                                      where, err_msg=f"g={g}")
        # scalar form
        a = int(n * n // 3)
        assert int(symmetry.transform_action(env, a, g)) == int(where[a])
        # transform_action is a bijection undone by the inverse element
        back = symmetry.transform_action(env, symmetry.transform_action(env, actions, g),
                                         symmetry.d4_inverse(g))
        np.testing.assert_array_equal(np.asarray(back), np.asarray(actions))


def test_traced_and_vmapped_elements():
    n = 9
    boards = jnp.asarray(np.stack([random_board(n, s) for s in range(8)]))
    gs = jnp.arange(8, dtype=jnp.int32)
    per_board = jax.jit(jax.vmap(symmetry.transform_board))(boards, gs)
    for g in ELEMENTS:
        np.testing.assert_array_equal(np.asarray(per_board[g]), reference(np.asarray(boards[g]), g))
    back = jax.jit(jax.vmap(symmetry.inverse_transform_board))(per_board, gs)
    np.testing.assert_array_equal(np.asarray(back), np.asarray(boards))
    # a batch of policies under one traced element
    policies = boards.reshape(8, n * n).astype(jnp.float32)
    env = ENVS[n]
    f = jax.jit(lambda p, g: symmetry.transform_policy(env, p, g))
    for g in ELEMENTS:
        np.testing.assert_array_equal(
            np.asarray(f(policies, jnp.int32(g))),
            np.stack([reference(np.asarray(b), g).reshape(-1) for b in boards]))


def test_observation_of_transformed_position_is_transformed_observation():
    env = gomoku_jax.make("gomoku", board_size=9, rule="exact5")
    moves = [40, 41, 30, 0, 76, 8]
    state = env.from_moves(moves)
    obs = env.observe(state)
    for g in ELEMENTS:
        moved = env.from_moves([int(symmetry.transform_action(env, m, g)) for m in moves])
        np.testing.assert_array_equal(np.asarray(env.observe(moved)),
                                      np.asarray(env.transform_observation(obs, g)))
        np.testing.assert_array_equal(
            np.asarray(moved.legal_action_mask),
            np.asarray(symmetry.transform_policy(env, state.legal_action_mask, g)))
        # the env's state transform gives the same position (last moves included)
        image = env.transform_state(state, g)
        for field in ("board", "last_moves", "color", "black_player", "move_count",
                      "winner", "rewards", "terminated", "truncated"):
            np.testing.assert_array_equal(np.asarray(getattr(image, field)),
                                          np.asarray(getattr(moved, field)),
                                          err_msg=f"g={g} {field}")
        np.testing.assert_array_equal(np.asarray(env.observe(image)),
                                      np.asarray(env.observe(moved)))


GAMES = [
    # 15x15 freestyle: black wins on an anti-diagonal at the last move
    (gomoku_jax.make("gomoku"), [112, 113, 98, 0, 84, 224, 70, 14, 56], 1, 9),
    # 15x15 freestyle: white wins on a column near the edge
    (gomoku_jax.make("gomoku"), [0, 14, 2, 29, 4, 44, 6, 59, 220, 74], -1, 10),
    # 9x9 exact5: black's six (no win), then white's exact five
    (gomoku_jax.make("gomoku", board_size=9, rule="exact5"),
     [36, 0, 37, 1, 38, 2, 40, 3, 41, 17, 39, 4], -1, 12),
]


@pytest.mark.parametrize("case", range(len(GAMES)))
def test_outcome_is_invariant_under_symmetry(case):
    env, moves, winner, length = GAMES[case]
    base = play_moves(env, moves)
    base_terminated = [bool(s.terminated) for s in base]
    assert base_terminated.index(True) == length - 1 and int(base[-1].winner) == winner
    for g in ELEMENTS:
        moved = np.asarray(symmetry.transform_action(env, jnp.asarray(moves), g)).tolist()
        states = play_moves(env, moved)
        assert [bool(s.terminated) for s in states] == base_terminated, g
        assert [int(s.winner) for s in states] == [int(s.winner) for s in base], g
        np.testing.assert_array_equal(np.asarray(states[-1].rewards), np.asarray(base[-1].rewards))
        np.testing.assert_array_equal(
            np.asarray(states[-1].board),
            np.asarray(symmetry.transform_board(base[-1].board, g)))
        # the move-list constructor agrees
        assert int(env.from_moves(moved, allow_terminal=True).winner) == winner
