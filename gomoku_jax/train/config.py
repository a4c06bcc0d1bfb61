"""The AlphaZero run's configuration: frozen dataclasses, presets, `--set` overrides, JSON.

A `TrainConfig` has one section per part of the loop (game, net, search, selfplay, replay,
optim, eval, run). Every field is settable from the command line as `section.field=value`
(`--set search.num_simulations=64`), and the whole config is written beside the run as
`config.json` and read back from it, so a run directory says how it was made.

Seed 001's numbers are the defaults (AdamW lr 1e-4, batch 1024, replay 10K, 50 SGD steps,
Dirichlet ε 0.2 / α 0.3 adaptive, temperature 0.8 → 0.05 × 0.9 per move). Its schedule,
"train every 200 episodes with 50 gradient steps", is
`selfplay.games=200, selfplay.moves=225, selfplay.carry_games=false, optim.sgd_steps=50`
on 15×15: each iteration then plays 200 fresh games to their end (a 15×15 game lasts at
most 225 moves) before its 50 steps.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any, Iterable, Mapping

from gomoku_jax.features.planes import PLANE_NAMES
from gomoku_jax.game.config import GameConfig
from gomoku_jax.nets.resnet import NET_PRESETS, NetConfig
from gomoku_jax.search.mcts import ALGORITHMS, SearchConfig

SCHEDULES = ("constant", "cosine", "warmup_cosine")


def _positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")


@dataclasses.dataclass(frozen=True)
class GameSection:
    """The game: board N, win length k, rule; observation form and optional feature plane
    ("none", "patterns" or "proximity"; see `features/planes.py`)."""

    board_size: int = 15
    win_length: int = 5
    rule: str = "freestyle"
    observation: str = "canonical"
    feature_plane: str = "none"

    def __post_init__(self):
        if self.feature_plane not in ("none",) + PLANE_NAMES:
            raise ValueError(f"game.feature_plane must be one of {('none',) + PLANE_NAMES}, "
                             f"got {self.feature_plane!r}")
        self.game_config()  # validates the rest

    def game_config(self) -> GameConfig:
        plane = None
        if self.feature_plane != "none":
            from gomoku_jax.features.planes import named_plane

            plane = named_plane(self.feature_plane, self.win_length, self.rule)
        return GameConfig(self.board_size, self.win_length, self.rule, self.observation, plane)


@dataclasses.dataclass(frozen=True)
class SelfPlaySection:
    """Self-play: `games` boards in parallel play `moves` moves per iteration.

    Attributes:
      games: the self-play batch B (sharded over devices: a multiple of their number).
      moves: moves T per iteration, each one search per board.
      num_simulations: search simulations per move. algorithm: "muzero" (PUCT) or "gumbel".
      carry_games: True: unfinished games go on in the next iteration (purejaxrl style; the
        moves they played before the iteration's end are dropped, their outcome unknown);
        False: every iteration starts fresh games, so with `moves` >= N² every game ends.
    """

    games: int = 128
    moves: int = 64
    num_simulations: int = 64
    algorithm: str = "muzero"
    carry_games: bool = True

    def __post_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"selfplay.algorithm must be one of {ALGORITHMS}, "
                             f"got {self.algorithm!r}")
        for name in ("games", "moves", "num_simulations"):
            _positive(f"selfplay.{name}", getattr(self, name))


@dataclasses.dataclass(frozen=True)
class ReplaySection:
    """FIFO replay buffer of `capacity` samples (seed: 10K), sampled uniformly with a random
    dihedral transform per sample; `tactical_fraction` of every training batch is replaced
    by fresh synthetic complete-five / block-four examples (seed 000 level 3).
    `min_size`: no SGD step before the buffer holds this many samples."""

    capacity: int = 10_000
    tactical_fraction: float = 0.0
    min_size: int = 1

    def __post_init__(self):
        _positive("replay.capacity", self.capacity)
        _positive("replay.min_size", self.min_size)
        if not 0.0 <= self.tactical_fraction <= 1.0:
            raise ValueError(f"replay.tactical_fraction must be in [0, 1], got "
                             f"{self.tactical_fraction!r}")


@dataclasses.dataclass(frozen=True)
class OptimSection:
    """optax AdamW on policy cross-entropy + value_weight × value MSE.

    Attributes:
      learning_rate, weight_decay: AdamW's (seed: lr 1e-4).
      batch_size: samples per SGD step (seed: 1024; sharded over devices).
      sgd_steps: SGD steps K per iteration, one `lax.scan` (seed: 50).
      schedule: "constant", "cosine" (decay over the run's iterations × K steps) or
        "warmup_cosine" (`warmup_steps` linear warm-up first).
      grad_clip: global-norm clipping threshold, 0 = off.
      unroll: how many SGD steps the scan unrolls; 0 = all of them on CPU and 1 elsewhere
        (XLA:CPU runs convolution gradients inside a loop ~25× slower than outside one,
        measured with jax 0.10.2; unrolling costs compile time instead).
    """

    learning_rate: float = 1e-4
    weight_decay: float = 1e-4
    batch_size: int = 1024
    sgd_steps: int = 50
    schedule: str = "constant"
    warmup_steps: int = 0
    grad_clip: float = 0.0
    value_weight: float = 1.0
    unroll: int = 0

    def __post_init__(self):
        if self.schedule not in SCHEDULES:
            raise ValueError(f"optim.schedule must be one of {SCHEDULES}, got "
                             f"{self.schedule!r}")
        _positive("optim.batch_size", self.batch_size)
        _positive("optim.sgd_steps", self.sgd_steps)
        for name in ("learning_rate", "weight_decay", "grad_clip", "value_weight",
                     "warmup_steps", "unroll"):
            if getattr(self, name) < 0:
                raise ValueError(f"optim.{name} must be >= 0, got {getattr(self, name)!r}")


@dataclasses.dataclass(frozen=True)
class EvalSection:
    """The arena every `every` iterations (and at the end): the trained network inside the
    search (`agent_simulations` simulations, greedy) against each opponent spec (an agent
    spec as in `gomoku-jax arena`, or "previous": the last checkpoint evaluated)."""

    every: int = 10
    games: int = 64
    agent_simulations: int = 64
    opponents: tuple[str, ...] = ("random", "heuristic", "mcts:evaluator=rollout", "previous")

    def __post_init__(self):
        _positive("eval.games", self.games)
        _positive("eval.agent_simulations", self.agent_simulations)
        if self.every < 0:
            raise ValueError(f"eval.every must be >= 0 (0: only at the end), got {self.every!r}")
        if isinstance(self.opponents, str):
            object.__setattr__(self, "opponents", tuple(
                s for s in self.opponents.split(";") if s))


@dataclasses.dataclass(frozen=True)
class RunSection:
    """The loop: `iterations` iterations, seed, checkpoints every `checkpoint_every`
    iterations (and at the end), the last `keep_checkpoints` kept; `devices`: how many
    devices to shard over (0: all)."""

    iterations: int = 100
    seed: int = 0
    checkpoint_every: int = 10
    keep_checkpoints: int = 3
    devices: int = 0

    def __post_init__(self):
        _positive("run.iterations", self.iterations)
        _positive("run.checkpoint_every", self.checkpoint_every)
        _positive("run.keep_checkpoints", self.keep_checkpoints)
        if self.devices < 0:
            raise ValueError(f"run.devices must be >= 0, got {self.devices!r}")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Everything an AlphaZero run needs; static (hashable), so it can key compiled code."""

    game: GameSection = GameSection()
    net: NetConfig = NetConfig()
    search: SearchConfig = SearchConfig()
    selfplay: SelfPlaySection = SelfPlaySection()
    replay: ReplaySection = ReplaySection()
    optim: OptimSection = OptimSection()
    eval: EvalSection = EvalSection()
    run: RunSection = RunSection()

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TrainConfig":
        """The config a `to_dict` made; unknown sections or fields are a ValueError."""
        return _build(cls, data, "")


def _field_types(cls) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _build(cls, data: Mapping[str, Any], prefix: str):
    if not isinstance(data, Mapping):
        raise ValueError(f"{prefix.rstrip('.') or 'config'} must be a mapping, got {data!r}")
    types = _field_types(cls)
    unknown = sorted(set(data) - set(types))
    if unknown:
        raise ValueError(f"unknown key(s) {[prefix + k for k in unknown]}; valid: "
                         f"{sorted(prefix + k for k in types)}")
    kwargs = {}
    for name, value in data.items():
        t = types[name]
        if dataclasses.is_dataclass(t):
            kwargs[name] = _build(t, value, f"{prefix}{name}.")
        else:
            kwargs[name] = _coerce(prefix + name, t, value)
    return cls(**kwargs)


def _coerce(name: str, t: Any, value: Any) -> Any:
    """`value` as type `t` (int, float, bool, str, Optional[int], tuple[...]), or ValueError."""
    origin = typing.get_origin(t)
    if origin is typing.Union:  # Optional[X]
        args = [a for a in typing.get_args(t) if a is not type(None)]
        if value is None or (isinstance(value, str) and value.lower() == "none"):
            return None
        return _coerce(name, args[0], value)
    if origin is tuple:
        if isinstance(value, str):
            value = [v for v in value.split(";") if v]
        inner = typing.get_args(t)[0]
        return tuple(_coerce(name, inner, v) for v in value)
    if t is bool:
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, bool):
            return value
    elif t is int:
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
        elif isinstance(value, int) and not isinstance(value, bool):
            return value
    elif t is float:
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif t is str:
        if isinstance(value, str):
            return value
    raise ValueError(f"{name} takes a {getattr(t, '__name__', t)}, got {value!r}")


def valid_keys(config: TrainConfig = TrainConfig()) -> list[str]:
    """Every settable `section.field`."""
    return [f"{s.name}.{f.name}" for s in dataclasses.fields(config)
            for f in dataclasses.fields(getattr(config, s.name))]


def override(config: TrainConfig, assignments: Iterable[str]) -> TrainConfig:
    """`config` with `section.field=value` assignments applied (tuples: `a;b;c`).

    Raises:
      ValueError: a malformed assignment, an unknown key (the message lists the valid
        ones), a value of the wrong type, or a value the section refuses.
    """
    data = config.to_dict()
    for item in assignments:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or "." not in key:
            raise ValueError(f"--set takes section.field=value, got {item!r}")
        section, field = key.split(".", 1)
        if section not in data or not isinstance(data[section], dict) \
                or field not in data[section]:
            raise ValueError(f"unknown config key {key!r}; valid keys: "
                             f"{', '.join(valid_keys(config))}")
        data[section][field] = value.strip()
    return TrainConfig.from_dict(data)


PRESETS: dict[str, TrainConfig] = {
    # A 2-core CPU in under 10 minutes: 9×9 four in a row (five in a row on 9×9 ends mostly
    # in draws against the heuristic player: too little signal for a few minutes of
    # training), a 3×32 net with the heuristics' pattern plane as a sixth input, 32-simulation
    # PUCT with the parent-value Q, the arena only at the end.
    "quick": TrainConfig(
        game=GameSection(board_size=9, win_length=4, feature_plane="patterns"),
        net=dataclasses.replace(NET_PRESETS["small"], blocks=3),
        search=SearchConfig(q_transform="parent"),
        selfplay=SelfPlaySection(games=64, moves=16, num_simulations=32),
        replay=ReplaySection(capacity=20_000, tactical_fraction=0.1, min_size=1000),
        optim=OptimSection(learning_rate=2e-3, batch_size=256, sgd_steps=8,
                           schedule="warmup_cosine", warmup_steps=20, grad_clip=1.0),
        eval=EvalSection(every=0, games=64, agent_simulations=64,
                         opponents=("random", "heuristic", "mcts:evaluator=rollout")),
        run=RunSection(iterations=40, checkpoint_every=10)),
    # Tests: a 7×7 four in a row, the tiny net, a few simulations.
    "test": TrainConfig(
        game=GameSection(board_size=7, win_length=4),
        net=NET_PRESETS["tiny"],
        selfplay=SelfPlaySection(games=8, moves=6, num_simulations=4),
        replay=ReplaySection(capacity=256, tactical_fraction=0.25, min_size=8),
        optim=OptimSection(learning_rate=1e-3, batch_size=16, sgd_steps=2),
        eval=EvalSection(every=0, games=8, agent_simulations=4,
                         opponents=("random", "previous")),
        run=RunSection(iterations=2, checkpoint_every=1)),
    # 15×15 freestyle on a GPU with seed 001's network (10 × 128) in bfloat16.
    "gomoku15": TrainConfig(
        game=GameSection(board_size=15, win_length=5),
        net=dataclasses.replace(NET_PRESETS["seed"], dtype="bfloat16"),
        selfplay=SelfPlaySection(games=512, moves=32, num_simulations=128),
        replay=ReplaySection(capacity=200_000, tactical_fraction=0.05, min_size=20_000),
        optim=OptimSection(learning_rate=1e-3, batch_size=1024, sgd_steps=50,
                           schedule="warmup_cosine", warmup_steps=500, grad_clip=1.0),
        eval=EvalSection(every=20, games=64, agent_simulations=128),
        run=RunSection(iterations=2000, checkpoint_every=20)),
    # Seed 001's schedule as written: 200 episodes, then 50 steps of batch 1024.
    "seed": TrainConfig(
        selfplay=SelfPlaySection(games=200, moves=225, num_simulations=400,
                                 carry_games=False),
        run=RunSection(iterations=1000)),
}


def preset(name: str) -> TrainConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; available: {sorted(PRESETS)}")
    return PRESETS[name]
