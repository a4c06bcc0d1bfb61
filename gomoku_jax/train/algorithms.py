"""Training algorithms by name: one line per algorithm, name -> its config class (a
`TrainingConfig`: its presets, its trainer and the kind of network it trains).

    config = algorithm("gmo").preset("gmo_quick")
    config = preset("quick")                     # any algorithm's preset, by its name
    config = load_config("runs/quick")           # the config a run directory holds

Adding an algorithm is one subpackage (a config class, presets, a trainer; see `gmo/`, the
worked example in docs/training.md) and one line in `ALGORITHMS`.
"""

from __future__ import annotations

import pathlib
from typing import Optional

from gomoku_jax.players import run_dir as rd
from gomoku_jax.train.alphazero.config import AlphaZeroConfig
from gomoku_jax.train.config import TrainingConfig
from gomoku_jax.train.gmo.config import GMOTrainConfig

# One line per training algorithm: name -> its config class.
ALGORITHMS: dict[str, type[TrainingConfig]] = {
    AlphaZeroConfig.algo: AlphaZeroConfig,
    GMOTrainConfig.algo: GMOTrainConfig,
}
DEFAULT_ALGORITHM = AlphaZeroConfig.algo


def algorithm(name: str) -> type[TrainingConfig]:
    """The config class of a training algorithm; ValueError listing the known names."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown training algorithm {name!r}; available: {sorted(ALGORITHMS)}")
    return ALGORITHMS[name]


def preset_owner(name: str) -> Optional[str]:
    """The algorithm whose preset `name` is, or None."""
    return next((algo for algo, cls in ALGORITHMS.items() if name in cls.presets()), None)


def presets() -> dict[str, str]:
    """{preset name: its algorithm} over every algorithm."""
    return {name: algo for algo, cls in ALGORITHMS.items() for name in cls.presets()}


def preset(name: str) -> TrainingConfig:
    """Any algorithm's preset by its name; ValueError listing every preset."""
    owner = preset_owner(name)
    if owner is None:
        raise ValueError(f"unknown preset {name!r}; available: {sorted(presets())}")
    return ALGORITHMS[owner].preset(name)


def load_config(run_dir: str | pathlib.Path, expected: Optional[type] = None
                ) -> TrainingConfig:
    """The config saved in `run_dir`, of the algorithm its config.json names.

    Args:
      expected: a config class the run must be of (ValueError otherwise).
    Raises:
      ValueError: no config.json, one that is not valid JSON or not a valid config of its
        algorithm, an unknown algorithm, or a run of another algorithm than `expected`.
    """
    data = rd.config_data(pathlib.Path(run_dir))
    algo, _ = rd.tags(data)
    cls = algorithm(algo)
    if expected is not None and cls is not expected:
        raise ValueError(f"{run_dir} holds a run of --algo {algo}, not {expected.algo}")
    try:
        return cls.from_dict(data)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{pathlib.Path(run_dir) / rd.CONFIG_FILE}: not a valid {algo} run "
                         f"config: {e}") from None
