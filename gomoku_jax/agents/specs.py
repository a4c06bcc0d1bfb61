"""Agent specs: an agent named in text, `name` or `name:field=value,field=value`; the one
parser behind the command line, pbrain and the training config's opponents.

    heuristic
    heuristic:defence=1.2,attack=0.8
    mcts:num_simulations=256,greedy=false       (greedy: a field of mcts's search config)
    pure_mcts:num_simulations=4000,exploration=1.4

Values are text, converted to the type of the field they set (`gomoku_jax.configs`): bool
(true / false), int, float, str. Unknown names and fields, and values of the wrong type, give
a ValueError that lists the valid ones.

With a trained network (`gomoku_jax.players`, the `--checkpoint` of the arena, the
tournament and pbrain), two more kinds of spec play with it:

    mcts:evaluator=network,num_simulations=64     any search / policy agent on the network
    policy:evaluator=network                      (their params: the network's variables)
    trained                                       the run's own eval agent: greedy PUCT with
    trained:num_simulations=128                   the run's search config
    gmo, muzero:num_simulations=32                a GMO / MuZero run's own agent, its knobs
                                                  settable (these need the checkpoint)
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Optional, Protocol

from gomoku_jax import configs
from gomoku_jax.agents import registry
from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.evaluator_registry import NETWORK

TRAINED = "trained"  # the spec of a trained network's own eval agent
SOLVER_FIELDS = ("solver", "proof_nodes")  # search fields the `trained` spec sets
# The agent fields the `trained` spec sets, with their types (bounds included).
TRAINED_FIELDS = {"num_simulations": configs.PositiveInt, "threat_search": configs.NonNegativeInt,
                  "vct_nodes": configs.NonNegativeInt, "vct_defend": bool}
ROOT_THREAT_FIELDS = ("threat_search", "vct_nodes", "vct_defend")


class LoadedNetwork(Protocol):
    """What specs need of a trained network loaded from a run (`gomoku_jax.players.Player`)."""

    model: Callable

    def agent(self, num_simulations: Optional[int] = None) -> Agent:
        """The run's own eval agent."""

    def plays(self, agent: Agent) -> bool:
        """Whether `agent` plays with the network's params."""

    def agent_config(self, name: str, config: dict[str, Any], what: str) -> dict[str, Any]:
        """The config of agent `name` built with the network."""


def parse_fields(items: Iterable[str], what: str) -> dict[str, str]:
    """{field: text} from `field=value` items; ValueError naming `what` for an item without
    '=', an empty field name, or a field given twice."""
    config: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"{what}: {item.strip()!r} is not field=value")
        if key in config:
            raise ValueError(f"{what}: field {key!r} is given twice")
        config[key] = value.strip()
    return config


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """(name, config) of an agent spec; config values stay text (the agent's field types
    convert them when it is built).

    Raises:
      ValueError: an empty name, a field without '=', an empty field name, or a field given
        twice.
    """
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec must be a string, got {spec!r}")
    name, sep, rest = spec.strip().partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"agent spec {spec!r} has no agent name; expected "
                         f"'name' or 'name:field=value,...'")
    return name, parse_fields(rest.split(","), f"agent spec {spec!r}") if sep else {}


def make_agent(spec: str, network: Optional[LoadedNetwork] = None) -> Agent:
    """The agent an agent spec names, built by `gomoku_jax.agents.make`; with `network`,
    also `trained[:num_simulations=S]` and agents with `evaluator=network` (see the module
    doc). Their params are `network.params_for(agent)`.

    Raises:
      ValueError: a malformed spec, an unknown agent or field (the registry's message,
        listing the valid ones), a value of the wrong type for its field, or a spec that
        needs a network when there is none.
    """
    name, config = parse_spec(spec)
    if name == TRAINED:
        return trained_agent(config, network, spec)
    return build_agent(name, config, network, spec)


def build_agent(name: str, config: dict[str, Any], network: Optional[LoadedNetwork] = None,
                what: Optional[str] = None) -> Agent:
    """`agents.make(name, **config)`, with `network`'s apply function wired in when
    `config["evaluator"]` is "network" (which needs a network). `what` names the agent in
    errors (default: `name`). A network with an `agent_config(name, config, what)` method
    adapts the config first (a GMO run's: `gmo` takes the run's sizes and knobs)."""
    if network is not None:
        config = network.agent_config(name, config, what or name)
    elif registry.requires_network(name):
        raise ValueError(f"agent {what or name!r} plays a trained "
                         f"{' or '.join(registry.network_kinds(name))} network, which needs "
                         f"a checkpoint: give --checkpoint PATH (a run directory)")
    if config.get("evaluator") == NETWORK:
        if network is None:
            raise ValueError(f"agent {what or name!r} uses evaluator=network, which needs a "
                             f"trained network: give --checkpoint PATH (a run directory)")
        if "network" in config:
            raise ValueError(f"agent {what or name!r}: the field 'network' comes from the "
                             f"checkpoint; don't set it")
        config = {**config, "network": network.model}
    return registry.make(name, **config)


def trained_agent(config: dict[str, Any], network: Optional[LoadedNetwork],
                  what: str = TRAINED) -> Agent:
    """The `trained` spec: `network.agent(num_simulations)` (the run's eval agent), with
    the root's threat searches where that agent has them: `threat_search=N` (VCF nodes; 0:
    none), `vct_nodes=N` and `vct_defend=true` (the VCT after it; an agent without them
    takes only 0 / false, so that one spec rates runs of several algorithms); and `solver`
    / `proof_nodes` (MCTS-Solver, fields of the run's search config) where the agent
    searches (`trained:solver=true,proof_nodes=32`)."""
    if network is None:
        raise ValueError(f"agent {what!r} is a trained network's own agent, which needs a "
                         f"checkpoint: give --checkpoint PATH (a run directory)")
    agent = network.agent(None)
    search_fields = {key: value for key, value in config.items() if key in SOLVER_FIELDS}
    config = {key: value for key, value in config.items() if key not in SOLVER_FIELDS}
    unknown = sorted(set(config) - set(TRAINED_FIELDS))
    if unknown:
        raise ValueError(f"unknown config for agent {TRAINED!r}: {unknown}; valid fields: "
                         f"{list(TRAINED_FIELDS) + list(SOLVER_FIELDS)}")
    if search_fields and not _has_field(agent, "search"):
        raise ValueError(f"agent {TRAINED!r} of this checkpoint ({type(agent).__name__}) has "
                         f"no search config: {sorted(search_fields)} do not apply")
    values = {name: configs.coerce(f"field {name!r} of agent {TRAINED!r}", t, config[name])
              for name, t in TRAINED_FIELDS.items() if name in config}
    agent = network.agent(values.pop("num_simulations", None))
    if search_fields:
        values["search"] = configs.assign(agent.search, search_fields,
                                          f"search of agent {TRAINED!r}")
    for name in ROOT_THREAT_FIELDS:
        if not _has_field(agent, name) and values.pop(name, False):
            off = "false" if name == "vct_defend" else "0"
            raise ValueError(f"agent {TRAINED!r} of this checkpoint ({type(agent).__name__}) "
                             f"has no {name}: it takes only {off}")
    return dataclasses.replace(agent, **values) if values else agent


def network_agent(name: str, config: dict[str, Any], network: LoadedNetwork) -> Agent:
    """The agent `name` with `config` playing with `network` (a `--checkpoint`): `trained`
    (the run's eval agent; num_simulations and threat_search settable), the network's own
    kind of agent (a GMO run's `gmo`, a MuZero run's `muzero`: the run's network, its
    knobs settable), or a search or policy agent whose evaluator is "network" (the default
    here).

    Raises:
      ValueError: an agent that has no network, an evaluator other than "network", or a bad
        field.
    """
    if name == TRAINED:
        return trained_agent(config, network)
    if network.plays(registry.make(name)):  # the network's own kind of agent (a GMO's)
        return build_agent(name, config, network)
    if registry.requires_network(name):
        raise ValueError(f"agent {name!r} plays a {' or '.join(registry.network_kinds(name))} "
                         f"network, but the checkpoint holds a "
                         f"{getattr(network, 'kind', 'different')} network: use --agent "
                         f"{TRAINED} (the checkpoint's own agent)")
    if not registry.takes_network(name):
        raise ValueError(f"agent {name!r} has no network to take from --checkpoint; use "
                         f"--agent {TRAINED} (the default with a checkpoint), or a search or "
                         f"policy agent")
    config = {"evaluator": NETWORK, **config}
    if config["evaluator"] != NETWORK:
        raise ValueError(f"with --checkpoint, agent {name!r} plays with the network "
                         f"(evaluator=network), not evaluator={config['evaluator']}")
    return build_agent(name, config, network)


def _has_field(agent: Agent, name: str) -> bool:
    return dataclasses.is_dataclass(agent) and any(
        f.name == name for f in dataclasses.fields(agent))


def split_specs(items: str | Iterable[str]) -> list[str]:
    """Agent specs from comma-separated lists (a piece with '=' but no ':' continues the
    previous spec's fields): 'random,heuristic:defence=1.2,attack=0.8' ->
    ['random', 'heuristic:defence=1.2,attack=0.8'].

    Raises:
      ValueError: a field=value piece with no spec before it, or no specs at all.
    """
    if isinstance(items, str):
        items = [items]
    specs: list[str] = []
    for item in items:
        for piece in item.split(","):
            piece = piece.strip()
            if not piece:
                continue
            eq, colon = piece.find("="), piece.find(":")
            if eq >= 0 and (colon < 0 or eq < colon):  # field=value, maybe with a ':' value
                if not specs or ":" not in specs[-1]:
                    raise ValueError(f"{piece!r} is a field=value with no 'name:' before it; "
                                     f"write specs as name:field=value,field=value")
                specs[-1] += "," + piece
            else:
                specs.append(piece)
    if not specs:
        raise ValueError("no agent specs given")
    return specs
