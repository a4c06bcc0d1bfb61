"""Search throughput: mctx PUCT and Gumbel MuZero over the real env, and where their time goes.

Part 1, the grid: simulations per second of `search(..., algorithm="muzero" | "gumbel")` for
every batch size x simulation count, backed by
  network    a tiny Flax NNX network (3 convs of 32 channels, a 1x1 policy head, a pooled
             value head) through `NetworkEvaluator`. It is only a cost stand-in until the real
             policy-value ResNet exists: its weights are random and its cost is far below a
             real ResNet's.
  heuristic  `HeuristicEvaluator` (threats for both colours, HeuristicScore) at every node.
Simulations = batch x num_simulations per call. Reported: compile seconds, ms per move (the
wall time of one batched search call, i.e. the latency of a move for all B boards), and
simulations per wall second and per process CPU second (the machines are shared; CPU time is
the steadier number). The searches start from random positions a few plies deep (so the
proximity mask is active) and use `SearchConfig()` defaults. A cell whose time, estimated
from its measured neighbours, exceeds `--max-seconds-per-cell` is skipped and says so; so is
a cell whose tree `check_tree_memory` refuses.

Part 2, the cost-per-simulation curve (PUCT, one batch size, `--curve-evaluator`, by default
the heuristic):
microseconds per simulation per board, for growing simulation counts S, of
  (i)   the full search with that evaluator;
  (ii)  the full search with `UniformEvaluator` (zero cost: mctx + env step + masks);
  (iii) the evaluator alone (with the search's random D4 transform), called S times;
  (iv)  mctx's backward pass alone, for all S leaves of the tree of a real search (i);
  (v)   `path_backward`, the same update written to touch only the nodes on the path;
  (vi)  mctx's selection (`simulate`, PUCT) alone: its cost per descent step, timed on
        that tree, times the steps the search's S selections take (the new nodes' depths);
and what remains of (i): expansion, env step, masks, D4 transforms, loop overhead.
mctx's backward is `vmap` of a `while_loop` that carries the whole tree. Under vmap the loop
predicate is batched, so every step becomes `select(still_running, new_tree, old_tree)`:
each step copies and selects the [B, S+1, A] arrays it writes, and a backward of depth d
costs O(d * B * S * A) instead of O(d * B). `path_backward` has the same semantics but
walks the path with an unbatched loop that gathers and scatters B entries per step, in
place. The table gives the backward's share of the full search and what path-only saves.
`--profile DIR` also traces one full search with `jax.profiler` and attributes the time of
every XLA op to mctx backward / selection / expansion, the evaluator, the env step and the
search's own glue, from the source locations XLA keeps for each op.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import gzip
import itertools
import json
import math
import os
import re
import statistics
import sys
import time
from typing import Any, Callable, Optional, Sequence
from unittest import mock

import jax
import jax.numpy as jnp
import mctx
from flax import nnx
from mctx._src import action_selection as mctx_action_selection
from mctx._src import search as mctx_search

import gomoku_jax
from gomoku_jax.benchmarks.timing import (Measurement, describe_machine, fmt_rate,
                                          markdown_table, parse_int_list, setup_run,
                                          time_compiled)
from gomoku_jax.game.random_play import random_legal_action
from gomoku_jax.game.state import State
from gomoku_jax.search import mcts
from gomoku_jax.search.evaluators import HeuristicEvaluator, NetworkEvaluator, UniformEvaluator

DEFAULT_BATCHES = (1, 16, 64, 256, 1024)
DEFAULT_SIMULATIONS = (32, 128, 400, 800)
DEFAULT_CURVE_SIMULATIONS = (8, 32, 128, 400, 800)
ALGORITHMS = ("muzero", "gumbel")
GRID_EVALUATORS = ("network", "heuristic")
PROFILE_MAX_SIMULATIONS = 128
CURVE_PARTS = ("search", "search (uniform)", "evaluator", "mctx backward", "path-only backward",
               "selection")


# ----------------------------------------------------------------------------- set-up

class TinyNet(nnx.Module):
    """Cost stand-in for the policy-value network: 3 convs of 32 channels (ReLU), a 1x1 conv
    policy head and a global-average-pooled tanh value head."""

    def __init__(self, in_channels: int, channels: int = 32, *, rngs: nnx.Rngs):
        self.conv1 = nnx.Conv(in_channels, channels, (3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(channels, channels, (3, 3), rngs=rngs)
        self.conv3 = nnx.Conv(channels, channels, (3, 3), rngs=rngs)
        self.policy = nnx.Conv(channels, 1, (1, 1), rngs=rngs)
        self.value = nnx.Linear(channels, 1, rngs=rngs)

    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """obs float32[B, N, N, C] -> (logits float32[B, N*N], value float32[B])."""
        x = obs
        for conv in (self.conv1, self.conv2, self.conv3):
            x = jax.nn.relu(conv(x))
        logits = self.policy(x).reshape(x.shape[0], -1)
        value = jnp.tanh(self.value(jnp.mean(x, axis=(1, 2))))[:, 0]
        return logits, value


def tiny_network(env: gomoku_jax.Gomoku, seed: int = 0) -> tuple[Callable, Any]:
    """(apply(params, obs) -> (logits, value), params) of a randomly initialised TinyNet."""
    graphdef, params = nnx.split(TinyNet(env.observation_shape[-1], rngs=nnx.Rngs(seed)))

    def apply(params, obs):
        return nnx.merge(graphdef, params)(obs)

    return apply, params


def start_positions(env: gomoku_jax.Gomoku, batch: int, key: jax.Array, min_plies: int = 6,
                    max_plies: int = 20) -> State:
    """`batch` live positions after a random number of uniformly random plies in
    [min_plies, max_plies] (at most a third of the board), so the proximity mask is active.
    A ply that would end a game is not played."""
    max_plies = max(min(max_plies, env.num_actions // 3), 1)
    min_plies = min(min_plies, max_plies)
    k_init, k_plies, k_moves = jax.random.split(key, 3)

    @jax.jit
    def play(keys, plies, move_keys):
        states = jax.vmap(env.init)(keys)

        def body(states, xs):
            t, k = xs
            after = jax.vmap(env.step)(states, random_legal_action(k, states.legal_action_mask))
            keep = (t < plies) & ~after.terminated
            return jax.tree.map(lambda new, old: jnp.where(
                keep.reshape(keep.shape + (1,) * (new.ndim - 1)), new, old), after, states), None

        return jax.lax.scan(body, states, (jnp.arange(max_plies), move_keys))[0]

    plies = jax.random.randint(k_plies, (batch,), min_plies, max_plies + 1)
    return play(jax.random.split(k_init, batch), plies, jax.random.split(k_moves, max_plies))


def make_evaluators(env: gomoku_jax.Gomoku, seed: int = 0) -> dict[str, tuple[Any, Any]]:
    """name -> (evaluator, params) for "network", "heuristic" and "uniform"."""
    apply, params = tiny_network(env, seed)
    return {"network": (NetworkEvaluator(apply), params),
            "heuristic": (HeuristicEvaluator(), None),
            "uniform": (UniformEvaluator(), None)}


def take(states: State, batch: int) -> State:
    return jax.tree.map(lambda x: x[:batch], states)


def search_fn(evaluator, config: mcts.SearchConfig, sims: int, algorithm: str) -> Callable:
    """run(params, states, key) -> SearchOutput."""

    def run(params, states, key):
        return mcts.search(evaluator, config, sims, params, states, key, algorithm)

    return run


def _fresh_key(out, args):
    params, states, key = args
    return params, states, jax.random.fold_in(key, 1)


def measure_search(evaluators, config, algorithm: str, evaluator: str, states: State,
                   sims: int, repeats: int, seed: int = 0) -> Measurement:
    ev, params = evaluators[evaluator]
    compile_s, wall, cpu = time_compiled(search_fn(ev, config, sims, algorithm),
                                         (params, states, jax.random.key(seed)), repeats,
                                         thread=_fresh_key)
    return Measurement(algorithm, evaluator, states.board.shape[0], sims, compile_s, wall, cpu)


def tree_refusal(states: State, sims: int, config: mcts.SearchConfig) -> str:
    """'' if `check_tree_memory` accepts this search, else why it refuses (short)."""
    try:
        mcts.check_tree_memory(states, sims, config)
        return ""
    except ValueError:
        need = mcts.check_tree_memory(states, sims,
                                      dataclasses.replace(config, max_tree_bytes=2 ** 62))
        return f"refused by check_tree_memory (tree {need / 2 ** 30:.1f} GiB)"


def power_estimate(points: Sequence[tuple[float, float]], x: float, default: float,
                   lo: float, hi: float) -> Optional[float]:
    """Seconds at size `x`, extrapolated from (size, seconds) points at smaller sizes by a
    power law: the exponent fitted through the last two points (clamped to [lo, hi]), or
    `default` with one point. None without points."""
    points = sorted(p for p in points if p[0] < x)
    if not points:
        return None
    x1, t1 = points[-1]
    exponent = default
    if len(points) >= 2 and points[-2][1] > 0 and t1 > 0:
        x0, t0 = points[-2]
        exponent = min(max(math.log(t1 / t0) / math.log(x1 / x0), lo), hi)
    return t1 * (x / x1) ** exponent


# ----------------------------------------------------------------------------- part 1: grid

@dataclasses.dataclass
class GridCell:
    evaluator: str
    algorithm: str
    batch: int
    sims: int
    result: Optional[Measurement] = None
    estimate_s: Optional[float] = None  # estimated seconds of wall time per call
    skipped: str = ""

    def as_dict(self) -> dict:
        d = {"evaluator": self.evaluator, "algorithm": self.algorithm, "batch": self.batch,
             "simulations": self.sims, "skipped": self.skipped}
        if self.result is not None:
            m = self.result
            d.update(compile_s=m.compile_s, wall_s=m.wall_s, cpu_s=m.cpu_s,
                     ms_per_move=1e3 * m.wall_s, sims_per_wall_s=m.per_wall_s,
                     sims_per_cpu_s=m.per_cpu_s)
        return d


def _cell_wall(cell: GridCell) -> Optional[float]:
    return cell.result.wall_s if cell.result is not None else cell.estimate_s


def estimate_cell(cells: Sequence[GridCell], cell: GridCell) -> Optional[float]:
    """Wall seconds per call of `cell`, from the same row (evaluator, algorithm, sims) at
    smaller batches (power law, exponent fitted in [0.3, 1.2], 1 by default), else from the
    same batch at fewer simulations (exponent in [1, 3], 2 by default: mctx's cost per
    simulation grows with the tree)."""
    same = [c for c in cells if (c.evaluator, c.algorithm) == (cell.evaluator, cell.algorithm)
            and _cell_wall(c) is not None]
    row = [(c.batch, _cell_wall(c)) for c in same if c.sims == cell.sims]
    est = power_estimate(row, cell.batch, 1.0, 0.3, 1.2)
    if est is None:
        column = [(c.sims, _cell_wall(c)) for c in same if c.batch == cell.batch]
        est = power_estimate(column, cell.sims, 2.0, 1.0, 3.0)
    return est


def run_grid(evaluators, config, pool: State, batches: Sequence[int],
             sims_list: Sequence[int], algorithms: Sequence[str], evaluator_names: Sequence[str],
             repeats: int, max_seconds: float, cache: dict, log=print) -> list[GridCell]:
    """Every (evaluator, algorithm, sims, batch) cell, in that loop order, on the first
    `batch` start positions of `pool`. `cache` collects the measurements by (algorithm,
    evaluator, batch, sims) for reuse by the curve."""
    cells: list[GridCell] = []
    for evaluator, algorithm, sims, b in itertools.product(
            evaluator_names, algorithms, sorted(sims_list), sorted(batches)):
        cell = GridCell(evaluator, algorithm, b, sims)
        states = take(pool, b)
        cell.skipped = tree_refusal(states, sims, config) or _over_budget(
            cells, cell, repeats, max_seconds)
        if not cell.skipped:
            cell.result = measure_search(evaluators, config, algorithm, evaluator, states,
                                         sims, repeats)
            cache[(algorithm, evaluator, b, sims)] = cell.result
        cells.append(cell)
        log("  " + _grid_log_line(cell))
    return cells


def _over_budget(cells: Sequence[GridCell], cell: GridCell, repeats: int,
                 max_seconds: float) -> str:
    """'' if `cell` may run, else "skipped (est. N s)" (and its estimate kept in the cell):
    its estimated time is the last compile time of its (evaluator, algorithm) plus
    `repeats` + 1 calls of `estimate_cell`."""
    est = estimate_cell(cells, cell)
    if est is None:
        return ""
    compiled = [c.result.compile_s for c in cells if c.result is not None
                and (c.evaluator, c.algorithm) == (cell.evaluator, cell.algorithm)]
    total = (compiled[-1] if compiled else 0.0) + (repeats + 1) * est
    if total <= max_seconds:
        return ""
    cell.estimate_s = est
    return f"skipped (est. {total:.0f} s)"


def _grid_log_line(cell: GridCell) -> str:
    head = f"{cell.algorithm:<6} {cell.evaluator:<9} B={cell.batch:<5} S={cell.sims:<4}"
    if cell.result is None:
        return f"{head} {cell.skipped}"
    m = cell.result
    return (f"{head} compile {m.compile_s:6.2f} s  {1e3 * m.wall_s:9.1f} ms/move  "
            f"{fmt_rate(m.per_wall_s):>9} sims/s  {fmt_rate(m.per_cpu_s):>9} sims/CPU-s")


def render_grid(cells: Sequence[GridCell]) -> str:
    rows = []
    for c in cells:
        head = [c.evaluator, c.algorithm, str(c.batch), str(c.sims)]
        if c.result is None:
            rows.append(head + ["-", "-", "-", "-", c.skipped])
            continue
        m = c.result
        rows.append(head + [f"{m.compile_s:.1f}", _ms(m.wall_s), fmt_rate(m.per_wall_s),
                            fmt_rate(m.per_cpu_s), ""])
    return markdown_table(["evaluator", "algorithm", "batch", "simulations", "compile s",
                           "ms/move", "sims/s (wall)", "sims/CPU-s", "note"], rows)


def _ms(seconds: float) -> str:
    ms = 1e3 * seconds
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 1 else f"{ms:.2f}"


# ----------------------------------------------------------------------------- backward passes

def path_backward(tree: mctx.Tree, leaf_index: jax.Array) -> mctx.Tree:
    """mctx's backward pass (the same updates, the same result), touching only the path.

    From each board's leaf up to the root: the leaf value is discounted back
    (`v <- r(parent, a) + discount(parent, a) * v`), each parent's node value becomes the
    running mean `(value * visits + v) / (visits + 1)` and its visit count grows by one, and
    the edge (parent, a) gets the child's (already updated) node value and one more visit.

    The loop is written over the batch, not vmapped: its predicate "some board is not at
    the root yet" is one scalar, so a step gathers and scatters B entries in place
    (finished boards write out of range, dropped). The four written arrays ride in the
    loop's carry, but XLA updates loop-carried buffers in place, so a step touches O(B)
    entries. mctx vmaps a per-board while_loop, and vmap turns the batched predicate into
    a copy and select of the whole carried arrays every step: O(B * N * A).

    Args:
      tree: an mctx.Tree with batch B, N nodes, A actions.
      leaf_index: int[B], the node to back up from on each board (the root: no change).
    Returns:
      the tree with node_values, node_visits, children_values, children_visits updated.
    """
    batch, num_nodes = tree.node_values.shape
    rows = jnp.arange(batch)
    root = mctx.Tree.ROOT_INDEX

    def step(carry):
        node, value, node_values, node_visits, children_values, children_visits = carry
        live = node != root
        parent = jnp.where(live, tree.parents[rows, node], root)
        action = jnp.where(live, tree.action_from_parent[rows, node], 0)
        value = jnp.where(live, tree.children_rewards[rows, parent, action]
                          + tree.children_discounts[rows, parent, action] * value, value)
        visits = node_visits[rows, parent]
        parent_value = (node_values[rows, parent] * visits + value) / (visits + 1.0)
        child_value = node_values[rows, node]
        edge_visits = children_visits[rows, parent, action] + 1
        write = jnp.where(live, parent, num_nodes)  # out of range: dropped
        return (parent, value,
                node_values.at[rows, write].set(parent_value, mode="drop"),
                node_visits.at[rows, write].set(visits + 1, mode="drop"),
                children_values.at[rows, write, action].set(child_value, mode="drop"),
                children_visits.at[rows, write, action].set(edge_visits, mode="drop"))

    leaf = leaf_index.astype(jnp.int32)
    carry = (leaf, tree.node_values[rows, leaf], tree.node_values, tree.node_visits,
             tree.children_values, tree.children_visits)
    carry = jax.lax.while_loop(lambda c: jnp.any(c[0] != root), step, carry)
    return tree.replace(node_values=carry[2], node_visits=carry[3], children_values=carry[4],
                        children_visits=carry[5])


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


def search_tree(evaluator, config: mcts.SearchConfig, sims: int, params, states: State,
                key: jax.Array) -> mctx.Tree:
    """The tree a PUCT `search` builds. `search` returns only its summary, so
    `mctx.muzero_policy` is wrapped while tracing to keep its tree as an output."""
    policy = mctx.muzero_policy

    def run(params, states, key):
        trees = []

        def keep_tree(*args, **kwargs):
            out = policy(*args, **kwargs)
            trees.append(out.search_tree)
            return out

        with mock.patch.object(mctx, "muzero_policy", keep_tree):
            mcts.search(evaluator, config, sims, params, states, key, "muzero")
        return trees[0]

    return jax.jit(run)(params, states, key)


def time_with_output(fn: Callable, args: Sequence[Any], repeats: int, donate: bool = False
                     ) -> tuple[float, float, float, Any]:
    """`timing.time_compiled` that also returns the last call's output. With `donate`,
    `fn(x) -> x` is compiled with its argument donated and each call is fed the last
    output, so updating a big tree in place costs no copy in or out."""
    if donate:
        args = jax.tree.map(jnp.copy, tuple(args))  # leave the caller's arrays alone
    t0 = time.perf_counter()
    compiled = jax.jit(fn, donate_argnums=0 if donate else ()).lower(*args).compile()
    compile_s = time.perf_counter() - t0
    out = jax.block_until_ready(compiled(*args))
    walls, cpus = [], []
    for _ in range(repeats):
        if donate:
            args = (out,)
        w0, c0 = time.perf_counter(), time.process_time()
        out = jax.block_until_ready(compiled(*args))
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return compile_s, statistics.median(walls), statistics.median(cpus), out


def evaluator_sweep(evaluator, config: mcts.SearchConfig, calls: int) -> Callable:
    """run(params, states, key) -> float32[]: the evaluator (with the search's D4 transform)
    called `calls` times on the batch, each with a fresh key, all outputs consumed."""

    def run(params, states, key):
        def body(i, acc):
            logits, value = mcts.evaluate(evaluator, config, params, states,
                                          jax.random.fold_in(key, i))
            return acc + jnp.sum(logits) + jnp.sum(value)

        return jax.lax.fori_loop(0, calls, body, jnp.float32(0))

    return run


def selection_sweep(config: mcts.SearchConfig, calls: int) -> Callable:
    """run(tree, depth int32[B, N], key) -> int32[]: mctx's PUCT selection (`simulate`,
    set up as `mctx.muzero_policy` sets it up) from the root of `tree` to its frontier,
    `calls` times; returns the loop steps taken (per call, the deepest board's descent)."""
    select = functools.partial(mctx_action_selection.muzero_action_selection,
                               pb_c_init=config.pb_c_init, pb_c_base=config.pb_c_base)
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
    """One simulation count of the curve: wall/CPU seconds per call of each part (for S
    simulations on B boards), or why a part was not measured."""

    sims: int
    batch: int
    wall: dict = dataclasses.field(default_factory=dict)
    cpu: dict = dataclasses.field(default_factory=dict)
    compile: dict = dataclasses.field(default_factory=dict)
    skipped: dict = dataclasses.field(default_factory=dict)
    estimate: dict = dataclasses.field(default_factory=dict)  # wall s per call, estimated
    depth_mean: Optional[float] = None
    depth_max: Optional[int] = None
    backward_steps: Optional[int] = None  # loop steps of a sweep: sum over leaves of max depth

    def us_per_sim(self, part: str) -> Optional[float]:
        """Microseconds of wall time per simulation per board."""
        if part not in self.wall:
            return None
        return 1e6 * self.wall[part] / (self.sims * self.batch)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self) | {
            "us_per_sim": {p: self.us_per_sim(p) for p in self.wall}}


def _part_estimate(rows: Sequence[CurveRow], part: str, sims: int) -> Optional[float]:
    points = [(r.sims, r.wall.get(part, r.estimate.get(part))) for r in rows]
    points = [p for p in points if p[1] is not None]
    default = 1.0 if part.startswith("evaluator") else 2.0
    return power_estimate(points, sims, default, 1.0, 3.0)


def run_curve(evaluators, config, pool: State, batch: int, sims_list: Sequence[int],
              repeats: int, max_seconds: float, cache: dict, evaluator: str = "heuristic",
              log=print) -> list[CurveRow]:
    """Parts (i)-(vi) for each simulation count, on the first `batch` start positions;
    `cache` holds the grid's measurements, reused for (i) and (ii) where they match."""
    states = take(pool, batch)
    ev, params = evaluators[evaluator]
    rows: list[CurveRow] = []
    compile_s: dict[str, float] = {}
    for sims in sorted(sims_list):
        row = CurveRow(sims, batch)
        refusal = tree_refusal(states, sims, config)

        def over_budget(part: str, calls: int = repeats + 1) -> bool:
            if refusal:
                row.skipped[part] = refusal
                return True
            est = _part_estimate(rows, part, sims)
            total = None if est is None else compile_s.get(part, 0.0) + calls * est
            if total is not None and total > max_seconds:
                row.estimate[part] = est
                row.skipped[part] = f"skipped (est. {total:.0f} s)"
                return True
            return False

        def record(part: str, timing: tuple[float, float, float]):
            row.compile[part], row.wall[part], row.cpu[part] = timing
            compile_s[part] = timing[0]

        for part, name in (("search", evaluator), ("search (uniform)", "uniform")):
            cached = cache.get(("muzero", name, batch, sims))
            if cached is not None:
                record(part, (cached.compile_s, cached.wall_s, cached.cpu_s))
            elif not over_budget(part):
                m = measure_search(evaluators, config, "muzero", name, states, sims, repeats)
                cache[("muzero", name, batch, sims)] = m
                record(part, (m.compile_s, m.wall_s, m.cpu_s))

        if not over_budget("evaluator"):
            record("evaluator", time_compiled(evaluator_sweep(ev, config, sims),
                                              (params, states, jax.random.key(1)), repeats,
                                              thread=_fresh_key))

        # The tree parts need a real tree: one more search (compile + 1 call), within the
        # budget whenever the timed search (compile + repeats + 1 calls) was.
        if "search" in row.wall:
            tree = search_tree(ev, config, sims, params, states, jax.random.key(2))
            _tree_parts(row, tree, config, repeats, over_budget, record)
        else:
            for part in ("mctx backward", "path-only backward", "selection"):
                row.skipped[part] = "skipped (needs the search tree)"
        rows.append(row)
        log("  " + _curve_log_line(row))
    return rows


def _tree_parts(row: CurveRow, tree: mctx.Tree, config: mcts.SearchConfig, repeats: int,
                over_budget: Callable[[str], bool], record: Callable) -> None:
    """Parts (iv)-(vi) and the depth statistics of `row`, on a search's final `tree`."""
    depth = node_depths(tree)
    row.depth_mean = float(jnp.mean(depth[:, 1:]))
    row.depth_max = int(jnp.max(depth))
    row.backward_steps = int(jnp.sum(jnp.max(depth[:, 1:], axis=0)))
    for part, fn in (("mctx backward", mctx_backward), ("path-only backward", path_backward)):
        if not over_budget(part):
            record(part, time_with_output(backward_sweep(fn), (tree,), repeats,
                                          donate=True)[:3])
    if not over_budget("selection"):
        # Descents to the final tree's frontier run deeper than the search's own; the cost
        # per step does not depend on the tree, so scale it to the search's steps (the
        # depth of each new node, as for the backward).
        compile_s, wall, cpu, steps = time_with_output(
            selection_sweep(config, row.sims), (tree, depth, jax.random.key(4)), repeats)
        scale = row.backward_steps / max(int(steps), 1)
        record("selection", (compile_s, wall * scale, cpu * scale))


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
    """The curve table, then a line per simulation count on the cost of one backward step."""
    first = {p: next((r.us_per_sim(p) for r in rows if r.us_per_sim(p)), None)
             for p in CURVE_PARTS}
    table = []
    for r in rows:
        cells = [str(r.sims)]
        for part in CURVE_PARTS:
            growth = first[part] if part.startswith("search") else None
            us = r.us_per_sim(part)
            cells.append(_fmt_us(us, growth) if us is not None
                         else r.skipped.get(part, "-"))
        depth = "-" if r.depth_mean is None else f"{r.depth_mean:.1f} / {r.depth_max}"
        cells += [_fmt_us(_rest(r)), depth] + _shares(r)
        table.append(cells)
    header = ["S", f"(i) search, {evaluator}", "(ii) search, uniform", "(iii) evaluator",
              "(iv) mctx backward", "(v) path-only backward", "(vi) selection",
              "rest: (i)-(iii)-(iv)-(vi)", "leaf depth mean / max",
              "(iv) share of (i)", "(i) with (v) for (iv) would take"]
    lines = [markdown_table(header, table), ""]
    for r in rows:
        steps = r.backward_steps
        if steps and "mctx backward" in r.wall and "path-only backward" in r.wall:
            lines.append(
                f"- S={r.sims}: one backward step (all {r.batch} boards) costs "
                f"{1e6 * r.wall['mctx backward'] / steps:.1f} us in mctx vs "
                f"{1e6 * r.wall['path-only backward'] / steps:.2f} us path-only "
                f"({steps} steps per search)")
    return "\n".join(lines).rstrip()


def _rest(r: CurveRow) -> Optional[float]:
    """us per simulation per board of the search not in the evaluator, the backward or the
    selection: expansion, env step, masks, D4 transforms, loop overhead."""
    parts = ("search", "evaluator", "mctx backward", "selection")
    if not all(p in r.wall for p in parts):
        return None
    return r.us_per_sim("search") - sum(r.us_per_sim(p) for p in parts[1:])


def _shares(r: CurveRow) -> list[str]:
    """[the backward's share of (i), (i)'s projected time with path-only (as a fraction, and
    the speed-up)]. Only (i): (iv) and (v) back up (i)'s own tree; the uniform search (ii)
    grows a different (shallower) tree, so its share would not be comparable."""
    if "mctx backward" not in r.wall or "search" not in r.wall:
        return ["-", "-"]
    total, backward = r.wall["search"], r.wall["mctx backward"]
    share = f"{100 * backward / total:.0f}%"
    if "path-only backward" not in r.wall:
        return [share, "-"]
    left = max(total - backward + r.wall["path-only backward"], 1e-12)
    return [share, f"{100 * left / total:.0f}% ({total / left:.1f}x faster)"]


# ----------------------------------------------------------------------------- profile

def _hlo_sections(text: str) -> dict[str, dict[int, str]]:
    """The stack-frame tables at the end of an HLO module's text, by section name."""
    out: dict[str, dict[int, str]] = {}
    current = None
    for line in text.splitlines():
        if line in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            current = out.setdefault(line, {})
        elif current is not None and re.match(r"^\d+ ", line):
            i, rest = line.split(" ", 1)
            current[int(i)] = rest
        else:
            current = None
    return out


def op_locations(hlo_text: str) -> dict[str, tuple[str, str, str]]:
    """HLO instruction name -> (source file, function) of its innermost Python frame (JAX
    leaves its own frames out), and the op's JAX name path (e.g. ".../jit(_uniform)/add")."""
    sections = _hlo_sections(hlo_text)
    files = {i: v.strip('"') for i, v in sections.get("FileNames", {}).items()}
    funcs = {i: v.strip('"') for i, v in sections.get("FunctionNames", {}).items()}
    locs = {i: dict(re.findall(r"(\w+)=(\d+)", v))
            for i, v in sections.get("FileLocations", {}).items()}
    frames = {i: dict(re.findall(r"(\w+)=(\d+)", v))
              for i, v in sections.get("StackFrames", {}).items()}
    out = {}
    pattern = r'^\s*(?:ROOT )?%([\w.\-]+) = .*op_name="([^"]*)".*stack_frame_id=(\d+)'
    for name, op_name, frame in re.findall(pattern, hlo_text, re.M):
        loc = locs.get(int(frames.get(int(frame), {}).get("file_location_id", 0)))
        if loc:
            out[name] = (files.get(int(loc["file_name_id"]), ""),
                         funcs.get(int(loc["function_name_id"]), ""), op_name)
    return out


_MCTX_FUNCTIONS = {"backward": "mctx backward", "simulate": "mctx selection (simulate)",
                   "expand": "mctx expansion (tree writes)",
                   "update_tree_node": "mctx expansion (tree writes)",
                   "instantiate_tree_from_root": "mctx expansion (tree writes)",
                   "search": "mctx loop", "body_fun": "mctx loop"}


_RANDOM = re.compile(r"jit\(_(gamma|dirichlet|uniform|normal\w*|randint|gumbel|bernoulli|"
                     r"categorical|choice|permutation|threefry\w*|random_bits)\)")


def categorize(path: str, function: str, op_name: str = "") -> Optional[str]:
    """The part of a search an op belongs to, from its innermost frame (and, for random
    numbers, its JAX name path); None when the frame does not say (mctx's `update` helper
    serves both expansion and backward)."""
    path = path.replace(os.sep, "/")
    if _RANDOM.search(op_name):
        return "random numbers (threefry)"
    if "/mctx/" in path:
        if path.endswith(("action_selection.py", "qtransforms.py", "seq_halving.py")):
            return "mctx selection (simulate)"
        if path.endswith("policies.py"):
            return "mctx policy (root, output)"
        return _MCTX_FUNCTIONS.get(function)
    if path.endswith("benchmarks/search_throughput.py"):  # this file: TinyNet, harness
        return "evaluator" if function.startswith("TinyNet") else None
    if path.endswith("game/rules.py"):
        return "env step"
    if path.endswith(("search/mcts.py", "game/symmetry.py", "features/proximity.py")):
        return "search glue (masks, D4, noise)"
    if "/gomoku_jax/" in path or "/flax/" in path:
        return "evaluator"
    return None


def attribute_events(events: Sequence[dict], sources: dict[str, tuple[str, str, str]],
                     op_names: set[str]) -> dict[str, list[float]]:
    """category -> [exclusive microseconds, op runs] over trace events ("X" phase dicts
    with name, ts, dur, pid, tid). An event counts if it is an XLA op (`op_names`) or runs
    inside one; its category is `categorize` of its own source, else its enclosing
    event's: XLA's own copies, mctx's shared `update` helper and loop bookkeeping count for
    the op around them, e.g. the while loop of mctx's backward."""
    totals: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    by_thread = collections.defaultdict(list)
    for e in events:
        by_thread[(e.get("pid"), e.get("tid"))].append(e)
    for thread in by_thread.values():
        thread.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack: list[list] = []  # open events: [end, category, inside an XLA op, exclusive]
        for e in thread + [None]:
            while stack and (e is None or e["ts"] >= stack[-1][0]):
                _, category, inside, exclusive = stack.pop()
                if inside:
                    total = totals[category or "other (XLA copies, runtime)"]
                    total[0] += exclusive
                    total[1] += 1
            if e is None:
                break
            parent = stack[-1] if stack else [0.0, None, False, 0.0]
            parent[3] -= e["dur"]
            own = categorize(*sources[e["name"]]) if e["name"] in sources else None
            stack.append([e["ts"] + e["dur"], own or parent[1],
                          e["name"] in op_names or parent[2], float(e["dur"])])
    return dict(totals)


def profile_breakdown(fn: Callable, args: Sequence[Any], trace_dir: str) -> dict:
    """Trace one call of `jax.jit(fn)(*args)` with jax.profiler (the trace stays in
    `trace_dir`, for TensorBoard or Perfetto) and attribute its time (`attribute_events`).

    Returns {"parts": [(category, seconds, op runs)] largest first, "traced_s": wall time
    of the traced call, "untraced_s": of the same call untraced}. Tracing costs time per
    op run, so parts made of many small ops look bigger than they are.
    """
    compiled = jax.jit(fn).lower(*args).compile()
    jax.block_until_ready(compiled(*args))
    t0 = time.perf_counter()
    jax.block_until_ready(compiled(*args))
    untraced = time.perf_counter() - t0
    before = set(_trace_files(trace_dir))
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0  # XLA's ops are what we want, not Python frames
    with jax.profiler.trace(trace_dir, profiler_options=options):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        traced = time.perf_counter() - t0
    new = [p for p in _trace_files(trace_dir) if p not in before]
    if not new:
        raise RuntimeError(f"jax.profiler wrote no trace.json.gz under {trace_dir}")
    with gzip.open(new[0]) as f:
        events = [e for e in json.load(f).get("traceEvents", [])
                  if e.get("ph") == "X" and "dur" in e and "ts" in e]
    hlo = compiled.as_text()
    op_names = set(re.findall(r"^\s*(?:ROOT )?%([\w.\-]+) = ", hlo, re.M))
    totals = attribute_events(events, op_locations(hlo), op_names)
    parts = sorted(((k, us / 1e6, int(n)) for k, (us, n) in totals.items()),
                   key=lambda p: -p[1])
    return {"parts": parts, "traced_s": traced, "untraced_s": untraced}


def _trace_files(root: str) -> list[str]:
    return [os.path.join(d, f) for d, _, files in os.walk(root) for f in files
            if f.endswith("trace.json.gz")]


def render_profile(profile: dict) -> str:
    """The profile's parts with their traced time, op runs, and an estimate without the
    tracing: each op run is charged the average cost tracing added to the call,
    (traced - untraced wall time) / op runs, a first-order correction only."""
    runs = sum(p[2] for p in profile["parts"]) or 1
    per_run = max(profile["traced_s"] - profile["untraced_s"], 0.0) / runs
    est = {k: max(sec - per_run * n, 0.0) for k, sec, n in profile["parts"]}
    total = sum(est.values()) or 1.0
    table = markdown_table(
        ["part", "traced ms", "op runs", "est. ms untraced", "est. share"],
        [[k, f"{1e3 * sec:.1f}", str(n), f"{1e3 * est[k]:.1f}", f"{100 * est[k] / total:.0f}%"]
         for k, sec, n in sorted(profile["parts"], key=lambda p: -est[p[0]])])
    return (f"The traced call took {1e3 * profile['traced_s']:.1f} ms against "
            f"{1e3 * profile['untraced_s']:.1f} ms untraced, over {runs} op runs: tracing "
            f"adds about {1e6 * per_run:.2f} us per op run, which inflates the parts made of "
            f"many small ops (random numbers, selection, the backward's loop steps). The "
            f"estimate charges every op run that much; the timed table above is the "
            f"reference.\n\n" + table)


# ----------------------------------------------------------------------------- driver

def run_benchmark(board_size: int = 15, batches: Sequence[int] = DEFAULT_BATCHES,
                  sims_list: Sequence[int] = DEFAULT_SIMULATIONS,
                  algorithms: Sequence[str] = ALGORITHMS,
                  evaluator_names: Sequence[str] = GRID_EVALUATORS,
                  curve_batch: int = 64,
                  curve_sims: Sequence[int] = DEFAULT_CURVE_SIMULATIONS,
                  parts: Sequence[str] = ("grid", "curve"), repeats: int = 3,
                  max_seconds: float = 20.0, seed: int = 0, curve_evaluator: str = "heuristic",
                  profile_dir: Optional[str] = None, log=print) -> dict:
    """Run the grid and/or the curve, and profile one search if `profile_dir` is given (the
    curve's largest measured S up to PROFILE_MAX_SIMULATIONS: a trace holds an event per op
    run, millions for long searches). Returns {"grid": [GridCell], "curve": [CurveRow],
    "curve_evaluator": name, "profile": `profile_breakdown`'s dict or None, "profile_sims"}."""
    env = gomoku_jax.make("gomoku", board_size=board_size)
    config = mcts.SearchConfig()
    evaluators = make_evaluators(env, seed)
    size = max(list(batches if "grid" in parts else []) + [curve_batch])
    pool = start_positions(env, size, jax.random.key(seed))
    cache: dict = {}
    out: dict = {"grid": [], "curve": [], "curve_evaluator": curve_evaluator, "profile": None,
                 "profile_sims": None}
    if "grid" in parts:
        log("## grid")
        out["grid"] = run_grid(evaluators, config, pool, batches, sims_list, algorithms,
                               evaluator_names, repeats, max_seconds, cache, log)
    if "curve" in parts:
        log(f"## cost per simulation, batch {curve_batch}")
        out["curve"] = run_curve(evaluators, config, pool, curve_batch, curve_sims, repeats,
                                 max_seconds, cache, curve_evaluator, log)
    if profile_dir is not None:
        measured = [r.sims for r in out["curve"]
                    if "search" in r.wall and r.sims <= PROFILE_MAX_SIMULATIONS]
        sims = max(measured) if measured else min(curve_sims)
        ev, params = evaluators[curve_evaluator]
        log(f"## profiling one PUCT search, {curve_evaluator}, B={curve_batch}, S={sims}")
        try:
            out["profile"] = profile_breakdown(
                search_fn(ev, config, sims, "muzero"),
                (params, take(pool, curve_batch), jax.random.key(3)), profile_dir)
            out["profile_sims"] = sims
        except Exception as e:  # the trace format is not a stable API: report, go on
            log(f"  (profile breakdown unavailable: {type(e).__name__}: {e})")
    return out


def render_report(results: dict, board_size: int, repeats: int, curve_batch: int) -> str:
    n = f"{board_size}x{board_size}"
    evaluator = results.get("curve_evaluator", "heuristic")
    lines = [f"# Search throughput, {n} Gomoku (freestyle), median of {repeats}; "
             f"{describe_machine()}"]
    if results["grid"]:
        lines += ["", "## Simulations per second (SearchConfig() defaults, start positions "
                      "6-20 random plies deep; network = a tiny 3x32 conv stand-in, not the "
                      "real ResNet)", "",
                  render_grid(results["grid"])]
    if results["curve"]:
        lines += ["", f"## Cost per simulation, PUCT, batch {curve_batch}: us of wall time "
                      f"per simulation per board (x = vs the smallest S)", "",
                  f"(iii) is the {evaluator} evaluator alone, called S times; (iv) and (v) "
                  "back up every leaf of the tree of a real search (i), in order; (vi) is "
                  "mctx's selection, timed per descent step on that tree and scaled to the "
                  "search's steps. The last columns compare (iv) with "
                  "the full search (i) and project (i) with (iv) replaced by (v). The parts "
                  "are timed in separate calls, so 'rest' carries their noise and can come "
                  "out negative.", "",
                  render_curve(results["curve"], evaluator)]
    if results.get("profile"):
        lines += ["", f"## Where the time goes: jax.profiler, one PUCT search, {evaluator}, "
                      f"batch {curve_batch}, S={results['profile_sims']} (exclusive time of "
                      f"XLA ops, summed over threads)", "",
                  render_profile(results["profile"])]
    return "\n".join(lines)


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--batch-sizes", default=",".join(map(str, DEFAULT_BATCHES)),
                        help="grid batch sizes (default: %(default)s)")
    parser.add_argument("--simulations", default=",".join(map(str, DEFAULT_SIMULATIONS)),
                        help="grid simulation counts (default: %(default)s)")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS),
                        help="muzero and/or gumbel (default: %(default)s)")
    parser.add_argument("--evaluators", default=",".join(GRID_EVALUATORS),
                        help="grid evaluators: network and/or heuristic (default: %(default)s)")
    parser.add_argument("--curve-batch", type=int, default=64,
                        help="batch size of the cost-per-simulation curve (default: %(default)s)")
    parser.add_argument("--curve-simulations",
                        default=",".join(map(str, DEFAULT_CURVE_SIMULATIONS)),
                        help="simulation counts of the curve (default: %(default)s)")
    parser.add_argument("--curve-evaluator", default="heuristic", choices=GRID_EVALUATORS,
                        help="evaluator of the curve's search (i) and (iii) (default: %(default)s)")
    parser.add_argument("--parts", default="grid,curve", help="grid, curve or both")
    parser.add_argument("--max-seconds-per-cell", type=float, default=20.0,
                        help="skip a measurement whose estimated time (compile + warm-up + "
                             "repeats) is over this (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls, median reported")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", default=None, metavar="DIR",
                        help="also trace one curve search (the largest S measured, up to "
                             f"{PROFILE_MAX_SIMULATIONS}) with jax.profiler into DIR and "
                             "print where its time goes")
    parser.add_argument("--cpus", type=int, default=None,
                        help="pin the process to this many CPU cores before JAX starts")
    parser.add_argument("--out", default=None, help="also write the markdown report here")
    parser.add_argument("--json", default=None, help="also write raw measurements as JSON")
    return parser


def _names(text: str, allowed: Sequence[str], flag: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in allowed]
    if bad or not names:
        raise SystemExit(f"error: {flag} takes {', '.join(allowed)}, got {text!r}")
    return names


def main(args: argparse.Namespace) -> int:
    batches = parse_int_list(args.batch_sizes, "--batch-sizes")
    sims_list = parse_int_list(args.simulations, "--simulations")
    curve_sims = parse_int_list(args.curve_simulations, "--curve-simulations")
    algorithms = _names(args.algorithms, ALGORITHMS, "--algorithms")
    evaluator_names = _names(args.evaluators, GRID_EVALUATORS, "--evaluators")
    parts = _names(args.parts, ("grid", "curve"), "--parts")
    if args.repeats < 1 or args.curve_batch < 1 or not args.max_seconds_per_cell > 0:
        raise SystemExit("error: --repeats and --curve-batch must be >= 1 and "
                         "--max-seconds-per-cell > 0")
    setup_run(args.board_size, args.cpus)

    print(f"# Search throughput, {args.board_size}x{args.board_size} Gomoku "
          f"({describe_machine()})", flush=True)
    t0 = time.perf_counter()
    results = run_benchmark(args.board_size, batches, sims_list, algorithms, evaluator_names,
                            args.curve_batch, curve_sims, parts, args.repeats,
                            args.max_seconds_per_cell, args.seed, args.curve_evaluator,
                            args.profile,
                            log=lambda s: print(s, flush=True))
    report = render_report(results, args.board_size, args.repeats, args.curve_batch)
    print("\n" + report)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    if args.out:
        with open(args.out, "w") as f:
            f.write(report + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": describe_machine(), "board_size": args.board_size,
                       "repeats": args.repeats, "curve_batch": args.curve_batch,
                       "curve_evaluator": args.curve_evaluator,
                       "grid": [c.as_dict() for c in results["grid"]],
                       "curve": [r.as_dict() for r in results["curve"]],
                       "profile": results["profile"], "profile_sims": results["profile_sims"]},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
