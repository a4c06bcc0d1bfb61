"""`gomoku-jax play`: play Gomoku or Faux Go against an agent in the browser.

    gomoku-jax play                                # http://127.0.0.1:8000, the default agents
    gomoku-jax play --game fauxgo --port 8080
    gomoku-jax play --agent mcts:num_simulations=400
    gomoku-jax play --checkpoint runs/quick        # the run's network on its own game

Starts a local web server (Starlette on uvicorn), prints the URL and serves until Ctrl-C.
The default agents are the strongest measured: the shipped network's agent on 15x15
freestyle Gomoku, `mcts` on other Gomoku boards, the heuristic AI on Faux Go. `--agent`
plays every game it can (the defaults play the rest); with `--checkpoint` the run's network
plays its own game. Search agents search anytime for `--ms-per-move`. The first move on a
board compiles the agent (the page says so); later games on that board start at once.
The server compiles one new game config at a time (a few more wait; beyond that, and
beyond `--max-configs` configs in use, a new config is refused with 429). It listens on
127.0.0.1 unless `--host` says otherwise, and warns when that address is not a loopback
one: there is no authentication.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from typing import Optional

from gomoku_jax.web.seats import playable


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", choices=sorted(playable()), default="gomoku",
                        help="the game the page opens with (default %(default)s)")
    parser.add_argument("--agent", metavar="SPEC",
                        help="an agent spec (e.g. heuristic, mcts:num_simulations=400, "
                             "gumbel); plays every game it can, the defaults the rest")
    parser.add_argument("--checkpoint", metavar="PATH",
                        help="a trained run (directory of `gomoku-jax train`, its "
                             "checkpoints/ or checkpoints/<step>): its network plays its game "
                             "(as 'trained', or as --agent with evaluator=network)")
    parser.add_argument("--step", type=int, metavar="N",
                        help="the checkpoint step (default: the latest)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default %(default)s: this machine "
                             "only; 0.0.0.0 serves the network)")
    parser.add_argument("--port", type=int, default=8000, help="default %(default)s")
    parser.add_argument("--ms-per-move", type=float, default=1000.0, metavar="MS",
                        help="a search agent's time per move (default %(default)s)")
    parser.add_argument("--max-games", type=int, default=64,
                        help="live games at most; a new one evicts the least recently used "
                             "(default %(default)s)")
    parser.add_argument("--max-configs", type=int, default=8,
                        help="compiled game configs kept at once (board size, rule, win "
                             "length; Faux Go's komi is not one); a new config when live "
                             "games use them all is refused (default %(default)s)")
    parser.add_argument("--idle-minutes", type=float, default=30.0,
                        help="a game untouched this long expires (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine only (127.0.0.0/8, ::1 or `localhost`)."""
    if host.strip().lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # another host name: it may resolve to any interface


def main(args: argparse.Namespace) -> int:
    import uvicorn

    from gomoku_jax.web.app import create_app
    from gomoku_jax.web.seats import AgentBook
    from gomoku_jax.web.server import url_of
    from gomoku_jax.web.sessions import SessionStore

    if not 1 <= args.port <= 65535:
        raise SystemExit(f"error: --port must be in 1..65535, got {args.port}")
    try:
        book = AgentBook(args.agent, args.checkpoint, args.step, ms_per_move=args.ms_per_move,
                         max_players=args.max_configs)
        store = SessionStore(book, max_games=args.max_games, idle_s=60.0 * args.idle_minutes,
                             seed=args.seed)
        app = create_app(store, default_game=args.game)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    if not is_loopback(args.host):
        print(f"warning: --host {args.host} serves every machine that can reach this one, "
              f"with no authentication: anyone there can play and use this machine's CPU; "
              f"use --host 127.0.0.1 (the default) unless that network is trusted",
              file=sys.stderr, flush=True)
    print(f"gomoku-jax play: open {url_of(args.host, args.port)} in a browser (Ctrl-C stops)",
          flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
