"""Every registered training algorithm through the generic lifecycle, as the env API test
takes every game: train -> kill -> resume (the same params as an uninterrupted run) ->
extend -> load (through `players`, without the training layer) -> play."""

from __future__ import annotations

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from train_configs import ALGO_SETS

from gomoku_jax import cli, players
from gomoku_jax.agents import registry as agents
from gomoku_jax.eval.arena import run_match
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train import ALGORITHMS, load_config, override, preset, train
from gomoku_jax.train.driver import TIMING_KEYS

# Small arenas: the lifecycle, not the strength, is under test.
SETS = ["eval.opponents=random", "eval.games=4", "run.iterations=2", "run.checkpoint_every=1"]


def metrics(run_dir):
    lines = (run_dir / rd.METRICS_FILE).read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in TIMING_KEYS} for line in lines]


def leaves(tree):
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


@pytest.mark.slow
@pytest.mark.parametrize("algo", sorted(ALGORITHMS))
def test_lifecycle(algo, tmp_path, capsys):
    cls = ALGORITHMS[algo]
    config = override(preset(cls.test_preset, algo), [*ALGO_SETS.get(algo, ()), *SETS])
    assert config.algo == algo and isinstance(config, cls.Config)
    assert ALGORITHMS.config(algo) is cls.Config
    whole, killed = tmp_path / "whole", tmp_path / "killed"

    summary = train(config, whole, progress=False)
    assert summary["finished"] and summary["iterations"] == 2 and summary["algo"] == algo

    # killed after its first checkpoint, then resumed: the uninterrupted run, exactly
    summary = train(config, killed, progress=False, stop_after=1)
    assert not summary["finished"] and summary["iterations"] == 1
    assert not (killed / rd.SUMMARY_FILE).exists()
    assert rd.manager(killed, read_only=True).all_steps() == [1]
    summary = train(config, killed, progress=False)
    assert summary["finished"] and summary["iterations"] == 2
    assert metrics(killed) == metrics(whole)
    a, b = players.load(whole), players.load(killed)
    for x, y in zip(leaves(a.variables), leaves(b.variables), strict=True):
        np.testing.assert_array_equal(x, y)

    # a finished run is left alone; more iterations extend it
    assert train(config, killed, progress=False)["already_finished"]
    longer = override(config, ["run.iterations=3"])
    summary = train(longer, killed, progress=False)
    assert summary["finished"] and summary["iterations"] == 3
    assert load_config(killed) == longer
    assert [m["iteration"] for m in metrics(killed)] == [1, 2, 3]
    data = json.loads((killed / rd.CONFIG_FILE).read_text())
    assert (data["algo"], data["player"]) == (algo, config.player)

    # load it to play: the algorithm's kind of network and its own agent
    player = players.load(killed)
    assert isinstance(player, players.NETWORKS[config.player])
    assert (player.step, player.algo, player.game) == (3, algo, config.game)
    agent = player.agent()
    assert player.plays(agent) and player.params_for(agent) is player.variables
    assert player.params_for(agents.make("random")) is None
    env = player.env
    # as the run's arena plays it (train/arena.py), its compiled match: a search agent
    # without the game's threat search at the root
    spec = "trained"
    if any(f.name == "threat_search" for f in dataclasses.fields(agent)):
        agent, spec = dataclasses.replace(agent, threat_search=0), "trained:threat_search=0"
    result = run_match(env, agent, agents.make("random"), jax.random.key(0), 1,
                       params_a=player.params_for(agent))
    games = 2 * len(env.default_openings())
    assert result.games == games and result.wins + result.draws + result.losses == games

    # and through the command line, as `--checkpoint RUN`
    capsys.readouterr()
    assert cli.main(["arena", "--checkpoint", str(killed), "--a", spec, "--b", "random",
                     "--games", "4"]) == 0
    assert f"network: {killed.absolute()} step 3" in capsys.readouterr().out


def test_seeds_of_a_config_share_its_trainer():
    """A sweep over seeds compiles its iteration once: the trainer ignores the seed (its
    `init` takes it) and the checkpoint schedule, not the run's length (its schedule)."""
    from gomoku_jax.train import trainer_for

    config = preset("test")
    assert trainer_for(override(config, ["run.seed=5", "run.checkpoint_every=7",
                                         "run.keep_checkpoints=9"])) is trainer_for(config)
    assert trainer_for(override(config, ["run.iterations=9"])) is not trainer_for(config)


def test_the_compile_timer_counts_tracing_lowering_and_compiling_only():
    """`compile_seconds` of a metrics record: a fresh program's trace, lowering and compile
    count; running it again (compiled) counts nothing."""
    from gomoku_jax.train.driver import CompileTimer

    timer = CompileTimer()
    try:
        f = jax.jit(lambda x: jnp.sin(x) * 3 + 1)
        f(jnp.ones(5)).block_until_ready()
        assert timer.take() > 0.0
        f(jnp.ones(5)).block_until_ready()
        assert timer.take() == 0.0
    finally:
        timer.close()
