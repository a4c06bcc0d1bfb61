"""Every experiment that can run for long shows a progress bar that `--no-progress` turns
off (experiments/tactics.py, tournament.py and bench_env.py are the CLI's: tests/test_cli.py)."""

import sys

import pytest
from experiment_scripts import load_script

SCRIPTS = ("bench_fauxgo", "bench_fauxgo_heuristic", "bench_heuristics", "bench_rules",
           "bench_search", "bench_train", "bench_vcf", "bench_vct", "check_threat_tables",
           "engine_fuzz", "engine_soak", "gmo", "gpu_check", "kill_resume", "leaf_parallel",
           "load_play", "make_tactics_suite", "play_latency", "pure_mcts", "search_scaling",
           "strength", "tree_reuse")


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_offers_no_progress(name, monkeypatch, capsys):
    script = load_script(name)
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
    with pytest.raises(SystemExit) as e:
        if hasattr(script, "build_parser"):
            script.build_parser().parse_args()
        else:  # the script parses sys.argv in main
            script.main()
    assert e.value.code == 0
    assert "--no-progress" in capsys.readouterr().out
