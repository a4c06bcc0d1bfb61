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


def test_smallest_run_end_to_end(capsys, tmp_path):
    out = tmp_path / "t.md"
    assert ss.main(["--board-size", "7", "--simulations", "2", "--factor", "2",
                    "--openings", "2", "--agents", "mcts:evaluator=uniform,threat_search=0",
                    "--baseline", "mcts:evaluator=uniform,threat_search=0,q_transform=alphazero",
                    "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "num_simulations=4 vs mcts:evaluator=uniform,threat_search=0,num_simulations=2" \
        in text
    table = out.read_text()
    assert table.count("\n") == 4  # header, rule, two matches
    assert "of 4" in table  # distinct games of the 4 played
    assert ss.count_games(["a"], 2, "b") == 2 * 4 and ss.count_games(["a"], 2, "a") == 4
