"""Round-robin tournaments: every pair plays, the Elo fit ranks them, tables come out.

The fit and the tables are also checked on synthetic matches (no games played, no compile):
the ratings are one `fit_games` over the games with their colours, a first-move edge is
reported, and a sweep shows as a one-sided bound."""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax.eval import elo, run_tournament, tournament
from gomoku_jax.eval.arena import MatchResult, Record

ENV7 = gomoku_jax.make("gomoku", board_size=7)
SPECS = ("random", "proximity_random", "heuristic")
ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def three_agents() -> tournament.TournamentResult:
    # Shares its random-vs-proximity_random compilation with test_arena (7x7, batch 8).
    return run_tournament(ENV7, list(SPECS), jax.random.key(0), 1)


def test_every_pair_plays_once_with_both_sides():
    t = three_agents()
    assert t.names == SPECS
    assert [(m.agent_a, m.agent_b) for m in t.matches] == [
        ("random", "proximity_random"), ("random", "heuristic"),
        ("proximity_random", "heuristic")]
    assert all(m.games == 16 and m.as_first.games == m.as_second.games == 8 for m in t.matches)
    assert t.record("heuristic").games == 32
    # Records seen from either side add up.
    m = t.matches[1]
    assert t.record("random") == t.matches[0].record + m.record


def test_the_heuristic_is_rated_first_and_the_fit_matches_the_records():
    t = three_agents()
    assert t.anchor == "random" and t.ratings[0] == 0.0  # the first agent by default
    assert t.ranking()[0] == 2 and t.ratings[2] > t.ratings[0] + 200
    direct = elo.fit_games(*tournament.game_records(t.names, t.matches), num_players=3)
    np.testing.assert_array_equal(t.ratings, direct.ratings)
    assert t.fit.status == direct.status
    scores = t.score_matrix()
    assert np.isnan(np.diag(scores)).all()
    np.testing.assert_allclose(scores + scores.T, np.where(np.eye(3), np.nan, 1.0))
    assert scores[2, 0] > 0.9 and scores[2, 1] > 0.9


def test_on_games_counts_every_game_of_every_pair_and_changes_nothing():
    counted = []
    t = run_tournament(ENV7, list(SPECS), jax.random.key(0), 1, on_games=counted.append)
    assert sum(counted) == 3 * 16 and t.to_dict() == three_agents().to_dict()


def test_markdown_tables():
    t = three_agents()
    text = t.markdown()
    header, ratings, matrix, pairs, notes = text.split("\n\n")
    assert "gomoku (board_size=7, win_length=5" in header and \
        "3 agents, 16 games per pair" in header
    assert "one maximum-likelihood fit of every game with its colours" in header
    assert "random = 0; first-move advantage " in header
    rows = ratings.splitlines()
    assert rows[0] == ("| rank | agent | Elo | 95% interval | SE | score | W | D | L | games "
                       "| distinct games |")
    assert len(rows) == 2 + 3 and rows[2].startswith("| 1 | heuristic | ")
    assert len(matrix.splitlines()) == 2 + 3 and "—" in matrix
    assert len(pairs.splitlines()) == 2 + 3
    assert "| random | proximity_random |" in pairs
    assert "Elo A - B, paired (95%) | Elo A - B, fit (95%) |" in pairs.splitlines()[0]
    assert "pentanomial" in notes and "Clopper-Pearson" in notes and "fit_games" in notes
    for m, row in zip(t.matches, pairs.splitlines()[2:]):
        cells = [c.strip() for c in row.strip("|").split("|")]
        counts = [int(c) for c in cells[6].split("/")]
        assert sum(counts) == m.games // 2 == 8
        assert cells[7] == f"{m.distinct_games} of 16"
        assert cells[8] == elo.format_paired(m.elo_paired)


def test_json_keys():
    t = three_agents()
    d = json.loads(json.dumps(t.to_dict(), allow_nan=False))
    assert set(d) >= {"game", "games_per_pair", "agents", "ratings", "table", "score_matrix",
                      "matches", "anchor", "rating_fit", "openings"}
    assert d["anchor"] == "random" and d["rating_fit"]["method"] == "fit_games"
    assert len(d["rating_fit"]["covariance"]) == 3
    assert d["agents"] == list(SPECS) and set(d["ratings"]) == set(SPECS)
    assert [row["rank"] for row in d["table"]] == [1, 2, 3]
    assert d["table"][0]["agent"] == "heuristic"
    assert set(d["table"][0]) == {"rank", "agent", "elo", "elo_lower", "elo_upper", "elo_se",
                                  "status", "score", "wins", "draws", "losses", "games",
                                  "distinct_games"}
    assert all(sum(m["pairs"]) == 8 for m in d["matches"])
    assert d["score_matrix"][0][0] is None and len(d["matches"]) == 3
    assert d["games_per_pair"] == 16 and d["game"]["board_size"] == 7
    assert d["game"]["id"] == "gomoku"


def test_anchor_shifts_the_ratings():
    t = three_agents()
    anchored = tournament.fit_matches(t.names, t.matches, anchor=1)
    assert anchored.ratings[1] == 0.0
    rated = [i for i, s in enumerate(t.fit.status) if s in ("anchor", "rated")]
    np.testing.assert_allclose(anchored.ratings[rated] - anchored.ratings[0],
                               t.ratings[rated], atol=1e-6)


# ------------------------------------------------------------- synthetic matches (no JAX)

def fake_match(a: str, b: str, as_first: Record, as_second: Record) -> MatchResult:
    """A's results against B, as `run_match` would return them (one opening)."""
    return MatchResult(a, b, {"id": "gomoku", "version": "v1", "board_size": 7},
                       ((24, 17, 33),), ("(3, 3) (2, 3) (4, 5)",), as_first.games,
                       as_first, as_second, ((as_first, as_second),), 10.0,
                       elo.estimate(*dataclasses.astuple(as_first + as_second)))


def fake_tournament(results: dict, anchor: int = 0) -> tournament.TournamentResult:
    names = tuple(dict.fromkeys(n for pair in results for n in pair))
    matches = tuple(fake_match(a, b, Record(*f), Record(*s))
                    for (a, b), (f, s) in results.items())
    return tournament.TournamentResult(
        names, matches, tournament.fit_matches(names, matches, anchor), names[anchor])


# A's (W, D, L) as the first player and as the second. "w" moves first better: every pair
# scores more as the first player; "d" loses every game.
RESULTS = {("a", "b"): ((10, 1, 5), (6, 1, 9)), ("a", "c"): ((4, 0, 12), (2, 0, 14)),
           ("a", "d"): ((16, 0, 0), (16, 0, 0)), ("b", "c"): ((7, 0, 9), (5, 1, 10)),
           ("b", "d"): ((16, 0, 0), (16, 0, 0)), ("c", "d"): ((16, 0, 0), (16, 0, 0))}


def test_the_ratings_are_one_fit_of_every_game_with_its_colours():
    t = fake_tournament(RESULTS)
    # the games written out one by one: (first mover, second mover, first mover's score)
    index = {n: i for i, n in enumerate(t.names)}
    games = []
    for (a, b), (f, s) in RESULTS.items():
        i, j = index[a], index[b]
        games += [(i, j, 1.0)] * f[0] + [(i, j, 0.5)] * f[1] + [(i, j, 0.0)] * f[2]
        games += [(j, i, 0.0)] * s[0] + [(j, i, 0.5)] * s[1] + [(j, i, 1.0)] * s[2]
    first, second, score = (np.array(x) for x in zip(*games))
    direct = elo.fit_games(first, second, score, num_players=4, anchor=0)
    np.testing.assert_allclose(t.ratings, direct.ratings)
    np.testing.assert_allclose(t.fit.covariance, direct.covariance)
    assert t.fit.status == direct.status == ("anchor", "rated", "rated", "below")
    # a pair's difference and its standard error come from the joint covariance
    c = direct.covariance
    diff, se = t.difference(1, 2)
    assert diff == pytest.approx(direct.ratings[1] - direct.ratings[2])
    assert se == pytest.approx(np.sqrt(c[1, 1] + c[2, 2] - 2 * c[1, 2]))
    assert t.difference(0, 3) is None
    row = next(r for r in t.markdown().split("\n\n")[3].splitlines() if r.startswith("| b | c |"))
    assert row.endswith(f"| {diff:+.1f} ± {1.959963984540054 * se:.1f} |")
    # another anchor: the same differences
    other = fake_tournament(RESULTS, anchor=2)
    assert other.anchor == "c" and other.ratings[2] == 0.0
    np.testing.assert_allclose(other.ratings[:3] - other.ratings[0], t.ratings[:3], atol=1e-6)


def test_a_first_move_edge_is_reported():
    t = fake_tournament(RESULTS)
    assert t.fit.first_move_fitted and t.fit.first_move > 0 and t.fit.first_move_se > 0
    header = t.markdown().split("\n\n")[0]
    assert (f"first-move advantage {t.fit.first_move:+.1f} Elo "
            f"(SE {t.fit.first_move_se:.1f})") in header
    d = json.loads(json.dumps(t.to_dict(), allow_nan=False))
    assert d["rating_fit"]["first_move"] == pytest.approx(t.fit.first_move)
    assert d["rating_fit"]["first_move_se"] == pytest.approx(t.fit.first_move_se)
    # no edge in the colours: none is found
    even = fake_tournament({("a", "b"): ((8, 0, 8), (8, 0, 8)),
                            ("a", "c"): ((4, 0, 12), (4, 0, 12)),
                            ("b", "c"): ((6, 0, 10), (6, 0, 10))})
    assert abs(even.fit.first_move) < 1e-6


def test_a_sweep_shows_as_a_one_sided_bound():
    t = fake_tournament(RESULTS)
    d_index = t.names.index("d")
    assert t.ratings[d_index] == -np.inf and t.ranking()[-1] == d_index
    bound = t.fit.upper[d_index]
    assert np.isfinite(bound) and bound < min(t.ratings[:3]) and t.fit.lower[d_index] == -np.inf
    ratings = t.markdown().split("\n\n")[1]
    row = next(r for r in ratings.splitlines() if r.startswith("| 4 | d |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:5] == [f"< {bound:+.1f}", f"(-inf, {bound:+.1f})", "—"]
    assert "±" not in row
    anchor_row = next(r for r in ratings.splitlines() if "| a |" in r)
    assert "| 0 | anchor | — |" in anchor_row
    d = json.loads(json.dumps(t.to_dict(), allow_nan=False))
    last = d["table"][-1]
    assert last["agent"] == "d" and last["status"] == "below" and last["elo"] is None
    assert last["elo_lower"] is None and last["elo_upper"] == pytest.approx(bound)
    assert d["ratings"]["d"] is None and d["rating_fit"]["status"]["d"] == "below"


@pytest.mark.parametrize("entrants, kwargs, message", [
    (["random"], {}, "at least 2 agents"),
    (["random", "random"], {}, "'random' is entered twice"),
    (["random", "minimax"], {}, "unknown agent 'minimax'"),
    (["random", "heuristic:speed=3"], {}, "unknown field 'speed' for agent 'heuristic'"),
    (["random", "heuristic"], {"anchor": "alphazero"}, "anchor 'alphazero' is not one of"),
    (["random", "heuristic"], {"params": {"mcts": None}}, "params given for unknown agents"),
])
def test_bad_tournaments(entrants, kwargs, message):
    with pytest.raises(ValueError, match=message):
        run_tournament(ENV7, entrants, jax.random.key(0), 1, **kwargs)


def test_records_are_seen_from_both_sides():
    t = three_agents()
    m = t.matches[2]  # proximity_random vs heuristic
    total = Record()
    for other in (t.matches[1], m):  # heuristic was B in both
        total = total + Record(other.losses, other.draws, other.wins)
    assert t.record("heuristic") == total


def test_experiment_script_help():
    out = subprocess.run([sys.executable, str(ROOT / "experiments" / "tournament.py"), "--help"],
                         capture_output=True, text=True, check=True).stdout
    for flag in ("--agents", "--board-size", "--games", "--openings", "--out", "--json",
                 "--anchor"):
        assert flag in out
