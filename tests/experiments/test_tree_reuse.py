"""experiments/tree_reuse.py: the smallest match of a reusing agent against a fresh-tree one
runs through the command line and reports both agents' games."""

from experiment_scripts import load_script

tr = load_script("tree_reuse")


# Without the threat search at the root (the match compiles in about half the time; the
# reuse under test is the tree's, whatever runs at its root).
AGENT = "mcts:evaluator=uniform,threat_search=0"


def test_smallest_run_end_to_end(capsys):
    assert tr.main(["--board-size", "7", "--simulations", "4", "--games", "2",
                    "--agent", AGENT]) == 0
    out = capsys.readouterr().out
    assert "## S=4" in out
    assert "mcts:evaluator=uniform,threat_search=0,num_simulations=4,reuse_tree=true" in out


def test_run_returns_one_result_per_simulation_count():
    (sims, result), = tr.run(7, [4], 2, AGENT, seed=1, log=lambda s: None)
    assert sims == 4
    wins, draws, losses = result.wins, result.draws, result.losses
    assert wins + draws + losses == result.games >= 2
