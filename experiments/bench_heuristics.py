"""Heuristics throughput: proximity mask, pattern features and a heuristic move, vmapped,
beside seed 000's NumPy double-loop proximity function measured in the same run.

    python experiments/bench_heuristics.py --batch-sizes 1,16,256,1024,4096 --out table.md
"""

import sys

from gomoku_jax.benchmarks import heuristics

if __name__ == "__main__":
    sys.exit(heuristics.main(heuristics.build_parser().parse_args()))
