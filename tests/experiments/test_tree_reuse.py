"""experiments/tree_reuse.py: the smallest match of a reusing agent against a fresh-tree one
runs through the command line and reports both agents' games."""

from experiment_scripts import load_script

tr = load_script("tree_reuse")


# The smallest search agent: no threat search at the root, no symmetry, no prior shaping
# (the match compiles in a third of the default agent's time; the reuse under test is the
# tree's, whatever the search around it does). test_search_scaling.py plays the same match
# (S=4, 7x7, 8 openings): the arena compiles it once for both.
AGENT = "mcts:evaluator=uniform,threat_search=0,symmetry=none,prior_shaping=off"


def test_smallest_run_end_to_end(capsys):
    assert tr.main(["--board-size", "7", "--simulations", "4", "--games", "2",
                    "--agent", AGENT]) == 0
    out = capsys.readouterr().out
    assert "## S=4" in out
    assert f"{AGENT},num_simulations=4,reuse_tree=true" in out


def test_run_returns_one_result_per_simulation_count():
    (sims, result), = tr.run(7, [4], 2, AGENT, seed=1, log=lambda s: None)
    assert sims == 4
    wins, draws, losses = result.wins, result.draws, result.losses
    assert wins + draws + losses == result.games >= 2
