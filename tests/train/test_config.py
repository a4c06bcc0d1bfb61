"""The training config (`gomoku_jax.train.config`, `.presets`): presets, JSON round trips,
`--set` overrides with type coercion, the polymorphic game and search sections, what a
resumed run may change, and clear errors."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.pgx_adapter import PgxGame
from gomoku_jax.nets.resnet import NetConfig
from gomoku_jax.search import PUCT, Gumbel, PureMCTS
from gomoku_jax.train import preset
from gomoku_jax.train.algorithms import presets_of
from gomoku_jax.train.alphazero.config import AlphaZeroConfig
from gomoku_jax.train.config import override, resumable, resumable_changes, valid_keys


@pytest.mark.parametrize("name", sorted(presets_of("alphazero")))
def test_presets_round_trip(name):
    cfg = preset(name)
    assert AlphaZeroConfig.from_dict(cfg.to_dict()) == cfg
    assert AlphaZeroConfig.from_dict(json.loads(cfg.to_json())) == cfg
    assert hash(AlphaZeroConfig.from_dict(json.loads(cfg.to_json()))) == hash(cfg)
    assert cfg.env().id == cfg.game.id and cfg.env().spec == cfg.game
    assert cfg.env().id == ("fauxgo" if name == "fauxgo" else "gomoku")


def test_default_config_round_trips_and_has_seed_numbers():
    cfg = AlphaZeroConfig()
    assert AlphaZeroConfig.from_dict(json.loads(cfg.to_json())) == cfg
    assert (cfg.optim.learning_rate, cfg.optim.batch_size, cfg.optim.sgd_steps) == (1e-4, 1024, 50)
    assert cfg.replay.capacity == 10_000
    assert cfg.search == PUCT() and (cfg.search.dirichlet_fraction, cfg.search.dirichlet_alpha) \
        == (0.2, 0.3)  # self-play explores: the seeds' noise and temperature
    assert cfg.net == NetConfig() and cfg.game == GameConfig(observation="canonical")
    data = cfg.to_dict()
    assert data["search"]["algorithm"] == "puct" and data["game"]["id"] == "gomoku"


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
    assert AlphaZeroConfig.from_dict(json.loads(cfg.to_json())) == cfg


def test_search_and_game_sections_switch_by_name():
    quick = preset("quick")  # PUCT with the parent-value Q, prior shaping as the default
    gumbel = override(quick, ["search.algorithm=gumbel", "search.max_num_considered_actions=8"])
    assert gumbel.search == Gumbel(max_num_considered_actions=8)
    pure = override(quick, ["search.algorithm=pure_mcts", "search.symmetry=random"])
    assert pure.search == PureMCTS(symmetry="random")  # its own defaults, then the override
    back = override(pure, ["search.algorithm=puct"])
    assert back.search == PUCT(symmetry="random")  # a changed shared field carries over
    c4 = override(quick, ["game.id=pgx", "game.env_id=connect_four",
                          "replay.synthetic_fraction=0"])
    assert c4.game == PgxGame("connect_four") and c4.env().id == "pgx/connect_four"
    for cfg in (gumbel, pure, c4):
        assert AlphaZeroConfig.from_dict(json.loads(cfg.to_json())) == cfg
    with pytest.raises(ValueError, match="unknown search algorithm 'alphabeta'"):
        override(quick, ["search.algorithm=alphabeta"])
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        override(quick, ["game.id=chess"])
    with pytest.raises(ValueError, match=r"unknown field 'pb_c_init' for config.search"):
        override(quick, ["search.algorithm=gumbel", "search.pb_c_init=2"])


def test_valid_keys_cover_every_field():
    keys = valid_keys(AlphaZeroConfig())
    assert len(keys) == len(set(keys))
    assert {"game.id", "game.board_size", "search.algorithm", "search.pb_c_init",
            "net.blocks", "eval.opponents", "run.devices", "selfplay.num_simulations"} <= set(keys)
    assert "search.num_simulations" not in keys and "selfplay.algorithm" not in keys
    gumbel_keys = valid_keys(override(AlphaZeroConfig(), ["search.algorithm=gumbel"]))
    assert "search.gumbel_scale" in gumbel_keys and "search.pb_c_init" not in gumbel_keys


@pytest.mark.parametrize("assignment, message", [
    ("bogus.key=1", "unknown config key 'bogus.key'; valid keys: game.id"),
    ("selfplay.bogus=1", "unknown field 'bogus' for config.selfplay"),
    ("selfplay=1", "--set takes section.field=value"),
    ("selfplay.games", "--set takes section.field=value"),
    ("selfplay.games=many", "field 'games' takes an int, got 'many'"),
    ("selfplay.games=1.5", "field 'games' takes an int"),
    ("optim.learning_rate=fast", "field 'learning_rate' takes a float"),
    ("selfplay.carry_games=yes", "field 'carry_games' takes a bool"),
    ("selfplay.games=0", r"games'? must be an int >= 1, got 0"),
    ("optim.schedule=linear", "optim.schedule must be one of"),
    ("net.dtype=float16", "net.dtype must be one of"),
    ("replay.synthetic_fraction=2", r"synthetic_fraction'? must be in \[0, 1\]"),
    ("game.board_size=3", r"board_size'? must be an int in 5..20"),
    ("game.feature_plane=heat", "feature_plane must be one of"),
    ("search.prior_shaping=maybe", "prior_shaping must be one of"),
    ("eval.every=-1", r"every'? must be an int >= 0"),
])
def test_bad_overrides_raise_clear_errors(assignment, message):
    with pytest.raises(ValueError, match=message):
        override(preset("test"), [assignment])


def test_unknown_key_error_lists_all_valid_keys():
    with pytest.raises(ValueError) as e:
        override(preset("test"), ["selfplay.bogus=1"])
    for key in valid_keys(preset("test")):
        assert key in str(e.value)


def test_from_dict_rejects_unknown_sections_fields_and_types():
    data = preset("test").to_dict()
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['config.training'\]"):
        AlphaZeroConfig.from_dict({**data, "training": {}})
    bad = json.loads(json.dumps(data))
    bad["optim"]["momentum"] = 0.9
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['config.optim.momentum'\]; "
                                         r"valid: .*'config.optim.batch_size'"):
        AlphaZeroConfig.from_dict(bad)
    bad = json.loads(json.dumps(data))
    bad["selfplay"]["games"] = "8x"
    with pytest.raises(ValueError, match="config.selfplay.games takes an int"):
        AlphaZeroConfig.from_dict(bad)
    bad = json.loads(json.dumps(data))
    bad["selfplay"]["games"] = True  # a bool is not an int here
    with pytest.raises(ValueError, match="config.selfplay.games takes an int"):
        AlphaZeroConfig.from_dict(bad)
    bad = json.loads(json.dumps(data))
    bad["search"]["algorithm"] = "minimax"
    with pytest.raises(ValueError, match="unknown search algorithm 'minimax'"):
        AlphaZeroConfig.from_dict(bad)
    with pytest.raises(ValueError, match="config.net must be a mapping"):
        AlphaZeroConfig.from_dict({**data, "net": [1, 2]})
    # a partial dict fills in the defaults, the polymorphic sections included
    assert AlphaZeroConfig.from_dict({"run": {"seed": 3}}) == dataclasses.replace(
        AlphaZeroConfig(), run=dataclasses.replace(AlphaZeroConfig().run, seed=3))
    assert AlphaZeroConfig.from_dict({"search": {"pb_c_init": 2}}).search == PUCT(pb_c_init=2.0)


def test_resumed_runs_may_change_their_length_and_arena_only():
    cfg = preset("test")
    assert resumable_changes(cfg, override(cfg, ["run.iterations=9", "eval.games=4",
                                                 "eval.opponents=random"])) == []
    assert resumable("run.iterations") and resumable("eval.every")
    assert not resumable("run.seed") and not resumable("optim.learning_rate")
    assert resumable_changes(cfg, override(cfg, ["run.seed=3", "search.pb_c_init=2"])) == [
        "run.seed", "search.pb_c_init"]
    assert resumable_changes(cfg, override(cfg, ["search.algorithm=gumbel"]))


def test_unknown_preset():
    with pytest.raises(ValueError, match=r"unknown preset 'huge'; available: \["):
        preset("huge")


def test_sections_validate_directly():
    from gomoku_jax.train.alphazero.config import OptimSection
    from gomoku_jax.train.config import RunSection

    with pytest.raises(ValueError, match="optim.weight_decay must be >= 0"):
        OptimSection(weight_decay=-1.0)
    with pytest.raises(ValueError, match="run.devices must be an int >= 0"):
        RunSection(devices=-2)
