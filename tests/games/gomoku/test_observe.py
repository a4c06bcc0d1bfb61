"""Observation planes (`gomoku_jax.games.gomoku.observe`): absolute and canonical forms, the
player_id view, batch polymorphism and the optional feature plane (computed for the side to
move in the absolute form, for the viewing player's colour in the canonical form)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import compiled

import gomoku_jax
from gomoku_jax.games.gomoku import GameConfig, observe
from gomoku_jax.games.gomoku.config import PLANE_NAMES
from gomoku_jax.games.gomoku.features.planes import plane_function
from gomoku_jax.games.gomoku.state import BLACK, WHITE

E9 = gomoku_jax.make("gomoku", board_size=9, rule="exact5")
E9C = gomoku_jax.make("gomoku", board_size=9, rule="exact5", observation="canonical")


def _own_stones(board, colour):
    return (board == colour).astype(np.float32)


FEATURE = lambda board, colour: (board == colour).astype(jnp.float32)  # noqa: E731
E9F = gomoku_jax.make("gomoku", board_size=9, rule="exact5", feature_plane=FEATURE)
E9FC = gomoku_jax.make("gomoku", board_size=9, rule="exact5", observation="canonical",
                       feature_plane=FEATURE)

GAMES = [  # (row, col) move lists on 9x9
    [],
    [(4, 4)],
    [(4, 4), (4, 5)],
    [(4, 4), (4, 5), (3, 3), (0, 8), (8, 0)],
    [(0, 0), (8, 8), (0, 1), (8, 7), (0, 2), (8, 6)],
    # 9 moves, white to move, no line
    [(0, c) for c in range(0, 5)] + [(1, c) for c in range(0, 4)],
]


def expected_absolute(board, last_moves, colour):
    n = board.shape[0]
    planes = np.zeros((n, n, 5), np.float32)
    planes[..., 0] = board == BLACK
    planes[..., 1] = board == WHITE
    for ch, a in ((2, last_moves[0]), (3, last_moves[1])):
        if a >= 0:
            planes[a // n, a % n, ch] = 1
    planes[..., 4] = colour == BLACK
    return planes


def stack(states):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


@pytest.mark.parametrize("black_player", [0, 1])
@pytest.mark.parametrize("game", range(len(GAMES)))
def test_absolute_planes(game, black_player):
    state = E9.from_moves(GAMES[game], black_player=black_player)
    obs = np.asarray(observe(state))
    assert obs.shape == (9, 9, 5) == E9.observation_shape and obs.dtype == np.float32
    board = np.asarray(state.board)
    want = expected_absolute(board, np.asarray(state.last_moves), int(state.color))
    np.testing.assert_array_equal(obs, want)
    # absolute planes do not depend on whose view is asked for
    for pid in (0, 1):
        np.testing.assert_array_equal(np.asarray(E9.observe(state, pid)), want)
    # the last-move planes mark the latest stone of each colour
    if GAMES[game]:
        r, c = GAMES[game][-1]
        ch = 2 if len(GAMES[game]) % 2 == 1 else 3
        assert obs[r, c, ch] == 1 and obs[..., ch].sum() == 1
    assert set(np.unique(obs)) <= {0.0, 1.0}


@pytest.mark.parametrize("black_player", [0, 1])
@pytest.mark.parametrize("game", range(len(GAMES)))
def test_canonical_planes(game, black_player):
    state = E9C.from_moves(GAMES[game], black_player=black_player)
    absolute = np.asarray(observe(state, canonical=False))
    swapped = absolute[..., [1, 0, 3, 2, 4]].copy()
    swapped[..., 4] = 0.0
    as_black = absolute.copy()
    as_black[..., 4] = 1.0
    colour = int(state.color)

    default = np.asarray(observe(state))  # the config's form: canonical, side to move
    np.testing.assert_array_equal(default, as_black if colour == BLACK else swapped)
    np.testing.assert_array_equal(np.asarray(observe(state, canonical=True)), default)
    np.testing.assert_array_equal(np.asarray(E9C.observe(state)), default)
    # the current player's view is the side-to-move view
    np.testing.assert_array_equal(np.asarray(observe(state, state.current_player)), default)
    # each player id sees its own colour's stones in plane 0
    black_id, white_id = black_player, 1 - black_player
    np.testing.assert_array_equal(np.asarray(observe(state, black_id)), as_black)
    np.testing.assert_array_equal(np.asarray(observe(state, jnp.int32(white_id))), swapped)
    # an absolute env can still be asked for the canonical view, and vice versa
    absolute_state = E9.from_moves(GAMES[game], black_player=black_player)
    np.testing.assert_array_equal(
        np.asarray(E9.observe(absolute_state, black_id, canonical=True)), as_black)
    np.testing.assert_array_equal(np.asarray(E9C.observe(state, canonical=False)), absolute)


def test_canonical_planes_explicitly():
    # black (player 1) at (4, 4) and (3, 3), white (player 0) at (4, 5); white to move
    state = E9C.from_moves([(4, 4), (4, 5), (3, 3)], black_player=1)
    obs = np.asarray(observe(state))  # white's view
    assert obs[4, 5, 0] == 1 and obs[..., 0].sum() == 1  # own = white
    assert obs[4, 4, 1] == 1 and obs[3, 3, 1] == 1 and obs[..., 1].sum() == 2
    assert obs[4, 5, 2] == 1 and obs[..., 2].sum() == 1  # own last move
    assert obs[3, 3, 3] == 1 and obs[..., 3].sum() == 1  # opponent's last move
    assert (obs[..., 4] == 0).all()  # own colour is not black
    black_view = np.asarray(observe(state, 1))
    assert black_view[3, 3, 0] == 1 and black_view[4, 5, 1] == 1
    assert black_view[3, 3, 2] == 1 and black_view[4, 5, 3] == 1
    assert (black_view[..., 4] == 1).all()


def test_observation_after_terminal_and_illegal_moves():
    # black wins; the absolute observation shows the final stone as black's last move and
    # white to move
    moves = [(0, c) for c in (0, 1, 2, 3)]
    moves = [m for pair in zip(moves, [(2, 0), (2, 2), (2, 4), (2, 6)]) for m in pair]
    state = E9.from_moves(moves + [(0, 4)], allow_terminal=True)
    obs = np.asarray(observe(state))
    assert obs[0, 4, 2] == 1 and (obs[..., 4] == 0).all()
    # an off-board illegal action leaves no mark on the last-move planes
    before = E9.from_moves([(4, 4)])
    after = compiled(E9).step(before, np.int32(81))
    obs = np.asarray(observe(after))
    assert int(after.last_moves[1]) == 81 and obs[..., 3].sum() == 0
    np.testing.assert_array_equal(obs[..., :3], np.asarray(observe(before))[..., :3])


@pytest.mark.parametrize("env", [E9, E9C, E9F, E9FC], ids=["absolute", "canonical",
                                                          "feature", "feature-canonical"])
def test_batched_observation_equals_vmap_of_single(env):
    states = [env.from_moves(g, black_player=i % 2) for i, g in enumerate(GAMES)]
    flat = stack(states)  # [6]
    nested = jax.tree.map(lambda x: x.reshape(2, 3, *x.shape[1:]), flat)  # [2, 3]
    single = np.stack([np.asarray(observe(s)) for s in states])
    assert single.shape == (6, *env.observation_shape)

    np.testing.assert_array_equal(np.asarray(observe(flat)), single)
    np.testing.assert_array_equal(np.asarray(jax.vmap(observe)(flat)), single)
    np.testing.assert_array_equal(np.asarray(observe(nested)),
                                  single.reshape(2, 3, *single.shape[1:]))
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(jax.vmap(observe)))(nested)),
                                  single.reshape(2, 3, *single.shape[1:]))
    # batched player ids, canonical
    pids = jnp.asarray([0, 1, 1, 0, 0, 1], jnp.int32)
    batched = np.asarray(observe(flat, pids, canonical=True))
    one_by_one = np.stack([np.asarray(observe(s, int(p), canonical=True))
                           for s, p in zip(states, pids)])
    np.testing.assert_array_equal(batched, one_by_one)
    # a scalar player id broadcasts over the batch
    np.testing.assert_array_equal(
        np.asarray(observe(flat, 1, canonical=True)),
        np.stack([np.asarray(observe(s, 1, canonical=True)) for s in states]))


def test_feature_plane_is_appended():
    assert E9F.observation_shape == (9, 9, 6) and E9F.config.num_planes == 6
    for game in GAMES:
        base = E9.from_moves(game, black_player=1)
        state = E9F.from_moves(game, black_player=1)
        obs = np.asarray(observe(state))
        assert obs.shape == (9, 9, 6)
        np.testing.assert_array_equal(obs[..., :5], np.asarray(observe(base)))
        # f(board, colour to move): here the side to move's stones
        np.testing.assert_array_equal(
            obs[..., 5], _own_stones(np.asarray(state.board), int(state.color)))
        canon = np.asarray(observe(E9FC.from_moves(game, black_player=1)))
        assert canon.shape == (9, 9, 6)
        np.testing.assert_array_equal(canon[..., 5], obs[..., 5])
        np.testing.assert_array_equal(canon[..., 0], obs[..., 5])  # own = side to move


def test_feature_plane_names():
    assert PLANE_NAMES == ("none", "patterns", "proximity")
    for plane in ("none", None):
        cfg = GameConfig(9, feature_plane=plane)
        assert cfg.feature_plane == "none" and not cfg.has_feature_plane
        assert cfg.num_planes == 5 and cfg.observation_shape == (9, 9, 5)
        with pytest.raises(ValueError, match="no feature plane"):
            plane_function(cfg)
    assert GameConfig(9) == GameConfig(9, feature_plane=None)  # the default is "none"
    assert gomoku_jax.make("gomoku", board_size=9, rule="exact5", feature_plane=None) == E9
    for name in ("patterns", "proximity"):
        cfg = GameConfig(9, feature_plane=name)
        assert cfg.has_feature_plane and cfg.num_planes == 6
        assert callable(plane_function(cfg))
    assert E9F.config.has_feature_plane and plane_function(E9F.config) is FEATURE
    with pytest.raises(ValueError, match="feature_plane must be one of"):
        GameConfig(9, feature_plane="heat")


def test_feature_plane_receives_the_colour_to_move():
    env = gomoku_jax.make("gomoku", board_size=9, rule="exact5",
                          feature_plane=lambda b, c: jnp.full(b.shape, c, jnp.float32))
    black = env.from_moves([(1, 1), (2, 2)])
    white = env.from_moves([(1, 1)])
    assert (np.asarray(observe(black))[..., 5] == BLACK).all()
    assert (np.asarray(observe(white))[..., 5] == WHITE).all()
    both = stack([black, white])
    np.testing.assert_array_equal(np.asarray(observe(both))[:, 0, 0, 5], [BLACK, WHITE])


def test_canonical_feature_plane_is_computed_for_the_viewing_colour():
    """The canonical view of a player is the whole position from that player's side, its
    feature plane included: f(board, own colour), not f(board, colour to move) (the old
    behaviour gave the side to move's plane to both views)."""
    env = gomoku_jax.make("gomoku", board_size=9, rule="exact5", observation="canonical",
                          feature_plane=lambda b, c: jnp.full(b.shape, c, jnp.float32))
    for moves in ([], [(1, 1)], [(1, 1), (2, 2)]):
        for black_player in (0, 1):
            state = env.from_moves(moves, black_player=black_player)
            for pid, colour in ((black_player, BLACK), (1 - black_player, WHITE)):
                obs = np.asarray(observe(state, pid))
                assert (obs[..., 5] == colour).all(), (moves, black_player, pid)
                # the absolute form has no viewer: always the side to move's plane
                assert (np.asarray(observe(state, pid, canonical=False))[..., 5]
                        == int(state.color)).all()
    # own stones as the plane: channel 5 repeats channel 0 in every view (E9FC)
    for game in GAMES:
        state = E9FC.from_moves(game, black_player=0)
        for pid in (0, 1):
            obs = np.asarray(observe(state, pid))
            np.testing.assert_array_equal(obs[..., 5], obs[..., 0])


def test_canonical_pattern_plane_of_the_player_not_to_move():
    """With the "patterns" plane: each player's canonical view carries the pattern heat map
    of its own colour, also for the player who is not to move; on a position where the two
    colours' maps differ, the waiting player's plane is not the side to move's."""
    env = gomoku_jax.make("gomoku", board_size=9, rule="exact5", observation="canonical",
                          feature_plane="patterns")
    plane = jax.vmap(plane_function(env.config))
    # black: an open three on row 4; white: an open two on row 6; white to move (with
    # patterns of one colour only, the two maps would be equal after normalisation)
    moves = [(4, 2), (6, 2), (4, 3), (6, 3), (4, 4)]
    states = stack([env.from_moves(moves, black_player=bp) for bp in (0, 0, 1, 1)])
    assert (np.asarray(states.color) == WHITE).all()
    black_ids = np.asarray(states.black_player)
    pids = jnp.asarray(black_ids ^ np.array([0, 1, 0, 1]), jnp.int32)  # black, white, ...
    colours = jnp.asarray([BLACK, WHITE, BLACK, WHITE], jnp.int8)
    # one compile for both (the pattern map is most of this test's time)
    obs, want = jax.jit(lambda s, p, c: (observe(s, p), plane(s.board, c)))(
        states, pids, colours)
    obs, want = np.asarray(obs), np.asarray(want)
    assert not np.allclose(want[0], want[1])  # the position tells the colours apart
    # canonical (the env's form): each view's channel 5 is its own colour's map
    np.testing.assert_allclose(obs[..., 5], want, rtol=1e-6, atol=1e-6)
    # so the player not to move (black) does not get the side to move's (white's) plane
    assert not np.allclose(obs[0, ..., 5], obs[1, ..., 5])
    assert not np.allclose(obs[2, ..., 5], obs[3, ..., 5])
    # the rest of the view is the usual canonical one: own stones in channel 0
    np.testing.assert_array_equal(obs[0, ..., 0], np.asarray(states.board[0]) == BLACK)
    np.testing.assert_array_equal(obs[1, ..., 0], np.asarray(states.board[1]) == WHITE)
