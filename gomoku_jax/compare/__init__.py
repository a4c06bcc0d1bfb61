"""Training comparisons: arms (config overrides) × seeds under one budget, checkpoints
rated against fixed references on one Elo scale, learning curves with intervals.

    gomoku-jax compare --out cmp --preset quick --iterations 20 --seeds 3 \\
        --arm "puct-n2: search.algorithm=puct selfplay.num_simulations=2" \\
        --arm "gumbel-n2: search.algorithm=gumbel selfplay.num_simulations=2"

`spec` says what a comparison is, `runner` trains and rates (resumable), `stats` fits the
scale and the intervals, `report` writes the tables, JSON and plot.
"""
