"""AlphaZero's named configs: `gomoku-jax train --preset NAME`, NAME one of quick,
gomoku15_cpu, fauxgo, test, gomoku15, gomoku15_finetune, seed (registered in
`train.config.PRESETS`); each with a note on what it is for (`gomoku-jax train --help`
lists them)."""

from __future__ import annotations

import dataclasses

from gomoku_jax.games.fauxgo.config import FauxGoConfig
from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.nets.resnet import NET_PRESETS
from gomoku_jax.search.puct import PUCT
from gomoku_jax.train.alphazero.config import (
    AlphaZeroConfig,
    EvalSection,
    OptimSection,
    ReplaySection,
    SelfPlaySection,
)
from gomoku_jax.train.config import PRESETS, RunSection

# A 2-core CPU in under 4 minutes: 9×9 four in a row (five in a row on 9×9 ends mostly in
# draws against the heuristic player: too little signal for a few minutes of training), a
# 3×32 net with the heuristics' pattern plane as a sixth input, 24-simulation PUCT with the
# parent-value Q, 36 iterations, the arena only at the end. Self-play is almost all network
# FLOPs, so its cost is games × moves × simulations: 36 × 24 beat 30 × 32 at the same time
# (the three-seed table in docs/training.md).
_QUICK = AlphaZeroConfig(
    game=GameConfig(board_size=9, win_length=4, observation="canonical",
                    feature_plane="patterns"),
    net=dataclasses.replace(NET_PRESETS["small"], blocks=3),
    search=PUCT(q_transform="parent"),
    selfplay=SelfPlaySection(games=64, moves=16, num_simulations=24),
    replay=ReplaySection(capacity=20_000, synthetic_fraction=0.1, min_size=1000),
    optim=OptimSection(learning_rate=2e-3, batch_size=256, sgd_steps=8,
                       schedule="warmup_cosine", warmup_steps=20, grad_clip=1.0),
    eval=EvalSection(every=0, games=64, agent_simulations=64,
                     opponents=("random", "heuristic", "pure_mcts:num_simulations=64")),
    run=RunSection(iterations=36, checkpoint_every=10))

# 15×15 freestyle on a 2-core CPU in about an hour (alone on the machine), the shipped
# default network: the 4×32 trunk with the pattern plane and slim heads (4 head channels,
# a 128-unit value layer: 0.39M params, 1.6 MB; seed's 32-channel heads would be 3.5M on
# 15×15), 32-simulation PUCT with the parent-value Q. A random network's self-play is noise
# and costs several times a heuristic search on a CPU, so the first 150 of 400 iterations
# search with Gomoku's heuristic evaluator (the net trains on those games' visit policies and
# outcomes), then the network plays. Measured on the 2-core CPU shared with another job
# (load ~4): ~12 s per bootstrap iteration, ~20 s per network iteration (8 SGD steps of
# 256 are ~10 s of either); alone about half. The arena only at the end.
_GOMOKU15_CPU = AlphaZeroConfig(
    game=GameConfig(board_size=15, win_length=5, observation="canonical",
                    feature_plane="patterns"),
    net=dataclasses.replace(NET_PRESETS["small"], head_channels=4, value_hidden=128),
    search=PUCT(q_transform="parent"),
    selfplay=SelfPlaySection(games=64, moves=16, num_simulations=32,
                             bootstrap_iterations=150, bootstrap_evaluator="heuristic"),
    replay=ReplaySection(capacity=50_000, synthetic_fraction=0.05, min_size=2000),
    optim=OptimSection(learning_rate=2e-3, batch_size=256, sgd_steps=8,
                       schedule="warmup_cosine", warmup_steps=40, grad_clip=1.0),
    eval=EvalSection(every=0, games=32, agent_simulations=64,
                     opponents=("random", "heuristic", "mcts:threat_search=0")),
    run=RunSection(iterations=400, checkpoint_every=10))

# Each preset registered as every plug-in is (`train.config.PRESETS`), with its one line for
# `gomoku-jax train --help`.
PRESETS.register("quick", _QUICK, note="9×9 four in a row on a CPU in minutes: the main job")
PRESETS.register("gomoku15_cpu", _GOMOKU15_CPU,
                 note="15×15 freestyle on a 2-core CPU, about an hour: the shipped network's "
                      "recipe")
# Faux Go 9×9 on a 2-core CPU in about 5 minutes: the quick preset's net, search and
# optimiser, no synthetic examples (the game has none), the arena at the end.
_FAUXGO = dataclasses.replace(
    _QUICK, game=FauxGoConfig(board_size=9),
    selfplay=dataclasses.replace(_QUICK.selfplay, num_simulations=32),
    replay=dataclasses.replace(_QUICK.replay, synthetic_fraction=0.0),
    eval=EvalSection(every=0, games=32, agent_simulations=64,
                     opponents=("random", "fauxgo_heuristic",
                                "pure_mcts:num_simulations=64")),
    run=RunSection(iterations=30, checkpoint_every=10))
PRESETS.register("fauxgo", _FAUXGO, note="Faux Go 9×9 on a CPU, about 5 minutes")
# Tests: a 7×7 four in a row, the tiny net, a few simulations.
_TEST = AlphaZeroConfig(
    game=GameConfig(board_size=7, win_length=4, observation="canonical"),
    net=NET_PRESETS["tiny"],
    selfplay=SelfPlaySection(games=8, moves=6, num_simulations=4),
    replay=ReplaySection(capacity=256, synthetic_fraction=0.25, min_size=8),
    optim=OptimSection(learning_rate=1e-3, batch_size=16, sgd_steps=2),
    eval=EvalSection(every=0, games=8, agent_simulations=4,
                     opponents=("random", "previous")),
    run=RunSection(iterations=2, checkpoint_every=1))
PRESETS.register("test", _TEST, note="7×7, tiny, for the test suite")
# 15×15 freestyle on a GPU with seed 001's network (10 × 128) in bfloat16. The first 30
# iterations (about 490k positions) search with Gomoku's heuristic evaluator, as
# `gomoku15_cpu`'s first 150 do: started from a random network, an H100 run's self-play
# fell by iteration 11 into first-player wins in 13 plies that neither side's search
# defended. PUCT with the parent-value Q, as `gomoku15_cpu` (whose run held): at small
# scale on a CPU, after the same 30-iteration bootstrap, the network's self-play drifted
# toward short first-player wins more slowly with it than with AlphaZero's Q of 0 for an
# unvisited move, and a bootstrap alone (30 or 120 iterations) did not stop the drift
# (docs/gpu.md).
_GOMOKU15 = AlphaZeroConfig(
    game=GameConfig(board_size=15, win_length=5, observation="canonical"),
    net=dataclasses.replace(NET_PRESETS["seed"], dtype="bfloat16"),
    search=PUCT(q_transform="parent"),
    selfplay=SelfPlaySection(games=512, moves=32, num_simulations=128,
                             bootstrap_iterations=30, bootstrap_evaluator="heuristic"),
    replay=ReplaySection(capacity=200_000, synthetic_fraction=0.05, min_size=20_000),
    optim=OptimSection(learning_rate=1e-3, batch_size=1024, sgd_steps=50,
                       schedule="warmup_cosine", warmup_steps=500, grad_clip=1.0),
    eval=EvalSection(every=20, games=64, agent_simulations=128,
                     opponents=("random", "heuristic", "mcts", "previous")),
    run=RunSection(iterations=2000, checkpoint_every=20))
PRESETS.register("gomoku15", _GOMOKU15,
                 note="15×15 freestyle on a GPU, seed 001's 10×128 network in bfloat16")
# The shipped network's recipe on a GPU, warm-started from the shipped network itself
# (`run.init_from="default"`: the same game, 4×32 trunk and pattern plane): 16 times
# `gomoku15_cpu`'s games per call and 4 times its simulations, so each iteration adds
# about 16k positions searched at 128 simulations; 32 SGD steps of 1,024 sample each
# position about twice, as `gomoku15_cpu`'s 8 of 256 do. For a network past the shipped
# one, kept only on a paired win against it (docs/strength.md).
_GOMOKU15_FINETUNE = dataclasses.replace(
    _GOMOKU15_CPU,
    selfplay=SelfPlaySection(games=1024, moves=16, num_simulations=128),
    replay=ReplaySection(capacity=200_000, synthetic_fraction=0.05, min_size=16_384),
    optim=OptimSection(learning_rate=5e-4, batch_size=1024, sgd_steps=32,
                       schedule="warmup_cosine", warmup_steps=100, grad_clip=1.0),
    eval=EvalSection(every=0, games=32, agent_simulations=64,
                     opponents=("random", "heuristic", "mcts:threat_search=0")),
    run=RunSection(iterations=300, checkpoint_every=5, init_from="default"))
PRESETS.register("gomoku15_finetune", _GOMOKU15_FINETUNE,
                 note="15×15 freestyle on a GPU, warm-started from the shipped network")
# Seed 001's schedule as written: 200 episodes, then 50 steps of batch 1024.
_SEED = AlphaZeroConfig(
    selfplay=SelfPlaySection(games=200, moves=225, num_simulations=400,
                             carry_games=False),
    run=RunSection(iterations=1000))
PRESETS.register("seed", _SEED, note="seed 001's schedule as written")
