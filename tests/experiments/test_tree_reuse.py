"""experiments/tree_reuse.py: the smallest match of a reusing agent against a fresh-tree one
runs through the command line and reports both agents' games."""

from experiment_scripts import load_script

tr = load_script("tree_reuse")


def test_smallest_run_end_to_end(capsys):
    assert tr.main(["--board-size", "7", "--simulations", "4", "--games", "2",
                    "--agent", "mcts:evaluator=uniform"]) == 0
    out = capsys.readouterr().out
    assert "## S=4" in out
    assert "mcts:evaluator=uniform,num_simulations=4,reuse_tree=true" in out


def test_run_returns_one_result_per_simulation_count():
    (sims, result), = tr.run(7, [4], 2, "mcts:evaluator=uniform", seed=1, log=lambda s: None)
    assert sims == 4
    wins, draws, losses = result.wins, result.draws, result.losses
    assert wins + draws + losses == result.games >= 2
