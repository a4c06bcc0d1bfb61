"""The threat tables against the scan they are built from, on many random boards: for each
k and rule, `threats(..., method="table")` and `threats_scan` on `--boards` random boards of
(2k + 2)^2 cells (every cell's window reaches past an edge somewhere), stone density from
empty to full and one colour dominating a third of the boards, so fives and overlines
occur. Prints the differing cells per case; exits 1 if any differ.

    python experiments/check_threat_tables.py --boards 100000

The test suite runs the same comparison on 102,400 boards in all
(tests/games/gomoku/features/test_tables.py); this is the heavier run (10^5 boards per
case took 25 s on a 2-core CPU). A progress bar on stderr counts the boards (not with
`--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable

import jax
import jax.numpy as jnp

from gomoku_jax import progress
from gomoku_jax.games.gomoku.features.patterns import threats, threats_scan

RULES = ("freestyle", "exact5")
CHUNK = 10_000


def random_boards(key: jax.Array, count: int, n: int) -> tuple[jax.Array, jax.Array]:
    """(int8[count, n, n] boards, int8[count] colours): per board a density in [0, 1.05)
    and a black share among 0.5, 0.8, 0.2, 0.97, 0.03."""
    k_density, k_share, k_cells, k_colour = jax.random.split(key, 4)
    density = jax.random.uniform(k_density, (count, 1, 1), maxval=1.05)
    share = jax.random.choice(k_share, jnp.array([0.5, 0.5, 0.8, 0.2, 0.97, 0.03]),
                              (count, 1, 1))
    u = jax.random.uniform(k_cells, (count, n, n))
    boards = jnp.where(u < density * share, 1, jnp.where(u < density, -1, 0))
    colours = jnp.where(jax.random.bernoulli(k_colour, 0.5, (count,)), 1, -1)
    return boards.astype(jnp.int8), colours.astype(jnp.int8)


def checked_boards(boards: int) -> int:
    """The boards checked per case: `boards` rounded up to whole chunks."""
    chunk = min(CHUNK, boards)
    return -(-boards // chunk) * chunk


def differing_cells(k: int, rule: str, boards: int, seed: int,
                    tick: Callable[[int], None] = lambda n: None) -> tuple[int, int]:
    """(boards checked, cells over boards x 4 lines where the table's code differs from the
    scan's). Boards go in chunks of min(CHUNK, boards), one compile per case, so the count
    is rounded up to a whole number of chunks (`checked_boards`); `tick(n)` after each
    chunk of n boards."""
    n, chunk = 2 * k + 2, min(CHUNK, boards)

    @jax.jit
    def count(b, c):
        table = jax.vmap(lambda x, y: threats(x, y, k, rule, "table"))(b, c)
        scan = jax.vmap(lambda x, y: threats_scan(x, y, k, rule))(b, c)
        return jnp.sum(table != scan)

    key = jax.random.fold_in(jax.random.key(seed), 10 * k + RULES.index(rule))
    chunks = -(-boards // chunk)
    bad = 0
    for i in range(chunks):
        bad += int(count(*random_boards(jax.random.fold_in(key, i), chunk, n)))
        tick(chunk)
    return chunks * chunk, bad


def main(argv=None, log=print) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boards", type=int, default=100_000, help="boards per (k, rule)")
    parser.add_argument("--win-lengths", default="3,4,5,6")
    parser.add_argument("--seed", type=int, default=0)
    progress.add_argument(parser)
    args = parser.parse_args(argv)
    if args.boards < 1:
        raise SystemExit(f"error: --boards must be >= 1, got {args.boards}")
    start, failures = time.perf_counter(), 0
    ks = [int(x) for x in args.win_lengths.split(",")]
    shown = progress.shows(not args.no_progress)
    total = len(ks) * len(RULES) * checked_boards(args.boards)
    with progress.bar(total, "check_threat_tables", "board", enabled=shown) as bar:
        say = bar.write if shown else log  # through the bar when one shows
        for k in ks:
            for rule in RULES:
                checked, bad = differing_cells(k, rule, args.boards, args.seed, bar.update)
                failures += bad > 0
                say(f"k={k} {rule}: {checked:,} boards of {2 * k + 2}x{2 * k + 2}, "
                    f"{bad} differing cells")
    log(f"{time.perf_counter() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
