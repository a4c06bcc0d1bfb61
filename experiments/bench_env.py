"""Env throughput benchmark: gomoku_jax vs OpenSpiel gomoku and pgx, one table.

    python experiments/bench_env.py --batch-sizes 1,256,4096,16384 --out bench_env.md

Same as `gomoku-jax bench`; `--help` lists the options. JAX's persistent compilation cache
stays off here, so the compile column is real compile time.
"""

import sys

from gomoku_jax.benchmarks import env_throughput

if __name__ == "__main__":
    sys.exit(env_throughput.main(env_throughput.build_parser().parse_args()))
