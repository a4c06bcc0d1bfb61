"""What every training algorithm's config shares: the sections replay, optim, eval and run,
the `TrainingConfig` base (JSON with the algorithm's tag, the game, presets, the trainer),
`--set section.field=value` overrides and the keys a resumed run may change.

A training algorithm's config is a frozen dataclass of sections: `game` (any game, by
`game.id`), its own sections (AlphaZero's `net`, `search`, `selfplay`; GMO's `gmo`, `data`)
and the four shared ones, each of which an algorithm may subclass to change defaults or add
fields. Every field is settable from the command line as `section.field=value` and checked
against its annotation (`configs.validate`), and the whole config is written beside the run
as `config.json`, tagged with the algorithm's name and the kind of network it trains.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, ClassVar, Iterable, Mapping

from gomoku_jax import configs, games
from gomoku_jax.configs import NonNegativeFloat, NonNegativeInt, PositiveInt
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.players.run_dir import ALGO_KEY, KINDS, PLAYER_KEY
from gomoku_jax.registry import Registry

SCHEDULES = ("constant", "cosine", "warmup_cosine")


@dataclasses.dataclass(frozen=True)
class Section:
    """A config section: its fields are validated against their annotations."""

    name: ClassVar[str] = "section"

    def __post_init__(self):
        configs.validate(self, self.name)


@dataclasses.dataclass(frozen=True)
class ReplaySection(Section):
    """FIFO replay buffer of `capacity` samples (seed 001: 10K); no SGD step before it holds
    `min_size`."""

    capacity: PositiveInt = 10_000
    min_size: PositiveInt = 1

    name: ClassVar[str] = "replay"


@dataclasses.dataclass(frozen=True)
class OptimSection(Section):
    """optax AdamW, `sgd_steps` steps of `batch_size` samples per iteration.

    Attributes:
      learning_rate, weight_decay: AdamW's (seed 001: lr 1e-4).
      batch_size: samples per SGD step (sharded over devices where the trainer shards).
      sgd_steps: SGD steps K per iteration, one `lax.scan`.
      schedule: "constant", "cosine" (decay over the run's iterations × K steps) or
        "warmup_cosine" (`warmup_steps` linear warm-up first).
      grad_clip: global-norm clipping threshold, 0 = off.
      unroll: how many SGD steps the scan unrolls, 0 = all of them. 1 is right on every
        platform: the networks' convolutions have gradients written as forward convolutions
        (`nets/conv.py`), which XLA:CPU runs as fast inside the loop as outside it (its own
        gradient convolutions run ~30× slower in a loop); unrolling costs compile time.
    """

    learning_rate: NonNegativeFloat = 1e-4
    weight_decay: NonNegativeFloat = 1e-4
    batch_size: PositiveInt = 1024
    sgd_steps: PositiveInt = 50
    schedule: str = "constant"
    warmup_steps: NonNegativeInt = 0
    grad_clip: NonNegativeFloat = 0.0
    unroll: NonNegativeInt = 1

    name: ClassVar[str] = "optim"

    def __post_init__(self):
        super().__post_init__()
        if self.schedule not in SCHEDULES:
            raise ValueError(f"optim.schedule must be one of {SCHEDULES}, got "
                             f"{self.schedule!r}")

    @property
    def scan_unroll(self) -> int:
        """`unroll`, 0 resolved to all `sgd_steps`."""
        return min(self.unroll or self.sgd_steps, self.sgd_steps)


@dataclasses.dataclass(frozen=True)
class EvalSection(Section):
    """The arena every `every` iterations (0: only at the end) and at the end: the trained
    agent at full strength against each opponent spec (an agent spec as in `gomoku-jax
    arena`, or "previous": the trained agent with the params of the evaluation before),
    `games` games each, every opening of the game with both colours."""

    every: NonNegativeInt = 10
    games: PositiveInt = 64
    opponents: tuple[str, ...] = ("random", "pure_mcts:num_simulations=200", "previous")

    name: ClassVar[str] = "eval"


@dataclasses.dataclass(frozen=True)
class RunSection(Section):
    """The run: `iterations` iterations from `seed`, checkpoints every `checkpoint_every`
    iterations (and at the end), the last `keep_checkpoints` kept; `devices`: how many
    devices to shard over (0: all, of every process of a multi-process run).

    `init_from`: "" (a network from `seed`), or a warm start: the network (params and
    batch statistics) of another run of the same game, kind of network and shape, as
    `players.load` takes it (a run directory, its `checkpoints/` or a step directory), or
    "default" for the shipped network (`train.warm_start`); the optimiser, the replay and
    the games start fresh."""

    iterations: PositiveInt = 100
    seed: NonNegativeInt = 0
    checkpoint_every: PositiveInt = 10
    keep_checkpoints: PositiveInt = 3
    devices: NonNegativeInt = 0
    init_from: str = ""

    name: ClassVar[str] = "run"


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """The base of every training algorithm's config: a frozen dataclass (static and
    hashable, so it can key compiled code) with the `game` and `run` sections, to which an
    algorithm adds its own and its `replay`, `optim` and `eval` (the shared sections, or
    subclasses of them). A subclass sets `algo` (its registry name), `player` (the kind
    of network its checkpoints hold, `gomoku_jax.players.NETWORKS`) and `network_sections`
    (the sections that describe the network's shape, which a warm start compares)."""

    game: GameSpec = games.spec_class("gomoku")(observation="canonical")
    run: RunSection = RunSection()

    algo: ClassVar[str]
    player: ClassVar[str]
    network_sections: ClassVar[tuple[str, ...]] = ()

    def env(self) -> Env:
        """The run's game."""
        return games.from_spec(self.game)

    def to_dict(self) -> dict:
        """{section: {field: value}} (JSON data; `to_json` adds the tags)."""
        return configs.to_dict(self, KINDS)

    def to_json(self) -> str:
        return json.dumps({ALGO_KEY: self.algo, PLAYER_KEY: self.player, **self.to_dict()},
                          indent=1)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TrainingConfig":
        """The config `to_dict` (or `to_json`'s data) made; ValueError for unknown keys or
        another algorithm's tag."""
        if not isinstance(data, Mapping):
            raise ValueError(f"config must be a mapping, got {data!r}")
        data = dict(data)
        algo = data.pop(ALGO_KEY, cls.algo)
        data.pop(PLAYER_KEY, None)
        if algo != cls.algo:
            raise ValueError(f"config is a {algo!r} run's, not a {cls.algo!r} run's")
        return configs.from_dict(cls, data, "config", KINDS)


def _check_preset(config: Any) -> None:
    if not isinstance(config, TrainingConfig):
        raise ValueError(f"a training preset is a training algorithm's config (a "
                         f"TrainingConfig instance), got {config!r}")


# Training presets: name -> a training config (any algorithm's, its `algo` says which),
# registered as every plug-in is: `PRESETS.register("quick", AlphaZeroConfig(...))`, or from
# outside the package `gomoku_jax.plugins.register("training preset", name, config)`.
# `PRESETS.make(name, **{"run.iterations": "4"})` is the preset with those values set.
PRESETS = Registry("training preset", kinds=KINDS, check=_check_preset, instances=True)


def valid_keys(config: Any) -> list[str]:
    """Every settable `section.field` of a training config (the polymorphic sections' kind
    keys included)."""
    data = config.to_dict()
    return [f"{s}.{f}" for s, section in data.items() for f in section]


# What a finished or killed run may change when it is resumed (`resumable_changes`): the
# length of the run, its checkpointing and devices, and the arena (the rest would make the
# resumed run a different one).
RESUMABLE = ("run.iterations", "run.checkpoint_every", "run.keep_checkpoints", "run.devices",
             "eval.*")


def override(config: Any, assignments: Iterable[str]) -> Any:
    """`config` (any training algorithm's) with `section.field=value` assignments applied
    (tuples: `a;b;c`).

    Raises:
      ValueError: a malformed assignment, an unknown key (the message lists the valid
        ones), a value of the wrong type, or a value the section refuses.
    """
    changes: dict[str, str] = {}
    for item in assignments:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or "." not in key:
            raise ValueError(f"--set takes section.field=value, got {item!r}")
        section = key.split(".", 1)[0]
        if section not in {f.name for f in dataclasses.fields(config)}:
            raise ValueError(f"unknown config key {key!r}; valid keys: "
                             f"{', '.join(valid_keys(config))}")
        changes[key] = value.strip()
    try:
        return configs.assign(config, changes, "config", KINDS)
    except ValueError as e:
        if "unknown field" in str(e):
            raise ValueError(f"{e}; every valid key: {', '.join(valid_keys(config))}") \
                from None
        raise


def resumable(key: str) -> bool:
    """Whether a resumed run may change `section.field` (see `RESUMABLE`)."""
    return key in RESUMABLE or f"{key.split('.', 1)[0]}.*" in RESUMABLE


def resumable_changes(saved: Any, new: Any) -> list[str]:
    """The keys in which `new` differs from `saved` that a resumed run cannot take; empty
    when `new` may continue `saved`'s run."""
    def flat(config):
        return {f"{s}.{f}": v for s, section in config.to_dict().items()
                for f, v in section.items()}

    old, now = flat(saved), flat(new)
    return [k for k in sorted(set(old) | set(now))
            if not resumable(k) and old.get(k) != now.get(k)]
