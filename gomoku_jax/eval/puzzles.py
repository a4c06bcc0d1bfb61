"""Solve rates: an agent's moves on puzzles (positions with every correct move), for any game.

A puzzle is `(id, category, state, solutions)`: a single env state with the side to move to
play, and the actions that solve it. Gomoku's tactical suite
(`games.gomoku.tactics_suite.Suite.puzzles_for_eval()`) is one source of them.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Collection, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

Puzzle = tuple[str, str, Any, Collection[int]]


@dataclasses.dataclass(frozen=True)
class SolveResult:
    """Per-category (solved, total), each puzzle's chosen action, and timing."""

    solved: dict[str, tuple[int, int]]
    actions: dict[str, int]
    seconds_per_move: float  # wall time of one single-position move (median), compiled
    batch_seconds_per_move: float  # wall time per position in the batched run

    @property
    def total(self) -> tuple[int, int]:
        return (sum(s for s, _ in self.solved.values()), sum(t for _, t in self.solved.values()))

    @property
    def rate(self) -> float:
        solved, total = self.total
        return solved / max(total, 1)


def _stack(states: Sequence[Any]) -> Any:
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def solve_rates(env, agent, puzzles: Sequence[Puzzle], key: jax.Array, params: Any = None,
                batch_size: int = 50, latency_samples: int = 5,
                on_puzzles: Optional[Callable[[int], None]] = None) -> SolveResult:
    """Score `agent` (bound to `env` here) on every puzzle: its move counts if it is among
    the puzzle's solutions.

    Puzzles run in batches of `batch_size` (padded to a fixed shape so one compile serves
    all); then `latency_samples` puzzles are replayed one at a time for the per-move time.
    Categories are reported in the order they first appear. `on_puzzles(n)`, if given,
    hears each batch's n puzzles as they are played (for a progress bar; len(puzzles) in
    all).
    """
    if not puzzles:
        raise ValueError("no puzzles to solve")
    agent = agent.bind(env)
    act = jax.jit(agent.act_batch)
    actions: dict[str, int] = {}

    def run(index: int, chunk: Sequence[Puzzle]) -> np.ndarray:
        padded = list(chunk) + [chunk[-1]] * (batch_size - len(chunk))
        keys = jax.random.split(jax.random.fold_in(key, index), batch_size)
        batch = _stack([state for _, _, state, _ in padded])
        return np.asarray(act(params, jax.vmap(agent.init)(keys), batch, keys)[0])

    chunks = [puzzles[i:i + batch_size] for i in range(0, len(puzzles), batch_size)]
    run(0, chunks[0])  # compile
    start = time.perf_counter()
    for index, chunk in enumerate(chunks):
        for (puzzle_id, _, _, _), move in zip(chunk, run(index, chunk)):
            actions[puzzle_id] = int(move)
        if on_puzzles is not None:
            on_puzzles(len(chunk))
    batch_time = (time.perf_counter() - start) / len(puzzles)

    times = []
    for i, (_, _, state, _) in enumerate(puzzles[:latency_samples + 1] if latency_samples
                                         else []):
        k = jax.random.split(jax.random.fold_in(key, 10_000 + i), 1)
        t0 = time.perf_counter()
        jax.block_until_ready(act(params, jax.vmap(agent.init)(k), _stack([state]), k))
        if i:  # the first call compiles
            times.append(time.perf_counter() - t0)
    solved: dict[str, tuple[int, int]] = {}
    for puzzle_id, category, _, solutions in puzzles:
        hits, total = solved.get(category, (0, 0))
        solved[category] = (hits + (actions[puzzle_id] in solutions), total + 1)
    return SolveResult(solved, actions, float(np.median(times)) if times else float("nan"),
                       batch_time)
