"""experiments/kill_resume.py, the fast variant of its experiment: a training algorithm's
test preset killed with SIGKILL (a real subprocess) resumes to exactly the run that was
never killed."""

import sys

import pytest
from experiment_scripts import load_script
from train_configs import ALGO_SETS

from gomoku_jax.train import ALGORITHMS

kr = load_script("kill_resume")


# One real kill -9 per trainer family (a subprocess each, the suite's budget): AlphaZero's
# inside its compiled iteration, GMO's half-way through orbax's checkpoint write. A trainer
# that subclasses another (MuZero's is AlphaZero's iteration with its own steps) dies and
# resumes through the same driver and checkpoint code, and its resume from a checkpoint is
# the generic lifecycle test's; the experiment kills every algorithm at every failpoint and
# at random times.
KILLS = {"alphazero": "kill@iteration:2", "gmo": "kill@checkpoint_write:2"}


def test_every_algorithm_has_a_kill_or_is_a_subclass_of_one_that_has():
    for algo, cls in ALGORITHMS.items():
        assert algo in KILLS or any(issubclass(cls, ALGORITHMS[k]) for k in KILLS), algo
    assert set(KILLS) <= set(kr.ALGORITHMS)


@pytest.mark.slow
@pytest.mark.parametrize("algo", sorted(KILLS))
def test_a_killed_run_resumes_to_the_uninterrupted_one(algo, tmp_path, capsys, monkeypatch):
    # the tests' shared config of the algorithm (its compiled iteration is the session's)
    monkeypatch.setattr(kr, "SETS", (*ALGO_SETS.get(algo, ()), *kr.SETS))
    t, = kr.run([algo], 2, 1, 0, 0, tmp_path, log=print, points=[KILLS[algo]])
    assert (t.algo, t.kill, t.exit) == (algo, KILLS[algo], "SIGKILL")
    # checkpoint 1 is complete; a kill mid-write leaves orbax's temporary directory too
    assert (t.on_disk, t.partial) == ([1], int("checkpoint_write" in t.kill))
    assert t.resumed_from == 1 and t.equal_params and t.equal_metrics
    # the resume removed what the killed save left, and the lock died with its holder
    assert sorted(p.name for p in (tmp_path / f"{algo}-0" / "checkpoints").iterdir()) == \
        ["1", "2"]
    out = capsys.readouterr().out
    assert f"| {algo} | {KILLS[algo]} | SIGKILL | [1] | {t.partial} | 1 | yes | yes |" in out
    assert "1 kills, 1 resumed to the uninterrupted run exactly, 0 did not" in out


def test_command_line_checks_its_flags(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["kill_resume.py", "--help"])
    with pytest.raises(SystemExit) as e:
        kr.build_parser().parse_args()
    assert e.value.code == 0 and "--no-progress" in capsys.readouterr().out
    for argv, message in ((["--algos", "nope"], "--algos nope: known are"),
                          (["--points", "kill@nowhere:1"], "--points: $GOMOKU_JAX_FAILPOINTS"),
                          (["--kills", "2", "--random", "3"], "--random <= --kills")):
        with pytest.raises(SystemExit) as e:
            kr.main(argv)
        assert message in str(e.value.code)
