"""The pbrain engine with a trained network (`--checkpoint`): its own board size only,
legal moves through START / BEGIN / TURN / BOARD, the agent choices and clear errors."""

from __future__ import annotations

import io
import re
import sys

import numpy as np
import pytest

from gomoku_jax import cli
from gomoku_jax.agents import PolicyAgent, SearchAgent
from gomoku_jax.cli import pbrain as pbrain_cli
from gomoku_jax.io import pbrain
from gomoku_jax.io.pbrain import OPPONENT, OWN
from gomoku_jax.search import PUCT

MOVE = re.compile(r"([0-9]),([0-9])")


def make_engine(run, *argv) -> pbrain.PbrainEngine:
    args = cli.build_parser().parse_args(["pbrain", "--checkpoint", str(run), *argv])
    return pbrain_cli.engine_from_args(args)


def move(engine: pbrain.PbrainEngine, line: str) -> tuple[int, int]:
    """Send `line`; the answer must be one legal move on the 7x7 board, now ours."""
    before = engine.board.copy()
    out = engine.handle(line)
    assert len(out) == 1 and MOVE.fullmatch(out[0]), (line, out)
    x, y = map(int, out[0].split(","))
    assert before[y, x] == 0 and engine.board[y, x] == OWN
    return x, y


# The run's agent as the engine tests play it: time control is tested in test_pbrain.py and
# the threat search in test_anytime.py; without it, and with one simulation a chunk (so no
# short chunk), a game compiles the reroot and one chunk program.
SEARCH_FLAGS = ("--agent-config", "threat_search=0", "--agent-config", "num_simulations=1")


@pytest.fixture(scope="module")
def engine(trained_run):
    return make_engine(trained_run, "--levels", "1", *SEARCH_FLAGS)


@pytest.mark.slow
def test_plays_only_the_runs_board_with_legal_moves(engine, trained_run):
    assert isinstance(engine.agent, SearchAgent) and engine.agent.evaluator == "network"
    assert isinstance(engine.agent.search, PUCT) and engine.agent.name == "puct"
    assert engine.agent.num_simulations == 1 and engine.agent.threat_search == 0  # the flags
    assert engine.agent.search.greedy and engine.agent.search.dirichlet_fraction == 0
    assert engine.player.params is not None
    assert engine.win_length == 4 and engine.rule == "freestyle"

    for line in ("START 15", "RECTSTART 9,9", "START 5"):
        [answer] = engine.handle(line)
        assert answer.startswith("ERROR board size") and "plays only 7x7 (START 7)" in answer
        assert engine.size is None
    assert engine.handle("START 7") == ["OK"]
    assert engine.env.config == engine.game and engine.env.config.observation == "canonical"

    move(engine, "BEGIN")
    for _ in range(3):  # the opponent takes the first free cell
        y, x = map(int, np.argwhere(engine.board == 0)[0])
        move(engine, f"TURN {x},{y}")
    assert np.sum(engine.board == OWN) == 4 and np.sum(engine.board == OPPONENT) == 3

    assert engine.handle("RESTART") == ["OK"] and not engine.board.any()
    assert engine.handle("BOARD") == []
    for line in ("3,3,2", "0,0,1", "6,6,2"):
        assert engine.handle(line) == []
    x, y = move(engine, "DONE")
    assert (x, y) not in {(3, 3), (0, 0), (6, 6)}

    [note] = engine.handle("INFO rule 1")
    assert note == "MESSAGE the network was trained for freestyle; playing exact5 with it"
    assert engine.rule == "exact5" and engine.env.config.observation == "canonical"
    y, x = map(int, np.argwhere(engine.board == 0)[0])
    move(engine, f"TURN {x},{y}")
    [about] = engine.handle("ABOUT")
    assert 'agent="puct anytime, 1 per chunk"' in about  # searches until the time is spent
    # A size change on a later START is refused too, and the game goes on.
    assert engine.handle("START 9")[0].startswith("ERROR") and engine.size == 7


def test_other_agents_on_the_network(trained_run):
    e = make_engine(trained_run, "--agent", "policy", "--agent-config", "sample=true")
    assert isinstance(e.agent, PolicyAgent) and e.agent.evaluator == "network" and e.agent.sample
    assert e.handle("START 7") == ["OK"]
    move(e, "BEGIN")
    # the run's own agent without flags (`engine` sets two of its fields)
    e = make_engine(trained_run)
    assert isinstance(e.agent, SearchAgent) and e.agent.evaluator == "network"
    assert e.agent.num_simulations == 4  # the run's eval.agent_simulations
    assert e.agent.threat_search > 0 and e.player.anytime is not None
    e = make_engine(trained_run, "--agent", "trained", "--agent-config", "num_simulations=2",
                    "--levels", "1")
    assert e.agent.num_simulations == 2 and len(e.player.variants) == 1


def test_rule_flag_that_differs_from_the_run_warns(trained_run, capsys):
    e = make_engine(trained_run, "--rule", "exact5")
    assert e.rule == "exact5"
    assert "the network was trained for freestyle" in capsys.readouterr().err


@pytest.mark.parametrize("argv, pattern", [
    (["--agent", "heuristic"],
     re.escape("agent 'heuristic' has no network to take from --checkpoint")),
    (["--agent", "mcts", "--agent-config", "evaluator=rollout"],
     re.escape("plays with the network (evaluator=network), not evaluator=rollout")),
    (["--agent-config", "greedy=false"],
     re.escape("unknown config for agent 'trained': ['greedy']; valid fields: "
               "['num_simulations', 'threat_search', 'vct_nodes', 'vct_defend', 'solver', "
               "'proof_nodes']")),
    (["--agent-config", "num_simulations=many"],
     r"field 'num_simulations' of agent 'trained' takes an? int, got 'many'"),
    (["--agent-config", "num_simulations=0"], re.escape("must be an int >= 1, got 0")),
    (["--step", "2"], re.escape("has no checkpoint 2; it has [3, 4, 5]")),
])
def test_bad_flags_with_a_checkpoint(trained_run, argv, pattern):
    with pytest.raises(SystemExit) as e:
        cli.main(["pbrain", "--checkpoint", str(trained_run), *argv])
    text = str(e.value.code)
    assert text.startswith("error: ") and re.search(pattern, text), text


def test_the_command_line_with_a_checkpoint(trained_run, monkeypatch, capsys):
    """`gomoku-jax pbrain --checkpoint RUN` answers stdin until END. In this process (the
    process boundary is test_pbrain.py's `python -m gomoku_jax pbrain`), with the agent of
    test_other_agents_on_the_network, compiled there (the run's agent is `engine`'s)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("START 9\nSTART 7\nBEGIN\nTURN 0,0\nEND\n"))
    assert cli.main(["pbrain", "--checkpoint", str(trained_run), "--agent", "policy",
                     "--agent-config", "sample=true"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4, lines
    assert lines[0].startswith("ERROR board size 9 is not supported") and lines[1] == "OK"
    first, second = (tuple(map(int, MOVE.fullmatch(s).groups())) for s in lines[2:])
    assert first != second and (0, 0) not in (first, second)
