"""A tiny pbrain engine for the manager's tests (`gomoku_jax.io.pbrain_match`): it plays
the empty cell nearest the centre (row-major among equals) and starts in a blink (no
imports of the package). It echoes INFO max_node in a MESSAGE before each move, and its
flags make it misbehave at its K-th move of a game (1-based):

    python tests/fake_pbrain.py [--name NAME] [--crash-at K] [--hang-at K] [--illegal-at K]
        [--garbage-at K] [--error-at K] [--warn-at K] [--refuse-start] [--refuse-start-when NAME]
        [--ignore-end] [--ms MS]

`--ms` sleeps that long before every move; `--refuse-start-when NAME` refuses START when
its `--name` is NAME; `--ignore-end` keeps running after END. `command(...)` gives the command line.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

PATH = __file__


def command(*flags: str) -> str:
    """The command line that runs this engine with `flags`."""
    return shlex.join([sys.executable, PATH, *flags])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--name", default="fake")
    for flag in ("crash-at", "hang-at", "illegal-at", "garbage-at", "error-at", "warn-at"):
        p.add_argument(f"--{flag}", type=int, default=0)
    p.add_argument("--refuse-start", action="store_true")
    p.add_argument("--refuse-start-when", default=None)
    p.add_argument("--ignore-end", action="store_true")
    p.add_argument("--ms", type=float, default=0.0)
    args = p.parse_args()
    n, board, info, made = 0, {}, {}, 0

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def move() -> None:
        nonlocal made
        made += 1
        if args.ms:
            time.sleep(args.ms / 1000)
        if "max_node" in info:
            say(f"MESSAGE max_node={info['max_node']}")
        if made == args.crash_at:
            sys.exit(3)
        if made == args.hang_at:
            time.sleep(3600)
        if made == args.garbage_at:
            return say("thinking...")
        if made == args.error_at:
            return say("ERROR no idea")  # and no move
        if made == args.warn_at:
            say("ERROR just a warning")  # then the move
        empty = [(abs(x - n // 2) + abs(y - n // 2), y, x) for y in range(n) for x in range(n)
                 if (x, y) not in board]
        if made == args.illegal_at and board:
            x, y = next(iter(board))
        else:
            _, y, x = min(empty)
        board[(x, y)] = 1
        say(f"{x},{y}")

    lines = iter(sys.stdin.readline, "")
    for line in lines:
        words = line.strip().replace(",", " ").split()
        if not words:
            continue
        cmd = words[0].upper()
        if cmd == "START":
            if args.refuse_start or args.refuse_start_when == args.name:
                say("ERROR no thanks")
                continue
            n, board, made = int(words[1]), {}, 0
            say("OK")
        elif cmd == "RESTART":
            board, made = {}, 0
            say("OK")
        elif cmd == "INFO":
            info[words[1]] = words[2] if len(words) > 2 else ""
        elif cmd == "ABOUT":
            say(f'name="{args.name}", version="1.0"')
        elif cmd == "BEGIN":
            move()
        elif cmd == "TURN":
            board[(int(words[1]), int(words[2]))] = 2
            move()
        elif cmd == "BOARD":
            board = {}
            for row in lines:
                if row.strip().upper() == "DONE":
                    break
                x, y, f = (int(v) for v in row.replace(",", " ").split())
                board[(x, y)] = f
            move()
        elif cmd == "END":
            if args.ignore_end:
                time.sleep(3600)
            return
        else:
            say(f"UNKNOWN {cmd}")


if __name__ == "__main__":
    main()
