"""Tactical examples (`gomoku_jax.games.gomoku.tactical_examples`, seed 000 level 3).

Every valid example is checked against a brute-force NumPy reference written here: for each
empty cell, place a stone and ask `positions.winning_colours` (a full-board scan, independent
of the JAX code) whether it wins, for the side to move and for the opponent. All configs
are drawn by one compiled program (module-level cache), once per key.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.gomoku.positions import winning_colours
from gomoku_jax.games.gomoku.tactical_examples import tactical_examples
from gomoku_jax.games.protocol import Examples

NUM = 256  # examples per draw; the brute-force check looks at the first CHECKED of them
CHECKED = 80
# One board size per rule: each config is a copy of the generator in the compiled program
# (its cost), and the generator's code is the same for every size (7x7 and k = 4 below).
CONFIGS = {
    "9-freestyle": GameConfig(9),
    "9-exact5": GameConfig(9, rule="exact5"),
    "9-caro": GameConfig(9, rule="caro"),
    "9-renju": GameConfig(9, rule="renju"),
}

# test_vmap_over_keys_other_k_and_stone_range's draw: 4 keys, 16 examples each.
VMAP_CONFIG = GameConfig(7, win_length=4)


@functools.lru_cache(maxsize=None)
def _draw_all():
    """Every draw of this file in one compiled program: (key, vmap_key) -> (the NUM
    examples of each of CONFIGS for `key`, by name; VMAP_CONFIG's 16 with 0..3 random
    stones for each of 4 keys split from `vmap_key`)."""

    def run(key, vmap_key):
        drawn = {name: tactical_examples(config, key, NUM) for name, config in CONFIGS.items()}
        by_key = jax.vmap(lambda k: tactical_examples(VMAP_CONFIG, k, 16, min_stones=0,
                                                      max_stones=3))(
            jax.random.split(vmap_key, 4))
        return drawn, by_key

    return jax.jit(run)


@functools.lru_cache(maxsize=None)
def draw_all(seed: int = 0):
    """`_draw_all` for keys `seed` and 3, as NumPy arrays."""
    return jax.device_get(_draw_all()(jax.random.key(seed), jax.random.key(3)))


def draw(name: str, seed: int = 0):
    """The examples of CONFIGS[name] for key `seed`, as NumPy arrays."""
    return draw_all(seed)[0][name]


DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def shifted(mask: np.ndarray, dr: int, dc: int) -> np.ndarray:
    """out[r, c] = mask[r + dr, c + dc], False where that cell is off the board."""
    n = mask.shape[0]
    out = np.zeros_like(mask)
    out[max(0, -dr):min(n, n - dr), max(0, -dc):min(n, n - dc)] = \
        mask[max(0, dr):min(n, n + dr), max(0, dc):min(n, n + dc)]
    return out


def winning_cells(board: np.ndarray, colour: int, config: GameConfig) -> set[int]:
    """Flat indices of the empty cells where a stone of `colour` wins, by brute force.

    A winning line through the new stone holds k-1 other stones of `colour` on the same
    line within k-1 cells of it, so only the empty cells with that many along some
    direction are tried (the full-board scan, the slow part, runs on those alone).
    """
    n, k = config.board_size, config.win_length
    own = board == colour
    enough = np.zeros_like(own)
    for dr, dc in DIRECTIONS:
        count = sum(shifted(own, s * i * dr, s * i * dc).astype(int)
                    for i in range(1, k) for s in (1, -1))
        enough |= count >= k - 1
    out = set()
    for r, c in np.argwhere((board == 0) & enough):
        trial = board.copy()
        trial[r, c] = colour
        if colour in winning_colours(trial, config):
            out.add(int(r * n + c))
    return out


def check_example(ex, config: GameConfig) -> None:
    """Assert everything `tactical_examples` guarantees about one valid example."""
    n = config.board_size
    board = np.asarray(ex.state.board)
    mover = int(ex.state.color)
    blacks, whites = int(np.sum(board == 1)), int(np.sum(board == -1))
    assert blacks - whites == (1 if mover == -1 else 0)
    assert int(ex.state.move_count) == blacks + whites
    assert winning_colours(board, config) == set()
    assert int(ex.state.winner) == 0 and not bool(ex.state.terminated)
    assert not bool(ex.state.truncated)
    assert np.all(np.asarray(ex.state.rewards) == 0)
    assert int(ex.state.black_player) in (0, 1)

    mine, theirs = winning_cells(board, mover, config), winning_cells(board, -mover, config)
    policy = np.asarray(ex.policy)
    assert policy.shape == (n * n,)
    support = set(np.flatnonzero(policy).tolist())
    if float(ex.value_weight) == 1.0:  # complete five
        assert float(ex.value) == 1.0
        assert mine and support == mine
        np.testing.assert_allclose(policy[sorted(mine)], 1.0 / len(mine))
    else:  # block four
        assert float(ex.value_weight) == 0.0 and float(ex.value) == 0.0
        assert mine == set() and len(theirs) == 1
        cell = next(iter(theirs))
        assert support == theirs and policy[cell] == 1.0
        if config.rule == "renju" and mover == 1:  # black can block there
            import renju_reference

            assert not renju_reference.forbidden(board.tolist(), divmod(cell, n))


def examples(samples, indices):
    return [jax.tree.map(lambda x: x[i], samples) for i in indices]


@pytest.mark.slow
@pytest.mark.parametrize("name", CONFIGS)
def test_valid_examples_match_brute_force(name):
    config = CONFIGS[name]
    samples = draw(name)
    valid = np.flatnonzero(samples.weight[:CHECKED] == 1.0)
    assert len(valid) > CHECKED // 2
    kinds = samples.value_weight[valid]
    assert 0 < kinds.sum() < len(valid)  # both kinds among those checked
    for ex in examples(samples, valid):
        check_example(ex, config)


@pytest.mark.parametrize("name", CONFIGS)
def test_mostly_valid_both_kinds_and_well_formed(name):
    n = CONFIGS[name].board_size
    s = draw(name)
    assert s.weight.shape == (NUM,) and s.policy.shape == (NUM, n * n)
    assert s.state.board.shape == (NUM, n, n) and s.state.board.dtype == np.int8
    assert s.state.last_moves.shape == (NUM, 2) and s.state.last_moves.dtype == np.int32
    assert isinstance(s, Examples) and s.state.config == CONFIGS[name]
    assert not s.state.terminated.any() and not s.state.truncated.any()
    assert s.state.truncated.dtype == np.bool_ and s.state.truncated.shape == (NUM,)
    for leaf in (s.policy, s.value, s.weight, s.value_weight):
        assert leaf.dtype == np.float32 and np.all(np.isfinite(leaf))
    assert set(np.unique(s.weight)) <= {0.0, 1.0}
    valid = s.weight == 1.0
    assert valid.mean() > 0.5
    complete = s.value_weight == 1.0
    assert np.all(s.value == complete.astype(np.float32))
    assert (valid & complete).sum() > NUM // 5 and (valid & ~complete).sum() > NUM // 5
    np.testing.assert_allclose(s.policy[valid].sum(-1), 1.0, rtol=1e-6)
    assert np.all(s.policy[~valid] == 0.0)
    assert set(np.unique(s.state.color)) == {-1, 1}
    assert set(np.unique(s.state.black_player)) == {0, 1}


@pytest.mark.parametrize("name", CONFIGS)
def test_policy_on_empty_cells_and_last_moves_on_own_stones(name):
    config = CONFIGS[name]
    n, k = config.board_size, config.win_length
    s = draw(name)
    flat = s.state.board.reshape(NUM, n * n)
    assert np.all(flat[s.policy > 0] == 0)
    for i in range(NUM):
        for slot, colour in ((0, 1), (1, -1)):
            move = int(s.state.last_moves[i, slot])
            if move == -1:
                assert not np.any(flat[i] == colour)
            else:
                assert 0 <= move < n * n and flat[i, move] == colour
        if s.weight[i] == 1.0 and s.value_weight[i] == 0.0:  # block four: the opponent's
            opp_slot = 0 if s.state.color[i] == -1 else 1  # last move lines up with the gap
            dr, dc = np.subtract(divmod(int(s.state.last_moves[i, opp_slot]), n),
                                 divmod(int(np.argmax(s.policy[i])), n))
            assert max(abs(dr), abs(dc)) <= k - 1
            assert dr == 0 or dc == 0 or abs(dr) == abs(dc)


def test_exact5_examples_include_overlines():
    """Under exact5 some valid examples have a cell that a freestyle game would count as a
    win (an overline): the targets must leave it out."""
    config, freestyle = CONFIGS["9-exact5"], GameConfig(9)
    s = draw("9-exact5")
    differ = 0
    for i in np.flatnonzero(s.weight[:CHECKED] == 1.0):
        board, mover = s.state.board[i], int(s.state.color[i])
        side = mover if s.value_weight[i] == 1.0 else -mover  # whose fives the target shows
        support = set(np.flatnonzero(s.policy[i]).tolist())
        loose = winning_cells(board, side, freestyle)
        assert support == winning_cells(board, side, config) <= loose
        differ += support != loose
    assert differ >= 2


def test_deterministic_per_key_and_keys_differ():
    again = jax.device_get(_draw_all()(jax.random.key(0), jax.random.key(3)))
    for a, b in zip(jax.tree.leaves(draw_all(0)), jax.tree.leaves(again)):
        np.testing.assert_array_equal(a, b)
    first, other = draw("9-freestyle", 0).state.board, draw("9-freestyle", 1).state.board
    assert np.mean(np.any(first != other, axis=(1, 2))) > 0.9
    within = draw("9-freestyle").state.board  # and examples within a draw differ
    assert len({b.tobytes() for b in within}) > 0.9 * NUM


def test_vmap_over_keys_other_k_and_stone_range():
    config = VMAP_CONFIG
    s = draw_all()[1]
    assert s.policy.shape == (4, 16, 49) and s.state.board.shape == (4, 16, 7, 7)
    flat = jax.tree.map(lambda x: x.reshape(64, *x.shape[2:]), s)
    valid = np.flatnonzero(flat.weight == 1.0)
    assert len(valid) > 32
    # At least the k-1 stones of the four; at most the 3 random ones, k+1 more from the line
    # and its two end cells, and the balancing's additions (|black - white| <= 1 + 2 (k+1)).
    assert flat.state.move_count.min() >= 3 and flat.state.move_count.max() <= 3 + 5 + 11
    for ex in examples(flat, valid):
        check_example(ex, config)


@pytest.mark.parametrize("name", ["9-freestyle", "9-exact5"])
def test_the_env_hook_is_tactical_examples(name):
    """`env.synthetic_examples(key, num)` is `tactical_examples(env.config, key, num)`: the
    same program (compared as jaxprs, which costs a trace, not a compile)."""
    config = CONFIGS[name]
    env = gomoku_jax.Gomoku.from_config(config)
    assert env.has_synthetic_examples
    key = jax.random.key(5)
    hook = jax.make_jaxpr(lambda k: env.synthetic_examples(k, 8))(key)
    direct = jax.make_jaxpr(lambda k: tactical_examples(config, k, 8))(key)
    assert str(hook) == str(direct)
    shapes = jax.eval_shape(lambda k: env.synthetic_examples(k, 8), key)
    assert isinstance(shapes, Examples)
    assert shapes.policy.shape == (8, env.num_actions)
    assert shapes.state.board.shape == (8, config.board_size, config.board_size)


@pytest.mark.parametrize("kwargs", [
    dict(num=-1), dict(num=2.0), dict(num=True), dict(min_stones=-1),
    dict(min_stones=5, max_stones=4), dict(max_stones=82),
])
def test_bad_arguments_raise(kwargs):
    args = dict(num=4) | kwargs
    num = args.pop("num")
    with pytest.raises(ValueError):
        tactical_examples(GameConfig(9), jax.random.key(0), num, **args)
