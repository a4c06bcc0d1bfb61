"""Agent specs: an agent named on the command line, `name` or `name:field=value,field=value`.

    heuristic
    heuristic:defence=1.2,attack=0.8
    proximity_random:threshold=0.5

Values are read as bool (true / false), int, float, or else a string, and then fitted to
the type of the field's default (an int for a float field becomes a float; a string for a
number field is an error). Unknown names and fields give the registry's ValueError, which
lists the valid ones.

With a trained network (`eval/trained.py`, the `--checkpoint` of the arena and the
tournament), two more kinds of spec play with it:

    mcts:evaluator=network,num_simulations=64     any search / policy agent on the network
    policy:evaluator=network                      (their params: the network's variables)
    trained                                       the run's own eval agent: greedy PUCT with
    trained:num_simulations=128                   the run's search config
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterable, Optional

from gomoku_jax import agents
from gomoku_jax.agents import Agent

if TYPE_CHECKING:
    from gomoku_jax.eval.trained import TrainedNetwork

TRAINED = "trained"  # the spec of a trained network's own eval agent
NETWORK = "network"  # the evaluator that needs a trained network


def parse_value(text: str) -> Any:
    """'true' / 'false' (any case) -> bool, then int, then float, else the string itself."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text.strip()


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """(name, config) of an agent spec.

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
    config: dict[str, Any] = {}
    if sep:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ValueError(f"agent spec {spec!r}: {item.strip()!r} is not field=value")
            if key in config:
                raise ValueError(f"agent spec {spec!r}: field {key!r} is given twice")
            config[key] = parse_value(value)
    return name, config


def _fit_type(name: str, field: dataclasses.Field, value: Any) -> Any:
    """`value` converted to the type of the field's default, or a ValueError."""
    default = field.default
    if default is dataclasses.MISSING or default is None:
        return value  # nothing to compare with: the agent checks its own config
    want = type(default)
    if want is bool:
        ok = isinstance(value, bool)
    elif want is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif want is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif want is str:
        ok = isinstance(value, str)
    else:
        raise ValueError(f"field {field.name!r} of agent {name!r} is a {want.__name__} and "
                         f"can't be set from a spec string")
    if not ok:
        raise ValueError(f"field {field.name!r} of agent {name!r} takes a {want.__name__}, "
                         f"got {value!r}")
    return value


def make_agent(spec: str, network: Optional["TrainedNetwork"] = None) -> Agent:
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
    cls = agents.REGISTRY.get(name)
    if cls is not None and dataclasses.is_dataclass(cls):
        fields = {f.name: f for f in dataclasses.fields(cls)}
        config = {k: _fit_type(name, fields[k], v) if k in fields else v
                  for k, v in config.items()}
    return build_agent(name, config, network, spec)


def build_agent(name: str, config: dict[str, Any], network: Optional["TrainedNetwork"] = None,
                what: Optional[str] = None) -> Agent:
    """`agents.make(name, **config)`, with `network`'s apply function wired in when
    `config["evaluator"]` is "network" (which needs a network). `what` names the agent in
    errors (default: `name`)."""
    if config.get("evaluator") == NETWORK:
        if network is None:
            raise ValueError(f"agent {what or name!r} uses evaluator=network, which needs a "
                             f"trained network: give --checkpoint PATH (a run directory)")
        if "network" in config:
            raise ValueError(f"agent {what or name!r}: the field 'network' comes from the "
                             f"checkpoint; don't set it")
        config = {**config, "network": network.model}
    return agents.make(name, **config)


def trained_agent(config: dict[str, Any], network: Optional["TrainedNetwork"],
                  what: str = TRAINED) -> Agent:
    """The `trained` spec: `network.agent(num_simulations)` (the run's eval agent)."""
    if network is None:
        raise ValueError(f"agent {what!r} is a trained network's own agent, which needs a "
                         f"checkpoint: give --checkpoint PATH (a run directory)")
    unknown = sorted(set(config) - {"num_simulations"})
    if unknown:
        raise ValueError(f"unknown config for agent {TRAINED!r}: {unknown}; valid fields: "
                         f"['num_simulations']")
    sims = config.get("num_simulations")
    if sims is not None and (isinstance(sims, bool) or not isinstance(sims, int) or sims < 1):
        raise ValueError(f"field 'num_simulations' of agent {TRAINED!r} takes an int >= 1, "
                         f"got {sims!r}")
    return network.agent(sims)


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
