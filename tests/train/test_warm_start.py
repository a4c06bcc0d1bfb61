"""`run.init_from`: a fresh run warm-started from another run's network
(`gomoku_jax.train.warm_start`) starts with exactly that network and a fresh optimiser and
replay, says so in config.json and its first metrics record, and refuses a network of
another game or shape before writing anything."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from conftest import trained_config

from gomoku_jax import players, train
from gomoku_jax.players import run_dir as rd
from gomoku_jax.train.trainer import trainer_for
from gomoku_jax.train.warm_start import load_network, source_path, warm_start


def leaves(tree):
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


def assert_same(a, b):
    la, lb = leaves(a), leaves(b)
    assert len(la) == len(lb) > 0
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(x, y)


def test_warm_start_takes_the_network_and_nothing_else(trained_run):
    source = players.load(trained_run / rd.CHECKPOINT_DIR / "4")
    config = train.override(trained_config(), ["run.seed=3", f"run.init_from={trained_run}/"
                                                              f"{rd.CHECKPOINT_DIR}/4"])
    trainer = trainer_for(config)
    fresh = trainer.init(3)
    assert any(np.any(x != y) for x, y in zip(leaves(fresh.params),
                                              leaves(source.variables.params)))
    state, record = warm_start(trainer, trainer.init(3),
                               load_network(trainer, config.run.init_from))
    assert record == {"run_dir": str(trained_run.absolute()), "step": 4}
    assert_same(state.params, source.variables.params)
    assert_same(state.batch_stats, source.variables.batch_stats)
    # the rest is the fresh run's: optimiser moments, replay, games, key, counters
    for name in ("opt_state", "buffer", "games", "pending", "key", "iteration", "sgd_steps"):
        assert_same(getattr(state, name), getattr(fresh, name))
    assert int(state.buffer.size) == 0 and int(state.iteration) == 0


def test_warm_started_run_records_its_source_and_trains_from_it(trained_run, tmp_path):
    config = train.override(trained_config(), [f"run.init_from={trained_run}",
                                               "eval.every=0"])
    run = tmp_path / "warm"
    train.train(config, run, progress=False, stop_after=1)
    saved = json.loads((run / rd.CONFIG_FILE).read_text())
    assert saved["run"]["init_from"] == str(trained_run)
    first = json.loads((run / rd.METRICS_FILE).read_text().splitlines()[0])
    assert first["iteration"] == 1
    assert first["init_from"] == {"run_dir": str(trained_run.absolute()), "step": 5}
    # the arena's "previous" of the new run is the network it started from
    from gomoku_jax.train import checkpoint

    mgr = checkpoint.writer(run, 3)
    _, previous, previous_iteration = checkpoint.restore(mgr, trainer_for(config))
    assert previous_iteration == 0
    assert_same(previous, players.load(trained_run).variables)
    # a resume reads its own checkpoint: init_from cannot be changed on it
    with pytest.raises(ValueError, match="run.init_from"):
        train.train(train.override(config, ["run.init_from="]), run, progress=False)


@pytest.mark.parametrize("assignment, message", [
    ("net.channels=8", "another shape"),
    ("game.board_size=9", "same game"),
])
def test_mismatched_source_is_refused_before_anything_is_written(trained_run, tmp_path,
                                                                 assignment, message):
    config = train.override(trained_config(), [assignment, f"run.init_from={trained_run}"])
    run = tmp_path / "refused"
    with pytest.raises(ValueError, match=message) as e:
        train.train(config, run, progress=False)
    assert "run.init_from=" in str(e.value)
    assert not run.exists()


def test_missing_source_is_a_clear_error(tmp_path):
    config = train.override(trained_config(), [f"run.init_from={tmp_path / 'nothing'}"])
    with pytest.raises(ValueError, match="run.init_from=.*does not exist"):
        train.train(config, tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_default_names_the_shipped_network():
    assert source_path("default") == players.default_network_path()
