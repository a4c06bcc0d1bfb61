#!/usr/bin/env bash
# Danihelka et al. (ICLR 2022) on our games: does Gumbel AlphaZero keep improving at n = 2
# and 4 simulations where PUCT AlphaZero stalls? Every part is an ordinary, resumable
# `gomoku-jax compare`: rerun this script to continue a killed one. Results: OUT/*/results.md,
# results.json, curves.png; the write-up is docs/compare.md. Every part rates against the
# game's calibrated reference ladder (compare's default), its own per output directory.
#
#   bash experiments/gumbel_vs_puct.sh [OUT]        # default OUT: runs/gumbel_vs_puct
set -euo pipefail
OUT=${1:-runs/gumbel_vs_puct}
ARMS=()
for n in 2 4 16; do
  ARMS+=(--arm "puct-n$n: selfplay.num_simulations=$n")
  ARMS+=(--arm "gumbel-n$n: search.algorithm=gumbel selfplay.num_simulations=$n")
done
ARMS+=(--arm "puct-n24: selfplay.num_simulations=24")   # the quick preset's own search
# The explanation's test: n = 2 without the proximity prior in self-play's search.
UNSHAPED=(--arm "puct-n2-unshaped: selfplay.num_simulations=2 search.prior_shaping=off"
          --arm "gumbel-n2-unshaped: search.algorithm=gumbel selfplay.num_simulations=2 search.prior_shaping=off")

# 1. 9x9 four in a row (the quick preset), equal iterations: 9 arms x 3 seeds x 12 iterations.
gomoku-jax compare --out "$OUT/gomoku_iterations" --preset quick --seeds 3 --iterations 12 \
  --points 4 --games 32 "${ARMS[@]}" "${UNSHAPED[@]}"

# 1b. The same checkpoints rated by their raw policy (no search at test time): the
#     network's policy alone, the part the paper's argument is about (the 32-simulation
#     PUCT of part 1 also searches with the value head). No training: --runs reads part 1's.
gomoku-jax compare --out "$OUT/gomoku_iterations_policy" --runs "$OUT/gomoku_iterations/runs" \
  --preset quick --seeds 3 --iterations 12 --points 4 --games 32 \
  --eval-agent policy:evaluator=network "${ARMS[@]}" "${UNSHAPED[@]}"

# 2. The same arms at equal training time: 48 s of training per run (compilation not
#    counted; about what 12 iterations at n = 2 take), 2 seeds. The schedule is laid over
#    12 iterations as in part 1 (so the configs, and their compiled iterations, are part
#    1's), and the cheapest arm stops there if it gets that far.
gomoku-jax compare --out "$OUT/gomoku_seconds" --preset quick --seeds 2 --seconds 48 \
  --max-iterations 12 --points 3 --games 32 "${ARMS[@]}"

# 3. Faux Go 9x9 (the fauxgo preset), a smaller grid: n = 2 and 16, 2 seeds, 10 iterations.
gomoku-jax compare --out "$OUT/fauxgo_iterations" --preset fauxgo --seeds 2 --iterations 10 \
  --points 3 --games 32 \
  --arm "puct-n2: selfplay.num_simulations=2" \
  --arm "gumbel-n2: search.algorithm=gumbel selfplay.num_simulations=2" \
  --arm "puct-n16: selfplay.num_simulations=16" \
  --arm "gumbel-n16: search.algorithm=gumbel selfplay.num_simulations=16"
