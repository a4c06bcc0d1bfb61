"""Progress bars: tqdm on stderr when enabled and stderr is a terminal, else a silent
stand-in with tqdm's methods; `--no-progress` turns them off; `printer` prints lines beside
either."""

from __future__ import annotations

import argparse
import io
import sys

import pytest
from tqdm import tqdm

from gomoku_jax import progress

METHODS = ("update", "set_postfix", "set_postfix_str", "set_description", "write", "close",
           "__enter__", "__exit__")


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def use_all_methods(bar) -> None:
    with bar as b:
        b.set_description("games")
        b.update(3)
        b.set_postfix(ply=4)
        b.set_postfix_str("pair 1 of 3")


def test_disabled_bar_is_silent_and_has_tqdms_methods(monkeypatch, capsys):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    bar = progress.bar(10, "arena", "game", enabled=False)
    assert not isinstance(bar, tqdm)
    for name in METHODS:
        assert callable(getattr(bar, name)) and callable(getattr(tqdm, name)), name
    use_all_methods(bar)
    assert bar.n == 3
    assert terminal.getvalue() == "" and capsys.readouterr().out == ""


def test_no_bar_when_stderr_is_not_a_terminal(capsys):
    # pytest's captured stderr is not a terminal
    assert not progress.shows(True)
    use_all_methods(progress.bar(10, "arena", "game"))
    assert capsys.readouterr() == ("", "")


def test_a_terminal_gets_a_bar_with_an_eta_on_stderr(monkeypatch, capsys):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert progress.shows(True) and not progress.shows(False)
    with progress.bar(4, "arena", "game") as bar:
        assert isinstance(bar, tqdm)
        bar.update(1)
    text = terminal.getvalue()
    assert "arena" in text and "1/4" in text and "game" in text and "<" in text  # the ETA
    assert capsys.readouterr().out == ""


def test_force_shows_a_bar_on_any_stderr(capsys):
    with progress.bar(2, "tactics", "puzzle", initial=1, force=True) as bar:
        bar.update(1)
    err = capsys.readouterr().err
    assert "tactics" in err and "2/2" in err and "puzzle" in err


def test_printer_beside_the_stand_in(monkeypatch, capsys):
    bar = progress.bar(2, "arena", "game", enabled=False)
    out, err = progress.printer(bar), progress.printer(bar, sys.stderr)
    out("a line on stdout")
    err("a line on stderr")
    bar.write("written on stdout, as tqdm's write")
    assert capsys.readouterr() == ("a line on stdout\nwritten on stdout, as tqdm's write\n",
                                   "a line on stderr\n")
    later = io.StringIO()  # the default stream is the one sys.stdout is at each call
    monkeypatch.setattr("sys.stdout", later)
    out("redirected")
    assert later.getvalue() == "redirected\n"


def test_printer_beside_a_bar(capsys):
    with progress.bar(2, "arena", "game", force=True) as bar:
        assert isinstance(bar, tqdm)
        progress.printer(bar)("a line on stdout")
        bar.update(1)
        progress.printer(bar, sys.stderr)("a line on stderr")
    out, err = capsys.readouterr()
    assert out == "a line on stdout\n"
    assert "a line on stderr\n" in err and "arena" in err and "1/2" in err  # the bar too


@pytest.mark.parametrize("argv, off", [([], False), (["--no-progress"], True)])
def test_no_progress_flag(argv, off):
    parser = argparse.ArgumentParser()
    progress.add_argument(parser)
    assert parser.parse_args(argv).no_progress is off
    assert "--no-progress" in parser.format_help()
