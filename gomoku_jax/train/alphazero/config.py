"""The AlphaZero run's configuration (`gomoku-jax train`, algorithm "alphazero").

An `AlphaZeroConfig` has one section per part of the loop: game, net, search, selfplay,
replay, optim, eval, run. Two sections are plug-ins chosen by name: `game` (`game.id`:
"gomoku", "fauxgo", or "pgx" with `game.env_id`) and `search` (`search.algorithm`: "puct",
"gumbel", "pure_mcts"; switching it keeps the fields the algorithms share). Presets are in
`presets.py`.

Seed 001's numbers are the defaults (AdamW lr 1e-4, batch 1024, replay 10K, 50 SGD steps,
Dirichlet ε 0.2 / α 0.3 adaptive, temperature 0.8 → 0.05 × 0.9 per move). Its schedule,
"train every 200 episodes with 50 gradient steps", is
`selfplay.games=200, selfplay.moves=225, selfplay.carry_games=false, optim.sgd_steps=50`
on 15×15: each iteration then plays 200 fresh games to their end (a 15×15 game lasts at
most 225 moves) before its 50 steps.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from gomoku_jax.agents import evaluator_registry as evaluators
from gomoku_jax.configs import NonNegativeFloat, NonNegativeInt, PositiveInt, UnitFloat
from gomoku_jax.games.protocol import Env
from gomoku_jax.nets.resnet import NetConfig
from gomoku_jax.search.base import SearchAlgorithm
from gomoku_jax.search.puct import PUCT
from gomoku_jax.train import config as shared


@dataclasses.dataclass(frozen=True)
class SelfPlaySection(shared.Section):
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
      bootstrap_evaluator: an evaluator name of `agents.evaluator_registry.EVALUATORS` (or "auto",
        the game's preferred one) that evaluates the run's game; not "network".
    """

    games: PositiveInt = 128
    moves: PositiveInt = 64
    num_simulations: PositiveInt = 64
    carry_games: bool = True
    bootstrap_iterations: NonNegativeInt = 0
    bootstrap_evaluator: str = "heuristic"

    name: ClassVar[str] = "selfplay"

    def __post_init__(self):
        super().__post_init__()
        allowed = sorted(set(evaluators.names()) - {evaluators.NETWORK})
        if self.bootstrap_evaluator not in allowed:
            raise ValueError(f"selfplay.bootstrap_evaluator must be one of {allowed} (the "
                             f"network plays after the bootstrap), got "
                             f"{self.bootstrap_evaluator!r}")

    def check_game(self, env: Env) -> None:
        """ValueError when bootstrapping with an evaluator that cannot evaluate `env`."""
        if self.bootstrap_iterations:
            try:
                evaluators.check(self.bootstrap_evaluator, (), env=env)
            except ValueError as e:
                raise ValueError(f"selfplay.bootstrap_evaluator={self.bootstrap_evaluator!r} "
                                 f"does not fit game {env.id!r}: {e}") from None


@dataclasses.dataclass(frozen=True)
class ReplaySection(shared.ReplaySection):
    """The shared replay section, and `synthetic_fraction`: that fraction of every training
    batch is replaced by fresh examples the game generates (`env.synthetic_examples`;
    Gomoku: seed 000's complete-five / block-four tactical examples)."""

    synthetic_fraction: UnitFloat = 0.0


@dataclasses.dataclass(frozen=True)
class OptimSection(shared.OptimSection):
    """The shared optimiser section on policy cross-entropy + `value_weight` × value MSE."""

    value_weight: NonNegativeFloat = 1.0


@dataclasses.dataclass(frozen=True)
class EvalSection(shared.EvalSection):
    """The shared arena section; the trained network plays inside the run's search with
    `agent_simulations` simulations."""

    agent_simulations: PositiveInt = 64


@dataclasses.dataclass(frozen=True)
class AlphaZeroConfig(shared.TrainingConfig):
    """Everything an AlphaZero run needs (`game` and `run` are the base's).

    The network (`net`) plays inside the search algorithm (`search`) in self-play
    (`selfplay`); the positions go to the replay buffer (`replay`), the optimiser (`optim`)
    trains the network on them, and the arena (`eval`) measures it.
    """

    net: NetConfig = NetConfig()
    search: SearchAlgorithm = PUCT()
    selfplay: SelfPlaySection = SelfPlaySection()
    replay: ReplaySection = ReplaySection()
    optim: OptimSection = OptimSection()
    eval: EvalSection = EvalSection()

    algo: ClassVar[str] = "alphazero"
    player: ClassVar[str] = "policy_value"
    network_sections: ClassVar[tuple[str, ...]] = ("net",)

    def __post_init__(self):
        if self.selfplay.bootstrap_iterations:
            self.selfplay.check_game(self.env())
