"""Training throughput per preset: self-play positions/s and simulations/s, SGD samples/s,
network-evaluation FLOP/s and MFU, and one whole AlphaZero iteration, in one table.

    python experiments/bench_train.py --presets quick --out bench_train.md --json bench_train.json
    python experiments/bench_train.py --presets gomoku15 --games 8 --simulations 16   # shrunk

`--help` lists the options (`--set` overrides for every preset, the scaling knobs, eval batch
sizes, `--max-seconds`, `--force`, `--peak-tflops`). On a CPU a preset too heavy for the
time budget is shrunk or skipped with a note unless `--force`. JAX's persistent compilation
cache stays off here, so the compile column is real compile time.
"""

import sys

from gomoku_jax.benchmarks import train_throughput

if __name__ == "__main__":
    sys.exit(train_throughput.main(train_throughput.build_parser().parse_args()))
