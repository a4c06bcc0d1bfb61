"""The command line: subcommands, --help, and clear errors for bad flags."""

import io
import json

import pytest

import gomoku_jax
from gomoku_jax import cli


def test_help_lists_subcommands(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    # `python -m gomoku_jax` itself, in a process of its own: test_pbrain.py's
    # test_python_dash_m_pbrain_session
    assert out.startswith("usage: gomoku-jax")
    names = ["bench", "demo", "pbrain", "arena", "tournament", "tactics", "play", "export",
             "train", "launch", "compare", "plugins"]
    assert [name for name, *_ in cli.SUBCOMMANDS] == names
    for name, _, help_text, _ in cli.SUBCOMMANDS:
        assert name in out and help_text.split()[0] in out


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
    (["demo", "--board-size", "3"], "board_size must be an int in 5..20"),
    (["demo", "--rule", "renju", "--win-length", "4"], "rule 'renju' is defined for win_length 5"),
    (["demo", "--batch", "0"], "--batch must be >= 1"),
    (["bench", "--batch-sizes", "4,x"], "--batch-sizes takes comma-separated positive"),
    (["bench", "--variants", "fast"], "--variants takes step and/or playout"),
    (["bench", "--references", "chess"], "--references takes openspiel, pgx or none"),
    (["launch", "--processes", "2"], "give the command after --"),
    (["launch", "--", "arena", "--a", "random"], "launch runs train as several processes, "
                                                 "not 'arena'"),
    (["launch", "--processes", "0", "--", "train"], "--processes must be >= 1"),
    (["launch", "--cpu-devices", "0", "--", "train"], "--cpu-devices must be >= 1"),
    (["launch", "--port", "70000", "--", "train"], "--port must be in 1..65535"),
    (["train", "--preset", "test", "--coordinator", "127.0.0.1:1"],
     "needs all of --coordinator, --num-processes, --process-id; missing --num-processes, "
     "--process-id"),
    (["train", "--preset", "test", "--coordinator", "host", "--num-processes", "2",
      "--process-id", "0"], "--coordinator takes HOST:PORT"),
    (["train", "--preset", "test", "--coordinator", "h:1", "--num-processes", "2",
      "--process-id", "2"], "--process-id=2 must be < --num-processes=2"),
])
def test_bad_flags_give_clear_errors(argv, message):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert message in str(e.value.code)


def test_tactics_with_an_untrained_gmo_agent(tmp_path, capsys):
    """`gomoku-jax tactics --agents gmo`: a suite of 1 puzzle per category on 9x9, generated
    and saved; one puzzle per compiled call, so the latency probe reuses the program."""
    from gomoku_jax.games.gomoku import tactics_suite

    suite_file, md, js = tmp_path / "suite.json", tmp_path / "t.md", tmp_path / "t.json"
    assert cli.main(["tactics", "--agents", "gmo", "--generate", "1", "--board-size", "9",
                     "--save", str(suite_file), "--batch-size", "1", "--out", str(md),
                     "--json", str(js)]) == 0
    text = capsys.readouterr().out
    suite = tactics_suite.load(suite_file)
    n = len(suite.puzzles)
    assert n == len(tactics_suite.CATEGORIES) and f"{n} puzzles, 9x9 freestyle" in text
    assert "| gmo |" in text and md.read_text().strip() in text
    result = json.loads(js.read_text())
    assert result["board_size"] == 9 and [r["agent"] for r in result["results"]] == ["gmo"]
    record = result["results"][0]
    assert sum(total for _, total in record["solved"].values()) == n
    assert record["seconds_per_move"] > 0
    for p in suite.puzzles:  # the GMO agent played a legal move in every puzzle
        action = record["actions"][p.id]
        assert p.board.reshape(-1)[action] == 0, (p.id, action)


# ------------------------------------------------------------------------ arena, tournament


@pytest.mark.parametrize("command, flag", [("arena", "--openings"), ("tournament", "--agents")])
def test_arena_and_tournament_help(command, flag, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--board-size" in out and flag in out and "--json" in out


def test_arena_end_to_end(tmp_path, capsys):
    out = tmp_path / "arena.json"
    # 7x7, one game per opening and colour: the compilation tests/eval shares.
    assert cli.main(["arena", "--a", "random", "--b", "proximity_random", "--board-size", "7",
                     "--games", "10", "--seed", "3", "--per-opening", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert ("random vs proximity_random: gomoku (board_size=7, win_length=5, rule=freestyle, "
            "observation=absolute, feature_plane=none), 16 games = 8 openings of 3 moves x 2 "
            "sides x 1") in text
    assert "as first player" in text and ", as second " in text
    assert "Elo difference random - proximity_random" in text
    assert ("| opening | moves | random first W-D-L | random second W-D-L | score |"
            in text)
    d = json.loads(out.read_text())
    assert d["agent_a"] == "random" and d["agent_b"] == "proximity_random"
    assert d["game"] == gomoku_jax.make("gomoku", board_size=7).describe()
    assert d["games"] == 16 == d["wins"] + d["draws"] + d["losses"] and d["seed"] == 3
    first, second = d["as_first"], d["as_second"]
    assert sum(first.values()) == sum(second.values()) == 8
    assert first["wins"] + second["wins"] == d["wins"]
    assert first["losses"] + second["losses"] == d["losses"]
    assert f"as first player {first['wins']}-{first['draws']}-{first['losses']}" in text
    env = gomoku_jax.make("gomoku", board_size=7)
    assert [tuple(o["actions"]) for o in d["openings"]] == list(env.default_openings())
    for o in d["openings"]:
        assert o["moves"] == " ".join(env.action_to_text(a) for a in o["actions"])
        assert sum(o["a_first"].values()) == sum(o["a_second"].values()) == 1
        assert f"| {o['moves']} |" in text


@pytest.mark.parametrize("argv", [["arena", "--a", "random", "--b", "random"],
                                  ["tournament", "--agents", "random,heuristic"],
                                  ["tactics"], ["bench"]])
def test_no_progress_parses(argv):
    parser = cli.build_parser()
    assert parser.parse_args(argv + ["--no-progress"]).no_progress
    assert not parser.parse_args(argv).no_progress


def test_tournament_prior_draws_still_parses():
    """The flag of the old totals fit stays for old command lines (ignored, with a note)."""
    args = cli.build_parser().parse_args(["tournament", "--agents", "random,heuristic",
                                          "--prior-draws", "1"])
    assert args.prior_draws == 1.0


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("flags", [[], ["--no-progress"]])
def test_arena_bar_counts_games_on_a_terminal_stderr(flags, monkeypatch, capsys):
    """The arena test's compilation (7x7, a game per opening and colour)."""
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert cli.main(["arena", "--a", "random", "--b", "proximity_random", "--board-size", "7",
                     "--games", "16", *flags]) == 0
    assert "16 games = 8 openings" in capsys.readouterr().out
    bar = terminal.getvalue()
    if flags:
        assert bar == ""
    else:
        assert "arena" in bar and "16/16" in bar and "game/s" in bar


def test_arena_with_an_openings_file(tmp_path, capsys):
    openings = tmp_path / "two.txt"
    openings.write_text("# two stones: black moves next\n0,0 0,1\n0,0 1,1\n")
    out = tmp_path / "arena.json"
    assert cli.main(["arena", "--a", "random", "--b", "random", "--board-size", "5",
                     "--win-length", "4", "--games", "4", "--openings", str(openings),
                     "--json", str(out)]) == 0
    assert "4 games = 2 openings of 2 moves x 2 sides x 1" in capsys.readouterr().out
    # offsets from the centre (2, 2): (row, col) -> row * 5 + col
    d = json.loads(out.read_text())
    assert [(o["actions"], o["moves"]) for o in d["openings"]] == [
        ([12, 13], "(2, 2) (2, 3)"), ([12, 18], "(2, 2) (3, 3)")]


def test_tournament_end_to_end(tmp_path, capsys):
    md, js = tmp_path / "table.md", tmp_path / "table.json"
    assert cli.main(["tournament", "--agents", "random,proximity_random", "--board-size", "7",
                     "--games", "16", "--anchor", "random", "--out", str(md),
                     "--json", str(js)]) == 0
    text = capsys.readouterr().out
    assert "random vs proximity_random:" in text and "| rank | agent | Elo |" in text
    assert md.read_text().strip() == text.split("\n\n", 1)[1].strip()
    assert ("Round robin, gomoku (board_size=7, win_length=5, rule=freestyle, "
            "observation=absolute, feature_plane=none): 2 agents, 16 games per pair (8 openings "
            "x 2 sides x 1)") in text
    d = json.loads(js.read_text())
    env = gomoku_jax.make("gomoku", board_size=7)
    assert d["game"] == env.describe() and d["games_per_pair"] == 16
    assert [tuple(o) for o in d["openings"]] == list(env.default_openings())
    assert d["ratings"]["random"] == 0.0 and d["anchor"] == "random"
    assert d["rating_fit"]["method"] == "fit_games" and "first-move advantage" in text
    assert [row["agent"] for row in d["table"]] == sorted(
        ["random", "proximity_random"], key=lambda a: -d["ratings"][a])


@pytest.mark.parametrize("argv, message", [
    (["arena", "--a", "bogus", "--b", "random"], "unknown agent 'bogus'; available:"),
    (["arena", "--a", "heuristic:speed=2", "--b", "random"],
     "unknown field 'speed' for agent 'heuristic'; valid fields: ['attack', 'defence',"),
    (["arena", "--a", "heuristic:attack=strong", "--b", "random"],
     "agent 'heuristic' field 'attack' takes a float, got 'strong'"),
    (["arena", "--a", "mcts:greedy=maybe", "--b", "random"],
     "field 'greedy' takes a bool, got 'maybe'"),
    # Without --checkpoint a network spec plays the shipped 15x15 network (its game only).
    (["arena", "--a", "mcts:evaluator=network", "--b", "random", "--board-size", "9"],
     "doesn't match the checkpoint's game (Gomoku(board_size=15"),
    (["arena", "--a", "trained", "--b", "random", "--board-size", "9"],
     "doesn't match the checkpoint's game (Gomoku(board_size=15"),
    (["arena", "--a", "random", "--b", "random", "--game", "chess"],
     "unknown game 'chess'; available: ['fauxgo', 'gomoku', 'pgx']"),
    (["arena", "--a", "random", "--b", "random", "--game", "pgx/connect_four",
      "--board-size", "7"], "--board-size is not an option of the game pgx/connect_four"),
    (["arena", "--a", "random", "--b", "random", "--game", "fauxgo", "--board-size", "5",
      "--win-length", "4"], "--win-length is not an option of the game fauxgo"),
    (["arena", "--a", "random", "--b", "random", "--game", "fauxgo", "--board-size", "4"],
     "board_size must be an int in 5..19"),
    (["arena", "--a", "heuristic", "--b", "random", "--game", "pgx/connect_four"],
     "agent 'heuristic' plays ['gomoku'], not 'pgx/connect_four'"),
    (["arena", "--a", "heuristic:attack", "--b", "random"], "'attack' is not field=value"),
    (["arena", "--a", ":attack=1", "--b", "random"], "has no agent name"),
    (["arena", "--a", "random", "--b", "random", "--games", "0"],
     "number of games must be an int >= 1"),
    (["arena", "--a", "random", "--b", "random", "--board-size", "3"],
     "board_size must be an int in 5..20"),
    (["arena", "--a", "random", "--b", "random", "--rule", "renju", "--win-length", "4"],
     "rule 'renju' is defined for win_length 5"),
    (["arena", "--a", "random", "--b", "random", "--openings", "/nonexistent/o.txt"],
     "cannot read openings file"),
    (["tournament", "--agents", "random"], "a tournament needs at least 2 agents"),
    (["tournament", "--agents", "random,heuristic", "--anchor", "mcts"],
     "--anchor 'mcts' is not one of the agents"),
    (["tournament", "--agents", "random,defence=1.2"], "is a field=value with no 'name:'"),
    (["tournament", "--agents", "random,random"], "'random' is entered twice"),
])
def test_arena_and_tournament_bad_flags(argv, message):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert str(e.value.code).startswith("error: ") and message in str(e.value.code)


def test_arena_without_agents_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["arena", "--a", "random"])
    assert e.value.code == 2 and "the following arguments are required: --b" in \
        capsys.readouterr().err


def test_arena_openings_that_do_not_fit_the_board(tmp_path):
    far = tmp_path / "far.txt"
    far.write_text("0,0 0,4\n")
    with pytest.raises(SystemExit) as e:
        cli.main(["arena", "--a", "random", "--b", "random", "--board-size", "7",
                  "--openings", str(far)])
    assert "off the 7x7 board" in str(e.value.code)
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("0,0 0,1\n0,0\n")
    with pytest.raises(SystemExit) as e:
        cli.main(["arena", "--a", "random", "--b", "random", "--openings", str(mixed)])
    assert "same number of stones" in str(e.value.code)


def test_arena_on_faux_go_takes_its_board_size(capsys):
    assert cli.main(["arena", "--game", "fauxgo", "--board-size", "5", "--a", "random",
                     "--b", "random", "--games", "4"]) == 0
    assert "random vs random: fauxgo (board_size=5, komi=0.0)" in capsys.readouterr().out
