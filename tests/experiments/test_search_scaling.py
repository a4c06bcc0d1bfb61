"""experiments/search_scaling.py: openings are distinct and central; the smallest run plays
both matches and writes the table."""

import pytest
from experiment_scripts import load_script

ss = load_script("search_scaling")


def test_random_openings_are_distinct_central_and_seeded():
    ops = ss.random_openings(9, 20, seed=3)
    assert len(set(ops)) == 20 and ops == ss.random_openings(9, 20, seed=3)
    for black, white, black2 in ops:
        assert black == 4 * 9 + 4 and len({black, white, black2}) == 3
        assert all(abs(a // 9 - 4) <= 2 and abs(a % 9 - 4) <= 2 for a in (white, black2))
    with pytest.raises(ValueError):
        ss.random_openings(9, 10_000, seed=0)


# The baseline's match (the reusing agent against the same one with a fresh tree, 4
# simulations, 7x7, one game per opening and colour from 8 openings) is
# test_tree_reuse.py's: the arena's compiled match serves both tests. The smallest search
# agent: no threat search, symmetry or prior shaping.
FRESH = "mcts:evaluator=uniform,threat_search=0,symmetry=none,prior_shaping=off"
REUSE = FRESH + ",reuse_tree=true"


@pytest.mark.slow
def test_smallest_run_end_to_end(capsys, tmp_path):
    out = tmp_path / "t.md"
    assert ss.main(["--board-size", "7", "--simulations", "4", "--factor", "2",
                    "--openings", "8", "--agents", REUSE, "--baseline", FRESH,
                    "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"{REUSE},num_simulations=8 vs {REUSE},num_simulations=4:" in text
    assert f"{REUSE},num_simulations=4 vs {FRESH},num_simulations=4:" in text
    table = out.read_text()
    assert table.count("\n") == 4  # header, rule, two matches
    assert "of 16 |" in table  # distinct games of the 16 played
    assert ss.count_games(["a"], 2, "b") == 2 * 4 and ss.count_games(["a"], 2, "a") == 4
