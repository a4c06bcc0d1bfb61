"""GMO measured: speed, what gradient ascent changes, and arena results with ablations.

    python experiments/gmo.py --game gomoku --board-size 9 --win-length 4 \\
        --checkpoint runs/gmo_quick --games 16 --out gmo.md

1. Moves per second of the `gmo` agent at each `--batch-sizes` (one batched move of
   positions from random games).
2. On `--positions` positions of random games: how often the ascent moves a candidate's
   embedding onto another legal move (a projected move differs from its candidate), and how
   often the move played differs from the top-scored move (what `optim_steps=0` plays).
3. Arena (`run_match`, both colours) of GMO and its ablations (beta=0, gamma=0,
   optim_steps=0) against `--opponents`. `puct@time` is the PUCT agent with the number of
   simulations whose time per move (batch `--games`) is closest to GMO's, measured here.

Progress bars on stderr count the timing measurements, then the arena games (not with
`--no-progress` or when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import gomoku_jax
from gomoku_jax import agents, progress
from gomoku_jax.agents.specs import make_agent
from gomoku_jax.benchmarks.timing import describe_machine, fmt_rate, parse_int_list
from gomoku_jax.eval import run_match
from gomoku_jax.markdown import table, write_report

ABLATIONS = {"gmo": {}, "beta=0": {"beta": 0.0}, "gamma=0": {"gamma": 0.0},
             "optim_steps=0": {"optim_steps": 0}}
PUCT_SIMULATIONS = (4, 8, 16, 32, 64, 128, 256)


def random_positions(env, count: int, seed: int = 0):
    """`count` live positions after 4 to N*N/3 random plies (a batched State)."""
    rng = np.random.default_rng(seed)
    cells = env.observation_shape[0] * env.observation_shape[1]
    states = []
    while len(states) < count:
        try:
            plies = int(rng.integers(4, max(5, cells // 3)))
            states.append(env.from_moves(rng.permutation(cells)[:plies].tolist()))
        except ValueError:
            continue
    return jax.tree.map(lambda *x: jnp.stack(x), *states)


@functools.lru_cache(maxsize=None)
def _jitted_act(agent):
    return jax.jit(agent.act_batch)


def time_per_move(agent, params, states, repeats: int = 3) -> float:
    """Median seconds of one batched move of `agent` over `states` (compiled first)."""
    b = states.current_player.shape[0]
    memory = jax.vmap(agent.init)(jax.random.split(jax.random.key(0), b))
    act = _jitted_act(agent)
    keys = jax.random.split(jax.random.key(1), b)
    jax.block_until_ready(act(params, memory, states, keys))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(act(params, memory, states, keys))
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def ascent_effect(agent, params, states) -> tuple[float, float]:
    """(share of candidates projected onto another move, share of boards where the move
    played is not the top-scored one)."""
    b = states.current_player.shape[0]
    memory = jax.vmap(agent.init)(jax.random.split(jax.random.key(0), b))
    choice = jax.jit(jax.vmap(agent.choose, in_axes=(None, 0, 0, 0)))(
        params, memory, states, jax.random.split(jax.random.key(2), b))
    moved = float(np.mean(np.asarray(choice.projected) != np.asarray(choice.candidates)))
    changed = float(np.mean(np.asarray(choice.action) != np.asarray(choice.scores).argmax(1)))
    return moved, changed


def measure(base, params, pool, batch_sizes, positions: int, games: int, opponents,
            env, shown: bool) -> tuple[dict, float, list[str]]:
    """Parts 1 and 2 and the opponents' specs (`puct@time` resolved): (records, GMO's
    seconds per move at batch `games`, specs), with a bar over the timed measurements."""
    timed_opponents = opponents.count("puct@time")
    total = len(batch_sizes) + 2 + len(PUCT_SIMULATIONS) * timed_opponents
    records = {"speed": [], "ascent": {}}
    with progress.bar(total, "timing", "measurement", enabled=shown) as bar:
        log = progress.printer(bar, sys.stderr)  # through the bar when one shows
        for b in batch_sizes:
            seconds = time_per_move(base, params, jax.tree.map(lambda x: x[:b], pool))
            records["speed"].append({"batch": b, "ms_per_call": 1e3 * seconds,
                                     "moves_per_s": b / seconds})
            log(f"  B={b:<5} {1e3 * seconds:9.1f} ms per batched move")
            bar.update(1)
        records["ascent"] = dict(zip(("candidates_moved", "move_changed"), ascent_effect(
            base, params, jax.tree.map(lambda x: x[:positions], pool))))
        bar.update(1)
        batch = jax.tree.map(lambda x: x[:games], pool)
        gmo_time = time_per_move(base, params, batch)
        bar.update(1)
        specs = []
        for spec in opponents:
            if spec == "puct@time":
                timed = []
                for s in PUCT_SIMULATIONS:
                    t = time_per_move(agents.make("mcts", num_simulations=s).bind(env), None,
                                      batch)
                    timed.append((abs(np.log(t / gmo_time)), s))
                    bar.update(1)
                spec = f"mcts:num_simulations={min(timed)[1]}"
            specs.append(spec)
    return records, gmo_time, specs


def arena_rows(env, base, params, variants, specs, per_opening: int, shown: bool
               ) -> list[dict]:
    """Part 3: a row per (variant, opponent), with a bar over the games."""
    games = 2 * len(env.default_openings()) * per_opening
    rows = []
    with progress.bar(len(variants) * len(specs) * games, "arena", "game",
                      enabled=shown) as bar:
        log = progress.printer(bar, sys.stderr)
        for variant in variants:
            agent = dataclasses.replace(base, **ABLATIONS[variant])
            for spec in specs:
                result = run_match(env, agent, make_agent(spec), jax.random.key(0),
                                   per_opening, params_a=params, names=(variant, spec),
                                   on_games=bar.update if shown else None)
                rows.append({"gmo": variant, "opponent": spec, "record": str(result.record),
                             "score": result.score})
                log(f"  {variant} vs {spec}: {result.record} {result.score:.3f}")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="gomoku", choices=["gomoku", "fauxgo"])
    parser.add_argument("--board-size", type=int, default=9)
    parser.add_argument("--win-length", type=int, default=4, help="gomoku only")
    parser.add_argument("--checkpoint", help="a GMO run directory: its game, agent config "
                        "and params (default: an untrained GMO on --game)")
    parser.add_argument("--batch-sizes", default=[1, 1024],
                        type=lambda text: parse_int_list(text, "--batch-sizes"))
    parser.add_argument("--positions", type=int, default=256)
    parser.add_argument("--games", type=int, default=16,
                        help="games per colour per match (rounded up to a multiple of the "
                             "game's openings)")
    parser.add_argument("--opponents", default=None,
                        help="comma-separated specs (default: random, the game's heuristic, "
                             "puct@time)")
    parser.add_argument("--ablations", default=",".join(ABLATIONS))
    parser.add_argument("--out")
    parser.add_argument("--json")
    progress.add_argument(parser)
    args = parser.parse_args(argv)
    variants = [x for x in args.ablations.split(",") if x]
    if any(v not in ABLATIONS for v in variants):
        parser.error(f"--ablations takes {', '.join(ABLATIONS)}, got {args.ablations!r}")
    if args.checkpoint:  # the run's game, agent config and params
        from gomoku_jax.players import load

        try:
            trained = load(args.checkpoint)
        except ValueError as e:
            parser.error(str(e))
        env, base, params = trained.env, trained.agent(), trained.variables
    else:
        kw = {"board_size": args.board_size}
        if args.game == "gomoku":
            kw["win_length"] = args.win_length
        try:
            env = gomoku_jax.make(args.game, **kw)
        except ValueError as e:
            parser.error(str(e))
        base = agents.make("gmo").bind(env)
        params = base.params_or_fresh(None)
    heuristic = "heuristic" if env.id == "gomoku" else "fauxgo_heuristic"
    opponents = (args.opponents or f"random,{heuristic},puct@time").split(",")
    shown = progress.shows(not args.no_progress)

    pool = random_positions(env, max(args.batch_sizes + [args.positions, args.games]))
    measured, gmo_time, specs = measure(base, params, pool, args.batch_sizes, args.positions,
                                        args.games, opponents, env, shown)
    per_opening = -(-args.games // len(env.default_openings()))  # ceil
    records = {"game": env.describe(), **measured,
               "arena": arena_rows(env, base, params, variants, specs, per_opening, shown)}
    moved, changed = records["ascent"]["candidates_moved"], records["ascent"]["move_changed"]

    speed = table(["batch", "ms per batched move", "moves/s"],
                  [[str(r["batch"]), f"{r['ms_per_call']:.1f}", fmt_rate(r["moves_per_s"])]
                   for r in records["speed"]])
    arena_table = table(["GMO", "opponent", "W-D-L", "score"],
                        [[r["gmo"], r["opponent"], r["record"], f"{r['score']:.3f}"]
                         for r in records["arena"]])
    text = "\n\n".join([
        f"# GMO on {env.id} {env.observation_shape[0]}x{env.observation_shape[1]} "
        f"({'checkpoint ' + args.checkpoint if args.checkpoint else 'untrained'}; "
        f"{describe_machine()})", speed,
        f"Gradient ascent on {args.positions} positions: {moved:.1%} of the top-k candidates "
        f"are projected onto another move; the move played differs from the top-scored one "
        f"on {changed:.1%} of the boards. GMO's time per move at batch {args.games}: "
        f"{1e3 * gmo_time:.1f} ms.", arena_table])
    print(text)
    write_report(text, args.out, args.json, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
