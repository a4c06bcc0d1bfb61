"""Pure MCTS (UCT with random playouts), checked as a reference baseline must be: it takes
wins in one and blocks fours on generated positions, and more playouts beat fewer.

    python experiments/pure_mcts.py --board-size 7 --win-length 4 --playouts 100,400,1600
    python experiments/pure_mcts.py --arena 200,800 --games 64

Prints two markdown tables: the share of generated positions (Gomoku's synthetic tactical
examples) where the agent plays a winning move (the side to move has a four) or the only
block (the opponent has a lone four and the side to move none), per playout budget; and,
with `--arena A,B`, the arena result of B playouts against A (every opening both ways, Elo
with its interval). Progress bars on stderr count the (position kind, playouts) rows, then
the arena's games (not with `--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import gomoku_jax
from gomoku_jax import agents, progress
from gomoku_jax.benchmarks.timing import describe_machine, parse_int_list
from gomoku_jax.eval import elo, run_match
from gomoku_jax.markdown import table


def four_positions(env, kind: str, count: int, seed: int):
    """`count` positions where the side to move can win in one ("win": it has a four) or
    must block the opponent's lone four ("block"), from the game's synthetic tactical
    examples (seed 000 level 3, checked on the finished position); with the answer cells
    bool[count, A]."""
    examples = jax.device_get(env.synthetic_examples(jax.random.key(seed), 16 * count))
    wanted = examples.value_weight == (1.0 if kind == "win" else 0.0)
    index = np.flatnonzero((examples.weight > 0) & wanted)[:count]
    if len(index) < count:
        raise ValueError(f"only {len(index)} valid {kind} examples; draw more")
    states = jax.tree.map(lambda x: jnp.asarray(x[index]), examples.state)
    return states, examples.policy[index] > 0


def solve_rate(env, playouts: int, states, answers, seed: int) -> tuple[int, float]:
    agent = agents.make("pure_mcts", num_simulations=playouts).bind(env)
    keys = jax.random.split(jax.random.key(seed), answers.shape[0])
    act = jax.jit(agent.act_batch)
    act(None, None, states, keys)[0].block_until_ready()
    start = time.perf_counter()
    actions = np.asarray(act(None, None, states, keys)[0])
    seconds = time.perf_counter() - start
    return int(answers[np.arange(len(actions)), actions].sum()), seconds / len(actions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=7)
    parser.add_argument("--win-length", type=int, default=4)
    parser.add_argument("--playouts", default="100,400,1600")
    parser.add_argument("--positions", type=int, default=32, help="per kind")
    parser.add_argument("--arena", default="", help="A,B: B playouts against A")
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    progress.add_argument(parser)
    args = parser.parse_args()
    env = gomoku_jax.make("gomoku", board_size=args.board_size, win_length=args.win_length)
    print(f"# Pure MCTS on {args.board_size}x{args.board_size}, k={args.win_length} "
          f"({describe_machine()})\n")
    shown = progress.shows(not args.no_progress)
    budgets = parse_int_list(args.playouts, "--playouts")
    rows = []
    with progress.bar(2 * len(budgets), "solve", "config", enabled=shown) as bar:
        say = progress.printer(bar)  # stdout
        for kind in ("win", "block"):
            states, answers = four_positions(env, kind, args.positions, args.seed)
            for playouts in budgets:
                hits, seconds = solve_rate(env, playouts, states, answers, args.seed)
                rows.append([kind, str(playouts), f"{hits}/{len(answers)}",
                             f"{seconds * 1e3:.1f}"])
                say("  " + " | ".join(rows[-1]))
                bar.update(1)
    print()
    print(table(["position", "playouts", "solved", "ms per position (batched)"], rows))
    if args.arena:
        low, high = parse_int_list(args.arena, "--arena")
        a = agents.make("pure_mcts", num_simulations=high)
        b = agents.make("pure_mcts", num_simulations=low)
        openings = env.default_openings()
        g = max(1, args.games // (2 * len(openings)))
        start = time.perf_counter()
        with progress.bar(2 * len(openings) * g, "arena", "game", enabled=shown) as bar:
            result = run_match(env, a, b, jax.random.key(args.seed), g,
                               names=(f"pure_mcts:{high}", f"pure_mcts:{low}"),
                               on_games=bar.update if shown else None)
        print()
        print(table(["A", "B", "games", "A's W-D-L", "A's score", "Elo A - B (95%)", "seconds"],
                    [[result.agent_a, result.agent_b, str(result.games), str(result.record),
                      f"{result.score:.1%}", elo.format_elo(result.elo),
                      f"{time.perf_counter() - start:.0f}"]]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
