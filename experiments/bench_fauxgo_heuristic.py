"""How long one move of Faux Go's heuristic AI (`fauxgo_heuristic`, seed 004) takes, batched
with jit + vmap, beside the plain-Python reference measured in the same run.

    python experiments/bench_fauxgo_heuristic.py --batch-sizes 1,64,1024 --out heuristic.md

Positions come from random games (20 to 70 plies) on an N x N board (default 9). A row of
gomoku_jax is one batched move (vetoes, nine scores and the draw for every board of the
batch); the reference is `tests/games/fauxgo/fauxgo_heuristic_reference.py`, the seed's way:
one board at a time, every candidate and every opponent reply played out on a copy of the
board with breadth-first regions (it computes the same vetoes and scores, and the test suite
checks that they agree). A progress bar on stderr counts the rows measured (not with
`--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import gomoku_jax
from gomoku_jax import agents, progress
from gomoku_jax.benchmarks.timing import (
    describe_machine,
    fmt_rate,
    parse_int_list,
    time_compiled,
    time_python,
)
from gomoku_jax.markdown import table, write_report

REFERENCE_DIR = pathlib.Path(__file__).resolve().parent.parent / "tests" / "games" / "fauxgo"


def random_positions(env, count: int, seed: int = 0):
    """`count` live positions of random games, 20 to 70 plies in (a batched State)."""
    n2 = env.config.num_cells
    plies = np.random.default_rng(seed).integers(20, 71, count)

    @jax.jit
    def play(key):
        k_init, k_play = jax.random.split(key)
        states = jax.vmap(env.init)(jax.random.split(k_init, count))

        def move(states, xs):
            t, key = xs
            legal = states.legal_action_mask.at[:, n2].set(False)  # no passes: no early end
            action = jax.random.categorical(key, jnp.where(legal, 0.0, -jnp.inf), axis=-1)
            after = jax.vmap(env.step)(states, action)
            keep = (t < plies) & ~after.terminated
            return jax.tree.map(lambda a, b: jnp.where(
                keep.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), after, states), None

        return jax.lax.scan(move, states, (jnp.arange(70), jax.random.split(k_play, 70)))[0]

    return play(jax.random.key(seed))


def reference_move_rate(states, boards: int, repeats: int) -> tuple[float, float]:
    """(moves per wall second, per CPU second) of the plain-Python reference."""
    sys.path.insert(0, str(REFERENCE_DIR))
    from fauxgo_heuristic_reference import (
        WEIGHTS,
        components,
        legal_placements,
        position_of,
        vetoes,
    )

    n = states.board.shape[-1]
    games = [position_of(n, np.asarray(states.board[i]), np.asarray(states.owner[i]),
                         int(states.color[i])) for i in range(boards)]

    def moves() -> int:
        for game in games:
            best = []
            for cell in legal_placements(game):
                if any(vetoes(game, cell)):
                    continue
                parts = components(game, cell)
                best.append((sum(WEIGHTS[k] * v for k, v in parts.items()), cell))
            max(best, default=None)
        return len(games)

    wall, cpu, work = time_python(moves, repeats)
    return work / wall, work / cpu


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board-size", type=int, default=9)
    parser.add_argument("--batch-sizes", default=[1, 64, 1024],
                        type=lambda text: parse_int_list(text, "--batch-sizes"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reference-boards", type=int, default=4,
                        help="boards per timed run of the Python reference (0: skip it)")
    parser.add_argument("--out", help="also write the markdown report here")
    parser.add_argument("--json", help="also write the rows as JSON here")
    progress.add_argument(parser)
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.reference_boards < 0:
        parser.error("--repeats must be >= 1 and --reference-boards >= 0")
    try:
        env = gomoku_jax.make("fauxgo", board_size=args.board_size)
    except ValueError as e:
        parser.error(str(e))
    agent = agents.make("fauxgo_heuristic").bind(env)
    pool = random_positions(env, max(args.batch_sizes + [args.reference_boards]))

    def move(states, key):
        keys = jax.random.split(key, states.board.shape[0])
        return agent.act_batch(None, None, states, keys)[0]

    records = []
    rows = len(args.batch_sizes) + bool(args.reference_boards)
    with progress.bar(rows, "bench_fauxgo_heuristic", "config",
                      enabled=not args.no_progress) as bar:
        # a line per row on stderr, through the bar when one shows
        log = progress.printer(bar, sys.stderr)
        if args.reference_boards:
            wall_rate, cpu_rate = reference_move_rate(pool, args.reference_boards, args.repeats)
            records.append({"system": "Python reference (one board at a time)", "batch": 1,
                            "compile_s": 0.0, "ms_per_call": 1e3 / wall_rate,
                            "moves_per_wall_s": wall_rate, "moves_per_cpu_s": cpu_rate})
            log(f"  reference: {fmt_rate(cpu_rate)} moves/CPU-s")
            bar.update(1)
        for b in args.batch_sizes:
            states = jax.tree.map(lambda x: x[:b], pool)
            compile_s, wall, cpu = time_compiled(move, (states, jax.random.key(0)),
                                                 args.repeats)
            records.append({"system": "gomoku_jax (jit + vmap)", "batch": b,
                            "compile_s": compile_s, "ms_per_call": 1e3 * wall,
                            "moves_per_wall_s": b / wall, "moves_per_cpu_s": b / cpu})
            log(f"  B={b:<5} {1e3 * wall:9.1f} ms per batched move")
            bar.update(1)

    reference = records[0]["moves_per_cpu_s"] if args.reference_boards else None
    rows = [[r["system"], str(r["batch"]), f"{r['compile_s']:.2f}", f"{r['ms_per_call']:.1f}",
             fmt_rate(r["moves_per_wall_s"]), fmt_rate(r["moves_per_cpu_s"]),
             f"{r['moves_per_cpu_s'] / reference:.0f}x" if reference else "-"]
            for r in records]
    n = args.board_size
    text = "\n\n".join([
        f"# fauxgo_heuristic, one move on {n}x{n} ({describe_machine()})",
        table(["implementation", "batch", "compile s", "ms per call", "moves/s (wall)",
               "moves/CPU-s", "vs reference (CPU)"], rows)])
    print(text)
    write_report(text, args.out, args.json, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
