"""The GMO run's configuration (`gomoku-jax train --algo gmo`): sections, `--set`, JSON,
presets.

A `GMOTrainConfig` has one section per part of the run: `game` (any game, by `game.id`, as
in AlphaZero's config), `gmo` (the networks' sizes and the agent's search knobs:
`nets.gmo.GMOConfig`, seed 002's defaults), `data` (who plays the games the positions come
from, or which AlphaZero run's replay they are taken from: `data.replay_run`), `replay`,
`optim`, `eval` and `run`. Every field is settable as `section.field=value` and the config
is written beside the run as `config.json`, tagged `"algo": "gmo"` so that the programs
reading a run directory know which kind of run it holds (`run_algo`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import pathlib
from typing import Any, Mapping, Optional

from gomoku_jax import configs, games
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.nets.gmo import GMOConfig
from gomoku_jax.train.config import (KINDS, RESUMABLE, override, resumable_changes,
                                     valid_keys)

ALGO = "gmo"
ALGO_KEY = "algo"
SELF = "self"  # data.agent: the GMO agent being trained plays the games
SCHEDULES = ("constant", "cosine", "warmup_cosine")


def _int(name: str, value: Any, low: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


def _number(name: str, value: Any, low: float = 0.0, high: float = math.inf) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or not low <= value <= high:
        bounds = f">= {low}" if high == math.inf else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be a finite number {bounds}, got {value!r}")


@dataclasses.dataclass(frozen=True)
class DataSection:
    """Where the positions come from: `games` games per iteration played to their end by
    `agent` on both sides (an agent spec as in `gomoku-jax arena`, or "self": the GMO agent
    being trained, with its current params), a uniformly random legal move instead of the
    agent's for the first `random_plies` plies of every game and with probability `epsilon`
    after that.

    Or, with `replay_run` (a path to an AlphaZero run directory, its checkpoints/ or one
    step's directory; "" = games as above): the positions of that run's replay buffer at
    its latest checkpoint (or the step named), each with the move its self-play played from
    it and its game's outcome for the mover, put in the buffer once when the run starts;
    the iterations then only train (the other `data` fields are unused). The run's game
    must be this config's `game`. The path is read only then: resuming does not need it.
    """

    agent: str = "mcts"
    games: int = 64
    random_plies: int = 2
    epsilon: float = 0.1
    replay_run: str = ""

    def __post_init__(self):
        if not isinstance(self.replay_run, str):
            raise ValueError(f"data.replay_run must be a path (a string), got "
                             f"{self.replay_run!r}")
        _int("data.games", self.games)
        _int("data.random_plies", self.random_plies, 0)
        _number("data.epsilon", self.epsilon, 0.0, 1.0)
        if self.agent != SELF:
            try:
                make_agent(self.agent)
            except ValueError as e:
                raise ValueError(f"data.agent: {e}") from None


@dataclasses.dataclass(frozen=True)
class GMOReplaySection:
    """FIFO buffer of `capacity` positions; no SGD step before it holds `min_size`."""

    capacity: int = 50_000
    min_size: int = 1

    def __post_init__(self):
        _int("replay.capacity", self.capacity)
        _int("replay.min_size", self.min_size)


@dataclasses.dataclass(frozen=True)
class GMOOptimSection:
    """AdamW on the value's heteroscedastic Gaussian NLL, 0.5 (s + (z - v)² e^-s), with the
    log-variance s clamped to [log_var_min, log_var_max].

    Attributes:
      learning_rate, weight_decay: AdamW's; schedule: "constant", "cosine" or
        "warmup_cosine" (with `warmup_steps`) over the run's iterations × sgd_steps.
      batch_size: samples per SGD step; sgd_steps: steps per iteration (one `lax.scan`,
        unrolled `unroll` steps at a time).
      grad_clip: global-norm clipping threshold, 0 = off.
      augment: a random element of the game's symmetry group per sample (state and move
        together).
      log_var_min, log_var_max: the clamp of the log-variance. The lower bound keeps the
        NLL's 1/σ² weight of the squared error at most e^3 ≈ 20: with -6 (e^6 ≈ 400), on
        gmo_quick's data and lr 1e-3, the training NLL climbed from 0.31 to 1.5 in 3000
        steps as a few over-confident samples dominated the gradient; with -3 it fell to
        0.14 (held-out squared error the same, ~0.71, in both).
    """

    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    batch_size: int = 256
    sgd_steps: int = 16
    schedule: str = "constant"
    warmup_steps: int = 0
    grad_clip: float = 1.0
    log_var_min: float = -3.0
    log_var_max: float = 4.0
    augment: bool = True
    unroll: int = 1

    def __post_init__(self):
        if self.schedule not in SCHEDULES:
            raise ValueError(f"optim.schedule must be one of {SCHEDULES}, got "
                             f"{self.schedule!r}")
        for name in ("batch_size", "sgd_steps", "unroll"):
            _int(f"optim.{name}", getattr(self, name))
        _int("optim.warmup_steps", self.warmup_steps, 0)
        for name in ("learning_rate", "weight_decay", "grad_clip"):
            _number(f"optim.{name}", getattr(self, name))
        for name in ("log_var_min", "log_var_max"):
            _number(f"optim.{name}", getattr(self, name), -math.inf)
        if not self.log_var_min < self.log_var_max:
            raise ValueError(f"optim.log_var_min must be < optim.log_var_max, got "
                             f"{self.log_var_min} and {self.log_var_max}")


@dataclasses.dataclass(frozen=True)
class GMOEvalSection:
    """The arena every `every` iterations (0: only at the end) and at the end: the trained
    GMO agent (the `gmo` section's knobs) against each opponent spec ("previous": the GMO
    agent with the params of the evaluation before), `games` games each."""

    every: int = 0
    games: int = 64
    opponents: tuple[str, ...] = ("random", "heuristic", "mcts")

    def __post_init__(self):
        _int("eval.every", self.every, 0)
        _int("eval.games", self.games)
        if isinstance(self.opponents, str):
            object.__setattr__(self, "opponents", tuple(
                s for s in self.opponents.split(";") if s))


@dataclasses.dataclass(frozen=True)
class GMORunSection:
    """`iterations` iterations from `seed`; checkpoints every `checkpoint_every` iterations
    and at the end, the last `keep_checkpoints` kept."""

    iterations: int = 100
    seed: int = 0
    checkpoint_every: int = 10
    keep_checkpoints: int = 3

    def __post_init__(self):
        for name in ("iterations", "checkpoint_every", "keep_checkpoints"):
            _int(f"run.{name}", getattr(self, name))
        _int("run.seed", self.seed, 0)


@dataclasses.dataclass(frozen=True)
class GMOTrainConfig:
    """Everything a GMO run needs; static (hashable), so it can key compiled code."""

    game: GameSpec = games.spec_class("gomoku")(observation="canonical")
    gmo: GMOConfig = GMOConfig()
    data: DataSection = DataSection()
    replay: GMOReplaySection = GMOReplaySection()
    optim: GMOOptimSection = GMOOptimSection()
    eval: GMOEvalSection = GMOEvalSection()
    run: GMORunSection = GMORunSection()

    algo = ALGO

    def env(self) -> Env:
        return games.from_spec(self.game)

    def to_dict(self) -> dict:
        """{section: {field: value}} (JSON data; `to_json` adds the algo tag)."""
        return configs.to_dict(self, KINDS)

    def to_json(self) -> str:
        return json.dumps({ALGO_KEY: ALGO, **self.to_dict()}, indent=1)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "GMOTrainConfig":
        """The config `to_dict` (or `to_json`'s data) made; ValueError for unknown keys."""
        if not isinstance(data, Mapping):
            raise ValueError(f"config must be a mapping, got {data!r}")
        data = dict(data)
        algo = data.pop(ALGO_KEY, ALGO)
        if algo != ALGO:
            raise ValueError(f"config is a {algo!r} run's, not a {ALGO!r} run's")
        return configs.from_dict(cls, data, "config", KINDS)


def read_config_data(run_dir: pathlib.Path) -> Optional[dict]:
    """The JSON data of `run_dir`'s config.json, or None when there is none; ValueError
    for one that is not JSON."""
    path = pathlib.Path(run_dir) / "config.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a valid run config: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a valid run config: {data!r}")
    return data


def run_algo(run_dir: pathlib.Path) -> Optional[str]:
    """"gmo" or "alphazero" for the run in `run_dir`, None when it holds no config.json."""
    data = read_config_data(run_dir)
    return None if data is None else str(data.get(ALGO_KEY, "alphazero"))


def load_config(run_dir: pathlib.Path) -> GMOTrainConfig:
    """The GMOTrainConfig saved in `run_dir`; ValueError if missing, unreadable or another
    algorithm's."""
    data = read_config_data(run_dir)
    if data is None:
        raise ValueError(f"{run_dir} is not a run directory: no config.json in it")
    if data.get(ALGO_KEY) != ALGO:
        raise ValueError(f"{run_dir} holds a run of --algo {data.get(ALGO_KEY, 'alphazero')}, "
                         f"not a GMO run")
    try:
        return GMOTrainConfig.from_dict(data)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{pathlib.Path(run_dir) / 'config.json'}: not a valid GMO run "
                         f"config: {e}") from None


def _gomoku(**kw) -> GameSpec:
    return games.spec_class("gomoku")(**kw)


# A 2-core CPU in minutes: 9×9 four in a row (as AlphaZero's quick preset) with the
# heuristics' pattern plane in the observation, seed 002's network sizes, positions from
# 16-simulation PUCT with the heuristic evaluator, the arena at the end.
_GMO_QUICK = GMOTrainConfig(
    game=_gomoku(board_size=9, win_length=4, observation="canonical",
                 feature_plane="patterns"),
    data=DataSection(agent="mcts:num_simulations=16", games=128, random_plies=2, epsilon=0.1),
    replay=GMOReplaySection(capacity=50_000, min_size=512),
    optim=GMOOptimSection(learning_rate=1e-3, batch_size=256, sgd_steps=32),
    eval=GMOEvalSection(every=0, games=64,
                        opponents=("random", "heuristic", "mcts:num_simulations=64")),
    run=GMORunSection(iterations=60, checkpoint_every=10))

PRESETS: dict[str, GMOTrainConfig] = {
    "gmo_quick": _GMO_QUICK,
    # Faux Go 9×9 on a CPU: positions from 16-simulation pure MCTS (random playouts; 32
    # games of ~130 plies take ~18 s on 2 cores), Faux Go's opponents.
    "gmo_fauxgo": dataclasses.replace(
        _GMO_QUICK, game=games.spec_class("fauxgo")(board_size=9),
        data=DataSection(agent="pure_mcts:num_simulations=16", games=32, random_plies=2,
                         epsilon=0.1),
        eval=GMOEvalSection(every=0, games=32, opponents=(
            "random", "fauxgo_heuristic", "pure_mcts:num_simulations=64")),
        run=GMORunSection(iterations=20, checkpoint_every=5)),
    # 15×15 freestyle on a GPU: 64-simulation PUCT games, 512 at a time.
    "gmo_gpu": GMOTrainConfig(
        game=_gomoku(board_size=15, win_length=5, observation="canonical",
                     feature_plane="patterns"),
        data=DataSection(agent="mcts:num_simulations=64", games=512, random_plies=4,
                         epsilon=0.1),
        replay=GMOReplaySection(capacity=500_000, min_size=20_000),
        optim=GMOOptimSection(learning_rate=1e-3, batch_size=1024, sgd_steps=64,
                              schedule="warmup_cosine", warmup_steps=500),
        eval=GMOEvalSection(every=50, games=64,
                            opponents=("random", "heuristic", "mcts", "previous")),
        run=GMORunSection(iterations=1000, checkpoint_every=25)),
    # Tests: 7×7 four in a row, a tiny GMO, random players' games.
    "gmo_test": GMOTrainConfig(
        game=_gomoku(board_size=7, win_length=4, observation="canonical"),
        gmo=GMOConfig(state_dim=16, move_dim=16, hidden_dim=32, part_dim=8, top_k=2,
                      optim_steps=2, mc_samples=2, novelty_memory_size=8),
        data=DataSection(agent="random", games=8, random_plies=0, epsilon=0.0),
        replay=GMOReplaySection(capacity=512, min_size=8),
        optim=GMOOptimSection(learning_rate=1e-3, batch_size=16, sgd_steps=2),
        eval=GMOEvalSection(every=0, games=8, opponents=("random", "previous")),
        run=GMORunSection(iterations=2, checkpoint_every=1)),
}


def preset(name: str) -> GMOTrainConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown GMO preset {name!r}; available: {sorted(PRESETS)}")
    return PRESETS[name]


__all__ = ["DataSection", "GMOEvalSection", "GMOOptimSection", "GMOReplaySection",
           "GMORunSection", "GMOTrainConfig", "PRESETS", "RESUMABLE", "load_config",
           "override", "preset", "resumable_changes", "run_algo", "valid_keys"]
