"""experiments/load_play.py: the smallest load test end to end (`gomoku-jax play` in its own
process, two people, the random agent on Faux Go 5x5 with two komi, which share one compiled
config, and a few abandoned games) prints its tables with no errors; a server that dies or
never answers is a clear error; a person's failure is counted, not lost with its thread."""

import sys
import types

import pytest
from experiment_scripts import load_script

lp = load_script("load_play")


def test_smallest_run_end_to_end(capsys):
    assert lp.main(["--people", "1,2", "--games", "1", "--moves", "2", "--think-ms", "0",
                    "--poll-ms", "2", "--agent", "random", "--abandon", "20",
                    "--max-games", "4", "--configs", "fauxgo:5:0.5,fauxgo:5:2.5",
                    "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "gomoku_jax play --host 127.0.0.1 --port" in captured.err
    out = captured.out
    assert "| people | AI moves | games |" in out
    assert "| server peak RSS MB | server RSS MB |" in out
    assert "20 games created and abandoned (0 errors; 4 live after, max_games 4)" in out
    assert '| {"game": "fauxgo", "board_size": 5, "komi": 2.5} | random |' in out


def _args(**kw):
    return types.SimpleNamespace(**{**vars(lp.build_parser().parse_args([])), **kw})


def test_a_server_that_exits_is_an_error_with_its_stderr(monkeypatch):
    monkeypatch.setattr(lp, "server_command", lambda args, port: [
        sys.executable, "-c", "import sys; sys.stderr.write('no such agent: xyz'); sys.exit(3)"])
    with pytest.raises(SystemExit, match=r"exited with 3 before answering:\nno such agent: xyz"):
        with lp.serve(_args()):
            pass


def test_a_server_that_never_answers_is_stopped(monkeypatch):
    monkeypatch.setattr(lp, "server_command", lambda args, port: [
        sys.executable, "-c", "import time; time.sleep(60)"])
    started = []
    popen = lp.subprocess.Popen
    monkeypatch.setattr(lp.subprocess, "Popen",
                        lambda *a, **kw: started.append(popen(*a, **kw)) or started[-1])
    with pytest.raises(SystemExit, match="did not answer on http://127.0.0.1:.* within 0.3 s"):
        with lp.serve(_args(start_timeout=0.3)):
            pass
    assert started[0].poll() is not None  # terminated, not left running


def test_a_person_who_cannot_connect_is_an_error():
    stats = lp.Stats()
    url = f"http://127.0.0.1:{lp.free_port()}/"  # nobody listens there
    lp.person(url, 0, lp.parse_configs("gomoku:5"), _args(), float("inf"), stats,
              lambda n: None)
    assert len(stats.errors) == 1 and "person 0: ConnectionRefusedError" in stats.errors[0]


def test_help_offers_no_progress(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["load_play.py", "--help"])
    with pytest.raises(SystemExit):
        lp.build_parser().parse_args()
    assert "--no-progress" in capsys.readouterr().out
