"""Trained networks in the arena and the tournament: loading a run, the `trained` and
`evaluator=network` specs, the game taken from the run, clear errors."""

from __future__ import annotations

import dataclasses
import json

import jax
import pytest

from gomoku_jax import cli, players
from gomoku_jax.agents import PolicyAgent, SearchAgent, specs
from gomoku_jax.eval.arena import run_match


@pytest.fixture(scope="module")
def network(trained_run):
    return players.load(trained_run)


def test_load_finds_the_step_from_any_of_the_run_paths(trained_run, network):
    assert network.step == 5 and network.run_dir == trained_run.absolute()
    for path in (trained_run / "checkpoints", trained_run / "checkpoints" / "5"):
        other = players.load(path)
        assert (other.step, other.run_dir) == (5, network.run_dir)
    assert players.load(trained_run, step=4).step == 4
    with pytest.raises(ValueError, match="has no checkpoint 2; it has \\[3, 4, 5\\]"):
        players.load(trained_run, step=2)
    game = network.game_spec
    assert (game.board_size, game.win_length, game.observation) == (7, 4, "canonical")
    assert network.env.spec == game
    assert "step 5 (alphazero, Gomoku(board_size=7, win_length=4" in network.describe()


def test_specs_with_a_network(network):
    agent = specs.make_agent("trained", network)
    assert agent == network.agent()
    assert isinstance(agent, SearchAgent) and agent.evaluator == "network"
    saved = json.loads((network.run_dir / "config.json").read_text())
    assert agent.num_simulations == network.agent_simulations == saved["eval"]["agent_simulations"]
    assert agent.search == network.search.for_play()  # full strength
    assert isinstance(network, players.PolicyValuePlayer) and network.algo == "alphazero"
    assert agent.search.greedy and agent.search.dirichlet_fraction == 0
    assert agent.env == network.env
    assert specs.make_agent("trained:num_simulations=16", network).num_simulations == 16
    assert agent.threat_search > 0
    off = specs.make_agent("trained:threat_search=0,num_simulations=16", network)
    assert off == dataclasses.replace(agent, threat_search=0, num_simulations=16)
    vct = specs.make_agent("trained:vct_nodes=64,vct_defend=true", network)
    assert vct == dataclasses.replace(agent, vct_nodes=64, vct_defend=True)
    solved = specs.make_agent("trained:solver=true,proof_nodes=8,num_simulations=16", network)
    assert solved == dataclasses.replace(agent, num_simulations=16, search=dataclasses.replace(
        agent.search, solver=True, proof_nodes=8))
    mcts = specs.make_agent("mcts:evaluator=network,num_simulations=8", network)
    assert mcts.network == network.model and mcts.num_simulations == 8
    policy = specs.make_agent("policy:evaluator=network", network)
    assert isinstance(policy, PolicyAgent) and policy.network == network.model
    for agent in (mcts, policy):
        assert network.params_for(agent) is network.variables
    for spec in ("random", "mcts:evaluator=heuristic"):
        assert network.params_for(specs.make_agent(spec, network)) is None


@pytest.mark.parametrize("spec, with_network, message", [
    ("trained", False, "'trained' is a trained network's own agent, which needs a checkpoint"),
    ("mcts:evaluator=network", False, "uses evaluator=network, which needs a trained network"),
    ("trained:num_simulations=0", True, "must be an int >= 1, got 0"),
    ("trained:greedy=false", True, "unknown config for agent 'trained': ['greedy']"),
    ("trained:num_simulations=many", True, "takes an int, got 'many'"),
    ("trained:threat_search=-1", True, "'threat_search' of agent 'trained' must be an int >= 0"),
    ("trained:vct_nodes=-1", True, "'vct_nodes' of agent 'trained' must be an int >= 0"),
    ("trained:vct_defend=true", True, "vct_defend needs a VCT budget"),
    ("trained:vct_nodes=8,threat_search=0", True, "need the threat search on"),
    ("trained:proof_nodes=8", True, "needs solver=True"),
    ("trained:solver=maybe", True, "solver"),
    ("mcts:evaluator=network,network=x", True, "the field 'network' comes from the checkpoint"),
])
def test_spec_errors(network, spec, with_network, message):
    with pytest.raises(ValueError) as e:
        specs.make_agent(spec, network if with_network else None)
    assert message in str(e.value)


def test_arena_trained_vs_random(trained_run, tmp_path, capsys):
    """The run's agent without the threat search against random, one game per opening and
    side: the match of the run's own arena (train/arena.py), whose compiled program the run
    left in the persistent cache (or in this process's `compiled_match`)."""
    out = tmp_path / "match.json"
    assert cli.main(["arena", "--checkpoint", str(trained_run), "--a", "trained:threat_search=0",
                     "--b", "random", "--games", "16", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "trained:threat_search=0 vs random: gomoku (board_size=7, win_length=4, " \
           "rule=freestyle, observation=canonical" in text and "16 games" in text
    assert f"network: {trained_run.absolute()} step 5" in text
    result = json.loads(out.read_text())
    assert result["game"] == {"id": "gomoku", "version": "v1", "board_size": 7, "win_length": 4,
                              "rule": "freestyle", "observation": "canonical",
                              "feature_plane": "none"}
    assert result["games"] == 16 == result["wins"] + result["draws"] + result["losses"]
    assert result["checkpoint"] == {"run_dir": str(trained_run.absolute()), "step": 5,
                                    "algo": "alphazero"}


def test_arena_two_networks(trained_run, tmp_path, capsys):
    """`--checkpoint-b`: B plays its own network. The match equals `run_match` with step 5's
    params for A and step 3's for B, and differs from step 5 against itself."""
    out = tmp_path / "match.json"
    spec = "policy:evaluator=network"
    assert cli.main(["arena", "--checkpoint", str(trained_run), "--checkpoint-b",
                     str(trained_run / "checkpoints" / "3"), "--a", spec, "--b", spec,
                     "--games", "16", "--json", str(out)]) == 0
    assert f"B's network: {trained_run.absolute()} step 3" in capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["checkpoint"]["step"] == 5 and result["checkpoint_b"]["step"] == 3
    new, old = players.load(trained_run), players.load(trained_run, 3)
    agent = specs.make_agent(spec, new)
    expected = run_match(new.env, agent, agent, jax.random.key(0), 1, None, new.variables,
                         old.variables)
    assert result["pair_points"] == [list(p) for p in expected.pair_points]
    itself = run_match(new.env, agent, agent, jax.random.key(0), 1, None, new.variables,
                       new.variables)
    assert expected.pair_points != itself.pair_points


def test_tournament_with_the_network_second(trained_run, tmp_path, capsys):
    """The network as agent B (its policy head: a match without a search compiles in a
    fraction of a search's time); game flags, when given, must be the run's."""
    out = tmp_path / "table.json"
    assert cli.main(["tournament", "--checkpoint", str(trained_run / "checkpoints" / "4"),
                     "--agents", "random,policy:evaluator=network", "--board-size", "7",
                     "--win-length", "4", "--rule", "freestyle", "--games", "16",
                     "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["agents"] == ["random", "policy:evaluator=network"]
    assert result["games_per_pair"] == 16 and result["checkpoint"]["step"] == 4
    assert "| rank | agent | Elo |" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--checkpoint", "{tmp}/missing"], "--checkpoint {tmp}/missing: checkpoint path"),
    (["--checkpoint", "{tmp}"], "is not a run directory"),
    (["--checkpoint", "{run}", "--step", "1"], "has no checkpoint 1; it has [3, 4, 5]"),
    (["--step", "1"], "--step 1 needs --checkpoint PATH"),
    (["--checkpoint", "{run}", "--board-size", "9"],
     "--board-size 9 doesn't match the checkpoint's game (Gomoku(board_size=7, win_length=4"),
    (["--checkpoint", "{run}", "--game", "pgx/connect_four"],
     "--game pgx/connect_four doesn't match the checkpoint's game gomoku"),
    (["--checkpoint", "{run}", "--win-length", "5", "--rule", "exact5"],
     "--win-length 5, --rule exact5 doesn't match"),
    (["--checkpoint", "{run}", "--checkpoint-b", "default"],
     "--checkpoint-b default plays Gomoku(board_size=15"),
    (["--checkpoint-b", "{tmp}/missing"], "--checkpoint-b {tmp}/missing: checkpoint path"),
    (["--board-size", "9"],  # no checkpoint: the shipped network, a 15x15 one
     "--board-size 9 doesn't match the checkpoint's game (Gomoku(board_size=15"),
])
def test_arena_checkpoint_errors(trained_run, tmp_path, argv, message):
    argv = [a.format(tmp=tmp_path, run=trained_run) for a in argv]
    with pytest.raises(SystemExit) as e:
        cli.main(["arena", "--a", "trained", "--b", "random", *argv])
    text = str(e.value.code)
    assert text.startswith("error: ") and message.format(tmp=tmp_path) in text, text


def test_game_flags_still_default_without_a_checkpoint(capsys):
    assert cli.main(["arena", "--a", "random", "--b", "random", "--board-size", "7",
                     "--games", "16"]) == 0
    assert "gomoku (board_size=7, win_length=5" in capsys.readouterr().out


def test_arena_on_connect_four_from_the_command_line(capsys):
    assert cli.main(["arena", "--game", "pgx/connect_four", "--a", "random", "--b", "random",
                     "--games", "4"]) == 0
    assert "random vs random: pgx/connect_four" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        cli.main(["arena", "--game", "pgx/connect_four", "--a", "heuristic", "--b", "random"])
    assert "plays ['gomoku'], not 'pgx/connect_four'" in str(e.value.code)
    with pytest.raises(SystemExit) as e:
        cli.main(["arena", "--game", "pgx/connect_four", "--board-size", "9", "--a", "random",
                  "--b", "random"])
    assert "--board-size is not an option of the game pgx/connect_four" in str(e.value.code)


def test_agents_of_two_loads_are_equal_and_share_compiled_code(trained_run):
    """The agent holds the model (a frozen dataclass), not a bound method: loading the same
    run twice gives equal agents, so `compiled_match`'s cache is hit."""
    first, second = players.load(trained_run), players.load(trained_run)
    assert first.model is not second.model
    assert first.agent() == second.agent()
    assert hash(first.agent()) == hash(second.agent())
