"""Agent specs: 'name' or 'name:field=value,...' on the command line."""

from __future__ import annotations

import pytest

from gomoku_jax import agents
from gomoku_jax.eval import specs


@pytest.mark.parametrize("text, value", [("true", True), ("False", False), ("3", 3),
                                         ("-2", -2), ("1.5", 1.5), ("1e-3", 1e-3),
                                         ("abc", "abc"), (" x ", "x")])
def test_parse_value(text, value):
    parsed = specs.parse_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_parse_spec():
    assert specs.parse_spec("heuristic") == ("heuristic", {})
    assert specs.parse_spec(" heuristic : defence=1.2, attack = 1 ") == (
        "heuristic", {"defence": 1.2, "attack": 1})


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


@pytest.mark.parametrize("spec, message", [
    ("minimax", r"unknown agent 'minimax'; available: \[.*'heuristic'"),
    ("heuristic:speed=1", r"unknown config for agent 'heuristic': \['speed'\]; valid fields"),
    ("heuristic:attack=true", "field 'attack' of agent 'heuristic' takes a float, got True"),
    ("heuristic:attack=big", "takes a float, got 'big'"),
    ("heuristic:patterns=1", "is a PatternConfig and can't be set from a spec string"),
    ("proximity_random:threshold=2", r"threshold must be in \[0, 1\]"),  # the agent's check
])
def test_make_agent_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        specs.make_agent(spec)


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
