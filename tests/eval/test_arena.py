"""The arena: A vs B from openings with both sides, tallied with an Elo difference, for any
game.

Deterministic agents (lowest / highest empty cell) make whole matches predictable; the
heuristic against random shows a real strength gap. Each agent pairing and batch size is
compiled once (`arena.compiled_match` caches it), so the tests share compilations.
"""

from __future__ import annotations

import dataclasses
import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import EndCell

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.agents import Agent
from gomoku_jax.eval import arena, elo, run_match
from gomoku_jax.eval.match import MatchOutcome
from gomoku_jax.games.gomoku.openings import DEFAULT_OPENINGS, opening_actions

ENV7 = gomoku_jax.make("gomoku", board_size=7)
# Black to move after them.
TWO_STONES = opening_actions((((0, 0), (0, 1)), ((0, 0), (1, 1))), 7)


@dataclasses.dataclass(frozen=True)
class Preference(Agent):
    """Plays the legal cell of highest `params` (float32[N*N]): the params choose the moves."""

    name = "preference"

    def act(self, params, agent_state, state, key):
        legal = state.legal_action_mask
        action = jnp.argmax(jnp.where(legal, params, -jnp.inf)).astype(jnp.int32)
        return action, agent_state, {"policy": jax.nn.one_hot(action, legal.shape[-1]),
                                     "value": jnp.float32(0.0)}


FIRST, LAST = EndCell(last=False), EndCell(last=True)


@functools.lru_cache(maxsize=None)
def random_vs_heuristic(seed: int) -> arena.MatchResult:
    # 7x7, one game per opening and colour, random as A: the same compilation as
    # test_tournament's random-vs-heuristic pair.
    return run_match(ENV7, agents.make("random"), agents.make("heuristic"),
                     jax.random.key(seed), 1)


@functools.lru_cache(maxsize=None)
def random_vs_proximity(seed: int) -> arena.MatchResult:
    return run_match(ENV7, agents.make("random"), agents.make("proximity_random"),
                     jax.random.key(seed), 1)


def test_heuristic_beats_random():
    r = random_vs_heuristic(0)  # from random's side
    assert r.games == 16 and r.wins + r.draws + r.losses == 16
    assert r.as_first.games == r.as_second.games == 8
    assert r.score < 0.1 and r.elo.diff < 0 and r.elo.upper < 0
    assert r.as_first.score <= 0.25 and r.as_second.score <= 0.25
    assert (r.agent_a, r.agent_b) == ("random", "heuristic")
    assert r.openings == opening_actions(DEFAULT_OPENINGS, 7) == ENV7.default_openings()
    assert len(r.per_opening) == 8
    assert all(b.games == w.games == 1 for b, w in r.per_opening)
    assert sum((b + w for b, w in r.per_opening), arena.Record()) == r.record
    assert 8 < r.mean_length <= 49


def test_sides_swap_and_the_side_to_move_after_the_opening_moves_first():
    # After 3 stones white moves first. FIRST fills row 0 from the left, LAST row 6 from the
    # right; whoever moves first completes five first. So A = FIRST loses every game as
    # the game's first player (black: B, white, moves first after the opening) and wins
    # every game as the second.
    r = run_match(ENV7, FIRST, LAST, jax.random.key(0), 3)
    assert r.as_first == arena.Record(0, 0, 24) and r.as_second == arena.Record(24, 0, 0)
    assert all(f == arena.Record(0, 0, 3) and s == arena.Record(3, 0, 0)
               for f, s in r.per_opening)
    assert r.score == 0.5 and r.elo.diff == 0.0
    assert r.mean_length == 3 + 9  # the opening, then 5 moves of the winner, 4 of the loser
    # After 2 stones black moves first and wins.
    r = run_match(ENV7, FIRST, LAST, jax.random.key(0), 3, TWO_STONES)
    assert r.as_first == arena.Record(6, 0, 0) and r.as_second == arena.Record(0, 0, 6)
    assert r.mean_length == 2 + 9


def test_params_follow_their_agent_across_colours():
    # One agent class for both sides; params make A play like FIRST and B like LAST, so the
    # result must equal FIRST vs LAST's.
    cells = jnp.arange(ENV7.num_actions, dtype=jnp.float32)
    r = run_match(ENV7, Preference(), Preference(), jax.random.key(0), 3,
                  params_a=-cells, params_b=cells)
    assert r.as_first == arena.Record(0, 0, 24) and r.as_second == arena.Record(24, 0, 0)
    r = run_match(ENV7, Preference(), Preference(), jax.random.key(0), 3,
                  params_a=cells, params_b=-cells)
    assert r.as_first == arena.Record(0, 0, 24) and r.as_second == arena.Record(24, 0, 0)
    assert (r.agent_a, r.agent_b) == ("preference", "preference")


def test_results_depend_on_the_seed_only():
    a = random_vs_proximity(0)
    again = run_match(ENV7, agents.make("random"), agents.make("proximity_random"),
                      jax.random.key(0), 1)
    assert again == a and again.to_dict() == a.to_dict()
    other = random_vs_proximity(1)
    assert other.to_dict() != a.to_dict()
    assert a.games == other.games == 16


def test_compiled_once_per_pairing_and_batch():
    """One program plays both side assignments (`first_passes` is traced), and a second
    match of the same pairing and batch reuses it."""
    random_vs_proximity(0)
    before = arena.compiled_match.cache_info()
    run_match(ENV7, agents.make("random"), agents.make("proximity_random"),
              jax.random.key(5), 1)
    after = arena.compiled_match.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses
    # the openings have 3 moves: B (proximity_random) is to move after them
    program = arena.compiled_match(ENV7, agents.make("proximity_random").bind(ENV7),
                                   agents.make("random").bind(ENV7),
                                   len(ENV7.default_openings()))
    assert program.start._cache_size() == program.advance._cache_size() == 1


ENV7K4 = gomoku_jax.make("gomoku", board_size=7, win_length=4)


def test_progress_plays_the_same_games_in_chunks():
    """With `on_games` a half runs as several calls of the same compiled loop: the same
    bits come out, and the ticks count every game once."""
    random = agents.make("random").bind(ENV7K4)
    openings = ENV7K4.default_openings()
    start = arena.opening_states(ENV7K4, openings)
    match = arena.compiled_match(ENV7K4, random, random, len(openings))
    ticks = []
    for first_passes in (False, True):
        whole = arena.play_half(match, ENV7K4, jax.random.key(3), (None, None), start,
                                first_passes)
        chunked = arena.play_half(match, ENV7K4, jax.random.key(3), (None, None), start,
                                  first_passes, on_games=ticks.append)
        for a, b in zip(jax.tree.leaves(whole), jax.tree.leaves(chunked), strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # a 4 needs two more stones of the side with two: no game ends in the first chunk (one
    # step), so each half takes at least two calls
    assert sum(ticks) == 2 * len(openings) and len(ticks) >= 4 and ticks[0] == 0
    assert match.advance._cache_size() == 1  # one program, whole or in chunks
    plain = run_match(ENV7K4, random, random, jax.random.key(4), 1)
    counted = []
    shown = run_match(ENV7K4, random, random, jax.random.key(4), 1, on_games=counted.append)
    assert shown.to_dict() == plain.to_dict() and sum(counted) == plain.games == 16


@pytest.mark.parametrize("steps, seconds, expected", [
    (1, 30.0, 1),  # the first chunk compiled: stay at 1
    (1, 0.001, 2), (8, 0.01, 16),  # fast: at most double
    (16, 1.0, 8), (16, 100.0, 1),  # slow: scale down to about half a second
])
def test_chunks_aim_at_half_a_second(steps, seconds, expected):
    assert arena.next_chunk(steps, seconds) == expected


def test_to_dict_and_summary():
    r = random_vs_heuristic(0)
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["games"] == 16 and d["wins"] == r.wins and d["score"] == r.score
    assert d["game"] == {"id": "gomoku", "version": "v1", "board_size": 7, "win_length": 5,
                         "rule": "freestyle", "observation": "absolute",
                         "feature_plane": "none"}
    assert d["as_first"]["wins"] + d["as_second"]["wins"] == r.wins
    assert len(d["openings"]) == 8 and d["openings"][0]["actions"] == [24, 17, 33]
    assert d["openings"][0]["moves"] == "(3, 3) (2, 3) (4, 5)"
    assert set(d["elo"]) >= {"diff", "lower", "upper", "margin", "score_stderr"}
    assert set(d["elo_fit"]) >= {"diff", "lower", "upper", "se", "status", "first_move",
                                 "first_move_se"}
    text = r.summary()
    assert "Elo difference random - heuristic, paired (the head-to-head interval): " in text
    assert "Elo difference random - heuristic, rating fit (the games with their colours " \
           "and a first-move term): " in text
    assert "random vs heuristic: gomoku (board_size=7, win_length=5, rule=freestyle, " \
           "observation=absolute, feature_plane=none), 16 games = 8 openings of 3 moves x " \
           "2 sides x 1" in text
    assert f"as first player {r.as_first} (W-D-L), as second {r.as_second}" in text
    table = r.per_opening_table()
    assert table.count("\n") == 2 + 8 - 1 and "| 0 | (3, 3) (2, 3) (4, 5) |" in table


def test_bad_arguments():
    with pytest.raises(ValueError, match="games_per_opening_colour must be an int >= 1"):
        run_match(ENV7, FIRST, LAST, jax.random.key(0), 0)
    with pytest.raises(ValueError, match="off the 5x5 board"):
        opening_actions([[(0, 0), (3, 0)]], 5)
    with pytest.raises(ValueError, match="same number of moves"):
        run_match(ENV7, FIRST, LAST, jax.random.key(0), 1, [[24], [24, 25]])
    with pytest.raises(ValueError, match=r"opening 0 \[\(3, 3\) \(3, 3\)\]: move 1"):
        run_match(ENV7, FIRST, LAST, jax.random.key(0), 1, [[24, 24]])
    won = [(0, 0), (6, 0), (0, 1), (6, 1), (0, 2), (6, 2), (0, 3), (6, 3), (0, 4)]
    with pytest.raises(ValueError, match="game is over|already ends the game"):
        run_match(ENV7, FIRST, LAST, jax.random.key(0), 1, [[r * 7 + c for r, c in won]])


@pytest.mark.parametrize("total, openings, expected", [(64, 8, 4), (65, 8, 5), (1, 8, 1),
                                                       (16, 1, 8)])
def test_total_games_round_up_to_both_colours_of_every_opening(total, openings, expected):
    assert arena.per_opening_colour(total, openings) == expected


def test_total_games_must_be_positive():
    with pytest.raises(ValueError, match="number of games must be an int >= 1"):
        arena.per_opening_colour(0, 8)


def test_pairs_and_distinct_games_of_deterministic_agents():
    # FIRST vs LAST: the side to move wins, so every pair (same opening and replica, sides
    # swapped) is 1-1, and the 3 replicas of each opening and side are one game.
    r = run_match(ENV7, FIRST, LAST, jax.random.key(0), 3)
    assert len(r.pair_points) == 8 and all(len(p) == 3 for p in r.pair_points)
    assert r.pairs == (0, 0, 24, 0, 0)
    assert r.distinct_games == 16  # 8 openings x 2 side assignments, of 48 games
    p = r.elo_paired
    assert p.pairs == 24 and p.games == r.games and p.method == "uniform" and p.diff == 0.0
    # the paired interval knows the 1-1 pairs say little about a difference but much about
    # its size: narrower than the trinomial's 24-0-24
    assert p.upper - p.lower < r.elo.upper - r.elo.lower
    assert "distinct games: 16 of 48" in r.summary() and "0/0/24/0/0" in r.summary()


def test_pair_points_add_up_to_the_record():
    r = random_vs_heuristic(0)
    assert sum(r.pairs) == r.games // 2 == 8
    assert sum(map(sum, r.pair_points)) == pytest.approx(r.wins + 0.5 * r.draws)
    for (first, second), points in zip(r.per_opening, r.pair_points):
        assert sum(points) == pytest.approx(first.points + second.points)
    assert 1 <= r.distinct_games <= r.games
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert sum(d["pairs"]) == 8 and d["distinct_games"] == r.distinct_games
    assert d["elo_paired"]["pairs"] == 8


def test_final_position_keys_tell_games_apart():
    # 3 games per opening and side: the match of test_sides_swap_... (compiled once)
    r = run_match(ENV7, FIRST, LAST, jax.random.key(0), 3, TWO_STONES)
    assert r.games == 12 and r.distinct_games == 4  # 2 openings x 2 side assignments
    start = ENV7.from_moves(list(TWO_STONES[0]))
    states = jax.tree.map(lambda x: jnp.stack([x, x]), start)
    out = MatchOutcome(states, jnp.zeros((2, 2)), jnp.zeros(2, jnp.int32),
                       jnp.array([0, 1], jnp.int32))
    a, b = arena.final_position_keys(out)
    assert a != b  # same position, different lengths
    out = out._replace(plies=jnp.array([1, 1], jnp.int32))
    a, b = arena.final_position_keys(out)
    assert a == b


# ------------------------------------------------------------- synthetic matches (no JAX)

def fake_match(as_first: arena.Record, as_second: arena.Record, pairs=None
               ) -> arena.MatchResult:
    return arena.MatchResult(
        "A", "B", {"id": "gomoku", "version": "v1"}, ((24, 17, 33),), ("x",), as_first.games,
        as_first, as_second, ((as_first, as_second),), 10.0,
        elo.estimate(*dataclasses.astuple(as_first + as_second)), pairs)


def test_the_rating_fit_of_a_match_has_its_first_move_term():
    # A scores 12-0-4 moving first and 8-0-8 moving second: a first-move edge and A ahead.
    r = fake_match(arena.Record(12, 0, 4), arena.Record(8, 0, 8))
    first, second, score = r.game_records()
    assert list(first) == [0] * 16 + [1] * 16 and list(second) == [1] * 16 + [0] * 16
    assert score[:16].sum() == 12 and score[16:].sum() == 8  # B first: A's losses are B's wins
    direct = elo.fit_games(first, second, score, num_players=2, anchor=1)
    f = r.elo_fit
    assert f.ratings[0] == direct.ratings[0] > 0 and f.status == ("rated", "anchor")
    assert f.first_move_fitted and f.first_move > 0
    # with both colours the split is exact: A - B from its mean score over the two colours,
    # h from the difference (Bradley-Terry, no draws)
    logit = lambda p: 400 * np.log10(p / (1 - p))  # noqa: E731
    assert f.ratings[0] == pytest.approx((logit(12 / 16) + logit(8 / 16)) / 2, abs=1e-6)
    assert f.first_move == pytest.approx((logit(12 / 16) - logit(8 / 16)) / 2, abs=1e-6)
    text = r.summary()
    assert (f"rating fit (the games with their colours and a first-move term): "
            f"{f.ratings[0]:+.1f} ± {(f.upper[0] - f.lower[0]) / 2:.1f} (95%); first-move "
            f"advantage {f.first_move:+.1f} Elo (SE {f.first_move_se:.1f})") in text
    assert "games as if independent" in text  # no pairs recorded: the trinomial line
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["elo_fit"]["diff"] == pytest.approx(f.ratings[0])
    assert d["elo_fit"]["first_move"] == pytest.approx(f.first_move)


def test_a_sweep_in_the_rating_fit_is_a_one_sided_bound():
    r = fake_match(arena.Record(16, 0, 0), arena.Record(16, 0, 0), ((2.0,) * 16,))
    f = r.elo_fit
    assert f.status[0] == "above" and f.ratings[0] == np.inf
    assert f.lower[0] == pytest.approx(365.2, abs=0.1)  # Clopper-Pearson, 32 of 32 games
    text = r.summary()
    assert "paired (the head-to-head interval): > +234.5 (95%, one-sided;" in text
    assert "first-move term): > +365.2 (95%, one-sided); first-move advantage not " \
           "identified" in text
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["elo_fit"]["diff"] is None and d["elo_fit"]["upper"] is None
    assert d["elo_fit"]["status"] == "above" and d["elo_fit"]["lower"] > 365
