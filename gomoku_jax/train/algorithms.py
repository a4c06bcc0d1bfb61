"""Training algorithms by name: one line per algorithm, its trainer class, which names its
config class (`Config`, a `TrainingConfig`: the sections, the algorithm's name
`algo` and the kind of network it trains), its `PRESETS`, its `default_preset` and
`test_preset` (tiny, for the tests), as `games.GAMES` maps a game id to its env
class and its `Spec`.

    config = preset("gmo_quick")                 # any algorithm's preset, by its name
    config = load_config("runs/quick")           # the config a run directory holds
    config = ALGORITHMS.make("gmo", **{"run.iterations": "4"})   # as every plug-in kind
    trainer = TRAINERS[config.algo](config)      # (`trainer.trainer_for` caches it)

Adding an algorithm is one subpackage (a config class, presets, a trainer; `gmo/` is the
worked example in docs/training.md) and one line in `TRAINERS`.
"""

from __future__ import annotations

import pathlib
from typing import Any, Optional

from gomoku_jax.players import run_dir as rd
from gomoku_jax.players.run_dir import KINDS
from gomoku_jax.registry import Registry
from gomoku_jax.train.alphazero.trainer import AlphaZero
from gomoku_jax.train.config import TrainingConfig
from gomoku_jax.train.gmo.trainer import GMOTrainer

# One line per training algorithm: its trainer class (which names its config class).
TRAINERS: dict[str, Any] = {cls.Config.algo: cls for cls in (
    AlphaZero,
    GMOTrainer,
)}
# The algorithms as every kind of plug-in registers: name -> config class.
ALGORITHMS = Registry("training algorithm", {name: cls.Config for name, cls in TRAINERS.items()},
                      KINDS)
DEFAULT_ALGORITHM = AlphaZero.Config.algo


def algorithm(name: str) -> Any:
    """The trainer class of a training algorithm; ValueError listing the known names."""
    ALGORITHMS[name]  # ValueError listing the names
    return TRAINERS[name]


def presets() -> dict[str, str]:
    """{preset name: its algorithm} over every algorithm."""
    return {name: algo for algo, cls in TRAINERS.items() for name in cls.PRESETS}


def preset(name: str, algo: Optional[str] = None) -> TrainingConfig:
    """A preset by its name (of `algo`, or of whichever algorithm has it); ValueError listing
    the presets."""
    owners = presets()
    if name not in owners or (algo is not None and owners[name] != algo):
        valid = sorted(p for p, a in owners.items() if algo is None or a == algo)
        where = f" of training algorithm {algo!r}" if algo is not None else ""
        raise ValueError(f"unknown preset {name!r}{where}; available: {valid}")
    return TRAINERS[owners[name]].PRESETS[name]


def load_config(run_dir: str | pathlib.Path, expected: Any = None
                ) -> TrainingConfig:
    """The config saved in `run_dir`, of the algorithm its config.json names.

    Args:
      expected: the algorithm (a name or its config class) the run must be of.
    Raises:
      ValueError: no config.json, one that is not valid JSON or not a valid config of its
        algorithm, an unknown algorithm, or a run of another algorithm than `expected`.
    """
    if isinstance(expected, type):  # a config class names its algorithm
        expected = expected.algo
    data = rd.config_data(pathlib.Path(run_dir))
    algo, _ = rd.tags(data)
    cls = algorithm(algo)
    if expected is not None and algo != expected:
        raise ValueError(f"{run_dir} holds a run of --algo {algo}, not {expected}")
    try:
        return cls.Config.from_dict(data)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{pathlib.Path(run_dir) / rd.CONFIG_FILE}: not a valid {algo} run "
                         f"config: {e}") from None
