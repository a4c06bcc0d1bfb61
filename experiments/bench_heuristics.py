"""Throughput of the board heuristics, vmapped, beside their references.

    python experiments/bench_heuristics.py --batch-sizes 1,256,4096 --out heuristics.md

Boards per second for the proximity mask, the threat codes of one colour (`threats`), the
pattern heat map and a full heuristic move (threats and HeuristicScore for both colours,
proximity, tie-break), at several batch sizes, on positions taken from random games (15 to
60 stones). Each row has its reference, measured in the same run:

- the proximity mask: seed 000's proximity function as the seed describes it, a Python
  double loop over cells and stones in NumPy, one board at a time;
- threats, pattern features and the heuristic move: the same function computed the
  previous way, "scan" (`threats_scan`: the patterns evaluated window by window on the
  line planes; HeuristicScore's (c, n) likewise), beside today's default, "table" (one
  base-3 window number per cell and line, one gather from a table built from the scan).

The last column is the CPU-time speed-up over the reference at the same batch size. Each
repeat times back-to-back calls for at least 0.05 s (one call at large batches). A progress
bar on stderr counts the rows measured (not with `--no-progress` or when stderr is not a
terminal).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from typing import Callable, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

import gomoku_jax
from gomoku_jax import agents, progress
from gomoku_jax.agents.heuristic import HeuristicAgent
from gomoku_jax.benchmarks.timing import (
    describe_machine,
    fmt_rate,
    parse_int_list,
    setup_run,
    time_python,
)
from gomoku_jax.games.gomoku.features import pattern_features, proximity_mask, threats
from gomoku_jax.games.gomoku.features.cell_values import cell_values
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report

DEFAULT_BATCHES = (1, 16, 256, 1024, 4096)
FUNCTIONS = ("proximity mask", "threats", "pattern features", "heuristic move")
SHORT_NAMES = ("proximity", "threats", "patterns", "move")
METHOD_NAMES = {"scan": "gomoku_jax scan (previous)", "table": "gomoku_jax table lookup"}
MIN_TIMED_SECONDS = 0.05  # per repeat: small batches are timed over many calls


@dataclasses.dataclass(frozen=True)
class ScanHeuristicAgent(HeuristicAgent):
    """The heuristic player with its cell values computed the previous way (`method="scan"`),
    the reference of the "heuristic move" rows."""

    def cell_values(self, board, colour, win_length, rule, forbidden=None):
        return cell_values(board, colour, win_length, rule, self.patterns, self.score_weight,
                           self.heuristic_score, method="scan", forbidden=forbidden)


def seed_proximity_numpy(board: np.ndarray) -> np.ndarray:
    """Seed 000's proximity mask, the slow way it describes: for every empty cell, the
    Chebyshev distance to every stone (opening exception below 5 stones)."""
    h, w = board.shape
    if np.sum(board != 0) < 5:
        return np.ones((h, w), np.float32)
    stones = np.argwhere(board != 0)
    mask = np.full((h, w), 0.1, np.float32)
    for r in range(h):
        for c in range(w):
            if board[r, c] != 0:
                mask[r, c] = 0.0
                continue
            nearest = min(max(abs(r - sr), abs(c - sc)) for sr, sc in stones)
            mask[r, c] = {1: 1.0, 2: 0.5, 3: 0.2}.get(nearest, 0.05)
    return mask


def random_positions(env, count: int, seed: int = 0) -> gomoku_jax.State:
    """`count` live positions from random games, 15 to 60 stones each (batched State)."""
    rng = np.random.default_rng(seed)
    states = []
    while len(states) < count:
        moves = rng.permutation(env.num_actions)[: rng.integers(15, 61)]
        try:
            states.append(env.from_moves(moves.tolist()))
        except ValueError:  # the random game ended early: draw another
            continue
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def time_calls(fn, args, repeats: int) -> tuple[float, float, float]:
    """(compile s, median wall s per call, median process CPU s per call) of `jax.jit(fn)`.

    After one warm-up call, each repeat times back-to-back calls (each waited for) filling
    at least MIN_TIMED_SECONDS, so one-board calls of ~100 us are timed in steady state,
    not by a single call's dispatch jitter.
    """
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    compile_s = time.perf_counter() - t0
    jax.block_until_ready(compiled(*args))
    t0 = time.perf_counter()
    jax.block_until_ready(compiled(*args))
    calls = max(1, min(10_000, int(MIN_TIMED_SECONDS / (time.perf_counter() - t0))))
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(calls):
            jax.block_until_ready(compiled(*args))
        walls.append((time.perf_counter() - w0) / calls)
        cpus.append((time.process_time() - c0) / calls)
    return compile_s, statistics.median(walls), statistics.median(cpus)


def count_rows(batches: Sequence[int], functions: Sequence[str]) -> int:
    """The rows `run_benchmark` measures: the progress bar's total."""
    return sum(len(batches) * (1 if name == "proximity mask" else 2) for name in functions) + (
        "proximity mask" in functions)


def run_benchmark(board_size: int = 15, batches: Sequence[int] = DEFAULT_BATCHES,
                  repeats: int = 3, numpy_boards: int = 50,
                  functions: Sequence[str] = FUNCTIONS, log=print,
                  tick: Callable[[int], None] = lambda n: None) -> list[list[str]]:
    """Table rows: the NumPy proximity reference, then for each of `functions` and batch
    size its reference (the NumPy row, or the scan) and the jitted function (the table).
    `tick(1)` after each row (`count_rows` in all)."""
    env = gomoku_jax.make("gomoku", board_size=board_size)
    k, rule = env.config.win_length, env.config.rule
    pool = random_positions(env, max(batches))
    agents_by_method = {"scan": ScanHeuristicAgent().bind(env),
                        "table": agents.make("heuristic").bind(env)}

    rows = []
    numpy_rate = None
    if "proximity mask" in functions:
        wall, cpu, count = time_python(
            lambda: len([seed_proximity_numpy(b)
                         for b in np.asarray(pool.board[:numpy_boards])]), repeats)
        numpy_rate = count / cpu
        rows.append(["proximity mask", "seed NumPy double loop", "1", "-",
                     fmt_rate(count / wall), fmt_rate(numpy_rate), "1.0x"])
        log(f"  seed NumPy proximity: {fmt_rate(numpy_rate)} boards/CPU-s")
        tick(1)

    def kernel(name: str, method: str):
        if name == "proximity mask":
            return lambda s, key: jax.vmap(proximity_mask)(s.board)
        if name == "threats":
            return lambda s, key: jax.vmap(
                lambda b, c: threats(b, c, k, rule, method))(s.board, s.color)
        if name == "pattern features":
            return lambda s, key: jax.vmap(
                lambda b, c: pattern_features(b, c, k, rule, method=method))(s.board, s.color)
        agent = agents_by_method[method]
        return lambda s, key: agent.act_batch(
            None, None, s, jax.random.split(key, s.board.shape[0]))[0]

    for name in functions:
        methods = ("table",) if name == "proximity mask" else ("scan", "table")
        for b in batches:
            states = jax.tree.map(lambda x: x[:b], pool)
            reference_rate = numpy_rate
            for method in methods:
                compile_s, w, c = time_calls(kernel(name, method), (states, jax.random.key(0)),
                                             repeats)
                if name == "proximity mask":
                    implementation = "gomoku_jax (jit + vmap)"
                    ratio = f"{b / c / reference_rate:.0f}x"
                elif method == "scan":
                    implementation, ratio, reference_rate = METHOD_NAMES[method], "1.0x", b / c
                else:
                    implementation = METHOD_NAMES[method]
                    ratio = f"{b / c / reference_rate:.1f}x"
                rows.append([name, implementation, str(b), f"{compile_s:.2f}",
                             fmt_rate(b / w), fmt_rate(b / c), ratio])
                log(f"  {name:<17} {method:<5} B={b:<5} {fmt_rate(b / c):>9} boards/CPU-s "
                    f"{ratio:>7}")
                tick(1)
    return rows


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--batch-sizes", default=",".join(map(str, DEFAULT_BATCHES)))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--numpy-boards", type=int, default=50,
                        help="boards per timed run of the NumPy reference")
    parser.add_argument("--functions", default=",".join(SHORT_NAMES),
                        help="which of proximity (mask), threats, patterns (features), move "
                             "(the heuristic player's) to time (default: %(default)s)")
    parser.add_argument("--cpus", type=int, default=None, help="pin to this many cores")
    parser.add_argument("--out", default=None, help="also write the markdown table here")
    progress.add_argument(parser)
    return parser


def main(args: argparse.Namespace) -> int:
    batches = parse_int_list(args.batch_sizes, "--batch-sizes")
    short = dict(zip(SHORT_NAMES, FUNCTIONS))
    names = [x.strip() for x in args.functions.split(",") if x.strip()]
    if not names or any(x not in short for x in names):
        raise SystemExit(f"error: --functions takes {', '.join(short)}, got {args.functions!r}")
    if args.repeats < 1 or args.numpy_boards < 1:
        raise SystemExit("error: --repeats and --numpy-boards must be >= 1")
    setup_run(args.board_size, args.cpus)
    t0 = time.perf_counter()
    functions = [short[x] for x in names]
    with progress.bar(count_rows(batches, functions), "bench_heuristics", "config",
                      enabled=not args.no_progress) as bar:
        # the lines on stdout, through the bar when one shows
        rows = run_benchmark(args.board_size, batches, args.repeats, args.numpy_boards,
                             functions, log=progress.printer(bar), tick=bar.update)
    table = (f"Heuristics throughput, {args.board_size}x{args.board_size}, boards per second, "
             f"median of {args.repeats}; {describe_machine()}\n\n"
             + markdown_table(["function", "implementation", "batch", "compile s",
                               "boards/s (wall)", "boards/CPU-s", "speed-up (CPU)"], rows)
             + "\n\nspeed-up: CPU time of the reference row (seed NumPy, or the scan at the "
             "same batch) over this row's.")
    print("\n" + table + f"\n\n(total {time.perf_counter() - t0:.0f} s)")
    write_report(table, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
