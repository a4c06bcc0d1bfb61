"""The training loop on the host: iterations, metrics, checkpoints, arena, summary.

    summary = train(config, run_dir)

Each iteration is one compiled call (`AlphaZero.iteration`); between calls the host logs
the metrics (a progress bar, `metrics.jsonl`, TensorBoard when `tensorboardX` is
installed), saves an orbax checkpoint every `run.checkpoint_every` iterations and plays
the arena every `eval.every` iterations and at the end: the network inside the run's search
at full strength against each opponent in `eval.opponents` ("previous" is the network of
the evaluation before, or the initial one; checkpoints keep it, so a resumed run meets the
same one). A run directory that already has checkpoints is resumed from the latest one,
with the metrics written after it dropped, so a killed run continues as if it had not
stopped. A finished run is left as it is (its summary included) unless the config asks for
more iterations: `--resume --set run.iterations=N` extends it (a resume may change only the
keys in `config.RESUMABLE`).
"""

from __future__ import annotations

import dataclasses

import json
import pathlib
import time
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.agents.specs import make_agent
from gomoku_jax.eval.arena import per_opening_colour, run_match
from gomoku_jax.train import checkpoint
from gomoku_jax.train.alphazero import AlphaZero
from gomoku_jax.train.config import RESUMABLE, TrainConfig, resumable_changes

METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"
PREVIOUS = "previous"


class RunLogger:
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


def evaluate(trainer: AlphaZero, variables: Any, previous: Any, key: jax.Array
             ) -> dict[str, dict]:
    """The arena: {opponent spec: {"score", "wins", "draws", "losses", "elo"}}, from the
    trained agent's side, every opening of the game with both sides. The trained agent plays
    without the game's threat search at the root (`SearchAgent.threat_search`), so the
    arena measures the network and its search alone."""
    cfg = trainer.config
    env = trainer.env
    g = per_opening_colour(cfg.eval.games, len(env.default_openings()))
    agent = trainer.agent()
    if any(f.name == "threat_search" for f in dataclasses.fields(agent)):  # search agents
        agent = dataclasses.replace(agent, threat_search=0)
    results = {}
    for i, spec in enumerate(cfg.eval.opponents):
        if spec == PREVIOUS:
            opponent, params_b = agent, previous
        else:
            opponent, params_b = make_agent(spec), None
        r = run_match(env, agent, opponent, jax.random.fold_in(key, i), g,
                      params_a=variables, params_b=params_b)
        results[spec] = {"score": r.score, "wins": r.wins, "draws": r.draws,
                         "losses": r.losses,
                         # None for a 0% or 100% score (an infinite difference; not JSON)
                         "elo": r.elo.diff if np.isfinite(r.elo.diff) else None}
    return results


def copy_tree(tree: Any) -> Any:
    """A copy that outlives the state: `iteration` donates (frees) its input's buffers."""
    return jax.tree.map(jnp.copy, tree)


def validate_opponents(config) -> None:
    """ValueError naming the first bad agent spec of `config.eval.opponents`."""
    env = config.env()
    for spec in config.eval.opponents:
        if spec != PREVIOUS:
            make_agent(spec).bind(env)  # ValueError naming the bad spec


def _check_run_dir(run_dir: pathlib.Path, config: TrainConfig) -> None:
    """ValueError unless `config` may run in `run_dir`: a new directory, the same config,
    or the same run with only resumable keys changed (`config.RESUMABLE`: e.g. extending
    it with more iterations)."""
    if not (run_dir / checkpoint.CONFIG_FILE).exists():
        return
    saved = checkpoint.load_config(run_dir)
    changed = resumable_changes(saved, config)
    if changed:
        raise ValueError(f"{run_dir} holds a run with a different config ({', '.join(changed)} "
                         f"differ); resume it with its own config (gomoku-jax train --run-dir "
                         f"{run_dir} --resume, which may change only {', '.join(RESUMABLE)}) "
                         f"or use a new run directory")


def read_summary(run_dir: pathlib.Path) -> Optional[dict]:
    """The run's summary.json, or None."""
    path = pathlib.Path(run_dir) / SUMMARY_FILE
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def train(config: TrainConfig, run_dir: str | pathlib.Path, *, progress: bool = True,
          stop_after: Optional[int] = None,
          on_iteration: Optional[Callable[[int, dict], None]] = None) -> dict:
    """Run (or resume, or extend) `config` in `run_dir`; returns the summary (also
    `summary.json`). A run that has done `run.iterations` already is not touched: its saved
    summary comes back with `"already_finished": True`.

    Args:
      stop_after: stop once this many iterations are done (in all, counting those of
        earlier sessions), as if killed after its checkpoint; for tests and time limits.
      on_iteration: called with (iteration, metrics) after each iteration.
    Raises:
      ValueError: a run directory made with a different config (other than its resumable
        keys), a checkpoint of another env version, or a bad opponent spec.
    """
    t_start = time.perf_counter()
    run_dir = pathlib.Path(run_dir)
    _check_run_dir(run_dir, config)
    validate_opponents(config)
    trainer = AlphaZero(config)
    mgr = checkpoint.manager(run_dir, config.run.keep_checkpoints)
    if mgr.latest_step() is not None:
        state, previous, previous_iteration = checkpoint.restore_state(
            mgr, trainer.abstract_state(), trainer.model, trainer.env)
    else:
        state = trainer.init()
        previous, previous_iteration = copy_tree(state.variables), 0
    start = int(state.iteration)
    if start >= config.run.iterations:
        summary = read_summary(run_dir) or {"arena": {}, "iterations": start, "finished": True}
        return {**summary, "already_finished": True}
    primary = jax.process_index() == 0
    if primary:
        checkpoint.save_config(run_dir, config)
    logger = RunLogger(run_dir, start, primary)
    total = config.run.iterations if stop_after is None else min(stop_after,
                                                                 config.run.iterations)
    eval_key = jax.random.key(config.run.seed + 1)
    arena: dict = {}
    bar = None
    if progress and primary:
        from tqdm import tqdm

        bar = tqdm(total=config.run.iterations, initial=start, unit="it", dynamic_ncols=True)
    try:
        for it in range(start + 1, total + 1):
            t0 = time.perf_counter()
            state, metrics = trainer.iteration(state, trainer.bootstraps(it - 1))
            metrics = {k: float(v) for k, v in jax.device_get(metrics).items()}
            seconds = time.perf_counter() - t0
            record = {"iteration": it, **metrics,
                      "selfplay_evaluator": trainer.selfplay_evaluator(it - 1),
                      "seconds": seconds,
                      "games_per_second": metrics["games"] / seconds,
                      "positions_per_second": metrics["positions"] / seconds}
            last = it == config.run.iterations
            if (config.eval.every and it % config.eval.every == 0) or last:
                arena = evaluate(trainer, state.variables, previous,
                                 jax.random.fold_in(eval_key, it))
                previous, previous_iteration = copy_tree(state.variables), it
                record["arena"] = arena
                record["previous_iteration"] = previous_iteration
            logger.log(record)
            if it % config.run.checkpoint_every == 0 or last or it == total:
                checkpoint.save(mgr, it, state, state.variables, previous, previous_iteration,
                                trainer.env)
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
    finished = int(state.iteration) == config.run.iterations
    summary = {"arena": arena, "iterations": int(state.iteration),
               "wall_seconds": time.perf_counter() - t_start, "finished": finished,
               **checkpoint.env_record(trainer.env)}
    if primary and finished:
        (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=1))
    return summary


def arena_table(arena: dict[str, dict]) -> str:
    """A markdown table of `evaluate`'s results (an infinite Elo difference, stored as None,
    shows as +∞ for a 100% score and -∞ for 0%)."""
    rows = ["| opponent | W-D-L | score | Elo diff |", "|---|---|---|---|"]
    for spec, r in arena.items():
        infinite = "+∞" if r["score"] > 0.5 else "-∞"
        elo = infinite if r["elo"] is None else f"{r['elo']:+.0f}"
        rows.append(f"| {spec} | {r['wins']}-{r['draws']}-{r['losses']} | {r['score']:.3f} | "
                    f"{elo} |")
    return "\n".join(rows)
