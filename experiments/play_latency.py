"""The AI's move latency in the web UI at batch 1 (one game): from the person's move request
to the AI's stone in the game's state, through real HTTP to the `gomoku-jax play` app on
uvicorn, against the same agent's `TimedPlayer.move` called directly on the same positions
in the same run (what the server adds).

    python experiments/play_latency.py                      # the default agent, 15x15
    python experiments/play_latency.py --board-size 9 --agent heuristic --moves 10
    python experiments/play_latency.py --game fauxgo --board-size 9

The person's moves are the game's heuristic agent's (Gomoku's `heuristic`, Faux Go's
`fauxgo_heuristic`), so that games last and the AI searches its full time.
The client polls the game every `--poll-ms` (the page polls too; its interval adds to
what a person sees). The first AI move of a new board size compiles the agent; it is
reported on its own row and left out of the other rows. Progress bars on stderr count the
AI's moves through HTTP, then the direct ones (not with `--no-progress` or when stderr is
not a terminal).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.error
import urllib.request
from typing import Callable, Optional, Sequence

import jax
import numpy as np

from gomoku_jax import agents, games, progress
from gomoku_jax.benchmarks.timing import describe_machine
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.web.app import create_app
from gomoku_jax.web.seats import AgentBook, compiled_game
from gomoku_jax.web.server import background
from gomoku_jax.web.sessions import SessionStore


def request(url: str, body: Optional[dict] = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


PERSONS = {"gomoku": "heuristic", "fauxgo": "fauxgo_heuristic"}


class Person:
    """The person's side, played by the game's heuristic agent (so that games last: a
    scripted or random person loses to a forced win within a few moves)."""

    def __init__(self, game: str, board_size: int, seed: int = 0):
        self.env = games.make(game, board_size=board_size)
        self.agent = agents.make(PERSONS[game]).bind(self.env)
        self.act = jax.jit(self.agent.act)
        self.init, self.step = compiled_game(self.env)
        self.key = jax.random.key(seed)

    def move(self, view: dict) -> int:
        state = self.init(self.key)
        for m in view["moves"]:
            state = self.step(state, np.int32(m["action"]))
        key = jax.random.fold_in(self.key, len(view["moves"]))
        action, _, _ = self.act(None, self.agent.init(key), state, key)
        return int(action)


def wait_for_ai(url: str, game_id: str, plies: int, poll_s: float) -> dict:
    while True:
        view = request(f"{url}api/games/{game_id}")
        if view["ai"]["status"] == "error":
            raise RuntimeError(view["ai"]["message"])
        if view["over"] or (len(view["moves"]) > plies and view["ai"]["status"] == "idle"):
            return view
        time.sleep(poll_s)


def play(url: str, game: str, board_size: int, moves: int, poll_s: float,
         tick: Callable[[int], None] = lambda n: None) -> dict:
    """One game through HTTP: per AI move, the wall ms from the request to its stone and
    the server's `ai.move_ms`; and the positions the AI moved from (as action lists).
    `tick(1)` after each of the (at most `moves`) AI moves."""
    person = Person(game, board_size)
    view = request(f"{url}api/games", {"game": game, "board_size": board_size,
                                       "colour": "black"})
    walls, server_ms, sims, histories = [], [], [], []
    for _ in range(moves):
        if view["over"]:
            break
        action = person.move(view)
        t0 = time.perf_counter()
        before = request(f"{url}api/games/{view['id']}/move", {"action": action})
        view = wait_for_ai(url, view["id"], len(before["moves"]), poll_s)
        if len(view["moves"]) == len(before["moves"]):
            break  # the person's move ended the game
        walls.append(1000 * (time.perf_counter() - t0))
        server_ms.append(view["ai"]["move_ms"])
        sims.append(view["ai"]["simulations"])
        histories.append([m["action"] for m in before["moves"]])
        tick(1)
    return {"agent": view["ai"]["agent"], "wall_ms": walls, "server_ms": server_ms,
            "simulations": sims, "histories": histories}


def direct(seat, histories: list, budget_s: float, seed: int = 1,
           tick: Callable[[int], None] = lambda n: None) -> list:
    """ms of `seat.player.move` on each position (a fresh agent state each time), `tick(1)`
    after each."""
    init, step = seat.init, seat.step
    out = []
    for i, actions in enumerate(histories):
        key = jax.random.key(seed + i)
        state = init(key)
        for a in actions:
            state = step(state, np.int32(a))
        state = jax.device_get(state)
        agent_state = seat.player.init_state(seat.env, key)
        t0 = time.perf_counter()
        seat.player.move(seat.env, state, agent_state, key, budget_s)
        out.append(1000 * (time.perf_counter() - t0))
        tick(1)
    return out


def summary(values: Sequence[float]) -> list[str]:
    if not values:
        return ["-"] * 3
    return [f"{statistics.median(values):,.1f}", f"{min(values):,.1f}", f"{max(values):,.1f}"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="gomoku", choices=["gomoku", "fauxgo"])
    parser.add_argument("--board-size", type=int, default=15)
    parser.add_argument("--agent", help="an agent spec (default: the UI's default agent)")
    parser.add_argument("--ms-per-move", type=float, default=1000.0)
    parser.add_argument("--moves", type=int, default=10, help="the person's moves")
    parser.add_argument("--poll-ms", type=float, default=2.0)
    progress.add_argument(parser)
    args = parser.parse_args(argv)
    book = AgentBook(args.agent, ms_per_move=args.ms_per_move)
    store = SessionStore(book)
    enabled = not args.no_progress
    with background(create_app(store)) as url, progress.bar(
            args.moves, "UI moves", "move", enabled=enabled) as bar:
        game = play(url, args.game, args.board_size, args.moves, args.poll_ms / 1000,
                    bar.update)
    seat = book.seat(args.game, {"board_size": args.board_size})
    positions = game["histories"][1:]
    with progress.bar(len(positions), "direct moves", "move", enabled=enabled) as bar:
        reference = direct(seat, positions, book.budget_s, tick=bar.update)
    first = game["wall_ms"][:1]
    rows = [
        ["first AI move, compile included (UI)", f"{first[0]:,.0f}" if first else "-", "", ""],
        ["UI: move request to the AI's stone (HTTP, polling)", *summary(game["wall_ms"][1:])],
        ["UI: the AI's move on the server (ai.move_ms)", *summary(game["server_ms"][1:])],
        ["direct: TimedPlayer.move, same positions, no server", *summary(reference)],
    ]
    sims = [s for s in game["simulations"][1:] if s is not None]
    print(f"# The AI's move latency in the UI at batch 1: {args.game} "
          f"{args.board_size}x{args.board_size}, agent {game['agent']}, "
          f"{args.ms_per_move:g} ms a move for search agents\n")
    print(describe_machine())
    print()
    print(markdown_table(["", "median ms", "min ms", "max ms"], rows))
    print(f"\n{len(game['wall_ms'])} AI moves (the first left out of the rows below it); "
          f"simulations a move: {summary(sims)[0] if sims else 'not a search'}; "
          f"client polling every {args.poll_ms:g} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
