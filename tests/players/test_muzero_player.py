"""A MuZero run loaded and played (`players/muzero.py`): `players.load` gives the saved
variables back exactly, its agent plays an arena match, agent specs take the run's network
or refuse what needs another, and export refuses it.

The run (`muzero_run.write_run`: config.json and one checkpoint written by the training
driver's checkpoint writer) is written once for the module.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest
from conftest import EndCell
from muzero_helpers import tiny_muzero
from muzero_run import AGENT_SIMULATIONS, SEARCH, STEP, saved_variables, write_run

from gomoku_jax import cli, players
from gomoku_jax.agents import HeuristicAgent, specs
from gomoku_jax.agents.muzero import MuZeroAgent
from gomoku_jax.eval.arena import run_match
from gomoku_jax.io import export
from gomoku_jax.nets.resnet import NET_PRESETS, PolicyValueModel


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("muzero") / "run")


@pytest.fixture(scope="module")
def player(run):
    return players.load(run)


def test_load_gives_the_saved_network_and_the_run_config(run, player):
    env, network, _ = tiny_muzero()
    assert type(player) is players.MuZeroPlayer and player.kind == "muzero"
    assert players.player_class("muzero") is players.MuZeroPlayer
    assert (player.algo, player.step, player.run_dir) == ("muzero", STEP, run.absolute())
    assert player.env == env and player.model == network
    assert (player.search, player.agent_simulations) == (SEARCH, AGENT_SIMULATIONS)
    want, got = jax.tree.flatten(saved_variables()), jax.tree.flatten(player.variables)
    assert got[1] == want[1]
    for a, b in zip(got[0], want[0]):
        np.testing.assert_array_equal(a, b)
    step_dir = players.load(run / "checkpoints" / str(STEP))
    assert step_dir.step == STEP and step_dir.model == network
    assert f"{network.num_params():,} params" in player.describe()


def test_the_agent_is_the_runs_search_at_full_strength(player):
    agent = player.agent()
    assert agent == MuZeroAgent(env=player.env, network=player.model,
                                search=SEARCH.for_play(), num_simulations=AGENT_SIMULATIONS)
    assert agent.search.greedy and agent.search.dirichlet_fraction == 0
    assert player.agent(8).num_simulations == 8
    assert player.params_for(agent) is player.variables
    assert player.params_for(HeuristicAgent()) is None


def test_the_agent_plays_an_arena_match(player):
    result = run_match(player.env, player.agent(), EndCell(), jax.random.key(0), 1,
                       openings=[[12]], params_a=player.variables)
    both = result.as_first + result.as_second
    assert both.wins + both.draws + both.losses == 2
    assert result.mean_length > 4  # an illegal move would end a game at once (a loss)


def test_specs_play_the_runs_network(player):
    assert specs.make_agent("trained", player) == player.agent()
    assert specs.make_agent("trained:num_simulations=8", player) == player.agent(8)
    env = player.env  # a spec's agent is bound where it plays, as every spec's
    assert specs.make_agent("muzero", player).bind(env) == player.agent()
    tuned = specs.make_agent("muzero:num_simulations=8,pb_c_init=3,greedy=false", player)
    assert tuned.bind(env) == dataclasses.replace(player.agent(8), search=dataclasses.replace(
        SEARCH.for_play(), pb_c_init=3.0, greedy=False))
    assert specs.network_agent("muzero", {}, player).bind(env) == player.agent()
    assert player.plays(tuned) and player.params_for(tuned) is player.variables


@pytest.mark.parametrize("spec, with_network, message", [
    ("muzero", False, "muzero network, which needs a checkpoint: give --checkpoint"),
    ("muzero:num_simulations=8", False, "needs a checkpoint"),
    ("mcts:evaluator=network", True, "checkpoint is a MuZero run .*'muzero' or 'trained'"),
    ("policy:evaluator=network", True, "no policy-value network"),
    ("muzero:network=x", True, "'network' comes from the checkpoint"),
    ("muzero:threat_search=8", True, "threat_search"),
    ("trained:threat_search=8", True, "has no threat_search: it takes only 0"),
    ("trained:vct_defend=true", True, "has no vct_defend: it takes only false"),
])
def test_spec_errors(player, spec, with_network, message):
    with pytest.raises(ValueError, match=message):
        specs.make_agent(spec, player if with_network else None)


def test_trained_without_a_threat_search_takes_threat_search_0(player):
    """One eval-agent spec rates AlphaZero and MuZero runs alike (`compare`)."""
    assert specs.make_agent("trained:threat_search=0", player) == player.agent()


def test_network_agents_refused_for_a_muzero_run(player):
    with pytest.raises(ValueError, match="MuZero run"):
        specs.network_agent("mcts", {}, player)


def test_muzero_with_a_policy_value_checkpoint_names_the_kinds(player):
    env = player.env
    az = players.PolicyValuePlayer(PolicyValueModel.for_env(NET_PRESETS["tiny"], env), None,
                                   player.game, player.run_dir, 0, "alphazero")
    with pytest.raises(ValueError, match="plays a muzero network, but the checkpoint holds "
                                         "a policy_value network: use --agent trained"):
        specs.network_agent("muzero", {}, az)


def test_export_refuses_a_muzero_run(run, tmp_path):
    with pytest.raises(ValueError, match="muzero run of a muzero network: export takes a "
                                         "policy-value network"):
        export.load_policy_value(run, None)
    with pytest.raises(SystemExit, match="error: .*export takes a policy-value network"):
        cli.main(["export", "--checkpoint", str(run), "--out", str(tmp_path / "net.bin")])
    assert not (tmp_path / "net.bin").exists()
