"""Throughput of the board heuristics, vmapped, beside seed 000's NumPy double loop.

    python experiments/bench_heuristics.py --batch-sizes 1,256,4096 --out heuristics.md

Boards per second for the proximity mask, the pattern heat map and a full heuristic move
(threats for both colours, HeuristicScore, tie-break), at several batch sizes, on positions
taken from random games (15 to 60 stones). The reference is seed 000's proximity function
as the seed describes it: a Python double loop over cells and stones in NumPy, one board at
a time, measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.benchmarks.timing import (describe_machine, fmt_rate, parse_int_list,
                                          setup_run, time_compiled, time_python)
from gomoku_jax.games.gomoku.features import pattern_features, proximity_mask
from gomoku_jax.markdown import table as markdown_table, write_report

DEFAULT_BATCHES = (1, 16, 256, 1024, 4096)
FUNCTIONS = ("proximity mask", "pattern features", "heuristic move")


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


def run_benchmark(board_size: int = 15, batches: Sequence[int] = DEFAULT_BATCHES,
                  repeats: int = 3, numpy_boards: int = 50,
                  functions: Sequence[str] = FUNCTIONS, log=print) -> list[list[str]]:
    """Table rows: the NumPy reference, then each of `functions` at each batch size."""
    env = gomoku_jax.make("gomoku", board_size=board_size)
    k = env.config.win_length
    pool = random_positions(env, max(batches))
    heuristic = agents.make("heuristic").bind(env)

    wall, cpu, count = time_python(
        lambda: len([seed_proximity_numpy(b) for b in np.asarray(pool.board[:numpy_boards])]),
        repeats)
    numpy_rate = count / cpu
    rows = [["proximity mask", "seed NumPy double loop", "1", "-", fmt_rate(count / wall),
             fmt_rate(numpy_rate), "1.0x"]]
    log(f"  seed NumPy proximity: {fmt_rate(numpy_rate)} boards/CPU-s")

    kernels = {
        "proximity mask": lambda s, key: jax.vmap(proximity_mask)(s.board),
        "pattern features": lambda s, key: jax.vmap(
            lambda b, c: pattern_features(b, c, k, env.config.rule))(s.board, s.color),
        "heuristic move": lambda s, key: heuristic.act_batch(
            None, None, s, jax.random.split(key, s.board.shape[0]))[0],
    }
    for name in functions:
        fn = kernels[name]
        for b in batches:
            states = jax.tree.map(lambda x: x[:b], pool)
            compile_s, w, c = time_compiled(fn, (states, jax.random.key(0)), repeats)
            ratio = f"{b / c / numpy_rate:.0f}x" if name == "proximity mask" else "-"
            rows.append([name, "gomoku_jax (jit + vmap)", str(b), f"{compile_s:.2f}",
                         fmt_rate(b / w), fmt_rate(b / c), ratio])
            log(f"  {name:<17} B={b:<5} {fmt_rate(b / c):>9} boards/CPU-s")
    return rows


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--batch-sizes", default=",".join(map(str, DEFAULT_BATCHES)))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--numpy-boards", type=int, default=50,
                        help="boards per timed run of the NumPy reference")
    parser.add_argument("--functions", default="proximity,patterns,move",
                        help="which of proximity (mask), patterns (features), move (the "
                             "heuristic player's) to time (default: %(default)s)")
    parser.add_argument("--cpus", type=int, default=None, help="pin to this many cores")
    parser.add_argument("--out", default=None, help="also write the markdown table here")
    return parser


def main(args: argparse.Namespace) -> int:
    batches = parse_int_list(args.batch_sizes, "--batch-sizes")
    short = dict(zip(("proximity", "patterns", "move"), FUNCTIONS))
    names = [x.strip() for x in args.functions.split(",") if x.strip()]
    if not names or any(x not in short for x in names):
        raise SystemExit(f"error: --functions takes {', '.join(short)}, got {args.functions!r}")
    if args.repeats < 1 or args.numpy_boards < 1:
        raise SystemExit("error: --repeats and --numpy-boards must be >= 1")
    setup_run(args.board_size, args.cpus)
    t0 = time.perf_counter()
    rows = run_benchmark(args.board_size, batches, args.repeats, args.numpy_boards,
                         [short[x] for x in names])
    table = (f"Heuristics throughput, {args.board_size}x{args.board_size}, boards per second, "
             f"median of {args.repeats}; {describe_machine()}\n\n"
             + markdown_table(["function", "implementation", "batch", "compile s",
                               "boards/s (wall)", "boards/CPU-s", "vs NumPy (CPU)"], rows))
    print("\n" + table + f"\n\n(total {time.perf_counter() - t0:.0f} s)")
    write_report(table, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(build_parser().parse_args()))
