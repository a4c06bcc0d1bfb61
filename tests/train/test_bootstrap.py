"""Bootstrap self-play (`selfplay.bootstrap_iterations`, `selfplay.bootstrap_evaluator`):
the first iterations search with a named evaluator instead of the network, then the network
takes over; config validation, the metrics record and the config's round trip."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from train_configs import PROGRAM_SETS

from gomoku_jax import cli, players
from gomoku_jax.train import load_config, preset
from gomoku_jax.train.alphazero.config import AlphaZeroConfig
from gomoku_jax.train.alphazero.trainer import AlphaZero
from gomoku_jax.train.config import override
from gomoku_jax.train.trainer import trainer_for

# The session's run's config (its network iteration is that run's program), bootstrapped.
SETS = [*PROGRAM_SETS, "eval.opponents=random", "eval.games=4", "run.iterations=2",
        "selfplay.bootstrap_iterations=1", "selfplay.bootstrap_evaluator=heuristic"]


def sets(assignments):
    return [x for a in assignments for x in ("--set", a)]


@pytest.fixture(scope="module")
def bootstrap_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("bootstrap") / "run"
    assert cli.main(["train", "--preset", "test", "--run-dir", str(run_dir), "--no-progress"]
                    + sets(SETS)) == 0
    return run_dir


@pytest.mark.slow
def test_first_iteration_bootstraps_then_the_network_plays(bootstrap_run):
    records = [json.loads(line) for line in
               (bootstrap_run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in records] == [1, 2]
    assert [r["selfplay_evaluator"] for r in records] == ["heuristic", "network"]
    # both phases train and keep the usual metrics
    assert all(r["positions"] == 8 * 6 and np.isfinite(r["loss"]) for r in records)


def test_the_config_round_trips_through_the_run(bootstrap_run):
    cfg = load_config(bootstrap_run)
    assert cfg.selfplay.bootstrap_iterations == 1
    assert cfg.selfplay.bootstrap_evaluator == "heuristic"
    player = players.load(bootstrap_run)
    loaded, step = load_config(player.run_dir), player.step
    assert step == 2 and loaded == cfg
    # resuming with the same config and more iterations goes on with the network
    assert cli.main(["train", "--run-dir", str(bootstrap_run), "--resume", "--no-progress",
                     "--set", "run.iterations=3"]) == 0
    last = json.loads((bootstrap_run / "metrics.jsonl").read_text().splitlines()[-1])
    assert (last["iteration"], last["selfplay_evaluator"]) == (3, "network")


def test_old_configs_without_the_fields_load_with_no_bootstrap():
    data = preset("test").to_dict()
    for name in ("bootstrap_iterations", "bootstrap_evaluator"):
        del data["selfplay"][name]
    cfg = AlphaZeroConfig.from_dict(data)
    assert cfg.selfplay.bootstrap_iterations == 0
    assert cfg == preset("test")
    assert AlphaZero(cfg).selfplay_evaluator(0) == "network"


@pytest.mark.parametrize("assignments, message", [
    (["selfplay.bootstrap_iterations=-1"], r"bootstrap_iterations'? must be an int >= 0"),
    (["selfplay.bootstrap_evaluator=network"], "selfplay.bootstrap_evaluator must be one of"),
    (["selfplay.bootstrap_evaluator=oracle"], "selfplay.bootstrap_evaluator must be one of"),
    # Gomoku's heuristic cannot evaluate Faux Go
    (["game.id=fauxgo", "selfplay.bootstrap_iterations=2"],
     "selfplay.bootstrap_evaluator='heuristic' does not fit game 'fauxgo'"),
])
def test_bad_bootstrap_configs_are_value_errors(assignments, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        override(preset("test"), ["replay.synthetic_fraction=0"] + assignments)


def test_bad_bootstrap_flags_exit_with_clear_errors(tmp_path):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--preset", "fauxgo", "--run-dir", str(tmp_path / "run"),
                  "--no-progress", "--set", "selfplay.bootstrap_iterations=3"])
    assert "does not fit game 'fauxgo'" in str(e.value.code)
    assert not (tmp_path / "run").exists()


def test_an_evaluator_other_games_have_is_accepted():
    cfg = override(preset("fauxgo"), ["selfplay.bootstrap_iterations=3",
                                      "selfplay.bootstrap_evaluator=uniform"])
    assert cfg.selfplay.bootstrap_evaluator == "uniform"
    auto = override(preset("fauxgo"), ["selfplay.bootstrap_iterations=3",
                                       "selfplay.bootstrap_evaluator=auto"])
    assert AlphaZero(auto).selfplay_evaluator(2) == "rollout"
    assert AlphaZero(auto).selfplay_evaluator(3) == "network"


def test_bootstrap_self_play_ignores_the_network():
    """The same games and key with two different networks, from a fresh state of the run's
    config (its trainer and compiled iterations): a bootstrap iteration plays the same moves
    with the same search policies (the evaluator ignores the params), a network iteration
    does not. Its 6-move games are still running: they are compared as they stand."""
    trainer = trainer_for(override(preset("test"), SETS))
    other = trainer.init(seed=123)

    def games(done):
        a = trainer.init()
        b = trainer.init().replace(params=jax.tree.map(lambda x: x + 0, other.params))
        out = [trainer.iteration(s, done)[0] for s in (a, b)]
        return ([np.asarray(o.games.board) for o in out],
                [np.asarray(o.pending.policy) for o in out])

    (board_a, board_b), (policy_a, policy_b) = games(0)
    assert np.count_nonzero(board_a) == 8 * 6  # 8 games of 6 moves
    np.testing.assert_array_equal(board_a, board_b)
    np.testing.assert_array_equal(policy_a, policy_b)
    (net_a, net_b), _ = games(1)
    assert not np.array_equal(net_a, net_b)


def test_gomoku15_cpu_preset_bootstraps_and_ships_a_small_network():
    cfg = preset("gomoku15_cpu")
    assert 0 < cfg.selfplay.bootstrap_iterations < cfg.run.iterations
    assert cfg.game.board_size == 15 and cfg.game.feature_plane == "patterns"
    model = AlphaZero(cfg).model
    shapes = jax.eval_shape(model.init, jax.random.key(0)).params
    size = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(shapes))
    assert size <= 5 * 2**20, size
