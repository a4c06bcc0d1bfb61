"""Plug-ins by name: one `Registry` shape for every kind (games, search algorithms,
evaluators, agents, training algorithms, network kinds, presets) and one maker,
`gomoku_jax.plugins.make`. No jit: only configs are built."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import gomoku_jax
from gomoku_jax import agents, configs, games, plugins, search
from gomoku_jax.agents import specs
from gomoku_jax.agents.evaluator_registry import EVALUATORS
from gomoku_jax.configs import PositiveInt
from gomoku_jax.registry import Registry
from gomoku_jax.search.evaluators import RolloutEvaluator

KINDS = plugins.KINDS
MAKE_KINDS = tuple(k for k in KINDS if k != "network kind")  # a network kind has no config

# kind -> (name, field, text, the value the text stands for) and (name, field, a bad value)
TEXT = {
    "game": ("gomoku", "board_size", "9", 9),
    "search algorithm": ("puct", "greedy", "true", True),
    "evaluator": ("rollout", "num_rollouts", "8", 8),
    "agent": ("mcts", "num_simulations", "256", 256),
    "training algorithm": ("alphazero", "run.iterations", "3", 3),
    "training preset": ("test", "run.iterations", "3", 3),
    "network preset": ("tiny", "blocks", "3", 3),
}
BAD = {
    "game": ("gomoku", "board_size", "3"),
    "search algorithm": ("puct", "dirichlet_fraction", "1.5"),
    "evaluator": ("rollout", "num_rollouts", "0"),
    "agent": ("mcts", "num_simulations", "many"),
    "training algorithm": ("alphazero", "run.iterations", "0"),
    "training preset": ("test", "run.iterations", "0"),
    "network preset": ("tiny", "channels", "0"),
}


def get(config, dotted: str):
    for part in dotted.split("."):
        config = getattr(config, part)
    return config


def test_the_kinds():
    assert KINDS == ("game", "search algorithm", "evaluator", "agent", "training algorithm",
                     "network kind", "training preset", "network preset")
    with pytest.raises(ValueError, match=re.escape(f"kinds: {list(KINDS)}")):
        plugins.make("opponent", "random")


@pytest.mark.parametrize("kind", MAKE_KINDS)
def test_every_name_builds_with_its_defaults(kind):
    registry = plugins.registry(kind)
    assert isinstance(registry, Registry) and registry.kind == kind and len(registry) > 0
    for name in registry.names():
        built = plugins.make(kind, name)
        config = registry.config(name)  # a class, or a preset's instance
        cls = config if isinstance(config, type) else type(config)
        assert type(built) is cls and dataclasses.is_dataclass(built)
        assert built == (cls() if config is cls else config), name  # the defaults
        hash(built)  # a static jit argument


def test_the_registries_hold_the_implementations():
    """Games hold their Env class, training algorithms their trainer, network kinds their
    Player class, presets their config; each builds its config."""
    assert games.GAMES["gomoku"] is type(gomoku_jax.make("gomoku"))
    assert games.GAMES.config("gomoku") is games.spec_class("gomoku")
    trainer = plugins.registry("training algorithm")["gmo"]
    assert plugins.registry("training algorithm").config("gmo") is trainer.Config
    assert plugins.registry("network kind")["gmo"].kind == "gmo"
    with pytest.raises(ValueError, match="has no config"):
        plugins.make("network kind", "gmo")
    assert all(o == "gomoku_jax" for o in plugins.sources("game")["game"].values())


@pytest.mark.parametrize("kind", MAKE_KINDS)
def test_an_unknown_name_lists_the_names(kind):
    names = plugins.names(kind)
    with pytest.raises(ValueError, match=re.escape(f"unknown {kind} 'oracle'; available: "
                                                   f"{names}")):
        plugins.make(kind, "oracle")
    with pytest.raises(ValueError, match=re.escape(str(names))):
        plugins.registry(kind)["oracle"]  # a ValueError, not a KeyError


@pytest.mark.parametrize("kind", MAKE_KINDS)
def test_an_unknown_field_lists_the_fields(kind):
    name = TEXT[kind][0]
    fields = plugins.registry(kind).fields(name)
    with pytest.raises(ValueError, match=re.escape(f"unknown field 'colour' for {kind} "
                                                   f"{name!r}; valid fields: {fields}")):
        plugins.make(kind, name, colour="red")


@pytest.mark.parametrize("kind", MAKE_KINDS)
def test_text_is_converted_to_the_fields_type(kind):
    name, field, text, value = TEXT[kind]
    built = plugins.make(kind, name, **{field: text})
    assert get(built, field) == value and type(get(built, field)) is type(value)


@pytest.mark.parametrize("kind", MAKE_KINDS)
def test_a_bad_value_is_a_value_error_naming_the_field(kind):
    name, field, bad = BAD[kind]
    with pytest.raises(ValueError, match=field.split(".")[-1]):
        plugins.make(kind, name, **{field: bad})


def test_games_build_specs_and_envs():
    assert plugins.make("game", "pgx/connect_four") == games.spec_class("pgx")("connect_four")
    assert games.make_spec("gomoku", board_size=np.int64(9)).board_size == 9
    env = gomoku_jax.make("gomoku", board_size=9)
    assert env.spec == plugins.make("game", "gomoku", board_size=9)
    assert games.from_spec(env.spec) == env
    assert isinstance(gomoku_jax.make("pgx/connect_four"), games.Env)
    with pytest.raises(ValueError, match=r"pgx/<env id>"):
        games.make("chess")


def test_search_make_is_the_registry():
    assert search.make("puct", greedy="true") == search.ALGORITHMS.make("puct", greedy=True)
    with pytest.raises(ValueError, match="unknown search algorithm 'mcts'"):
        search.make("mcts")


def test_agents_by_name_are_classes_with_that_names_defaults():
    mcts = agents.make("mcts")
    assert type(mcts) is agents.SearchAgent and mcts == agents.make("puct")
    assert hash(mcts) == hash(agents.make("mcts"))
    gumbel, pure = agents.make("gumbel"), agents.make("pure_mcts")
    assert isinstance(gumbel, agents.SearchAgent) and gumbel.search == search.Gumbel().for_play()
    assert isinstance(pure, agents.SearchAgent) and isinstance(pure.search, search.PureMCTS)
    assert (pure.evaluator, pure.num_simulations, pure.threat_search) == ("rollout", 1000, 0)
    assert agents.make("pure_mcts", num_simulations="200").num_simulations == 200
    assert agents.make("pure_mcts", num_simulations=200) != agents.make("pure_mcts")
    for name in ("mcts", "gumbel", "pure_mcts", "policy"):
        assert agents.registry.takes_network(name)
    assert not agents.registry.takes_network("heuristic")
    assert not agents.registry.takes_network("oracle")


def test_a_new_search_algorithm_is_an_agent_too():
    @dataclasses.dataclass(frozen=True)
    class Greedy(search.PUCT):
        name = "greedy_puct"

    cls = agents.search.search_agent_class(Greedy)
    agent = cls(num_simulations=8)
    assert issubclass(cls, agents.SearchAgent) and agent.search == Greedy().for_play()
    assert agent == cls(num_simulations=8) and hash(agent) == hash(cls(num_simulations=8))


def test_evaluator_options_are_the_evaluators_fields():
    agent = agents.make("mcts", evaluator="rollout", num_rollouts="8")
    assert agent.evaluator_config == RolloutEvaluator(num_rollouts=8)
    assert specs.make_agent("mcts:evaluator=rollout,num_rollouts=8") == agent
    assert specs.make_agent("pure_mcts:num_rollouts=8").evaluator_config.num_rollouts == 8
    heuristic = specs.make_agent("mcts:evaluator=heuristic,attack=1.5").evaluator_config
    assert heuristic == EVALUATORS.make("heuristic", attack="1.5")
    # a named evaluator holds its defaults; switching evaluator leaves none of the old behind
    assert agents.make("pure_mcts").evaluator_config == RolloutEvaluator()
    assert agents.make("pure_mcts", evaluator="uniform").evaluator_config == \
        EVALUATORS["uniform"]()
    assert agents.make("mcts").evaluator_config is None  # "auto": decided by the game
    with pytest.raises(ValueError, match="unknown field 'num_rollouts' for agent 'mcts'"):
        agents.make("mcts", num_rollouts=8)
    with pytest.raises(ValueError, match="must be a RolloutEvaluator"):
        agents.SearchAgent(evaluator="rollout", evaluator_config=EVALUATORS["heuristic"](
            attack=2.0))
    with pytest.raises(ValueError, match="RolloutEvaluator.num_rollouts must be an int >= 1"):
        specs.make_agent("pure_mcts:num_rollouts=0")
    with pytest.raises(ValueError, match="agent 'pure_mcts'.evaluator_config field "
                                         "'num_rollouts' takes an int, got 'x'"):
        specs.make_agent("pure_mcts:num_rollouts=x")


def test_registry_shape():
    @dataclasses.dataclass(frozen=True)
    class Knob:
        size: PositiveInt
        scale: float = 1.0

        def __post_init__(self):
            configs.validate(self)

    registry = Registry("knob", {"knob": Knob})
    assert "knob" in registry and "other" not in registry and 3 not in registry
    assert registry.get("other") is None and registry.get("knob") is Knob
    assert list(registry) == registry.names() == ["knob"] and dict(registry.items())
    assert registry.make("knob", size="3", scale=2) == Knob(3, 2.0)
    with pytest.raises(ValueError, match=r"knob 'knob' needs a value for \['size'\]"):
        registry.make("knob")
    with pytest.raises(ValueError, match="Knob.size must be an int >= 1, got 0"):
        registry.make("knob", size=0)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("knob", dataclasses.make_dataclass("Other", [], frozen=True))
    assert registry.register("knob", Knob) is Knob  # the same class again: fine
    with pytest.raises(ValueError, match="frozen dataclass"):
        registry.register("loose", dataclasses.make_dataclass("Loose", []))
    with pytest.raises(ValueError, match="frozen dataclass"):
        registry.register("instance", Knob(1))


def test_every_training_algorithm_has_its_default_and_test_presets():
    """Importing the package registers each algorithm's presets (its trainer module imports
    them): `train --preset` and the tests' `test_preset` find them by name."""
    from gomoku_jax import train

    for name, trainer in train.ALGORITHMS.items():
        for preset in (trainer.default_preset, trainer.test_preset):
            assert train.PRESETS[preset].algo == name, (name, preset)


def test_a_plugin_preset_registered_with_a_note_shows_it_in_train_help():
    from gomoku_jax import plugins, train
    from gomoku_jax.cli.train import presets_text

    config = train.preset("test")
    plugins.register("training preset", "test_noted", config, note="a note for the help")
    try:
        assert train.PRESETS.note("test_noted") == "a note for the help"
        assert any(line.split() == ["test_noted", "a", "note", "for", "the", "help"]
                   for line in presets_text().splitlines())
    finally:
        train.PRESETS.unregister("test_noted")
    assert "test_noted" not in train.PRESETS
