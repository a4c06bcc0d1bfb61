"""Search throughput: simulations per second of the search algorithms over the real env, with
our simulation loop (`gomoku_jax.search.tree_loop`) and mctx's side by side in the same run, and
what one simulation costs as the tree grows.

    python experiments/bench_search.py --out search.md --json search.json

Part 1, the grid: simulations per second of every algorithm of `--algorithms` (names of
`gomoku_jax.search.ALGORITHMS`, each with its default config, or with the fields `--set`
changes in every algorithm, e.g. `--set dirichlet_fraction=0`) with every loop of `--loops`
(`gomoku_jax`, ours: path-only backward; `mctx`: `mctx.search`) and every evaluator of
`--evaluators`, for each batch size x simulation count:
  network    the policy-value ResNet (`--net`, random weights) through `NetworkEvaluator`;
  heuristic  Gomoku's `HeuristicEvaluator` (threats for both colours, HeuristicScore);
  rollout    `RolloutEvaluator(1)`: one random playout per leaf, pure MCTS's own;
  uniform    `UniformEvaluator`: no evaluation cost (the loop, env step and masks remain).
Simulations = batch x num_simulations per call. Reported: compile seconds, ms per move (the
wall time of one batched search call: the latency of a move for all B boards), simulations
per wall second and per process CPU second (the machines are shared; CPU time is the
steadier number), each cell's rate as a multiple of the same search with mctx's loop, and
of the first algorithm's with the same loop (all measured in the same run). The searches
start from random positions 6-20 plies deep (so the candidate mask is active).

Time: `--max-seconds-per-cell` bounds each measurement's calls (warm-up + repeats; compile
excluded): once the warm-up is timed, the repeats are cut to fit (noted), and once a cell's
calls took longer, the cells with at least its batch and simulations (same algorithm, loop
and evaluator; in the curve, the same part at larger S) are skipped. So is a search whose
tree `check_tree_memory` refuses.

Part 2, the cost-per-simulation curve (PUCT, for each of `--curve-batch`'s batch sizes,
`--curve-evaluator`): microseconds per simulation per board, for growing simulation counts
S, of
  (i)   the full search with that evaluator, our loop;
  (i')  the same search with mctx's loop (it builds the same tree);
  (ii)  the full search with `UniformEvaluator` (zero cost: our loop + env step + masks);
  (iii) the evaluator alone (with the search's random symmetry), called S times;
  (iv)  mctx's backward pass alone, for all S leaves of the tree of a real search (i);
  (v)   `loop.path_backward`, our backward, the same update touching only the path;
  (vi)  PUCT's selection (`mctx`'s `simulate` with `selection.puct_selection`) alone: its
        cost per descent step, timed on that tree, times the steps the search's S
        selections take (the new nodes' depths);
and (i')/(i), what remains of (i) (expansion, env step, masks, symmetries, loop overhead)
and mctx's backward's share of (i'). mctx's backward is `vmap` of a `while_loop` that
carries the whole tree. Under vmap the loop predicate is batched, so every step becomes
`select(still_running, new_tree, old_tree)`: each step copies and selects the [B, S+1, A]
arrays it writes, and a backward of depth d costs O(d * B * S * A) instead of O(d * B).
`path_backward` has the same semantics but walks the path with an unbatched loop that
gathers and scatters B entries per step, in place.

`--profile DIR` traces one more call of a measured search (the curve's search (i) with
the most simulations up to 128, by preference; its compiled function, so nothing is
compiled in the trace) with `jax.profiler.trace` into DIR, for TensorBoard's profile plugin
or Perfetto (ui.perfetto.dev opens the perfetto_trace.json.gz it also writes).

A progress bar on stderr counts the grid's cells and the curve's rows (not with
`--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import os
import sys
import time
from typing import Any, Callable, Mapping, Optional, Sequence

import jax
import jax.numpy as jnp
import mctx
from mctx._src import action_selection as mctx_action_selection
from mctx._src import search as mctx_search

import gomoku_jax
from gomoku_jax import progress, search
from gomoku_jax.benchmarks.timing import (
    Measurement,
    describe_machine,
    fmt_rate,
    parse_int_list,
    setup_run,
    time_jitted,
)
from gomoku_jax.games.gomoku.heuristic_evaluator import HeuristicEvaluator
from gomoku_jax.games.protocol import is_over
from gomoku_jax.games.random_play import random_legal_action
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report
from gomoku_jax.nets.resnet import NET_PRESETS, PolicyValueModel
from gomoku_jax.search.evaluators import NetworkEvaluator, RolloutEvaluator, UniformEvaluator
from gomoku_jax.search.prior import evaluate
from gomoku_jax.search.puct import qtransform
from gomoku_jax.search.selection import puct_selection
from gomoku_jax.search.tree_loop import path_backward

DEFAULT_BATCHES = (1, 16, 256)
DEFAULT_SIMULATIONS = (32, 128, 400, 800)
DEFAULT_CURVE_BATCHES = (1, 16, 256)
DEFAULT_CURVE_SIMULATIONS = (32, 128, 400, 800)
LOOPS = search.base.LOOPS  # ("gomoku_jax", "mctx"): our simulation loop and mctx's
EVALUATORS = ("network", "heuristic", "rollout", "uniform")
PROFILE_MAX_SIMULATIONS = 128  # a trace holds an event per op run: millions for long searches
CURVE_PARTS = ("search", "search (mctx loop)", "search (uniform)", "evaluator", "mctx backward",
               "path-only backward", "selection")
TREE_PARTS = CURVE_PARTS[4:]  # timed on search (i)'s tree


# ----------------------------------------------------------------------------- set-up

def make_evaluator(env, name: str, net: str = "small", seed: int = 0) -> tuple[Any, Any]:
    """(evaluator, params) of one of EVALUATORS."""
    if name == "network":
        model = PolicyValueModel.for_env(NET_PRESETS[net], env)
        return NetworkEvaluator(model), model.init(jax.random.key(seed))
    return {"heuristic": HeuristicEvaluator(), "rollout": RolloutEvaluator(1),
            "uniform": UniformEvaluator()}[name], None


def start_positions(env, batch: int, key: jax.Array, min_plies: int = 6,
                    max_plies: int = 20):
    """`batch` live positions after a random number of uniformly random plies in
    [min_plies, max_plies] (at most a third of the board). A ply that would end a game is
    not played."""
    max_plies = max(min(max_plies, env.num_actions // 3), 1)
    min_plies = min(min_plies, max_plies)
    k_init, k_plies, k_moves = jax.random.split(key, 3)

    @jax.jit
    def play(keys, plies, move_keys):
        states = jax.vmap(env.init)(keys)

        def body(states, xs):
            t, k = xs
            after = jax.vmap(env.step)(states, random_legal_action(k, states.legal_action_mask))
            keep = (t < plies) & ~is_over(after)
            return jax.tree.map(lambda new, old: jnp.where(
                keep.reshape(keep.shape + (1,) * (new.ndim - 1)), new, old), after, states), None

        return jax.lax.scan(body, states, (jnp.arange(max_plies), move_keys))[0]

    plies = jax.random.randint(k_plies, (batch,), min_plies, max_plies + 1)
    return play(jax.random.split(k_init, batch), plies, jax.random.split(k_moves, max_plies))


def take(states, batch: int):
    return jax.tree.map(lambda x: x[:batch], states)


def search_fn(env, algorithm, evaluator, sims: int) -> Callable:
    """run(params, states, key) -> SearchOutput."""

    def run(params, states, key):
        return algorithm.search(env, evaluator, params, states, key, sims)

    return run


def _fresh_key(out, args):
    *rest, key = args
    return (*rest, jax.random.fold_in(key, 1))


def measure(name: str, variant: str, jitted: Callable, args: Sequence, batch: int, work: int,
            repeats: int, max_seconds: float, thread=_fresh_key,
            first: Optional[list] = None) -> Measurement:
    """`time_jitted` as a Measurement (work = batch x `work` per call); repeats are cut to
    fit `max_seconds` after the warm-up (noted)."""
    compile_s, wall, cpu, timed = time_jitted(jitted, args, repeats, thread, max_seconds, first)
    note = "" if timed == repeats else f"median of {max(timed, 1)} (--max-seconds-per-cell)"
    return Measurement(name, variant, batch, work, compile_s, wall, cpu, note)


@dataclasses.dataclass
class SearchRun:
    """A timed search, and `again()`: one more call of its compiled function on the same
    arguments (no new compile), for the search's tree and for the profile."""

    result: Measurement
    again: Callable[[], search.SearchOutput]


def measure_search(env, name: str, evaluator_name: str, evaluator, params, states, sims: int,
                   repeats: int, max_seconds: float, loop: str = "gomoku_jax",
                   fields: Optional[Mapping[str, Any]] = None) -> SearchRun:
    """Time `search.make(name, loop=loop, **fields)` (its default config otherwise) with
    `evaluator`: work = B x sims."""
    jitted = jax.jit(search_fn(env, search.make(name, loop=loop, **(fields or {})), evaluator,
                               sims))
    args = (params, states, jax.random.key(0))
    m = measure(name, evaluator_name, jitted, args, states.legal_action_mask.shape[0], sims,
                repeats, max_seconds)
    return SearchRun(m, lambda: jax.block_until_ready(jitted(*args)))


def seconds_used(m: Measurement, repeats: int) -> float:
    """What a measurement's calls took: warm-up + repeats (at most; compile excluded)."""
    return (repeats + 1) * m.wall_s


def tree_refusal(env, states, sims: int, algorithm) -> str:
    """'' if `check_tree_memory` accepts this search, else why it refuses (short)."""
    try:
        search.check_tree_memory(env, states, sims, algorithm.max_tree_bytes)
        return ""
    except ValueError:
        need = search.check_tree_memory(env, states, sims, 2 ** 62)
        return f"refused by check_tree_memory (tree {need / 2 ** 30:.1f} GiB)"


# ----------------------------------------------------------------------------- part 1: grid

@dataclasses.dataclass
class GridCell:
    evaluator: str
    algorithm: str
    batch: int
    sims: int
    loop: str = "gomoku_jax"
    result: Optional[Measurement] = None
    skipped: str = ""

    def as_dict(self) -> dict:
        d = {"evaluator": self.evaluator, "algorithm": self.algorithm, "loop": self.loop,
             "batch": self.batch, "simulations": self.sims, "skipped": self.skipped}
        if self.result is not None:
            m = self.result
            d.update(compile_s=m.compile_s, wall_s=m.wall_s, cpu_s=m.cpu_s, note=m.note,
                     ms_per_move=1e3 * m.wall_s, sims_per_wall_s=m.per_wall_s,
                     sims_per_cpu_s=m.per_cpu_s)
        return d


def run_grid(env, evaluators, pool, batches: Sequence[int], sims_list: Sequence[int],
             algorithms: Sequence[str], evaluator_names: Sequence[str], repeats: int,
             max_seconds: float, cache: dict, log=print,
             loops: Sequence[str] = LOOPS,
             tick: Callable[[int], None] = lambda n: None,
             fields: Optional[Mapping[str, Any]] = None) -> list[GridCell]:
    """Every (evaluator, algorithm, loop, sims, batch) cell, in that loop order, on the
    first `batch` positions of `pool`, `tick(1)` after each; each algorithm with `fields`
    changed. `cache` collects the SearchRuns by (algorithm, loop, evaluator, batch, sims), for
    the curve and the profile."""
    fields = fields or {}
    cells: list[GridCell] = []
    for evaluator, name, loop, sims, b in itertools.product(
            evaluator_names, algorithms, loops, sorted(sims_list), sorted(batches)):
        cell = GridCell(evaluator, name, b, sims, loop)
        states = take(pool, b)
        slow = [c for c in cells if (c.evaluator, c.algorithm, c.loop) == (evaluator, name, loop)
                and c.result is not None and c.batch <= b and c.sims <= sims
                and seconds_used(c.result, repeats) > max_seconds]
        if slow:
            cell.skipped = f"skipped (B={slow[0].batch}, S={slow[0].sims} was over budget)"
        else:
            cell.skipped = tree_refusal(env, states, sims, search.make(name, **fields))
        if not cell.skipped:
            run = measure_search(env, name, evaluator, *evaluators[evaluator], states, sims,
                                 repeats, max_seconds, loop, fields)
            cell.result, cache[(name, loop, evaluator, b, sims)] = run.result, run
        cells.append(cell)
        log("  " + _grid_log_line(cell))
        tick(1)
    return cells


def _grid_log_line(cell: GridCell) -> str:
    head = (f"{cell.algorithm:<9} {cell.loop:<10} {cell.evaluator:<9} B={cell.batch:<5} "
            f"S={cell.sims:<4}")
    if cell.result is None:
        return f"{head} {cell.skipped}"
    m = cell.result
    return (f"{head} compile {m.compile_s:6.2f} s  {1e3 * m.wall_s:9.1f} ms/move  "
            f"{fmt_rate(m.per_wall_s):>9} sims/s  {fmt_rate(m.per_cpu_s):>9} sims/CPU-s")


def render_grid(cells: Sequence[GridCell]) -> str:
    """The grid, with each cell's sims/CPU-s as a multiple of the same search with mctx's
    loop, and of the first algorithm's with the same loop."""
    reference = cells[0].algorithm if cells else ""
    rate = {(c.evaluator, c.algorithm, c.loop, c.batch, c.sims): c.result.per_cpu_s
            for c in cells if c.result is not None}
    rows = []
    for c in cells:
        head = [c.evaluator, c.algorithm, c.loop, str(c.batch), str(c.sims)]
        if c.result is None:
            rows.append(head + ["-"] * 6 + [c.skipped])
            continue
        m = c.result
        vs_mctx = rate.get((c.evaluator, c.algorithm, "mctx", c.batch, c.sims))
        vs_first = rate.get((c.evaluator, reference, c.loop, c.batch, c.sims))
        rows.append(head + [f"{m.compile_s:.1f}", _ms(m.wall_s), fmt_rate(m.per_wall_s),
                            fmt_rate(m.per_cpu_s),
                            f"{m.per_cpu_s / vs_mctx:.2f}x" if vs_mctx else "-",
                            f"{m.per_cpu_s / vs_first:.2f}x" if vs_first else "-", m.note])
    return markdown_table(["evaluator", "algorithm", "loop", "batch", "simulations",
                           "compile s", "ms/move", "sims/s (wall)", "sims/CPU-s",
                           "vs mctx loop (CPU)", f"vs {reference} (CPU)", "note"], rows)


def _ms(seconds: float) -> str:
    ms = 1e3 * seconds
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 1 else f"{ms:.2f}"


# ----------------------------------------------------------------------------- backward passes

def mctx_backward(tree: mctx.Tree, leaf_index: jax.Array) -> mctx.Tree:
    """mctx's own backward pass (`mctx._src.search.backward`, vmapped over the batch)."""
    return mctx_search.backward(tree, leaf_index)


def backward_sweep(backward: Callable) -> Callable:
    """sweep(tree) -> tree: back up from node 1, 2, ..., N-1 on every board in turn (the
    leaves of a search's simulations, in order)."""

    def sweep(tree):
        batch, num_nodes = tree.node_values.shape
        return jax.lax.fori_loop(
            1, num_nodes, lambda i, t: backward(t, jnp.full((batch,), i, jnp.int32)), tree)

    return sweep


def node_depths(tree: mctx.Tree) -> jax.Array:
    """int32[B, N]: edges from the root to each node (parents have smaller indices)."""
    batch, num_nodes = tree.parents.shape
    rows = jnp.arange(batch)

    @jax.jit
    def depths(parents):
        def body(i, depth):
            return depth.at[:, i].set(depth[rows, jnp.maximum(parents[:, i], 0)] + 1)

        return jax.lax.fori_loop(1, num_nodes, body, jnp.zeros((batch, num_nodes), jnp.int32))

    return depths(tree.parents)


def evaluator_sweep(env, evaluator, algorithm, calls: int) -> Callable:
    """run(params, states, key) -> float32[]: the evaluator (with the search's symmetry
    mode) called `calls` times on the batch, each with a fresh key, all outputs consumed."""

    def run(params, states, key):
        def body(i, acc):
            logits, value = evaluate(env, evaluator, algorithm.symmetry, params, states,
                                     jax.random.fold_in(key, i))
            return acc + jnp.sum(logits) + jnp.sum(value)

        return jax.lax.fori_loop(0, calls, body, jnp.float32(0))

    return run


def selection_sweep(algorithm: search.PUCT, calls: int) -> Callable:
    """run(tree, depth int32[B, N], key) -> int32[]: PUCT's selection (mctx's `simulate`
    with `selection.puct_selection`, as `PUCT.search` sets it up) from the root of `tree`
    to its frontier, `calls` times; returns the loop steps taken (per call, the deepest
    board's descent)."""
    select = functools.partial(puct_selection, pb_c_init=algorithm.pb_c_init,
                               pb_c_base=algorithm.pb_c_base,
                               qtransform=qtransform(algorithm.q_transform))
    select = mctx_action_selection.switching_action_selection_wrapper(
        root_action_selection_fn=functools.partial(select, depth=0),
        interior_action_selection_fn=select)

    def run(tree, depth, key):
        batch, num_nodes = tree.node_values.shape
        rows = jnp.arange(batch)

        def body(i, steps):
            keys = jax.random.split(jax.random.fold_in(key, i), batch)
            node, _ = mctx_search.simulate(keys, tree, select, num_nodes - 1)
            return steps + jnp.max(depth[rows, node] + 1)

        return jax.lax.fori_loop(0, calls, body, jnp.int32(0))

    return run


# ----------------------------------------------------------------------------- part 2: curve

@dataclasses.dataclass
class CurveRow:
    """One simulation count of the curve: the Measurement of each part (for S simulations
    on B boards), or why a part was not measured."""

    sims: int
    batch: int
    parts: dict = dataclasses.field(default_factory=dict)  # part -> Measurement
    skipped: dict = dataclasses.field(default_factory=dict)  # part -> reason
    depth_mean: Optional[float] = None
    depth_max: Optional[int] = None
    backward_steps: Optional[int] = None  # loop steps of a sweep: sum over leaves of max depth

    def wall(self, part: str) -> Optional[float]:
        return self.parts[part].wall_s if part in self.parts else None

    def us_per_sim(self, part: str) -> Optional[float]:
        """Microseconds of wall time per simulation per board."""
        if part not in self.parts:
            return None
        return 1e6 * self.parts[part].wall_s / (self.sims * self.batch)

    def as_dict(self) -> dict:
        return {"simulations": self.sims, "batch": self.batch, "skipped": self.skipped,
                "depth_mean": self.depth_mean, "depth_max": self.depth_max,
                "backward_steps": self.backward_steps,
                "parts": {p: {"compile_s": m.compile_s, "wall_s": m.wall_s, "cpu_s": m.cpu_s,
                              "us_per_sim": self.us_per_sim(p), "note": m.note}
                          for p, m in self.parts.items()}}


def run_curve(env, evaluators, pool, batch: int, sims_list: Sequence[int], repeats: int,
              max_seconds: float, cache: dict, evaluator: str = "heuristic",
              log=print, tick: Callable[[int], None] = lambda n: None,
              fields: Optional[Mapping[str, Any]] = None) -> list[CurveRow]:
    """Parts (i)-(vi) for each simulation count (`tick(1)` after each), on the first
    `batch` start positions, PUCT with `fields` changed;
    `cache` holds the grid's SearchRuns, reused for (i) and (ii) where they match. A part
    that went over `max_seconds` is skipped at the larger simulation counts."""
    states = take(pool, batch)
    fields = fields or {}
    algorithm = search.make("puct", **fields)
    ev, params = evaluators[evaluator]
    rows: list[CurveRow] = []
    over: dict[str, str] = {}  # part -> why it is no longer measured
    for sims in sorted(sims_list):
        row = CurveRow(sims, batch)
        refusal = tree_refusal(env, states, sims, algorithm)

        def runs(part: str) -> bool:
            reason = refusal or over.get(part)
            if reason:
                row.skipped[part] = reason
            return not reason

        def record(part: str, m: Measurement) -> None:
            row.parts[part] = m
            if seconds_used(m, repeats) > max_seconds:
                over[part] = f"skipped (S={sims} was over budget)"

        for part, name, loop in (("search", evaluator, "gomoku_jax"),
                                 ("search (mctx loop)", evaluator, "mctx"),
                                 ("search (uniform)", "uniform", "gomoku_jax")):
            key = ("puct", loop, name, batch, sims)
            if key not in cache and runs(part):
                cache[key] = measure_search(env, "puct", name, *evaluators[name], states, sims,
                                            repeats, max_seconds, loop, fields)
            if key in cache:
                record(part, cache[key].result)
        if runs("evaluator"):
            record("evaluator", measure("evaluator", evaluator,
                                        jax.jit(evaluator_sweep(env, ev, algorithm, sims)),
                                        (params, states, jax.random.key(1)), batch, sims,
                                        repeats, max_seconds))
        if "search" in row.parts:  # the tree parts back up search (i)'s own tree
            tree = cache[("puct", "gomoku_jax", evaluator, batch, sims)].again().tree
            _tree_parts(row, tree, algorithm, repeats, max_seconds, runs, record)
        else:
            for part in TREE_PARTS:
                row.skipped[part] = "skipped (needs the search tree)"
        rows.append(row)
        log("  " + _curve_log_line(row))
        tick(1)
    return rows


def _tree_parts(row: CurveRow, tree: mctx.Tree, algorithm, repeats: int, max_seconds: float,
                runs: Callable[[str], bool], record: Callable) -> None:
    """Parts (iv)-(vi) and the depth statistics of `row`, on a search's final `tree`."""
    depth = node_depths(tree)
    row.depth_mean = float(jnp.mean(depth[:, 1:]))
    row.depth_max = int(jnp.max(depth))
    row.backward_steps = int(jnp.sum(jnp.max(depth[:, 1:], axis=0)))
    for part, fn in (("mctx backward", mctx_backward), ("path-only backward", path_backward)):
        if runs(part):  # the tree donated: each call updates the last call's tree in place
            record(part, measure(part, "", jax.jit(backward_sweep(fn), donate_argnums=0),
                                 (jax.tree.map(jnp.copy, tree),), row.batch, row.sims,
                                 repeats, max_seconds, thread=lambda out, _: (out,)))
    if runs("selection"):
        # Descents to the final tree's frontier run deeper than the search's own; the cost
        # per step does not depend on the tree, so scale it to the search's steps (the
        # depth of each new node, as for the backward).
        first: list = []
        m = measure("selection", "", jax.jit(selection_sweep(algorithm, row.sims)),
                    (tree, depth, jax.random.key(4)), row.batch, row.sims, repeats,
                    max_seconds, first=first)
        scale = row.backward_steps / max(int(first[0]), 1)
        record("selection", dataclasses.replace(m, wall_s=m.wall_s * scale,
                                                cpu_s=m.cpu_s * scale))


def _curve_log_line(row: CurveRow) -> str:
    parts = []
    for part in CURVE_PARTS:
        us = row.us_per_sim(part)
        parts.append(f"{part} {us:.1f} us" if us is not None else f"{part} -")
    return f"S={row.sims:<4} B={row.batch}: " + ", ".join(parts)


def _fmt_us(us: Optional[float], base: Optional[float] = None) -> str:
    if us is None:
        return "-"
    text = f"{us:.0f}" if us >= 100 else f"{us:.1f}" if us >= 1 else f"{us:.2f}"
    if base:
        text += f" ({us / base:.1f}x)"
    return text


def render_curve(rows: Sequence[CurveRow], evaluator: str = "heuristic") -> str:
    """The curve table (x: a search's cost per simulation against its own at the smallest
    S), then a line per simulation count on the cost of one backward step."""
    first = {p: next((r.us_per_sim(p) for r in rows if r.us_per_sim(p)), None)
             for p in CURVE_PARTS}
    table = []
    for r in rows:
        cells = [str(r.sims)]
        for part in CURVE_PARTS:
            growth = first[part] if part.startswith("search") else None
            us = r.us_per_sim(part)
            cells.append(_fmt_us(us, growth) if us is not None else r.skipped.get(part, "-"))
        ours, theirs = r.wall("search"), r.wall("search (mctx loop)")
        speed_up = f"{theirs / ours:.2f}x" if ours and theirs else "-"
        depth = "-" if r.depth_mean is None else f"{r.depth_mean:.1f} / {r.depth_max}"
        cells += [speed_up, _fmt_us(_rest(r)), depth, _share(r)]
        table.append(cells)
    header = ["S", f"(i) search, {evaluator}", f"(i') search, {evaluator}, mctx loop",
              "(ii) search, uniform", "(iii) evaluator", "(iv) mctx backward",
              "(v) path-only backward", "(vi) selection", "(i') / (i)",
              "rest: (i)-(iii)-(v)-(vi)", "leaf depth mean / max", "(iv) share of (i')"]
    lines = [markdown_table(header, table), ""]
    for r in rows:
        mctx_s, path_s = r.wall("mctx backward"), r.wall("path-only backward")
        if r.backward_steps and mctx_s is not None and path_s is not None:
            lines.append(
                f"- S={r.sims}: one backward step (all {r.batch} boards) costs "
                f"{1e6 * mctx_s / r.backward_steps:.1f} us in mctx vs "
                f"{1e6 * path_s / r.backward_steps:.2f} us path-only "
                f"({r.backward_steps} steps per search)")
    return "\n".join(lines).rstrip()


def _rest(r: CurveRow) -> Optional[float]:
    """us per simulation per board of our search (i) not in the evaluator, the (path-only)
    backward or the selection: expansion, env step, masks, symmetries, loop overhead."""
    parts = ("search", "evaluator", "path-only backward", "selection")
    if not all(p in r.parts for p in parts):
        return None
    return r.us_per_sim("search") - sum(r.us_per_sim(p) for p in parts[1:])


def _share(r: CurveRow) -> str:
    """mctx's backward's share of the search with mctx's loop (i'). (iv) backs up (i)'s
    tree, which is (i')'s: the two loops build the same tree."""
    total, backward = r.wall("search (mctx loop)"), r.wall("mctx backward")
    if total is None or backward is None:
        return "-"
    return f"{100 * backward / total:.0f}%"


# ----------------------------------------------------------------------------- profile

def profile(cache: dict, curve_evaluator: str, trace_dir: str) -> Optional[dict]:
    """Trace one more call of a measured search with `jax.profiler.trace` into `trace_dir`:
    the largest with at most PROFILE_MAX_SIMULATIONS simulations, PUCT with the curve's
    evaluator first. Returns what was traced and the files written (None: no candidate)."""
    keys = [k for k in cache if k[4] <= PROFILE_MAX_SIMULATIONS]
    if not keys:
        return None
    key = max(keys, key=lambda k: (k[:3] == ("puct", "gomoku_jax", curve_evaluator), k[4],
                                   k[3], k[1] == "gomoku_jax"))
    before = _files(trace_dir)
    with jax.profiler.trace(trace_dir, create_perfetto_trace=True):
        cache[key].again()
    return {"dir": trace_dir, "files": sorted(_files(trace_dir) - before),
            **dict(zip(("algorithm", "loop", "evaluator", "batch", "simulations"), key))}


def _files(root: str) -> set[str]:
    return {os.path.join(d, f) for d, _, files in os.walk(root) for f in files}


# ----------------------------------------------------------------------------- driver

def run_benchmark(board_size: int = 15, batches: Sequence[int] = DEFAULT_BATCHES,
                  sims_list: Sequence[int] = DEFAULT_SIMULATIONS,
                  algorithms: Sequence[str] = tuple(search.ALGORITHMS),
                  evaluator_names: Sequence[str] = ("network", "heuristic"),
                  curve_batches: Sequence[int] = DEFAULT_CURVE_BATCHES,
                  curve_sims: Sequence[int] = DEFAULT_CURVE_SIMULATIONS,
                  parts: Sequence[str] = ("grid", "curve"), repeats: int = 3,
                  max_seconds: float = 20.0, seed: int = 0, curve_evaluator: str = "heuristic",
                  net: str = "small", profile_dir: Optional[str] = None, log=print,
                  loops: Sequence[str] = LOOPS,
                  tick: Callable[[int], None] = lambda n: None,
                  fields: Optional[Mapping[str, Any]] = None) -> dict:
    """Run the grid and/or the curve (every algorithm with `fields` changed), and trace one
    search if `profile_dir` is given; `tick(1)` after each grid cell and curve row
    (`count_rows` in all).
    Returns {"grid": [GridCell], "curve": [CurveRow], "curve_evaluator": name,
    "profile": {"dir", "files", "simulations", "batch", "evaluator"} or None}."""
    env = gomoku_jax.make("gomoku", board_size=board_size)
    names = set(evaluator_names if "grid" in parts else [])
    names |= {curve_evaluator, "uniform"} if "curve" in parts else set()
    evaluators = {name: make_evaluator(env, name, net, seed) for name in names}
    size = max(list(batches if "grid" in parts else []) + list(curve_batches))
    pool = start_positions(env, size, jax.random.key(seed))
    cache: dict = {}
    out: dict = {"grid": [], "curve": [], "curve_evaluator": curve_evaluator, "profile": None,
                 "fields": dict(fields or {})}
    if "grid" in parts:
        log("## grid")
        out["grid"] = run_grid(env, evaluators, pool, batches, sims_list, algorithms,
                               evaluator_names, repeats, max_seconds, cache, log, loops, tick,
                               fields)
    if "curve" in parts:
        for curve_batch in curve_batches:
            log(f"## cost per simulation, PUCT, batch {curve_batch}")
            out["curve"] += run_curve(env, evaluators, pool, curve_batch, curve_sims, repeats,
                                      max_seconds, cache, curve_evaluator, log, tick, fields)
    if profile_dir is not None:
        out["profile"] = p = profile(cache, curve_evaluator, profile_dir)
        log(f"## profile: {_profiled(p)}" + (f", traced into {profile_dir}" if p else ""))
    return out


def count_rows(batches: Sequence[int], sims_list: Sequence[int], algorithms: Sequence[str],
               evaluator_names: Sequence[str], loops: Sequence[str],
               curve_batches: Sequence[int], curve_sims: Sequence[int],
               parts: Sequence[str]) -> int:
    """The grid's cells and the curve's rows `run_benchmark` measures (or skips): the
    progress bar's total."""
    grid = len(batches) * len(sims_list) * len(algorithms) * len(evaluator_names) * len(loops)
    curve = len(curve_batches) * len(curve_sims)
    return grid * ("grid" in parts) + curve * ("curve" in parts)


def _profiled(p: Optional[dict]) -> str:
    if p is None:
        return f"no search measured with at most {PROFILE_MAX_SIMULATIONS} simulations"
    return (f"one {p['algorithm']} search ({p['loop']} loop, {p['evaluator']}, batch "
            f"{p['batch']}, S={p['simulations']})")


def render_report(results: dict, board_size: int, repeats: int, net: str = "small") -> str:
    n = f"{board_size}x{board_size}"
    evaluator = results.get("curve_evaluator", "heuristic")
    changed = ", ".join(f"{k}={v}" for k, v in results.get("fields", {}).items())
    config = f"default config with {changed}" if changed else "default config"
    lines = [f"# Search throughput, {n} Gomoku (freestyle), median of {repeats}; "
             f"{describe_machine()}"]
    if results["grid"]:
        lines += ["", f"## Simulations per second (each algorithm's {config}, start "
                      f"positions 6-20 random plies deep; network = the {net!r} ResNet "
                      f"preset, random weights)", "",
                  render_grid(results["grid"])]
    for batch in sorted({r.batch for r in results["curve"]}):
        lines += ["", f"## Cost per simulation, PUCT ({config}), batch {batch}: us of wall "
                      f"time per simulation per board (x = vs the smallest S)", "",
                  f"(i) is our loop, (i') mctx's (the same tree); (iii) is the {evaluator} "
                  "evaluator alone, called S times; (iv) and (v) back up every leaf of the "
                  "tree of (i), in order; (vi) is PUCT's selection, timed per descent step on "
                  "that tree and scaled to the search's steps. The parts are timed in "
                  "separate calls, so 'rest' carries their noise and can come out negative.",
                  "", render_curve([r for r in results["curve"] if r.batch == batch],
                                   evaluator)]
    p = results.get("profile")
    if p:
        lines += ["", f"## Profile: {_profiled(p)}, traced with jax.profiler", "",
                  f"Trace under `{p['dir']}`: `tensorboard --logdir {p['dir']}` (profile "
                  f"plugin), or open the `perfetto_trace.json.gz` in https://ui.perfetto.dev. "
                  f"Files:", ""] + [f"- {f}" for f in p["files"]]
    return "\n".join(lines)


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--batch-sizes", default=",".join(map(str, DEFAULT_BATCHES)),
                        help="grid batch sizes (default: %(default)s)")
    parser.add_argument("--simulations", default=",".join(map(str, DEFAULT_SIMULATIONS)),
                        help="grid simulation counts (default: %(default)s)")
    parser.add_argument("--algorithms", default=",".join(search.ALGORITHMS),
                        help=f"grid search algorithms, from {', '.join(search.ALGORITHMS)}; the "
                             "first is the reference of the ratio column (default: %(default)s)")
    parser.add_argument("--evaluators", default="network,heuristic",
                        help=f"grid evaluators, from {', '.join(EVALUATORS)} "
                             "(default: %(default)s)")
    parser.add_argument("--net", default="small", choices=sorted(NET_PRESETS),
                        help="ResNet preset of the network evaluator (default: %(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        dest="search_sets",
                        help="change a field of every algorithm's config (a keyword of "
                             "search.make), e.g. dirichlet_fraction=0 (repeatable)")
    parser.add_argument("--loops", default=",".join(LOOPS),
                        help="the grid's simulation loops: ours (gomoku_jax) and mctx's "
                             "(default: %(default)s)")
    parser.add_argument("--curve-batch", default=",".join(map(str, DEFAULT_CURVE_BATCHES)),
                        help="batch sizes of the cost-per-simulation curve (default: "
                             "%(default)s)")
    parser.add_argument("--curve-simulations",
                        default=",".join(map(str, DEFAULT_CURVE_SIMULATIONS)),
                        help="simulation counts of the curve (default: %(default)s)")
    parser.add_argument("--curve-evaluator", default="heuristic", choices=EVALUATORS,
                        help="evaluator of the curve's search (i) and (iii) (default: %(default)s)")
    parser.add_argument("--parts", default="grid,curve", help="grid, curve or both")
    parser.add_argument("--max-seconds-per-cell", type=float, default=20.0,
                        help="seconds for a measurement's calls (warm-up + repeats, compile "
                             "excluded); one over it skips the larger ones (default: "
                             "%(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls, median reported")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", default=None, metavar="DIR",
                        help="also trace one call of a measured search (the curve's, up to "
                             f"{PROFILE_MAX_SIMULATIONS} simulations) with jax.profiler into "
                             "DIR, for TensorBoard or Perfetto")
    parser.add_argument("--cpus", type=int, default=None,
                        help="pin the process to this many CPU cores before JAX starts")
    parser.add_argument("--out", default=None, help="also write the markdown report here")
    parser.add_argument("--json", default=None, help="also write raw measurements as JSON")
    progress.add_argument(parser)
    return parser


def search_fields(items: Sequence[str], algorithms: Sequence[str]) -> dict[str, str]:
    """{field: value} of `--set FIELD=VALUE` items, checked against every algorithm's config
    (SystemExit with search.make's message where one has no such field or value)."""
    fields = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"error: --set takes FIELD=VALUE, got {item!r}")
        fields[name.strip()] = value.strip()
    for name in dict.fromkeys(algorithms):
        try:
            search.make(name, **fields)
        except ValueError as e:
            raise SystemExit(f"error: --set: {e}")
    return fields


def _names(text: str, allowed: Sequence[str], flag: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    if not names or any(x not in allowed for x in names):
        raise SystemExit(f"error: {flag} takes {', '.join(allowed)}, got {text!r}")
    return names


def main(args: argparse.Namespace) -> int:
    batches = parse_int_list(args.batch_sizes, "--batch-sizes")
    sims_list = parse_int_list(args.simulations, "--simulations")
    curve_sims = parse_int_list(args.curve_simulations, "--curve-simulations")
    algorithms = _names(args.algorithms, tuple(search.ALGORITHMS), "--algorithms")
    evaluator_names = _names(args.evaluators, EVALUATORS, "--evaluators")
    parts = _names(args.parts, ("grid", "curve"), "--parts")
    loops = _names(args.loops, LOOPS, "--loops")
    curve_batches = parse_int_list(args.curve_batch, "--curve-batch")
    if args.repeats < 1 or min(curve_batches) < 1 or not args.max_seconds_per_cell > 0:
        raise SystemExit("error: --repeats and --curve-batch must be >= 1 and "
                         "--max-seconds-per-cell > 0")
    fields = search_fields(args.search_sets,
                           [*algorithms, *(["puct"] if "curve" in parts else [])])
    setup_run(args.board_size, args.cpus)

    print(f"# Search throughput, {args.board_size}x{args.board_size} Gomoku "
          f"({describe_machine()})", flush=True)
    t0 = time.perf_counter()
    total = count_rows(batches, sims_list, algorithms, evaluator_names, loops, curve_batches,
                       curve_sims, parts)
    with progress.bar(total, "bench_search", "config",
                      enabled=not args.no_progress) as bar:
        # the lines on stdout, through the bar when one shows
        results = run_benchmark(args.board_size, batches, sims_list, algorithms,
                                evaluator_names, curve_batches, curve_sims, parts, args.repeats,
                                args.max_seconds_per_cell, args.seed, args.curve_evaluator,
                                args.net, args.profile,
                                log=progress.printer(bar),
                                loops=loops, tick=bar.update, fields=fields)
    report = render_report(results, args.board_size, args.repeats, args.net)
    print("\n" + report)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    write_report(report, args.out, args.json, {
        "machine": describe_machine(), "board_size": args.board_size, "repeats": args.repeats,
        "net": args.net, "curve_batches": curve_batches, "loops": loops,
        "curve_evaluator": args.curve_evaluator, "fields": fields,
        "grid": [c.as_dict() for c in results["grid"]],
        "curve": [r.as_dict() for r in results["curve"]], "profile": results["profile"]})
    return 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
