"""A soak of the engine: many consecutive games in one `gomoku-jax pbrain` process.

    python experiments/engine_soak.py                      # 200 games, the default engine
    python experiments/engine_soak.py --games 2 --board-size 7 --engine-args="--agent heuristic"

One engine process (the default engine unless `--engine-args` says otherwise) plays
`--games` games on pipes, RESTART between them, against the heuristic agent run in this
process (its first move a random cell near the centre, so that games differ; colours
alternate). Each game has a match clock as a manager keeps it: INFO timeout_match and
timeout_turn at the start, INFO time_left before every move, and time_left goes down by
the wall time from writing the engine's command to reading its move (a game whose clock
runs out is lost on time, and counted).

Every engine move is checked (an empty cell; the opening rule) and timed against pbrain's
budget for it without its reserve (`gomoku_jax.io.pbrain.plan_move` with no reserve:
min(timeout_turn, time_left / max(10, 20 - own stones)) x 0.8 - 50 ms; the engine's own
budget is at most this, its reserve depends on times it measures) plus `--margin-ms`. The
report: the results, the engine's RSS (VmRSS of /proc/PID/status) after game 1 and the last
game and every `--every` games, and the move times of the first and the last `--window`
games (mean, p99, the largest share of the budget), to show a slowdown or a leak over time.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
import time
from typing import Optional, Sequence

import jax
import numpy as np

from gomoku_jax import agents, progress
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.io.pbrain import plan_move
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine_fuzz import MOVE, Engine, EngineDied, five, move_problem  # noqa: E402


def pbrain_budget_s(timeout_turn_ms: int, time_left_ms: float, own_stones: int) -> float:
    """pbrain's move budget with a match clock, without its reserve (an upper bound)."""
    limits = {"timeout_turn": timeout_turn_ms, "timeout_match": 1, "time_left": time_left_ms}
    return plan_move(limits, own_stones, 0)[0]


@dataclasses.dataclass
class Game:
    result: str  # "W", "L", "D" for the engine; "T" lost on time
    engine_black: bool
    move_s: list  # wall seconds of each engine move
    budget_s: list  # pbrain's budget of each
    rss_kb: Optional[int]
    illegal: list


class Opponent:
    """The heuristic agent on `size`, jitted once; its first move a random cell within 2
    of the centre."""

    def __init__(self, size: int, seed: int):
        self.env = Gomoku(size)
        self.agent = agents.make("heuristic").bind(self.env)
        self.act = jax.jit(self.agent.act)
        self.key = jax.random.key(seed)
        self.rng = random.Random(seed)

    def move(self, board: np.ndarray, black: bool) -> tuple[int, int]:
        """(x, y) for the side (black or white) to move on `board` (+1 black, -1 white)."""
        n = board.shape[0]
        stones = np.argwhere(board != 0)
        if len(stones) <= 1:
            while True:
                x, y = (n // 2 + self.rng.randint(-2, 2) for _ in range(2))
                if not board[y, x]:
                    return x, y
        state = self.env.from_board(board, 1 if black else -1)
        self.key, key = jax.random.split(self.key)
        action, _, _ = self.act(None, self.agent.init(key), state, key)
        y, x = divmod(int(action), n)
        return x, y


def play_game(engine: Engine, opponent: Opponent, index: int, size: int, match_ms: int,
              turn_ms: int, margin_s: float, answer_s: float) -> Game:
    board = np.zeros((size, size), np.int8)  # +1 black, -1 white
    engine_black = index % 2 == 0
    me = 1 if engine_black else -1
    if index:
        engine.send("RESTART\n")
        got, ok = engine.answer(time.perf_counter() + answer_s)
        if not ok or got[-1] != "OK":
            raise SystemExit(f"error: RESTART answered {got}")
    time_left = float(match_ms)
    engine.send(f"INFO timeout_match {match_ms}\nINFO timeout_turn {turn_ms}\n")
    move_s, budget_s, illegal = [], [], []
    command = "BEGIN" if engine_black else None
    to_move = 1  # black
    result = "D"
    while (board != 0).sum() < size * size:
        if to_move != me:
            x, y = opponent.move(board, to_move == 1)
            board[y, x] = to_move
            if five(board, to_move, "freestyle"):
                result = "L"
                break
            command = f"TURN {x},{y}"
            to_move = -to_move
            continue
        own = int((board == me).sum())
        budget = pbrain_budget_s(turn_ms, time_left, own)
        position = board * me
        engine.send(f"INFO time_left {int(time_left)}\n")
        sent = time.perf_counter()
        engine.send(command + "\n")
        got, ok = engine.answer(sent + answer_s)
        seconds = time.perf_counter() - sent
        if not ok:
            raise SystemExit(f"error: no answer to {command} within {answer_s} s (game "
                             f"{index + 1}): {got}")
        m = MOVE.fullmatch(got[-1])
        if m is None:
            raise SystemExit(f"error: {command} (game {index + 1}) answered {got}")
        x, y = map(int, m.groups())
        problem = move_problem(position, x, y)
        if problem:
            illegal.append(problem)
            break
        move_s.append(seconds)
        budget_s.append(budget)
        time_left -= 1000 * seconds
        if time_left < 0:
            result = "T"
            break
        board[y, x] = me
        if five(board, me, "freestyle"):
            result = "W"
            break
        to_move = -to_move
    return Game(result, engine_black, move_s, budget_s, engine.rss_kb(), illegal)


def summary(games: Sequence[Game], margin_s: float, window: int, every: int,
            seconds: float, args: argparse.Namespace) -> str:
    results = {k: sum(g.result == k for g in games) for k in "WLDT"}
    over = [(i + 1, s, b) for i, g in enumerate(games) for s, b in zip(g.move_s, g.budget_s)
            if s > b + margin_s]
    illegal = sum(len(g.illegal) for g in games)
    head = markdown_table(
        ["games", "engine W / L / D", "lost on time", "engine moves", "illegal moves",
         f"moves over budget + {1000 * margin_s:.0f} ms", "RSS game 1 MiB",
         f"RSS game {len(games)} MiB", "wall s"],
        [[str(len(games)), f"{results['W']} / {results['L'] + results['T']} / {results['D']}",
          str(results["T"]), str(sum(len(g.move_s) for g in games)), str(illegal),
          str(len(over)), f"{games[0].rss_kb / 1024:.0f}", f"{games[-1].rss_kb / 1024:.0f}",
          f"{seconds:.0f}"]])

    def row(name: str, part: Sequence[Game]) -> list[str]:
        s = np.asarray([t for g in part for t in g.move_s])
        b = np.asarray([t for g in part for t in g.budget_s])
        share = s / np.maximum(b + margin_s, 1e-9)
        return [name, str(len(part)), str(len(s)), f"{1000 * s.mean():.0f}",
                f"{1000 * np.percentile(s, 99):.0f}", f"{1000 * s.max():.0f}",
                f"{1000 * b.mean():.0f}", f"{share.max():.2f}"]

    w = min(window, len(games))
    times = markdown_table(
        ["games", "count", "moves", "mean ms", "p99 ms", "max ms", "mean budget ms",
         "max time / (budget + margin)"],
        [row(f"first {w}", games[:w]), row(f"last {w}", games[-w:]), row("all", games)])
    marks = sorted({0, len(games) - 1, *range(every - 1, len(games), every)})
    rss = markdown_table(["after game", "RSS MiB"],
                         [[str(i + 1), f"{games[i].rss_kb / 1024:.0f}"] for i in marks])
    text = [f"Engine soak: {len(games)} games on {args.board_size}x{args.board_size}, engine "
            f"`pbrain {' '.join(args.engine_args) or '(default)'}` in one process against the "
            f"heuristic agent; INFO timeout_match {args.match_ms} ms per game, timeout_turn "
            f"{args.turn_ms} ms, time_left before each move.", head, times, rss]
    if over:
        text.append("Moves over budget (game, s, budget s): " + ", ".join(
            f"({g}, {s:.3f}, {b:.3f})" for g, s, b in over[:20]))
    return "\n\n".join(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--match-ms", type=int, default=5000,
                        help="INFO timeout_match of every game (default %(default)s)")
    parser.add_argument("--turn-ms", type=int, default=1000,
                        help="INFO timeout_turn (default %(default)s)")
    parser.add_argument("--margin-ms", type=int, default=250,
                        help="time a move may take past pbrain's budget (default %(default)s)")
    parser.add_argument("--answer-s", type=float, default=300.0,
                        help="the longest wait for an answer (START compiles) before giving up")
    parser.add_argument("--window", type=int, default=20,
                        help="games compared at the start and the end (default %(default)s)")
    parser.add_argument("--every", type=int, default=20, help="RSS table: every N games")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engine-args", default="",
                        help="flags for `gomoku-jax pbrain`, space separated (default: none, "
                             "the default engine)")
    parser.add_argument("--stderr", metavar="PATH", help="append the engine's stderr here")
    parser.add_argument("--out", help="write the markdown report here")
    parser.add_argument("--json", help="write the games as JSON here")
    progress.add_argument(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    args.engine_args = args.engine_args.split()
    margin_s = args.margin_ms / 1000
    opponent = Opponent(args.board_size, args.seed)
    engine = Engine(args.engine_args, args.stderr)
    games: list[Game] = []
    try:
        t = time.perf_counter()
        engine.send(f"START {args.board_size}\n")
        got, ok = engine.answer(time.perf_counter() + args.answer_s)
        if not ok or got[-1] != "OK":
            raise SystemExit(f"error: START answered {got}")
        start_s = time.perf_counter() - t
        t0 = time.perf_counter()
        with progress.bar(total=args.games, desc="soak", unit="game",
                          enabled=not args.no_progress) as bar:
            for i in range(args.games):
                games.append(play_game(engine, opponent, i, args.board_size, args.match_ms,
                                       args.turn_ms, margin_s, args.answer_s))
                g = games[-1]
                bar.update(1)
                bar.set_postfix_str(f"{g.result}, {len(g.move_s)} moves, RSS "
                                    f"{(g.rss_kb or 0) / 1024:.0f} MiB")
        seconds = time.perf_counter() - t0
    except EngineDied:
        raise SystemExit(f"error: the engine died after {len(games)} games")
    finally:
        code = engine.close()
    text = summary(games, margin_s, args.window, args.every, seconds, args)
    text += (f"\n\nSTART {args.board_size} (loading and compiling): {start_s:.1f} s; exit code "
             f"{code}.")
    print(text)
    write_report(text, args.out, args.json, [dataclasses.asdict(g) for g in games])
    bad = code != 0 or any(g.illegal for g in games) or any(
        s > b + margin_s for g in games for s, b in zip(g.move_s, g.budget_s))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
