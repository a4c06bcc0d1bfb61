"""Training algorithms by name: `ALGORITHMS` maps each algorithm's name to its trainer class,
which names its config class (`Config`, a `TrainingConfig`: the sections, the algorithm's
name `algo`, the kind of network it trains), its `default_preset` and its `test_preset`
(tiny, for the tests); the presets themselves are `train.config.PRESETS` (name -> config,
any algorithm's). As every kind of plug-in, an algorithm registers with one call, under its
config's `algo`:

    config = preset("gmo_quick")                 # any algorithm's preset, by its name
    config = load_config("runs/quick")           # the config a run directory holds
    config = ALGORITHMS.make("gmo", **{"run.iterations": "4"})   # its config, as every kind
    trainer = ALGORITHMS[config.algo](config)    # (`trainer.trainer_for` caches it)

Adding an algorithm is one subpackage (a config class, presets, a trainer; `gmo/` is the
worked example in docs/training.md) and one registration, `ALGORITHMS.register(Trainer)`
(from outside the package: `gomoku_jax.plugins.register("training algorithm")`,
docs/plugins.md).
"""

from __future__ import annotations

import pathlib
from typing import Any, Optional

from gomoku_jax import plugin_loading
from gomoku_jax.players import run_dir as rd
from gomoku_jax.players.run_dir import KINDS
from gomoku_jax.registry import Registry
from gomoku_jax.train.alphazero.trainer import AlphaZero
from gomoku_jax.train.config import PRESETS, TrainingConfig
from gomoku_jax.train.gmo.trainer import GMOTrainer
from gomoku_jax.train.muzero.trainer import MuZero


def _config_of(trainer: Any) -> Any:
    """A trainer class's config class (`Config`; ValueError for one without)."""
    config = getattr(trainer, "Config", None)
    if not (isinstance(config, type) and issubclass(config, TrainingConfig)):
        raise ValueError(f"a training algorithm is a trainer class whose `Config` is a "
                         f"TrainingConfig subclass, got {trainer!r}")
    return config


def _name_of(trainer: Any) -> Optional[str]:
    return getattr(_config_of(trainer), "algo", None)


def _check_trainer(trainer: Any) -> None:
    """ValueError for a trainer class that lacks what the run driver needs."""
    config = _config_of(trainer)
    missing = [a for a in ("algo", "player") if not isinstance(getattr(config, a, None), str)]
    missing += [a for a in ("default_preset", "test_preset", "init", "iteration",
                            "abstract_state") if not hasattr(trainer, a)]
    if missing:
        raise ValueError(f"training algorithm {trainer!r} lacks {missing} (see "
                         f"gomoku_jax.train.trainer.Trainer and TrainingConfig)")


# name (its config's `algo`) -> its trainer class.
ALGORITHMS = Registry("training algorithm", kinds=KINDS, config_of=_config_of,
                      name_of=_name_of, check=_check_trainer)
ALGORITHMS.register(AlphaZero)
ALGORITHMS.register(GMOTrainer)
ALGORITHMS.register(MuZero)
DEFAULT_ALGORITHM = AlphaZero.Config.algo


def algorithm(name: str) -> Any:
    """The trainer class of a training algorithm; ValueError listing the known names."""
    return ALGORITHMS[name]


def presets() -> dict[str, str]:
    """{preset name: its algorithm} over every registered preset."""
    return {name: PRESETS[name].algo for name in PRESETS.names()}


def presets_of(algo: str) -> dict[str, TrainingConfig]:
    """{preset name: config} of training algorithm `algo`'s presets."""
    return {name: PRESETS[name] for name in PRESETS.names() if PRESETS[name].algo == algo}


def preset(name: str, algo: Optional[str] = None) -> TrainingConfig:
    """A preset by its name (of `algo`, or of whichever algorithm has it); ValueError listing
    the presets."""
    owners = presets()
    if name not in owners or (algo is not None and owners[name] != algo):
        valid = sorted(p for p, a in owners.items() if algo is None or a == algo)
        where = f" of training algorithm {algo!r}" if algo is not None else ""
        raise ValueError(f"unknown preset {name!r}{where}; available: {valid}"
                         f"{plugin_loading.failure_note()}")
    return PRESETS[name]


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
