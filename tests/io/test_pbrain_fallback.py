"""The engine with a network and a fallback agent (the default engine: the shipped 15x15
network on 15x15, `mcts` elsewhere): each START picks the agent for its board size, a
refused START keeps the one playing, and the command line builds it with no options."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from gomoku_jax import agents, cli
from gomoku_jax import players as trained
from gomoku_jax.agents.search import PolicyAgent, SearchAgent
from gomoku_jax.cli import pbrain as pbrain_cli
from gomoku_jax.io.pbrain import OWN, PbrainEngine

MOVE = re.compile(r"(\d+),(\d+)")


def play(engine: PbrainEngine, line: str) -> tuple[int, int]:
    """Send `line`; its answer must be one legal move, now our stone."""
    before = engine.board.copy()
    [out] = engine.handle(line)
    m = MOVE.fullmatch(out)
    assert m, (line, out)
    x, y = map(int, m.groups())
    assert before[y, x] == 0 and engine.board[y, x] == OWN
    return x, y


@pytest.fixture(scope="module")
def network():
    return trained.default_network()


def test_each_start_picks_the_agent_of_its_board_size(network):
    policy = agents.make("policy", evaluator="network", network=network.model)
    heuristic = agents.make("heuristic")
    engine = PbrainEngine(policy, params=network.variables, game=network.game_spec,
                          fallback=heuristic, anytime=False)
    assert engine.agent is policy and engine.win_length == 5

    # 7x7: the heuristic's program of test_pbrain.py's fuzz (the persistent cache keeps it)
    assert engine.handle("START 7") == ["OK"] and engine.agent is heuristic
    assert engine.game is None and engine.env.board_size == 7
    assert play(engine, "BEGIN") == (3, 3)  # the opening rule, whichever agent plays
    play(engine, "TURN 0,0")

    assert engine.handle("START 15") == ["OK"] and engine.agent is policy
    assert engine.game == network.game_spec and engine.env.config.observation == \
        network.game_spec.observation
    assert play(engine, "BEGIN") == (7, 7)
    for _ in range(3):  # the opponent takes the first free cell of the centre's row
        x = int(np.flatnonzero(engine.board[7] == 0)[0])
        play(engine, f"TURN {x},7")
    assert 'agent="policy"' in engine.handle("ABOUT")[0]

    # A refused START leaves the game and the agent as they were.
    board = engine.board.copy()
    assert engine.handle("START 30")[0].startswith("ERROR")
    assert engine.agent is policy and engine.size == 15 and np.array_equal(engine.board, board)
    assert engine.handle("START 20") == ["OK"] and engine.agent is heuristic
    assert engine.handle("RESTART") == ["OK"] and engine.agent is heuristic


def test_a_fallback_needs_a_game():
    with pytest.raises(ValueError, match="a fallback agent plays the board sizes"):
        PbrainEngine(agents.make("heuristic"), fallback=agents.make("random"))


def test_the_default_engine_is_the_network_with_vcf_and_mcts_elsewhere(network):
    engine = pbrain_cli.engine_from_args(cli.build_parser().parse_args(["pbrain"]))
    agent, player, game = engine._seats[0]
    assert engine.agent is agent and game == network.game_spec and game.board_size == 15
    assert isinstance(agent, SearchAgent) and agent.evaluator == "network"
    assert agent.threat_search > 0 and player.anytime is not None
    assert agent.search.solver and agent.search.proof_nodes > 0  # players.SHIPPED_AGENT
    assert player.params is not None  # the shipped network's variables
    fallback, fallback_player, fallback_game = engine._seats[1]
    assert fallback_game is None and fallback_player.anytime is not None
    assert fallback == agents.make(pbrain_cli.DEFAULT_AGENT)
    assert fallback.evaluator == "auto" and fallback.threat_search > 0
    # Any option makes an engine of one agent, as asked.
    for argv in (["--agent", "mcts"], ["--agent-config", "num_simulations=32"]):
        one = pbrain_cli.engine_from_args(cli.build_parser().parse_args(["pbrain", *argv]))
        assert len(one._seats) == 1 and one.game is None
        assert dataclasses.replace(one.agent, num_simulations=fallback.num_simulations) == \
            fallback
    assert not isinstance(engine.agent, PolicyAgent)
