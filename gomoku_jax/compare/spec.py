"""What a training comparison is: arms, seeds, a budget and how checkpoints are rated.

    spec = Comparison(preset="quick", arms=(parse_arm("puct-n2: search.algorithm=puct "
                                                      "selfplay.num_simulations=2"), ...),
                      seeds=(0, 1, 2), budget=Budget("iterations", 20, points=4),
                      references=("random", "heuristic", "mcts:num_simulations=32"),
                      eval_agent="mcts:evaluator=network,num_simulations=32,threat_search=0")
    config = spec.config(spec.arms[0], seed=1)    # an ordinary training config

An arm is a name and a list of `--set` overrides of the base preset: any key of any
training algorithm's config, so the comparison knows nothing about what an arm changes. An
arm may start from a preset of its own (`preset=NAME` among its overrides), of any training
algorithm, on the same game: `--arm "muzero: preset=muzero_quick"` against AlphaZero's.
The comparison owns `run.seed`, `run.iterations`, the checkpoint schedule and the training
arena (off: checkpoints are rated by the comparison instead); an arm may not set them.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Optional

from gomoku_jax import configs, games
from gomoku_jax.train import algorithms
from gomoku_jax.train.config import override

BUDGET_KINDS = ("iterations", "seconds")
# The keys the comparison sets on every run (an arm that set them would break equal budgets).
OWNED_KEYS = ("run.seed", "run.iterations", "run.checkpoint_every", "run.keep_checkpoints")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


def default_references(game_id: str) -> tuple[str, ...]:
    """The reference pool of game `game_id`: weak, middling and strong fixed agents (the
    first rated 0), its spec's `references` (by default random and pure MCTS)."""
    return tuple(games.spec_class(game_id).references)


def default_ladder(game_id: str) -> tuple[str, ...]:
    """The candidate rungs of game `game_id`'s reference ladder, weakest first (the first
    rated 0): its spec's `ladder` (`compare.ladder` chooses the rungs from them)."""
    return tuple(games.spec_class(game_id).ladder)


@dataclasses.dataclass(frozen=True)
class Arm:
    """One arm: a `name` (letters, digits, `_.+-`: it names run directories), the
    `overrides` (`section.field=value`) it applies to the base config, and the `preset` it
    starts from (any algorithm's; None: the comparison's)."""

    name: str
    overrides: tuple[str, ...] = ()
    preset: Optional[str] = None

    def __post_init__(self):
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"arm name {self.name!r}: use letters, digits and _ . + - "
                             f"(it names a directory)")
        for item in self.overrides:
            key = item.partition("=")[0].strip()
            if key in OWNED_KEYS or key.startswith("eval."):
                raise ValueError(f"arm {self.name}: {key} is set by the comparison (the "
                                 f"budget, the seeds and the rating); leave it out")
        if self.preset is not None:
            algorithms.preset(self.preset)  # ValueError listing the presets

    def to_dict(self) -> dict:
        out = {"name": self.name, "overrides": list(self.overrides)}
        return out if self.preset is None else {**out, "preset": self.preset}


def parse_arm(text: str) -> Arm:
    """'name: key=value key=value' (the overrides separated by spaces; none: the base
    config; `preset=NAME` the arm's own preset) -> Arm; ValueError on a malformed one."""
    name, sep, rest = text.partition(":")
    if not sep:
        raise ValueError(f"an arm is 'name: key=value ...', got {text!r}")
    overrides = tuple(rest.split())
    bad = [o for o in overrides if "=" not in o]
    if bad:
        raise ValueError(f"arm {name.strip()!r}: {bad[0]!r} is not a key=value override")
    presets = [o.partition("=")[2] for o in overrides if o.partition("=")[0] == "preset"]
    if len(presets) > 1:
        raise ValueError(f"arm {name.strip()!r}: preset= is given twice")
    overrides = tuple(o for o in overrides if o.partition("=")[0] != "preset")
    return Arm(name.strip(), overrides, presets[0] if presets else None)


@dataclasses.dataclass(frozen=True)
class Budget:
    """Every run's budget: `amount` iterations or seconds of training (`kind`), rated at
    `points` equally spaced points, the last at the full budget.

    Seconds count training only (the iterations' own wall time, see `runner.clock`), not
    checkpoints or rating, so a run's budget is the same whatever else the machine did
    between its segments."""

    kind: str
    amount: float
    points: int = 5

    def __post_init__(self):
        if self.kind not in BUDGET_KINDS:
            raise ValueError(f"budget kind must be one of {BUDGET_KINDS}, got {self.kind!r}")
        configs.check_int("points", self.points, 1)
        if not (isinstance(self.amount, (int, float)) and math.isfinite(self.amount)
                and self.amount > 0):
            raise ValueError(f"the budget must be a positive number, got {self.amount!r}")
        if self.kind == "iterations":
            configs.check_int("the iteration budget", self.amount, 1)
            if self.amount < self.points:
                raise ValueError(f"{self.amount} iterations can't be rated at {self.points} "
                                 f"points: give at least one iteration per point")

    def targets(self) -> tuple[float, ...]:
        """Where each point lies: iterations (ints, the last = `amount`) or seconds."""
        if self.kind == "iterations":
            return tuple(round(self.amount * k / self.points) for k in range(1, self.points + 1))
        return tuple(self.amount * k / self.points for k in range(1, self.points + 1))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """A comparison: every arm trained from `preset` (of `algo`, None: the preset's own;
    or from the arm's own preset) with `base` overrides then the arm's, once per seed,
    under one `budget`; each rated checkpoint plays `eval_agent` (an agent spec that plays
    with the run's network, the same for every arm) against every agent of `references`,
    `games` games each on the game's balanced openings with both colours; the references
    play each other too, and one Elo scale is fitted over everything (`stats`),
    `references[0]` at 0.

    With `ladder`, `references` are the *candidates* of a reference ladder (weakest first,
    the first rated 0): `compare.ladder` calibrates them against each other and rates each
    checkpoint against a chain of them whose neighbours are at most `ladder_gap` Elo apart,
    extended as the checkpoints climb; the last point's checkpoints also play each other.

    `max_iterations`: a seconds budget's `run.iterations` (its schedule's length; default:
    the preset's), which the run stops at if the seconds last that long."""

    preset: str
    arms: tuple[Arm, ...]
    seeds: tuple[int, ...]
    budget: Budget
    references: tuple[str, ...]
    eval_agent: str
    games: int = 32
    algo: Optional[str] = None
    base: tuple[str, ...] = ()
    seed: int = 0
    max_iterations: Optional[int] = None
    ladder: bool = False
    ladder_gap: float = 250.0

    def __post_init__(self):
        if not self.arms:
            raise ValueError("a comparison needs at least one arm")
        names = [a.name for a in self.arms]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"arm {dup[0]!r} is given twice")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be distinct, at least one, got {self.seeds}")
        for s in self.seeds:
            configs.check_int("a seed", s, 0)
        if not self.references:
            raise ValueError("give at least one reference agent")
        if len(set(self.references)) != len(self.references):
            raise ValueError(f"a reference is given twice: {self.references}")
        configs.check_int("games", self.games, 1)
        if self.max_iterations is not None:
            configs.check_int("max_iterations", self.max_iterations, 1)
        if not isinstance(self.ladder, bool):
            raise ValueError(f"ladder must be True or False, got {self.ladder!r}")
        if not (isinstance(self.ladder_gap, (int, float)) and not isinstance(
                self.ladder_gap, bool) and math.isfinite(self.ladder_gap)
                and self.ladder_gap > 0):
            raise ValueError(f"ladder_gap must be a positive number of Elo points, got "
                             f"{self.ladder_gap!r}")
        algorithms.preset(self.preset, self.algo)  # ValueError listing the presets

    def base_config(self) -> Any:
        """The preset with the `base` overrides."""
        return override(algorithms.preset(self.preset, self.algo), self.base)

    def config(self, arm: Arm, seed: int) -> Any:
        """The training config of (arm, seed): the base, the arm's overrides, the seed, the
        budget's length, a checkpoint only where the comparison stops (every rating point),
        all of them kept, and no training arena."""
        base = (self.base_config() if arm.preset is None
                else override(algorithms.preset(arm.preset), self.base))
        config = override(base, arm.overrides)
        if self.budget.kind == "iterations":
            iterations = int(self.budget.amount)
        else:
            iterations = self.max_iterations or config.run.iterations
        # No periodic checkpoints: the driver saves where each segment stops.
        run = dataclasses.replace(config.run, seed=seed, iterations=iterations,
                                  checkpoint_every=iterations,
                                  keep_checkpoints=self.budget.points)
        return dataclasses.replace(config, run=run,
                                   eval=dataclasses.replace(config.eval, every=0, opponents=()))

    def to_dict(self) -> dict:
        """JSON data (`from_dict` reads it back)."""
        out = dataclasses.asdict(self)
        out.update(arms=[a.to_dict() for a in self.arms], seeds=list(self.seeds),
                   budget=self.budget.to_dict(), references=list(self.references),
                   base=list(self.base))
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Comparison":
        data = dict(data)
        data["arms"] = tuple(Arm(a["name"], tuple(a["overrides"]), a.get("preset"))
                             for a in data["arms"])
        data["budget"] = Budget(**data["budget"])
        for key in ("seeds", "references", "base"):
            data[key] = tuple(data[key])
        return cls(**data)
