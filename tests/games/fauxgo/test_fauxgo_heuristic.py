"""Seed 004's Faux Go AI (`games.fauxgo.heuristic`, agent `fauxgo_heuristic`).

- Differential: on random positions of random games, every veto and every component of every
  legal placement equals the pure-Python reference (`fauxgo_heuristic_reference.py`, written
  from the module's definitions over the reference rules).
- One position built by hand for each veto and each scoring component, with the expected
  numbers worked out on paper.
- The selection: the margin, the pass when everything is vetoed, and the agent's moves.

All analyses go through one compiled, vmapped function on 7x7 (batches padded to BATCH).
"""

from __future__ import annotations

import dataclasses
import functools
import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fauxgo_heuristic_reference import components, legal_placements, vetoes
from fauxgo_reference import Game

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.games.fauxgo.heuristic import (
    COMPONENTS,
    FauxGoHeuristicConfig,
    MoveAnalysis,
    analyse,
    choose,
)

N = 7
ENV = gomoku_jax.make("fauxgo", board_size=N)
CONFIG = FauxGoHeuristicConfig()
BATCH = 16


@functools.lru_cache(maxsize=None)
def _analyse_batch():
    return jax.jit(jax.vmap(functools.partial(analyse, CONFIG)))


def analyse_all(positions) -> list[MoveAnalysis]:
    """The analysis of each (board, owner, to_move), through the one compiled program."""
    states = [ENV.from_board(b, o, t) for b, o, t in positions]
    out = []
    for i in range(0, len(states), BATCH):
        chunk = states[i:i + BATCH]
        padded = chunk + [chunk[0]] * (BATCH - len(chunk))
        batch = jax.tree.map(lambda *x: jnp.stack(x), *padded)
        result = jax.device_get(_analyse_batch()(batch))
        out += [MoveAnalysis(*(np.asarray(x[j]) for x in result)) for j in range(len(chunk))]
    return out


def analyse_one(board, owner=None, to_move=1) -> MoveAnalysis:
    owner = np.zeros((N, N), int) if owner is None else owner
    return analyse_all([(np.asarray(board), np.asarray(owner), to_move)])[0]


def grid(text: str) -> np.ndarray:
    """A board from rows of `.` (empty), `x` (black) and `o` (white)."""
    rows = [r.split() for r in text.strip().splitlines()]
    return np.array([[{".": 0, "x": 1, "o": -1}[c] for c in row] for row in rows])


def at(analysis: MoveAnalysis, name: str, r: int, c: int) -> float:
    return float(analysis.components[COMPONENTS.index(name), r * N + c])


# ------------------------------------------------------------------ differential


def random_positions(count: int, seed: int) -> list[Game]:
    """Positions of random reference games (a few passes thrown in), at random plies."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        game = Game(N)
        for _ in range(rng.randrange(6, 2 * N * N)):
            moves = game.legal_moves()
            game.play(N * N if rng.random() < 0.04 else rng.choice(moves))
            if game.over:
                break
        if not game.over:
            out.append(game)
    return out


@pytest.fixture(scope="module")
def compared():
    games = random_positions(2 * BATCH, seed=7)
    analyses = analyse_all([(np.array(g.board()), np.array(g.owners()), g.to_move)
                            for g in games])
    return games, analyses


def test_vetoes_and_components_equal_the_reference(compared):
    games, analyses = compared
    checked = {"one_move": 0, "danger": 0, **{name: 0 for name in COMPONENTS}}
    for game, analysis in zip(games, analyses):
        legal = legal_placements(game)
        np.testing.assert_array_equal(
            np.flatnonzero(analysis.placeable), [r * N + c for r, c in legal])
        for cell in legal:
            p = cell[0] * N + cell[1]
            one_move, danger = vetoes(game, cell)
            assert analysis.one_move[p] == one_move, (game.board(), cell)
            assert analysis.danger[p] == danger, (game.board(), cell)
            expected = components(game, cell)
            for i, name in enumerate(COMPONENTS):
                assert analysis.components[i, p] == pytest.approx(expected[name], abs=1e-4), (
                    name, game.board(), game.owners(), game.to_move, cell)
                checked[name] += expected[name] != 0
            checked["one_move"] += one_move
            checked["danger"] += danger
    # the random positions exercised every part (the test is not vacuous)
    assert all(count > 0 for count in checked.values()), checked


# ------------------------------------------------------------------ hand-made positions


def test_position_is_one_at_the_centre_and_zero_on_the_edge():
    a = analyse_one(np.zeros((N, N), int))
    assert at(a, "position", 3, 3) == 1.0
    assert at(a, "position", 0, 4) == at(a, "position", 6, 6) == 0.0
    assert at(a, "position", 2, 4) == pytest.approx(1 - 1 / 3)


def test_liberties_count_empty_neighbours_outside_the_opponents_enclosure():
    board = grid("""
        . . . . . . .
        . . o . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    owner = np.zeros((N, N), int)
    owner[2, 1] = -1  # a white enclosure cell next to (2, 2)
    a = analyse_one(board, owner, to_move=1)
    # (2, 2): up is a white stone, left is white's enclosure, right and down are open
    assert at(a, "liberties", 2, 2) == 10.0
    assert at(a, "liberties", 0, 0) == 10.0  # a corner has two neighbours
    assert at(a, "liberties", 4, 4) == 20.0


def test_connection_counts_adjacent_and_distance_two_friends():
    board = grid("""
        . . . . . . .
        . . . . . . .
        . . . x . . .
        . . . . . . .
        . x . . . o .
        . . . . . . .
        . . . . . . .""")
    a = analyse_one(board, to_move=1)
    assert at(a, "connection", 3, 3) == 10.0  # (2, 3) adjacent
    assert at(a, "connection", 3, 2) == 2.0 + 2.0  # (2, 3) and (4, 1) both diagonal
    assert at(a, "connection", 4, 3) == 2.0 + 2.0  # (2, 3) two up, (4, 1) two left
    assert at(a, "connection", 4, 4) == 0.0  # the white stone does not count


def test_territory_is_the_friendly_share_of_the_5x5_square():
    board = grid("""
        x . . . . . .
        . . . . . . .
        . . . o . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . x""")
    a = analyse_one(board, to_move=1)
    assert at(a, "territory", 1, 1) == 15.0  # (0, 0) black and (2, 3) white in its square
    assert at(a, "territory", 5, 5) == 30.0  # only (6, 6)
    assert at(a, "territory", 4, 0) == 0.0  # rows 2..6, columns 0..2: no stone
    assert at(analyse_one(board, to_move=-1), "territory", 3, 4) == 30.0  # white's view


def test_capture_scores_stones_and_the_new_enclosure():
    # white (2, 2) caged by black but for (3, 2)
    board = grid("""
        . . . . . . .
        . . x . . . .
        . x o x . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    a = analyse_one(board, to_move=1)
    # one stone (50), a new enclosure (200), one cell newly owned (5)
    assert at(a, "capture", 3, 2) == 50.0 + 200.0 + 5.0
    assert at(a, "capture", 5, 5) == 0.0
    # a fort: black closes the empty inner pocket (1, 1) with (2, 1); no stone taken
    fort = grid("""
        . x . . . . .
        x . x . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    assert at(analyse_one(fort, to_move=1), "capture", 2, 1) == 200.0 + 5.0


def test_progress_pays_for_each_exit_taken_from_an_opponent_group():
    # white (0, 1)'s region: (0, 0), (0, 1), (0, 2), (1, 2); exits (0, 0) and (0, 2)
    board = grid("""
        . o . x . . .
        x x . x . . .
        . . x . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    a = analyse_one(board, to_move=1)
    assert at(a, "progress", 0, 2) == 30.0 + 10.0 + 5.0  # 2 exits -> 1
    assert at(a, "progress", 0, 0) == 30.0 + 10.0 + 5.0  # 2 exits -> 1
    assert at(a, "progress", 1, 2) == 0.0  # still (0, 0) and (0, 2)
    # any edge stone takes an exit from an open group: 24 exits -> 23
    lone = np.zeros((N, N), int)
    lone[3, 3] = -1
    assert at(analyse_one(lone, to_move=1), "progress", 0, 3) == 30.0 + 10.0
    assert at(analyse_one(lone, to_move=1), "progress", 2, 3) == 0.0


# Black's group (1, 0)-(1, 1) has one exit, (0, 0), and a ring of 4 white stones out of 5
# cells: endangered and critical. Black on (0, 0) captures white (0, 1), whose cell joins
# black's region to the open board through (0, 2): the group's exits grow from 1 to 20.
RESCUE = grid("""
    . o x . . . .
    x x o . . . .
    o o . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .""")


def test_block_pays_when_a_move_lets_an_endangered_group_breathe():
    a = analyse_one(RESCUE, to_move=1)
    assert at(a, "block", 0, 0) == 30.0 + 5.0 * 20  # exits: the 20 empty edge cells after
    assert at(a, "block", 2, 2) == 0.0  # next to the group, but no exit gained
    assert at(a, "capture", 0, 0) == 50.0 + 200.0 + 5.0


def test_urgent_defence_pays_adjacency_gaps_and_escapes_of_critical_groups():
    a = analyse_one(RESCUE, to_move=1)
    assert at(a, "urgent", 0, 0) == 50.0 + 80.0 + 100.0  # 8-adjacent, a gap, escapes
    assert at(a, "urgent", 2, 2) == 50.0  # diagonal to (1, 1) only
    assert at(a, "urgent", 4, 4) == 0.0


def test_capture_blocking_takes_the_point_where_the_opponent_would_capture():
    a = analyse_one(RESCUE, to_move=1)
    # white on (0, 0) would take the 2-stone group; white on (0, 3) the (0, 2) stone
    assert at(a, "capture_block", 0, 0) == 150.0 + 30.0 * 2
    assert at(a, "capture_block", 0, 3) == 150.0 + 30.0 * 1
    assert at(a, "capture_block", 1, 3) == 0.0
    weights = np.asarray(CONFIG.weights)
    total = weights @ a.components
    assert np.argmax(np.where(a.placeable & ~a.one_move & ~a.danger, total, -np.inf)) == 0


def test_one_move_veto_is_a_stone_a_single_reply_captures():
    # black on (3, 2) has white on three sides: white's (3, 3) would take it
    board = grid("""
        . . . . . . .
        . . . . . . .
        . . o . . . .
        . o . . . . .
        . . o . . . .
        . . . . . . .
        . . . . . . .""")
    a = analyse_one(board, to_move=1)
    assert a.one_move[3 * N + 2] and not a.danger[3 * N + 2]  # many exits: not a danger zone
    assert not a.one_move[3 * N + 4]
    # a self-sealing move (no exit left) is both
    sealed = grid("""
        o . o . . . .
        . o . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    b = analyse_one(sealed, to_move=1)
    assert b.one_move[1] and b.danger[1]


def test_danger_zone_is_few_exits_walled_by_the_opponent_with_critical_gaps():
    # black on (1, 1): region (1, 1) (0, 1) (0, 2) (1, 0), exits (0, 1) (0, 2) (1, 0) = 3,
    # opponent share of the ring 2/4 >= 0.4, three critical edge gaps >= 3 exits; no single
    # white reply captures it
    board = grid("""
        o . . o . . .
        . . o . . . .
        o o . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    a = analyse_one(board, to_move=1)
    assert a.danger[1 * N + 1] and not a.one_move[1 * N + 1]
    with_more_room = board.copy()
    with_more_room[0, 0] = 0  # (0, 0) opens a fourth exit next to no wall: 2 critical < 4
    assert not analyse_one(with_more_room, to_move=1).danger[1 * N + 1]


# ------------------------------------------------------------------ selection


@functools.lru_cache(maxsize=None)
def _choose(config: FauxGoHeuristicConfig):
    return jax.jit(jax.vmap(functools.partial(choose, config), in_axes=(None, 0)))


def synthetic(totals, one_move=(), danger=()) -> MoveAnalysis:
    """An analysis whose position component is `totals` (weight 1) and all else 0."""
    n2 = N * N
    comps = np.zeros((len(COMPONENTS), n2), np.float32)
    comps[0, :len(totals)] = totals
    flags = [np.isin(np.arange(n2), idx) for idx in (one_move, danger)]
    return MoveAnalysis(np.ones(n2, bool), *flags, comps)


def drawn(config, analysis, draws=200):
    keys = jax.random.split(jax.random.key(0), draws)
    actions, policy, _ = jax.device_get(_choose(config)(analysis, keys))
    return set(actions.tolist()), policy[0]


def test_select_draws_among_the_moves_within_the_margin_of_the_best():
    analysis = synthetic([100.0, 98.5, 97.5, 99.0])  # others score 0
    moves, policy = drawn(CONFIG, analysis)
    assert moves == {0, 1, 3}
    np.testing.assert_allclose(policy[[0, 1, 3]], 1 / 3)
    assert drawn(dataclasses.replace(CONFIG, select_margin=3.0), analysis)[0] == {0, 1, 2, 3}


def test_vetoed_moves_are_skipped_and_everything_vetoed_is_a_pass():
    analysis = synthetic([100.0, 50.0, 47.0], one_move=[0], danger=[1])
    assert drawn(CONFIG, analysis)[0] == {2}
    assert drawn(dataclasses.replace(CONFIG, veto_danger=False), analysis)[0] == {1}
    everything = synthetic([1.0], one_move=np.arange(N * N))
    moves, policy = drawn(CONFIG, everything)
    assert moves == {N * N} and policy[N * N] == 1.0


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="danger_few_share"):
        FauxGoHeuristicConfig(danger_few_share=1.5)
    with pytest.raises(ValueError, match="select_margin"):
        FauxGoHeuristicConfig(select_margin=-1.0)
    with pytest.raises(ValueError, match="territory_radius"):
        agents.make("fauxgo_heuristic", territory_radius="-2")
    assert agents.make("fauxgo_heuristic", capture_weight="12").capture_weight == 12.0
