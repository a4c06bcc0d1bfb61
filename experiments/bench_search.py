"""Search throughput: simulations per second of mctx PUCT and Gumbel MuZero (tiny network and
heuristic evaluators), and the cost-per-simulation curve with mctx's backward pass against a
path-only one.

    python experiments/bench_search.py --out bench_search.md --json bench_search.json

`--help` lists the options (batch sizes, simulation counts, the time budget per cell,
`--profile DIR`). JAX's persistent compilation cache stays off here, so the compile column
is real compile time.
"""

import sys

from gomoku_jax.benchmarks import search_throughput

if __name__ == "__main__":
    sys.exit(search_throughput.main(search_throughput.build_parser().parse_args()))
