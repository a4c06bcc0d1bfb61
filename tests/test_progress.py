"""Progress bars: tqdm on stderr when enabled and stderr is a terminal, plain rate-limited
lines (`progress.Lines`) when enabled and stderr is not one, else a silent stand-in with
tqdm's methods; `--no-progress` turns them off; `printer` prints lines beside any of them."""

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


def test_plain_lines_when_stderr_is_not_a_terminal(capsys):
    # pytest's captured stderr is not a terminal
    assert not progress.shows(True)
    bar = progress.bar(10, "arena", "game")
    assert isinstance(bar, progress.Lines) and not isinstance(bar, tqdm)
    for name in METHODS:
        assert callable(getattr(bar, name)), name
    use_all_methods(bar)
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1  # a line at the first update, no \r
    # use_all_methods renamed it "games" before its first update
    assert err.startswith("games: 3/10 game (30%), 0:00 elapsed, ETA ") and "\r" not in err


class Clock:
    """A fake time.monotonic that moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_every_few_seconds_with_rate_and_eta():
    """Off a terminal: a line at the first update, then at most one per interval, and the
    last; the rate and ETA count from the first update (which compiled)."""
    clock, log = Clock(), io.StringIO()
    lines = progress.Lines(total=10, desc="train", unit="it", file=log, interval=5.0,
                           clock=clock)
    clock.now += 30  # the first iteration compiles
    lines.set_postfix({"loss": "2.500"}, refresh=False)
    lines.update(1)
    for _ in range(8):  # 2 s an iteration: a line every 3rd (6 s >= 5 s)
        clock.now += 2
        lines.set_postfix(loss="2.000", refresh=False)
        lines.update(1)
    assert log.getvalue().splitlines() == [
        "train: 1/10 it (10%), 0:30 elapsed, ETA 4:30, 30.00 s/it | loss=2.500",
        "train: 4/10 it (40%), 0:36 elapsed, ETA 0:12, 2.00 s/it | loss=2.000",
        "train: 7/10 it (70%), 0:42 elapsed, ETA 0:06, 2.00 s/it | loss=2.000",
    ]
    clock.now += 2
    lines.update(1)  # reaching the total always writes its line
    lines.close()  # nothing left to report
    assert log.getvalue().splitlines()[3:] == [
        "train: 10/10 it (100%), 0:48 elapsed, 2.00 s/it | loss=2.000"]


def test_lines_close_reports_what_is_left():
    clock, log = Clock(), io.StringIO()
    with progress.Lines(total=None, desc="bench", unit="config", initial=2, file=log,
                        clock=clock) as lines:
        clock.now += 1
        lines.update(2)
        clock.now += 1
        lines.set_postfix_str("batch 256")
        lines.update(3)  # within the interval: no line yet
    assert log.getvalue().splitlines() == [
        "bench: 4 config, 0:01 elapsed, 2.00 config/s",
        "bench: 7 config, 0:02 elapsed, 3.00 config/s | batch 256",  # at close
    ]
    lines.close()  # closing twice writes nothing more
    assert len(log.getvalue().splitlines()) == 2
    quiet = io.StringIO()
    progress.Lines(total=5, file=quiet).close()  # no updates, no line
    assert quiet.getvalue() == ""


def test_printer_beside_lines(capsys):
    bar = progress.bar(2, "tactics", "puzzle")
    assert isinstance(bar, progress.Lines)
    progress.printer(bar)("a line on stdout")
    bar.update(2)
    out, err = capsys.readouterr()
    assert out == "a line on stdout\n" and err.startswith("tactics: 2/2 puzzle (100%)")


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
