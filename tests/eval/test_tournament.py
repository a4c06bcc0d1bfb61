"""Round-robin tournaments: every pair plays, the Elo fit ranks them, tables come out."""

from __future__ import annotations

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
from gomoku_jax.eval.arena import Record

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
    assert t.ranking()[0] == 2 and t.ratings[2] > t.ratings[0] + 200
    assert t.ratings.mean() == pytest.approx(0.0, abs=1e-6)
    points, games = elo.pairwise_tables(
        t.names, {(m.agent_a, m.agent_b): (m.wins, m.draws, m.losses) for m in t.matches})
    np.testing.assert_allclose(t.ratings, elo.fit_ratings(points, games))
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
    rows = ratings.splitlines()
    assert rows[0] == "| rank | agent | Elo | score | W | D | L | games | distinct games |"
    assert len(rows) == 2 + 3 and rows[2].startswith("| 1 | heuristic | +")
    assert len(matrix.splitlines()) == 2 + 3 and "—" in matrix
    assert len(pairs.splitlines()) == 2 + 3
    assert "| random | proximity_random |" in pairs
    assert "Elo A - B, paired (95%)" in pairs.splitlines()[0]
    assert "pentanomial" in notes and "Clopper-Pearson" in notes
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
                      "matches", "anchor", "prior_draws", "openings"}
    assert d["agents"] == list(SPECS) and set(d["ratings"]) == set(SPECS)
    assert [row["rank"] for row in d["table"]] == [1, 2, 3]
    assert d["table"][0]["agent"] == "heuristic"
    assert set(d["table"][0]) == {"rank", "agent", "elo", "score", "wins", "draws", "losses",
                                  "games", "distinct_games"}
    assert all(sum(m["pairs"]) == 8 for m in d["matches"])
    assert d["score_matrix"][0][0] is None and len(d["matches"]) == 3
    assert d["games_per_pair"] == 16 and d["game"]["board_size"] == 7
    assert d["game"]["id"] == "gomoku"


def test_anchor_shifts_the_ratings():
    t = three_agents()
    points, games = elo.pairwise_tables(
        t.names, {(m.agent_a, m.agent_b): (m.wins, m.draws, m.losses) for m in t.matches})
    anchored = elo.fit_ratings(points, games, anchor=0)
    assert anchored[0] == 0.0
    np.testing.assert_allclose(anchored - anchored.mean(), t.ratings, atol=1e-6)


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
