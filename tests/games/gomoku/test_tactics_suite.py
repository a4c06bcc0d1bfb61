"""The tactical suite (`games.gomoku.tactics_suite`): the shipped file, its labels, the generator,
and scoring agents on it with `eval.puzzles.solve_rates`."""

from __future__ import annotations

import copy
import functools

import jax
import numpy as np
import pytest
from conftest import EndCell

import gomoku_jax
from gomoku_jax.agents import make as make_agent
from gomoku_jax.eval.puzzles import solve_rates
from gomoku_jax.games.gomoku import tactics_suite
from gomoku_jax.games.gomoku.solver import Solver

# The small suite's seed: its 3 puzzles of every category turn up within 209 random
# positions (the VCF ones are the rare ones: seed 7 took 731).
SEED = 13


@functools.lru_cache(maxsize=None)
def small_suite() -> tactics_suite.Suite:
    return tactics_suite.generate(9, per_category=3, seed=SEED, max_positions=20_000)


@pytest.fixture(scope="module")
def shipped():
    return tactics_suite.default_suite()


def test_shipped_suite_shape(shipped):
    cfg = shipped.config
    assert (cfg.board_size, cfg.win_length, cfg.rule) == (15, 5, "freestyle")
    assert shipped.env == gomoku_jax.make("gomoku")
    assert {c: len(v) for c, v in shipped.by_category().items()} == {
        c: 40 for c in tactics_suite.CATEGORIES}
    assert len({p.board.tobytes() for p in shipped.puzzles}) == len(shipped.puzzles)
    # the five basic categories first (the original 200), then the VCF ones appended
    assert [p.category for p in shipped.puzzles] == [c for c in tactics_suite.CATEGORIES
                                                      for _ in range(40)]


def test_shipped_labels_are_the_solvers(shipped):
    """Two puzzles per category, relabelled from scratch."""
    solver = Solver(15, 5)
    for items in shipped.by_category().values():
        for p in items[:2]:
            category, solutions = tactics_suite.classify(solver, p.board, p.to_move)
            assert (category, tuple(sorted(solutions))) == (p.category, p.solutions)


def test_shipped_fours_puzzles_are_vcfs(shipped):
    """Six `fours_7` / `fours_9` puzzles re-checked piece by piece: the opponent has no five
    cell, the shortest VCF is the category's horizon, the solutions are exactly the VCF's
    first moves (each a four), and there is no win within 5 plies (first two only: slower)."""
    solver = Solver(15, 5)
    for category, plies in tactics_suite.FOURS_PLIES.items():
        for i, p in enumerate(shipped.by_category()[category][:3]):
            b, me = p.board.reshape(-1), p.to_move
            assert solver.five_cells(b, -me).size == 0 and solver.five_cells(b, me).size == 0
            assert solver.vcf_depth(b, me, 9) == plies
            assert tuple(solver.vcf_moves(b, me, plies)) == p.solutions
            assert set(p.solutions) <= set(solver.four_moves(b, me).tolist())
            if i == 0:
                assert not solver.wins_within(b, me, 5)


def test_category_selection():
    """`generate(categories=...)` draws the same positions: the VCF puzzles alone are those
    of the full generation; `classify` answers None for a category not selected."""
    suite = small_suite()
    found = []  # on_found hears every puzzle kept, as it is found (a progress bar's ticks)
    fours = tactics_suite.generate(9, per_category=3, seed=SEED, max_positions=20_000,
                                   categories=tactics_suite.FOURS_CATEGORIES,
                                   on_found=found.append)
    assert sorted(found) == [p.category for p in fours.puzzles]
    expected = [p for p in suite.puzzles if p.category in tactics_suite.FOURS_CATEGORIES]
    assert [p.category for p in fours.puzzles] == ["fours_7"] * 3 + ["fours_9"] * 3
    assert [(p.id, p.solutions) for p in fours.puzzles] == [(p.id, p.solutions)
                                                            for p in expected]
    assert all(np.array_equal(a.board, b.board) for a, b in zip(fours.puzzles, expected))
    solver = Solver(9, 5)
    for p in suite.puzzles:
        label = tactics_suite.classify(solver, p.board, p.to_move, tactics_suite.FOURS_CATEGORIES)
        if p.category in tactics_suite.FOURS_CATEGORIES:
            assert (label[0], tuple(label[1])) == (p.category, p.solutions)
        else:
            assert label is None
    with pytest.raises(ValueError, match="categories must be"):
        tactics_suite.generate(9, per_category=1, categories=("fours_11",))
    with pytest.raises(ValueError, match="categories must be"):
        tactics_suite.generate(9, per_category=1, categories=())
    with pytest.raises(ValueError, match="categories must be among"):
        tactics_suite.classify(solver, suite.puzzles[0].board, 1, ("mate",))


def test_five_and_block_against_the_env(shipped):
    """Independently of the solver: each `five` solution wins on the real env, and in
    `block_four` every other legal move lets the opponent win with its reply."""
    from gomoku_jax.games.gomoku.positions import from_board
    env = gomoku_jax.make("gomoku")
    every = np.arange(env.num_actions, dtype=np.int32)
    step_all = jax.jit(jax.vmap(env.step, in_axes=(None, 0)))
    two_plies = jax.jit(jax.vmap(jax.vmap(env.step, in_axes=(None, 0)), in_axes=(0, None)))
    for p in shipped.by_category()["five"][:5]:
        state = from_board(env.config, p.board, p.to_move)
        after = step_all(state, np.asarray(p.solutions, np.int32))
        assert np.all(np.asarray(after.winner) == p.to_move)
    for p in shipped.by_category()["block_four"][:3]:
        state = from_board(env.config, p.board, p.to_move)
        replies = two_plies(step_all(state, every), every)
        opponent_wins = np.any(np.asarray(replies.winner) == -p.to_move, axis=1)
        legal = np.asarray(state.legal_action_mask)
        assert np.array_equal(opponent_wins[legal], ~np.isin(every[legal], p.solutions))


def test_generate_is_seeded_and_consistent():
    """The same seed draws the same puzzles: those of the categories that are not VCF ones,
    drawn again on their own (the VCF ones are test_category_selection's: between them, a
    second run reproduces every puzzle)."""
    suite = small_suite()
    others = [c for c in tactics_suite.CATEGORIES if c not in tactics_suite.FOURS_CATEGORIES]
    again = tactics_suite.generate(9, per_category=3, seed=SEED, max_positions=20_000,
                                   categories=others)
    expected = [p for p in suite.puzzles if p.category in others]
    assert [p.category for p in again.puzzles] == [c for c in others for _ in range(3)]
    assert [(p.id, p.solutions) for p in again.puzzles] == [(p.id, p.solutions)
                                                             for p in expected]
    assert all(np.array_equal(a.board, b.board) for a, b in zip(expected, again.puzzles))
    solver = Solver(9, 5)
    for p in suite.puzzles:
        assert tactics_suite.classify(solver, p.board, p.to_move)[0] == p.category
        assert all(p.board.reshape(-1)[a] == 0 for a in p.solutions)


def test_json_round_trip(tmp_path):
    suite = small_suite()
    path = tmp_path / "suite.json"
    tactics_suite.save(suite, path)
    back = tactics_suite.load(path)
    assert back.config == suite.config
    for a, b in zip(suite.puzzles, back.puzzles):
        assert (a.id, a.category, a.to_move, a.solutions) == (b.id, b.category, b.to_move,
                                                              b.solutions)
        assert np.array_equal(a.board, b.board)


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["puzzles"][0].update(category="mate"), "category must be one of"),
    (lambda d: d["puzzles"][0]["board"].pop(), "board must be 9 rows"),
    (lambda d: d["puzzles"][0].update(to_move="purple"), "puzzle 0"),
    (lambda d: d["puzzles"][0].update(solutions=[]), "non-empty"),
    (lambda d: d["puzzles"][0].update(solutions=[[9, 0]]), "non-empty list of empty"),
    (lambda d: d["puzzles"][0].pop("board"), "missing or malformed"),
    (lambda d: d.pop("rule"), "needs board_size"),
])
def test_bad_suite_files_are_refused(edit, message):
    data = copy.deepcopy(tactics_suite.to_json(small_suite()))
    edit(data)
    with pytest.raises(ValueError, match=message):
        tactics_suite.from_json(data)


def test_unreadable_file(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="cannot read tactical suite"):
        tactics_suite.load(bad)


def test_puzzles_for_eval_are_the_suites_positions():
    suite = small_suite()
    env = suite.env
    assert env == gomoku_jax.make("gomoku", board_size=9)
    items = suite.puzzles_for_eval()
    assert len(items) == len(suite.puzzles)
    for (pid, category, state, solutions), p in zip(items, suite.puzzles):
        assert (pid, category, solutions) == (p.id, p.category, p.solutions)
        np.testing.assert_array_equal(np.asarray(state.board), p.board)
        assert int(state.color) == p.to_move and state.config == env.config
        assert not bool(state.terminated) and not bool(state.truncated)


def test_solve_rates_counts_exactly():
    """A predictable agent (lowest empty cell) scores exactly the puzzles whose solutions
    contain that cell; the heuristic player solves every five and block."""
    suite = small_suite()
    env, puzzles = suite.env, suite.puzzles_for_eval()
    result = solve_rates(env, EndCell(), puzzles, jax.random.key(0), batch_size=4,
                         latency_samples=1)
    lowest = {p.id: int(np.flatnonzero(p.board.reshape(-1) == 0)[0]) for p in suite.puzzles}
    assert result.actions == lowest  # every puzzle, batched and padded, got its own move
    for category, items in suite.by_category().items():
        expected = sum(lowest[p.id] in p.solutions for p in items)
        assert result.solved[category] == (expected, len(items))
    assert list(result.solved) == list(tactics_suite.CATEGORIES)  # in order of appearance
    assert result.total == (sum(s for s, _ in result.solved.values()), len(suite.puzzles))
    assert result.rate == result.total[0] / result.total[1]
    assert result.seconds_per_move > 0 and result.batch_seconds_per_move > 0
    # batch_size=1: the batched run and the latency probe share one compiled program
    heuristic = solve_rates(env, make_agent("heuristic"), puzzles, jax.random.key(1),
                            batch_size=1, latency_samples=0)
    assert heuristic.solved["five"] == (3, 3) and heuristic.solved["block_four"] == (3, 3)
    for p in suite.puzzles:
        if p.category in ("five", "block_four"):
            assert heuristic.actions[p.id] in p.solutions, p.id


def test_solve_rates_refuses_no_puzzles():
    with pytest.raises(ValueError, match="no puzzles"):
        solve_rates(small_suite().env, EndCell(), [], jax.random.key(0))


def test_default_mcts_solves_the_small_suite_threats():
    """The default mcts agent (heuristic evaluator on Gomoku, full strength) on the 9x9
    generated suite, 32 sims. One position at a time: the latency probe runs a batch of one
    anyway, so this compiles the search once (the compile is most of this test's time)."""
    suite = small_suite()
    result = solve_rates(suite.env, make_agent("mcts", num_simulations=32),
                         suite.puzzles_for_eval(), jax.random.key(3), batch_size=1,
                         latency_samples=0)
    for category in ("five", "block_four", "open_four"):
        assert result.solved[category] == (3, 3), (category, result.solved)
