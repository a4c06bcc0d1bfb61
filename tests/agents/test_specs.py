"""Agent specs: 'name' or 'name:field=value,...', the one parser of the command line,
pbrain and the training config (values typed by `gomoku_jax.configs`)."""

from __future__ import annotations

from typing import Any

import pytest

from gomoku_jax import agents, configs
from gomoku_jax.agents import specs
from gomoku_jax.search import PUCT, Gumbel, PureMCTS, RolloutEvaluator


def test_parse_spec():
    assert specs.parse_spec("heuristic") == ("heuristic", {})
    assert specs.parse_spec(" heuristic : defence=1.2, attack = 1 ") == (
        "heuristic", {"defence": "1.2", "attack": "1"})


@pytest.mark.parametrize("spec, message", [
    ("", "has no agent name"),
    (":a=1", "has no agent name"),
    ("heuristic:attack", "'attack' is not field=value"),
    ("heuristic:=1", "'=1' is not field=value"),
    ("heuristic:attack=1,attack=2", "field 'attack' is given twice"),
    (3, "must be a string"),
])
def test_malformed_specs(spec, message):
    with pytest.raises(ValueError, match=message):
        specs.parse_spec(spec)


def test_make_agent_fits_values_to_the_fields():
    agent = specs.make_agent("heuristic:defence=2,attack=0.5")
    assert agent == agents.make("heuristic", defence=2.0, attack=0.5)
    assert type(agent.defence) is float
    assert specs.make_agent("proximity_random:threshold=1") == agents.make(
        "proximity_random", threshold=1.0)
    assert specs.make_agent("random") == agents.make("random")
    mcts = specs.make_agent("mcts:num_simulations=256,evaluator=rollout")
    assert (mcts.num_simulations, mcts.evaluator) == (256, "rollout")


def test_fields_of_the_search_config_are_set_by_name_or_path():
    agent = specs.make_agent("mcts:greedy=false,q_transform=parent,search.pb_c_init=2")
    assert agent.search == PUCT(greedy=False, q_transform="parent", pb_c_init=2.0,
                                dirichlet_fraction=0.0)
    uct = specs.make_agent("pure_mcts:num_simulations=400,exploration=1.4")
    assert uct.search == PureMCTS(exploration=1.4) and uct.num_simulations == 400
    gumbel = specs.make_agent("gumbel:max_num_considered_actions=8")
    assert gumbel.search == Gumbel(max_num_considered_actions=8, gumbel_scale=0.0)


def test_playing_agents_are_at_full_strength_by_default():
    """Greedy, no root noise: the arena, tactics, pbrain and the play UI use these."""
    # ... with the parent's value for unvisited moves (README, "Search that scales")
    assert agents.make("mcts").search == PUCT(q_transform="parent").for_play()
    assert agents.make("mcts").threat_search > 0 and agents.make("pure_mcts").threat_search == 0
    assert agents.make("mcts").search.dirichlet_fraction == 0.0
    assert agents.make("mcts").search.greedy
    assert agents.make("puct") == agents.make("mcts")
    assert agents.make("gumbel").search.gumbel_scale == 0.0
    assert agents.make("pure_mcts").search.greedy
    # The algorithm configs themselves keep the seeds' exploration defaults (self-play).
    assert PUCT().dirichlet_fraction == 0.2 and not PUCT().greedy


@pytest.mark.parametrize("spec, message", [
    ("minimax", r"unknown agent 'minimax'; available: \[.*'heuristic'"),
    ("heuristic:speed=1", r"unknown field 'speed' for agent 'heuristic'; valid fields"),
    ("heuristic:attack=true", "field 'attack' takes a float, got 'true'"),
    ("heuristic:attack=big", "takes a float, got 'big'"),
    ("heuristic:patterns=1", "is a nested config"),
    ("proximity_random:threshold=2", r"threshold must be in \[0, 1\]"),  # its type's range
    ("mcts:num_simulations=0", "num_simulations must be an int >= 1"),
    ("mcts:q_transform=optimistic", "q_transform must be one of"),
    ("mcts:evaluator=oracle", "unknown evaluator 'oracle'"),
    ("mcts:num_rollouts=8", "unknown field 'num_rollouts' for agent 'mcts'"),  # "auto"
    ("pure_mcts:num_rollouts=0", "RolloutEvaluator.num_rollouts must be an int >= 1"),
    ("pure_mcts:evaluator=heuristic,num_rollouts=8", "must be a HeuristicEvaluator"),
    ("policy:evaluator=network", "needs a trained network"),
    ("mcts:search.exploration=1", r"unknown field 'exploration' for agent 'mcts'.search"),
    ("mcts:env=gomoku", "env"),
])
def test_make_agent_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        specs.make_agent(spec)


def test_coerce_reads_text_as_the_field_type():
    assert configs.coerce("x", bool, "False") is False
    assert configs.coerce("x", int, " 3 ") == 3
    assert configs.coerce("x", float, "1e-3") == 1e-3
    assert configs.coerce("x", tuple[str, ...], "a;b") == ("a", "b")
    with pytest.raises(ValueError, match="x takes an int, got '1.5'"):
        configs.coerce("x", int, "1.5")


def test_coerce_fixed_length_tuples_place_by_place():
    pairs = tuple[tuple[str, Any], ...]
    assert configs.coerce("x", pairs, (("num_rollouts", 8),)) == (("num_rollouts", 8),)
    assert configs.coerce("x", tuple[str, int], ["a", "2"]) == ("a", 2)
    with pytest.raises(ValueError, match="x takes 2 values"):
        configs.coerce("x", tuple[str, int], ("a",))


def test_evaluator_options_are_fields_of_the_evaluators_config():
    rollouts = RolloutEvaluator(num_rollouts=8)
    assert agents.make("pure_mcts", num_rollouts=8).evaluator_config == rollouts
    assert agents.make("pure_mcts", evaluator_config=rollouts).evaluator_config == rollouts
    assert specs.make_agent("pure_mcts:num_rollouts=8").evaluator_config == rollouts
    assert specs.make_agent("mcts:evaluator=rollout,num_rollouts=8").evaluator_config == rollouts
    assert specs.make_agent("mcts:evaluator=rollout,evaluator_config.num_rollouts=8") \
        .evaluator_config == rollouts


def test_split_specs():
    assert specs.split_specs("random,proximity_random,heuristic") == [
        "random", "proximity_random", "heuristic"]
    assert specs.split_specs("random,heuristic:defence=1.2,attack=0.8,proximity_random") == [
        "random", "heuristic:defence=1.2,attack=0.8", "proximity_random"]
    assert specs.split_specs(["random", "heuristic:defence=1.2,attack=0.8"]) == [
        "random", "heuristic:defence=1.2,attack=0.8"]
    assert specs.split_specs("policy:path=/a:b,random") == ["policy:path=/a:b", "random"]
    assert specs.split_specs("p:x=1,path=/a:b") == ["p:x=1,path=/a:b"]


@pytest.mark.parametrize("items, message", [
    ("defence=1.2,random", "is a field=value with no 'name:' before it"),
    ("random,defence=1.2", "is a field=value with no 'name:' before it"),
    (" , ", "no agent specs given"),
])
def test_split_specs_errors(items, message):
    with pytest.raises(ValueError, match=message):
        specs.split_specs(items)
