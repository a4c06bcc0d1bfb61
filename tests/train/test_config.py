"""The training config (`gomoku_jax.train.config`): presets, JSON round trips, `--set`
overrides with type coercion, and clear errors."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gomoku_jax.nets.resnet import NetConfig
from gomoku_jax.search.mcts import SearchConfig
from gomoku_jax.train.config import (PRESETS, TrainConfig, override, preset, valid_keys)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_round_trip(name):
    cfg = preset(name)
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    assert TrainConfig.from_dict(json.loads(cfg.to_json())) == cfg
    assert hash(TrainConfig.from_dict(json.loads(cfg.to_json()))) == hash(cfg)
    # the game section builds a valid GameConfig
    game = cfg.game.game_config()
    assert game.board_size == cfg.game.board_size


def test_default_config_round_trips_and_has_seed_numbers():
    cfg = TrainConfig()
    assert TrainConfig.from_dict(json.loads(cfg.to_json())) == cfg
    assert (cfg.optim.learning_rate, cfg.optim.batch_size, cfg.optim.sgd_steps) == (1e-4, 1024, 50)
    assert cfg.replay.capacity == 10_000
    assert (cfg.search.dirichlet_fraction, cfg.search.dirichlet_alpha) == (0.2, 0.3)
    assert cfg.net == NetConfig()


def test_seed_preset_expresses_seed_001_schedule():
    cfg = preset("seed")
    assert cfg.selfplay.games == 200
    assert cfg.selfplay.moves == 225 == cfg.game.board_size ** 2  # every game ends
    assert cfg.selfplay.carry_games is False
    assert cfg.optim.sgd_steps == 50 and cfg.optim.batch_size == 1024
    assert cfg.optim.learning_rate == 1e-4
    assert cfg.net == NetConfig(blocks=10, channels=128)


def test_override_sets_nested_values_with_coercion():
    cfg = override(preset("test"), [
        "selfplay.games=16", "optim.learning_rate=3e-4", "selfplay.carry_games=False",
        "eval.opponents=random;heuristic;mcts:evaluator=rollout", "net.dtype=bfloat16",
        "search.max_tree_bytes=12345", "optim.grad_clip=1", " run.seed = 7 "])
    assert cfg.selfplay.games == 16 and isinstance(cfg.selfplay.games, int)
    assert cfg.optim.learning_rate == 3e-4
    assert cfg.selfplay.carry_games is False
    assert cfg.eval.opponents == ("random", "heuristic", "mcts:evaluator=rollout")
    assert cfg.net.dtype == "bfloat16"
    assert cfg.search.max_tree_bytes == 12345
    assert cfg.optim.grad_clip == 1.0 and isinstance(cfg.optim.grad_clip, float)
    assert cfg.run.seed == 7
    # untouched fields keep the preset's values
    assert cfg.game == preset("test").game and cfg.replay == preset("test").replay
    assert override(cfg, ["search.max_tree_bytes=None"]).search.max_tree_bytes is None
    assert override(cfg, ["selfplay.carry_games=TRUE"]).selfplay.carry_games is True
    # a later assignment wins; no assignment is the identity
    assert override(cfg, ["run.seed=1", "run.seed=2"]).run.seed == 2
    assert override(cfg, []) == cfg
    # the result round trips
    assert TrainConfig.from_dict(json.loads(cfg.to_json())) == cfg


def test_valid_keys_cover_every_field():
    keys = valid_keys()
    expected = [f"{s.name}.{f.name}" for s in dataclasses.fields(TrainConfig)
                for f in dataclasses.fields(s.type if isinstance(s.type, type) else
                                            type(getattr(TrainConfig(), s.name)))]
    assert keys == expected
    assert len(keys) == len(set(keys))
    assert "search.num_simulations" not in keys and "selfplay.num_simulations" in keys
    assert {"net.blocks", "search.dirichlet_alpha", "eval.opponents", "run.devices"} <= set(keys)


@pytest.mark.parametrize("assignment, message", [
    ("bogus.key=1", "unknown config key 'bogus.key'; valid keys: game.board_size"),
    ("selfplay.bogus=1", "unknown config key 'selfplay.bogus'"),
    ("selfplay=1", "--set takes section.field=value"),
    ("selfplay.games", "--set takes section.field=value"),
    ("selfplay.games=many", "selfplay.games takes a int, got 'many'"),
    ("selfplay.games=1.5", "selfplay.games takes a int"),
    ("optim.learning_rate=fast", "optim.learning_rate takes a float"),
    ("selfplay.carry_games=yes", "selfplay.carry_games takes a bool"),
    ("selfplay.games=0", "selfplay.games must be an int >= 1"),
    ("optim.schedule=linear", "optim.schedule must be one of"),
    ("net.dtype=float16", "net.dtype must be one of"),
    ("replay.tactical_fraction=2", r"replay.tactical_fraction must be in \[0, 1\]"),
    ("game.board_size=3", "board_size must be an int in 5..19"),
    ("game.feature_plane=heat", "game.feature_plane must be one of"),
    ("search.proximity=maybe", "proximity must be one of"),
    ("eval.every=-1", "eval.every must be >= 0"),
])
def test_bad_overrides_raise_clear_errors(assignment, message):
    with pytest.raises(ValueError, match=message):
        override(preset("test"), [assignment])


def test_unknown_key_error_lists_all_valid_keys():
    with pytest.raises(ValueError) as e:
        override(preset("test"), ["selfplay.bogus=1"])
    for key in valid_keys():
        assert key in str(e.value)


def test_from_dict_rejects_unknown_sections_fields_and_types():
    data = preset("test").to_dict()
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['training'\]; valid: \['eval'"):
        TrainConfig.from_dict({**data, "training": {}})
    bad = json.loads(json.dumps(data))
    bad["optim"]["momentum"] = 0.9
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['optim.momentum'\]; valid: .*"
                                         r"'optim.batch_size'"):
        TrainConfig.from_dict(bad)
    bad = json.loads(json.dumps(data))
    bad["selfplay"]["games"] = "8x"
    with pytest.raises(ValueError, match="selfplay.games takes a int"):
        TrainConfig.from_dict(bad)
    bad = json.loads(json.dumps(data))
    bad["selfplay"]["games"] = True  # a bool is not an int here
    with pytest.raises(ValueError, match="selfplay.games takes a int"):
        TrainConfig.from_dict(bad)
    with pytest.raises(ValueError, match="net must be a mapping"):
        TrainConfig.from_dict({**data, "net": [1, 2]})
    # a partial dict fills in the defaults
    assert TrainConfig.from_dict({"run": {"seed": 3}}) == dataclasses.replace(
        TrainConfig(), run=dataclasses.replace(TrainConfig().run, seed=3))


def test_unknown_preset():
    with pytest.raises(ValueError, match=r"unknown preset 'huge'; available: \["):
        preset("huge")


def test_sections_validate_directly():
    from gomoku_jax.train.config import OptimSection, RunSection, SelfPlaySection

    with pytest.raises(ValueError, match="selfplay.algorithm must be one of"):
        SelfPlaySection(algorithm="alphabeta")
    with pytest.raises(ValueError, match="optim.weight_decay must be >= 0"):
        OptimSection(weight_decay=-1.0)
    with pytest.raises(ValueError, match="run.devices must be >= 0"):
        RunSection(devices=-2)
    assert SearchConfig() == TrainConfig().search
