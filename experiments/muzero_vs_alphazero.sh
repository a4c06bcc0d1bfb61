#!/usr/bin/env bash
# MuZero against AlphaZero on 9×9 four in a row at equal training time: each algorithm's
# quick preset (AlphaZero's `quick`, MuZero's `muzero_quick`: 24 simulations), and the same
# at 8 simulations, where Gumbel MuZero's claim applies (MuZero with PUCT and with Gumbel,
# AlphaZero with PUCT). Every run gets the same seconds of training (compilation not
# counted), 3 seeds per arm, and every checkpoint is rated with its own run's agent (the
# algorithm's search at 32 simulations, no threat search at the root) on the game's
# calibrated reference ladder. A resumable `gomoku-jax compare`: rerun to continue a killed
# one. Results: OUT/results.md, results.json, curves.png; the write-up is docs/muzero.md.
#
#   bash experiments/muzero_vs_alphazero.sh [OUT] [SECONDS]   # default runs/muzero_vs_alphazero 120
set -euo pipefail
OUT=${1:-runs/muzero_vs_alphazero}
SECONDS_PER_RUN=${2:-120}
gomoku-jax compare --out "$OUT" --preset quick --seeds 3 --seconds "$SECONDS_PER_RUN" \
  --max-iterations 36 --points 3 --games 32 \
  --eval-agent "trained:num_simulations=32,threat_search=0" \
  --arm "alphazero:" \
  --arm "muzero: preset=muzero_quick" \
  --arm "alphazero-n8: selfplay.num_simulations=8" \
  --arm "muzero-n8: preset=muzero_quick selfplay.num_simulations=8" \
  --arm "gumbel-muzero-n8: preset=muzero_quick search.algorithm=gumbel selfplay.num_simulations=8"
