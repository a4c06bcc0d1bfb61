"""MuZero's named configs (`gomoku-jax train --algo muzero --preset NAME`), registered in
`train.config.PRESETS`, each with a note on what it is for (`gomoku-jax train --help`
lists them)."""

from __future__ import annotations

import dataclasses

from gomoku_jax import games
from gomoku_jax.nets.muzero import MUZERO_NET_PRESETS
from gomoku_jax.search.puct import PUCT
from gomoku_jax.train.alphazero.config import EvalSection, SelfPlaySection
from gomoku_jax.train.config import PRESETS, OptimSection, ReplaySection, RunSection
from gomoku_jax.train.muzero.config import MuZeroConfig, MuZeroSection


def _gomoku(**kw):
    return games.spec_class("gomoku")(observation="canonical", **kw)


# Tests: 7×7 four in a row, the tiny networks with an 8-channel latent, a few simulations
# and a 3-step unroll; 16 moves an iteration, so that games end and the first iteration
# trains.
_TEST = MuZeroConfig(
    game=_gomoku(board_size=7, win_length=4),
    net=dataclasses.replace(MUZERO_NET_PRESETS["tiny"], latent_channels=8),
    selfplay=SelfPlaySection(games=8, moves=16, num_simulations=4),
    replay=ReplaySection(capacity=256, min_size=8),
    optim=OptimSection(learning_rate=1e-3, batch_size=16, sgd_steps=2),
    eval=EvalSection(every=0, games=8, agent_simulations=4,
                     opponents=("random", "previous")),
    muzero=MuZeroSection(unroll_steps=3),
    run=RunSection(iterations=2, checkpoint_every=1))
PRESETS.register("muzero_test", _TEST, note="MuZero on 7×7, tiny, for the test suite")

# A 2-core CPU in under 10 minutes: AlphaZero's quick game (9×9 four in a row with the
# pattern plane), 2 blocks of 32 channels in h and in g, 24-simulation PUCT with the
# parent-value Q on the learned model, a 5-step unroll. The first 8 of 36 iterations play
# their games with Gomoku's heuristic searching the real game (a random model's self-play
# teaches little, and AlphaZero's quick preset has tactical examples MuZero's windows
# cannot take), and each iteration takes 16 SGD steps of 128 windows: with 8 steps of 256
# and no bootstrap the run scored 13-0-51 against `pure_mcts:num_simulations=64`, with the
# bootstrap and 16 steps of 256 64-0-0 but 17 s an iteration alone on the 2-core CPU (an
# unrolled step costs about 6 forward passes of a trunk: 0.8 s at 256), over the 10-minute
# budget; docs/muzero.md.
_QUICK = MuZeroConfig(
    game=_gomoku(board_size=9, win_length=4, feature_plane="patterns"),
    net=dataclasses.replace(MUZERO_NET_PRESETS["small"], blocks=2),
    search=PUCT(q_transform="parent"),
    selfplay=SelfPlaySection(games=64, moves=16, num_simulations=24,
                             bootstrap_iterations=8, bootstrap_evaluator="heuristic"),
    replay=ReplaySection(capacity=20_000, min_size=1000),
    optim=OptimSection(learning_rate=2e-3, batch_size=128, sgd_steps=16,
                       schedule="warmup_cosine", warmup_steps=20, grad_clip=1.0),
    eval=EvalSection(every=0, games=64, agent_simulations=64,
                     opponents=("random", "heuristic", "pure_mcts:num_simulations=64")),
    muzero=MuZeroSection(unroll_steps=5),
    run=RunSection(iterations=36, checkpoint_every=10))
PRESETS.register("muzero_quick", _QUICK,
                 note="MuZero on 9×9 four in a row, a 2-core CPU in under 10 minutes")

# pgx's connect_four (6×7, gravity): the quick preset's networks and optimiser, no
# bootstrap (the game has no heuristic evaluator).
_CONNECT_FOUR = dataclasses.replace(
    _QUICK, game=games.spec_class("pgx")(env_id="connect_four"),
    selfplay=dataclasses.replace(_QUICK.selfplay, bootstrap_iterations=0),
    eval=EvalSection(every=0, games=64, agent_simulations=64,
                     opponents=("random", "pure_mcts:num_simulations=64")),
    run=RunSection(iterations=30, checkpoint_every=10))
PRESETS.register("muzero_connect_four", _CONNECT_FOUR,
                 note="MuZero on pgx's connect_four, a CPU, minutes")

# 15×15 freestyle on a GPU: 6 blocks of 128 channels in h and in g with a 32-channel
# latent (a 64-simulation tree of 512 boards holds 512 × 65 latents of 15×15×32 float32,
# 0.96 GB), 64-simulation PUCT, a 5-step unroll, bfloat16 compute; the first 100
# iterations bootstrapped with the heuristic (AlphaZero's `gomoku15` without one got stuck
# in first-player wins, docs/gpu.md). Timed, not trained: 5.3 s an iteration of the
# learned model's self-play and SGD on an H200 (docs/muzero.md).
_GOMOKU15 = MuZeroConfig(
    game=_gomoku(board_size=15, win_length=5),
    net=dataclasses.replace(MUZERO_NET_PRESETS["paper"], blocks=6, channels=128,
                            latent_channels=32, dtype="bfloat16"),
    search=PUCT(q_transform="parent"),
    selfplay=SelfPlaySection(games=512, moves=32, num_simulations=64,
                             bootstrap_iterations=100, bootstrap_evaluator="heuristic"),
    replay=ReplaySection(capacity=200_000, min_size=20_000),
    optim=OptimSection(learning_rate=1e-3, batch_size=1024, sgd_steps=50,
                       schedule="warmup_cosine", warmup_steps=500, grad_clip=1.0),
    eval=EvalSection(every=20, games=64, agent_simulations=128,
                     opponents=("random", "heuristic", "mcts", "previous")),
    muzero=MuZeroSection(unroll_steps=5),
    run=RunSection(iterations=2000, checkpoint_every=20))
PRESETS.register("muzero_gomoku15", _GOMOKU15,
                 note="MuZero on 15×15 freestyle, a GPU")
