"""A batch of vmapped random games on device, with a throughput line and one final board."""

from __future__ import annotations

import argparse
import time
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

import gomoku_jax
from gomoku_jax.games.gomoku.config import RULES
from gomoku_jax.games.protocol import is_over
from gomoku_jax.games.random_play import random_legal_action


def play_random_games(env: gomoku_jax.Gomoku, key: jax.Array, batch: int):
    """Play `batch` uniformly random games to the end, all at once on device.

    One `lax.while_loop` steps the vmapped env until every game is over (at most N*N moves).
    Returns the final states (leaves with a leading [batch] axis) and, per game, the number
    of moves played: int32[batch].
    """
    init_key, play_key = jax.random.split(key)
    states = jax.vmap(env.init)(jax.random.split(init_key, batch))

    def body(carry):
        states, i = carry
        actions = random_legal_action(jax.random.fold_in(play_key, i), states.legal_action_mask)
        return jax.vmap(env.step)(states, actions), i + 1

    states, _ = jax.lax.while_loop(lambda c: ~jnp.all(is_over(c[0])), body, (states, 0))
    return states, states.move_count


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--win-length", type=int, default=5)
    parser.add_argument("--rule", default="freestyle", choices=RULES,
                        help="the rule (default %(default)s)")
    parser.add_argument("--batch", type=int, default=4096, help="games played at once")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(args: argparse.Namespace) -> int:
    if args.batch < 1:
        raise SystemExit(f"error: --batch must be >= 1, got {args.batch}")
    try:
        env = gomoku_jax.make("gomoku", board_size=args.board_size, win_length=args.win_length,
                              rule=args.rule)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    play = jax.jit(play_random_games, static_argnums=(0, 2))
    key = jax.random.key(args.seed)
    t0 = time.perf_counter()
    jax.block_until_ready(play(env, key, args.batch))
    compile_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    states, moves = jax.block_until_ready(play(env, jax.random.fold_in(key, 1), args.batch))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0

    winner = np.asarray(states.winner)
    moves = np.asarray(moves)
    n = args.board_size
    print(f"{args.batch} random games of {n}x{n} {args.rule} Gomoku "
          f"(k={args.win_length}) on {jax.default_backend()}, vmapped in one "
          f"lax.while_loop:")
    print(f"  black wins {np.mean(winner == 1):.1%}, white wins {np.mean(winner == -1):.1%}, "
          f"draws {np.mean(winner == 0):.1%}; mean game length {moves.mean():.1f} moves")
    played = int(moves.sum())  # steps on games already over are not counted
    print(f"  throughput: {played / wall / 1e6:.2f} M moves/s ({played / cpu / 1e6:.2f} M per "
          f"CPU-second), {args.batch / wall:,.0f} games/s; compile {compile_s:.1f} s")
    print("\nOne of the final boards:")
    print(gomoku_jax.to_text(states, index=int(np.argmax(moves))))
    return 0
