"""The training loop on the host: iterations, metrics, checkpoints, arena, summary.

    summary = train(config, run_dir)

Each iteration is one compiled call (`AlphaZero.iteration`); between calls the host logs
the metrics (a progress bar, `metrics.jsonl`, TensorBoard when `tensorboardX` is
installed), saves an orbax checkpoint every `run.checkpoint_every` iterations and plays
the arena every `eval.every` iterations and at the end: the network inside a greedy PUCT
search against each opponent in `eval.opponents` ("previous" is the network of the
evaluation before, or of the start of this process for the first one). A run directory
that already has checkpoints is resumed from the latest one, with the metrics written
after it dropped, so a killed run continues as if it had not stopped.
"""

from __future__ import annotations

import json
import pathlib
import time
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.eval.arena import per_opening_colour, run_match
from gomoku_jax.eval.openings import DEFAULT_OPENINGS, opening_states
from gomoku_jax.game.env import Gomoku
from gomoku_jax.train import checkpoint
from gomoku_jax.train.alphazero import AlphaZero
from gomoku_jax.train.config import TrainConfig

METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"
PREVIOUS = "previous"


class _Logger:
    """metrics.jsonl (truncated to `start` iterations on resume) and TensorBoard; writes
    nothing unless `primary` (process 0 of a multi-host run)."""

    def __init__(self, run_dir: pathlib.Path, start: int, primary: bool = True):
        self.path = run_dir / METRICS_FILE
        self.primary = primary
        self.board = None
        if not primary:
            return
        kept = []
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a kill
                if record.get("iteration", 0) <= start:
                    kept.append(line)
        self.path.write_text("".join(line + "\n" for line in kept))
        try:
            from tensorboardX import SummaryWriter

            self.board = SummaryWriter(str(run_dir / "tensorboard"))
        except ImportError:
            pass

    def log(self, record: dict) -> None:
        if not self.primary:
            return
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")
        if self.board is not None:
            step = record["iteration"]
            for k, v in record.items():
                if isinstance(v, (int, float)) and k != "iteration":
                    self.board.add_scalar(k, v, step)

    def close(self) -> None:
        if self.board is not None:
            self.board.close()


def _openings(env: Gomoku):
    """The built-in openings when they fit the board, else the empty board alone."""
    try:
        opening_states(env, DEFAULT_OPENINGS)
        return DEFAULT_OPENINGS
    except ValueError:
        return ((),)


def evaluate(trainer: AlphaZero, variables: Any, previous: Any, key: jax.Array
             ) -> dict[str, dict]:
    """The arena: {opponent spec: {"score", "wins", "draws", "losses", "elo"}}, from the
    trained agent's side."""
    from gomoku_jax.eval.specs import make_agent

    cfg = trainer.config
    env = Gomoku.from_config(trainer.game_config)
    openings = _openings(env)
    g = per_opening_colour(cfg.eval.games, len(openings))
    agent = trainer.agent()
    results = {}
    for i, spec in enumerate(cfg.eval.opponents):
        if spec == PREVIOUS:
            opponent, params_b = agent, previous
        else:
            opponent, params_b = make_agent(spec), None
        r = run_match(env, agent, opponent, jax.random.fold_in(key, i), g, openings,
                      params_a=variables, params_b=params_b)
        results[spec] = {"score": r.score, "wins": r.wins, "draws": r.draws,
                         "losses": r.losses,
                         # None for a 0% or 100% score (an infinite difference; not JSON)
                         "elo": r.elo.diff if np.isfinite(r.elo.diff) else None}
    return results


def _copy(tree: Any) -> Any:
    """A copy that outlives the state: `iteration` donates (frees) its input's buffers."""
    return jax.tree.map(jnp.copy, tree)


def _validate_opponents(config: TrainConfig) -> None:
    from gomoku_jax.eval.specs import make_agent

    for spec in config.eval.opponents:
        if spec != PREVIOUS:
            make_agent(spec)  # ValueError naming the bad spec


def train(config: TrainConfig, run_dir: str | pathlib.Path, *, progress: bool = True,
          stop_after: Optional[int] = None,
          on_iteration: Optional[Callable[[int, dict], None]] = None) -> dict:
    """Run (or resume) `config` in `run_dir`; returns the summary (also `summary.json`).

    Args:
      stop_after: stop once this many iterations are done (in all, counting those of
        earlier sessions), as if killed after its checkpoint; for tests and time limits.
      on_iteration: called with (iteration, metrics) after each iteration.
    Raises:
      ValueError: a run directory made with a different config, or a bad opponent spec.
    """
    t_start = time.perf_counter()
    run_dir = pathlib.Path(run_dir)
    if (run_dir / checkpoint.CONFIG_FILE).exists():
        saved = checkpoint.load_config(run_dir)
        if saved != config:
            raise ValueError(f"{run_dir} holds a run with a different config; resume it with "
                             f"its own config (gomoku-jax train --run-dir {run_dir} --resume) "
                             f"or use a new run directory")
    _validate_opponents(config)
    primary = jax.process_index() == 0
    if primary:
        checkpoint.save_config(run_dir, config)
    trainer = AlphaZero(config)
    mgr = checkpoint.manager(run_dir, config.run.keep_checkpoints)
    if mgr.latest_step() is not None:
        state = checkpoint.restore_state(mgr, trainer.abstract_state())
    else:
        state = trainer.init()
    start = int(state.iteration)
    logger = _Logger(run_dir, start, primary)
    total = config.run.iterations if stop_after is None else min(stop_after,
                                                                 config.run.iterations)
    previous = _copy(state.variables)
    eval_key = jax.random.key(config.run.seed + 1)
    arena: dict = {}
    bar = None
    if progress and primary:
        from tqdm import tqdm

        bar = tqdm(total=config.run.iterations, initial=start, unit="it", dynamic_ncols=True)
    try:
        for it in range(start + 1, total + 1):
            t0 = time.perf_counter()
            state, metrics = trainer.iteration(state)
            metrics = {k: float(v) for k, v in jax.device_get(metrics).items()}
            seconds = time.perf_counter() - t0
            record = {"iteration": it, **metrics, "seconds": seconds,
                      "games_per_second": metrics["games"] / seconds,
                      "positions_per_second": metrics["positions"] / seconds}
            last = it == config.run.iterations
            if (config.eval.every and it % config.eval.every == 0) or last:
                arena = evaluate(trainer, state.variables, previous,
                                 jax.random.fold_in(eval_key, it))
                previous = _copy(state.variables)
                record["arena"] = arena
            logger.log(record)
            if it % config.run.checkpoint_every == 0 or last or it == total:
                checkpoint.save(mgr, it, state, state.variables)
            if on_iteration is not None:
                on_iteration(it, record)
            if bar is not None:
                post = {"loss": f"{metrics['loss']:.3f}", "v": f"{metrics['value_loss']:.3f}",
                        "games/s": f"{record['games_per_second']:.1f}"}
                post.update({k.split(":")[0][:9]: f"{v['score']:.2f}" for k, v in arena.items()})
                bar.set_postfix(post, refresh=False)
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        logger.close()
    summary = {"arena": arena, "iterations": int(state.iteration),
               "wall_seconds": time.perf_counter() - t_start,
               "finished": int(state.iteration) == config.run.iterations}
    if primary:
        (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=1))
    return summary


def arena_table(arena: dict[str, dict]) -> str:
    """A markdown table of `evaluate`'s results."""
    rows = ["| opponent | W-D-L | score | Elo diff |", "|---|---|---|---|"]
    for spec, r in arena.items():
        elo = "±∞" if r["elo"] is None else f"{r['elo']:+.0f}"
        rows.append(f"| {spec} | {r['wins']}-{r['draws']}-{r['losses']} | {r['score']:.3f} | "
                    f"{elo} |")
    return "\n".join(rows)
