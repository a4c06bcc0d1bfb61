"""The AlphaZero run's configuration: frozen dataclasses, `--set` overrides, JSON.

A `TrainConfig` has one section per part of the loop (game, net, search, selfplay, replay,
optim, eval, run). Every field is settable from the command line as `section.field=value`
(`--set search.pb_c_init=2`), and the whole config is written beside the run as
`config.json` and read back from it, so a run directory says how it was made. Two sections
are plug-ins chosen by name: `game` (`game.id`: "gomoku", "fauxgo", or "pgx" with
`game.env_id`) and `search` (`search.algorithm`: "puct", "gumbel", "pure_mcts"; switching
it keeps the fields the algorithms share). Presets are in `presets.py`.

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
from typing import Any, Iterable, Mapping

from gomoku_jax import configs, games, search
from gomoku_jax.agents import evaluators
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.nets.resnet import NetConfig
from gomoku_jax.search.base import SearchAlgorithm
from gomoku_jax.search.puct import PUCT

SCHEDULES = ("constant", "cosine", "warmup_cosine")


def _algorithm_class(name: str) -> type:
    if name not in search.ALGORITHMS:
        raise ValueError(f"unknown search algorithm {name!r}; available: "
                         f"{sorted(search.ALGORITHMS)}")
    return search.ALGORITHMS[name]


# The polymorphic sections: a game by its id, a search algorithm by its name.
KINDS: configs.Kinds = {
    GameSpec: configs.Kind("id", games.spec_class, lambda spec: spec.id),
    SearchAlgorithm: configs.Kind("algorithm", _algorithm_class, lambda alg: alg.name),
}


def _positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")


@dataclasses.dataclass(frozen=True)
class SelfPlaySection:
    """Self-play: `games` boards in parallel play `moves` moves per iteration, each move a
    search (the `search` section's algorithm) of `num_simulations` simulations.

    Attributes:
      games: the self-play batch B (sharded over devices: a multiple of their number).
      moves: moves T per iteration, each one search per board.
      num_simulations: search simulations per move.
      carry_games: True: unfinished games go on in the next iteration, and their positions
        wait (per board, up to the game's `max_game_length`) until the game ends, so every
        position of every finished game is kept; False: every iteration starts fresh games
        and drops the positions of the games it did not finish.
      bootstrap_iterations: the first this many iterations search with `bootstrap_evaluator`
        instead of the network (the network still trains on their games: search-visit
        policies and outcomes); 0 = network self-play from the start. A cheap evaluator
        (Gomoku's "heuristic" runs ~10x faster than a small ResNet on a CPU) fills the
        replay buffer with sensible games while a random network would play noise.
      bootstrap_evaluator: an evaluator name of `agents.evaluators.EVALUATORS` (or "auto",
        the game's preferred one) that evaluates the run's game; not "network".
    """

    games: int = 128
    moves: int = 64
    num_simulations: int = 64
    carry_games: bool = True
    bootstrap_iterations: int = 0
    bootstrap_evaluator: str = "heuristic"

    def __post_init__(self):
        for name in ("games", "moves", "num_simulations"):
            _positive(f"selfplay.{name}", getattr(self, name))
        b = self.bootstrap_iterations
        if isinstance(b, bool) or not isinstance(b, int) or b < 0:
            raise ValueError(f"selfplay.bootstrap_iterations must be an int >= 0, got {b!r}")
        name = self.bootstrap_evaluator
        allowed = sorted({evaluators.AUTO, *evaluators.EVALUATORS} - {evaluators.NETWORK})
        if name not in allowed:
            raise ValueError(f"selfplay.bootstrap_evaluator must be one of {allowed} (the "
                             f"network plays after the bootstrap), got {name!r}")

    def check_game(self, env: Env) -> None:
        """ValueError when bootstrapping with an evaluator that cannot evaluate `env`."""
        if self.bootstrap_iterations:
            try:
                evaluators.check(self.bootstrap_evaluator, (), env=env)
            except ValueError as e:
                raise ValueError(f"selfplay.bootstrap_evaluator={self.bootstrap_evaluator!r} "
                                 f"does not fit game {env.id!r}: {e}") from None


@dataclasses.dataclass(frozen=True)
class ReplaySection:
    """FIFO replay buffer of `capacity` samples (seed: 10K), sampled uniformly with a random
    element of the game's symmetry group per sample; `synthetic_fraction` of every training
    batch is replaced by fresh examples the game generates (`env.synthetic_examples`;
    Gomoku: seed 000's complete-five / block-four tactical examples).
    `min_size`: no SGD step before the buffer holds this many samples."""

    capacity: int = 10_000
    synthetic_fraction: float = 0.0
    min_size: int = 1

    def __post_init__(self):
        _positive("replay.capacity", self.capacity)
        _positive("replay.min_size", self.min_size)
        if not 0.0 <= self.synthetic_fraction <= 1.0:
            raise ValueError(f"replay.synthetic_fraction must be in [0, 1], got "
                             f"{self.synthetic_fraction!r}")


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
      unroll: how many SGD steps the scan unrolls, 0 = all of them. 1 is right on every
        platform: the network's convolutions have gradients written as forward convolutions
        (`nets/conv.py`), which XLA:CPU runs as fast inside the loop as outside it (its own
        gradient convolutions run ~30× slower in a loop); unrolling costs compile time.
    """

    learning_rate: float = 1e-4
    weight_decay: float = 1e-4
    batch_size: int = 1024
    sgd_steps: int = 50
    schedule: str = "constant"
    warmup_steps: int = 0
    grad_clip: float = 0.0
    value_weight: float = 1.0
    unroll: int = 1

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
    run's search at full strength (`agent_simulations` simulations) against each opponent
    spec (an agent spec as in `gomoku-jax arena`, or "previous": the network of the
    evaluation before)."""

    every: int = 10
    games: int = 64
    agent_simulations: int = 64
    opponents: tuple[str, ...] = ("random", "pure_mcts:num_simulations=200", "previous")

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

    game: GameSpec = games.spec_class("gomoku")(observation="canonical")
    net: NetConfig = NetConfig()
    search: SearchAlgorithm = PUCT()
    selfplay: SelfPlaySection = SelfPlaySection()
    replay: ReplaySection = ReplaySection()
    optim: OptimSection = OptimSection()
    eval: EvalSection = EvalSection()
    run: RunSection = RunSection()

    def __post_init__(self):
        if self.selfplay.bootstrap_iterations:
            self.selfplay.check_game(self.env())

    def env(self) -> Env:
        """The run's game."""
        return games.from_spec(self.game)

    def to_dict(self) -> dict:
        return configs.to_dict(self, KINDS)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TrainConfig":
        """The config a `to_dict` made; unknown sections or fields are a ValueError."""
        return configs.from_dict(cls, data, "config", KINDS)


def valid_keys(config: Any = TrainConfig()) -> list[str]:
    """Every settable `section.field` of this config, or of any config of sections with
    `to_dict` such as GMO's (the polymorphic sections' kind keys included)."""
    data = config.to_dict()
    return [f"{s}.{f}" for s, section in data.items() for f in section]


# What a finished or killed run may change when it is resumed (`resumable_changes`): the
# length of the run, its checkpointing and devices, and the arena (the rest would make the
# resumed run a different one).
RESUMABLE = ("run.iterations", "run.checkpoint_every", "run.keep_checkpoints", "run.devices",
             "eval.*")


def override(config: Any, assignments: Iterable[str]) -> Any:
    """`config` (a `TrainConfig`, or any config of sections such as GMO's) with
    `section.field=value` assignments applied (tuples: `a;b;c`).

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
