"""The root threat search (`Env.forcing_moves`, Gomoku's VCF) on a batch of mid-game
positions: vmapped with batch-level conds (the accelerator layout) against one board at a
time under `lax.map` (the CPU default), measured in the same run.

    python experiments/bench_vcf.py --board-size 15 --batch 16 --plies 40 --max-nodes 512

The positions come from games the search agent without VCF plays against itself from the
game's openings (sampling its moves, so the games differ), every 4th ply of the first
`--plies`; each batch is the B games at one ply. The table gives the compile time and the
summed wall time of one call per batch, and checks that both layouts return the same moves
and masks. Progress bars on stderr count the plies played, then the batches searched (not
with `--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Optional, Sequence

import jax
import numpy as np

import gomoku_jax
from gomoku_jax import progress
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.benchmarks.timing import describe_machine
from gomoku_jax.eval.arena import opening_states
from gomoku_jax.games.gomoku.threat_moves import forcing_moves
from gomoku_jax.markdown import table as markdown_table


def positions(board_size: int, batch: int, plies: int, seed: int = 0,
              tick: Callable[[int], None] = lambda n: None) -> list:
    """Batches of `batch` states (one game per opening, cycled), every 4th ply; `tick(1)`
    after each ply."""
    env = gomoku_jax.make("gomoku", board_size=board_size)
    openings = env.default_openings()
    states = opening_states(env, [openings[i % len(openings)] for i in range(batch)])
    agent = make_agent("mcts:threat_search=0,num_simulations=32,greedy=false").bind(env)
    keys = jax.random.split(jax.random.key(seed), batch)
    agent_states = jax.vmap(agent.init)(keys)
    act, step = jax.jit(agent.act_batch), jax.jit(jax.vmap(env.step))
    out = []
    for ply in range(plies):
        keys = jax.random.split(jax.random.fold_in(jax.random.key(seed), ply), batch)
        actions, agent_states, _ = act(None, agent_states, states, keys)
        states = step(states, actions)
        if ply % 4 == 3:
            out.append(states)
        tick(1)
    return out


def run(board_size: int, batch: int, plies: int, max_nodes: int, seed: int = 0,
        show_progress: bool = False) -> list:
    """[(layout, compile s, total ms, (win, allowed) of the last batch)] for both layouts;
    `show_progress`: bars over the plies played and the batches searched."""
    with progress.bar(plies, "positions", "ply", enabled=show_progress) as bar:
        batches = positions(board_size, batch, plies, seed, tick=bar.update)
    rows = []
    with progress.bar(2 * len(batches), "forcing_moves", "batch",
                      enabled=show_progress) as bar:
        for layout, one in (("vmap, batch-level conds", False), ("lax.map, one board", True)):
            fn = jax.jit(lambda s, one=one: forcing_moves(s, max_nodes,
                                                          one_board_at_a_time=one))
            t0 = time.perf_counter()
            compiled = fn.lower(batches[0]).compile()
            compile_s = time.perf_counter() - t0
            total, outs = 0.0, []
            for states in batches:
                t0 = time.perf_counter()
                outs.append(jax.block_until_ready(compiled(states)))
                total += time.perf_counter() - t0
                bar.update(1)
            rows.append((layout, compile_s, 1000 * total, outs))
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--plies", type=int, default=40)
    parser.add_argument("--max-nodes", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    progress.add_argument(parser)
    args = parser.parse_args(argv)
    if args.batch < 1 or args.plies < 4 or args.max_nodes < 1:
        raise SystemExit("error: --batch and --max-nodes must be >= 1, --plies >= 4")
    rows = run(args.board_size, args.batch, args.plies, args.max_nodes, args.seed,
               show_progress=not args.no_progress)
    same = all(np.array_equal(a, b) for (_, _, _, x), (_, _, _, y) in zip(rows, rows[1:])
               for ox, oy in zip(x, y) for a, b in zip(ox, oy))
    base = rows[0][2]
    print(f"# forcing_moves, {args.board_size}x{args.board_size}, batch {args.batch}, "
          f"{len(rows[0][3])} batches, max_nodes {args.max_nodes} ({describe_machine()})\n")
    print(markdown_table(["layout", "compile s", "total ms", "ms per board", "speed-up"],
                         [[name, f"{c:.1f}", f"{t:.0f}",
                           f"{t / (len(outs) * args.batch):.2f}", f"{base / t:.1f}x"]
                          for name, c, t, outs in rows]))
    print(f"\nsame moves and masks in both layouts: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
