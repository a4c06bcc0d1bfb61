"""GMO's named configs (`gomoku-jax train --algo gmo --preset NAME`), registered in
`train.config.PRESETS`, each with a note on what it is for (`gomoku-jax train --help` lists
them)."""

from __future__ import annotations

import dataclasses

from gomoku_jax import games
from gomoku_jax.games.protocol import GameSpec
from gomoku_jax.nets.gmo import GMOConfig
from gomoku_jax.train.config import PRESETS, RunSection
from gomoku_jax.train.gmo.config import (
    DataSection,
    GMOEvalSection,
    GMOOptimSection,
    GMOReplaySection,
    GMOTrainConfig,
)


def _gomoku(**kw) -> GameSpec:
    return games.spec_class("gomoku")(**kw)


# A 2-core CPU in minutes: 9×9 four in a row (as AlphaZero's quick preset) with the
# heuristics' pattern plane in the observation, seed 002's network sizes, positions from
# 16-simulation PUCT with the heuristic evaluator, the arena at the end.
_GMO_QUICK = GMOTrainConfig(
    game=_gomoku(board_size=9, win_length=4, observation="canonical",
                 feature_plane="patterns"),
    data=DataSection(agent="mcts:num_simulations=16", games=128, random_plies=2, epsilon=0.1),
    replay=GMOReplaySection(capacity=50_000, min_size=512),
    optim=GMOOptimSection(learning_rate=1e-3, batch_size=256, sgd_steps=32),
    eval=GMOEvalSection(every=0, games=64,
                        opponents=("random", "heuristic", "mcts:num_simulations=64")),
    run=RunSection(iterations=60, checkpoint_every=10))

# Each preset registered as every plug-in is (`train.config.PRESETS`), with its one line for
# `gomoku-jax train --help`.
PRESETS.register("gmo_quick", _GMO_QUICK, note="9×9 four in a row on a CPU, minutes")
# Faux Go 9×9 on a CPU: positions from 16-simulation pure MCTS (random playouts; 32
# games of ~130 plies take ~18 s on 2 cores), Faux Go's opponents.
_GMO_FAUXGO = dataclasses.replace(
    _GMO_QUICK, game=games.spec_class("fauxgo")(board_size=9),
    data=DataSection(agent="pure_mcts:num_simulations=16", games=32, random_plies=2,
                     epsilon=0.1),
    eval=GMOEvalSection(every=0, games=32, opponents=(
        "random", "fauxgo_heuristic", "pure_mcts:num_simulations=64")),
    run=RunSection(iterations=20, checkpoint_every=5))
PRESETS.register("gmo_fauxgo", _GMO_FAUXGO, note="Faux Go 9×9 on a CPU")
# 15×15 freestyle on a GPU: 64-simulation PUCT games, 512 at a time.
_GMO_GPU = GMOTrainConfig(
    game=_gomoku(board_size=15, win_length=5, observation="canonical",
                 feature_plane="patterns"),
    data=DataSection(agent="mcts:num_simulations=64", games=512, random_plies=4,
                     epsilon=0.1),
    replay=GMOReplaySection(capacity=500_000, min_size=20_000),
    optim=GMOOptimSection(learning_rate=1e-3, batch_size=1024, sgd_steps=64,
                          schedule="warmup_cosine", warmup_steps=500),
    eval=GMOEvalSection(every=50, games=64,
                        opponents=("random", "heuristic", "mcts", "previous")),
    run=RunSection(iterations=1000, checkpoint_every=25))
PRESETS.register("gmo_gpu", _GMO_GPU, note="15×15 freestyle on a GPU")
# Tests: 7×7 four in a row, a tiny GMO, random players' games.
_GMO_TEST = GMOTrainConfig(
    game=_gomoku(board_size=7, win_length=4, observation="canonical"),
    gmo=GMOConfig(state_dim=16, move_dim=16, hidden_dim=32, part_dim=8, top_k=2,
                  optim_steps=2, mc_samples=2, novelty_memory_size=8),
    data=DataSection(agent="random", games=8, random_plies=0, epsilon=0.0),
    replay=GMOReplaySection(capacity=512, min_size=8),
    optim=GMOOptimSection(learning_rate=1e-3, batch_size=16, sgd_steps=2),
    eval=GMOEvalSection(every=0, games=8, opponents=("random", "previous")),
    run=RunSection(iterations=2, checkpoint_every=1))
PRESETS.register("gmo_test", _GMO_TEST, note="7×7, tiny, for the tests")
