"""The command line: subcommands, --help, and clear errors for bad flags."""

import subprocess
import sys

import pytest

from gomoku_jax import cli


def test_help_lists_subcommands(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "bench" in out and "demo" in out


@pytest.mark.parametrize("command", ["bench", "demo"])
def test_subcommand_help(command, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([command, "--help"])
    assert e.value.code == 0
    assert "--board-size" in capsys.readouterr().out


def test_demo_plays_games(capsys):
    assert cli.main(["demo", "--batch", "8", "--board-size", "7", "--win-length", "4"]) == 0
    out = capsys.readouterr().out
    assert "8 random games of 7x7" in out
    assert "moves/s" in out
    assert "won" in out or "draw" in out


@pytest.mark.parametrize("argv, message", [
    (["demo", "--board-size", "3"], "board_size must be an int in 5..19"),
    (["demo", "--rule", "renju"], "rule must be one of"),
    (["demo", "--batch", "0"], "--batch must be >= 1"),
    (["bench", "--batch-sizes", "4,x"], "--batch-sizes takes comma-separated positive"),
    (["bench", "--variants", "fast"], "--variants takes step and/or playout"),
    (["bench", "--references", "chess"], "--references takes openspiel, pgx or none"),
])
def test_bad_flags_give_clear_errors(argv, message):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert message in str(e.value.code)


def test_python_dash_m_entry_point():
    out = subprocess.run([sys.executable, "-m", "gomoku_jax", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "usage: gomoku-jax" in out
