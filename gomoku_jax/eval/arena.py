"""The arena: agent A against agent B over many games at once, every opening with both colours.

`run_match` builds the start positions from a set of openings (`openings.py`), each repeated
`games_per_opening_colour` times, and plays them twice with `play_match` (one compiled
`lax.scan` over the whole batch each time): once with A as black, once with B as black. The
result counts A's wins, draws and losses, in total, per colour and per opening, with A's
score and the Elo difference A - B with its 95% interval (`elo.estimate`).

The `gomoku-jax arena` subcommand is `main` here:

    gomoku-jax arena --a heuristic --b random --board-size 9 --games 64
    gomoku-jax arena --a heuristic:defence=1.2 --b heuristic --openings my_openings.txt
    gomoku-jax arena --checkpoint runs/quick --a trained --b heuristic
    gomoku-jax arena --checkpoint runs/quick --a trained:num_simulations=256 \\
        --b policy:evaluator=network

With `--checkpoint` (a run directory of `gomoku-jax train`) the game is the network's: the
board size, win length and rule default to the run's, and other values are refused.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import time
from typing import Any, Callable, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.agents.base import Agent
from gomoku_jax.eval import elo, openings as openings_lib
from gomoku_jax.eval.match import play_match
from gomoku_jax.eval.openings import DEFAULT_OPENINGS, Opening
from gomoku_jax.game.env import Gomoku
from gomoku_jax.game.state import State


@dataclasses.dataclass(frozen=True)
class Record:
    """Wins, draws and losses of one side."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @classmethod
    def from_outcomes(cls, outcomes: np.ndarray) -> "Record":
        """From an array of +1 (win) / 0 (draw) / -1 (loss)."""
        outcomes = np.asarray(outcomes)
        return cls(int(np.sum(outcomes > 0)), int(np.sum(outcomes == 0)),
                   int(np.sum(outcomes < 0)))

    def __add__(self, other: "Record") -> "Record":
        return Record(self.wins + other.wins, self.draws + other.draws,
                      self.losses + other.losses)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Points per game (nan without games)."""
        return self.points / self.games if self.games else math.nan

    def __str__(self) -> str:
        return f"{self.wins}-{self.draws}-{self.losses}"

    def to_dict(self) -> dict:
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses}


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """A's results against B (each opening played with both colours).

    Attributes:
      agent_a, agent_b: the agents' labels.
      board_size, win_length, rule: the game.
      openings: the openings, as offsets from the centre.
      games_per_opening_colour: games from each opening with each colour assignment.
      as_black, as_white: A's record with A playing black / white.
      per_opening: for each opening, (A's record as black, A's record as white).
      mean_length: the mean number of stones on the final boards (openings included).
      elo: the Elo difference A - B with its interval.
    """

    agent_a: str
    agent_b: str
    board_size: int
    win_length: int
    rule: str
    openings: tuple[Opening, ...]
    games_per_opening_colour: int
    as_black: Record
    as_white: Record
    per_opening: tuple[tuple[Record, Record], ...]
    mean_length: float
    elo: elo.EloEstimate

    @property
    def record(self) -> Record:
        """A's total record."""
        return self.as_black + self.as_white

    @property
    def wins(self) -> int:
        return self.record.wins

    @property
    def draws(self) -> int:
        return self.record.draws

    @property
    def losses(self) -> int:
        return self.record.losses

    @property
    def games(self) -> int:
        return self.record.games

    @property
    def score(self) -> float:
        """A's points per game."""
        return self.record.score

    def to_dict(self) -> dict:
        """JSON-ready (infinite Elo values become None)."""
        return {
            "agent_a": self.agent_a, "agent_b": self.agent_b,
            "game": {"board_size": self.board_size, "win_length": self.win_length,
                     "rule": self.rule},
            "games": self.games, "games_per_opening_colour": self.games_per_opening_colour,
            **self.record.to_dict(), "score": self.score,
            "elo": self.elo.to_dict(),
            "as_black": self.as_black.to_dict(), "as_white": self.as_white.to_dict(),
            "mean_length": self.mean_length,
            "openings": [{"moves": [list(m) for m in o], "a_black": b.to_dict(),
                          "a_white": w.to_dict()}
                         for o, (b, w) in zip(self.openings, self.per_opening)],
        }

    def summary(self) -> str:
        """A few lines of text: the game, A's record, score, per-colour results and Elo."""
        n, o = self.board_size, len(self.openings)
        stones = len(self.openings[0])
        e = self.elo
        if math.isinf(e.diff):
            interval = (f"{elo.format_elo(e)} ({e.confidence:.0%} one-sided bound: a "
                        f"{e.score:.0%} score has no finite estimate)")
        else:
            interval = (f"{e.diff:+.1f} ± {e.margin:.1f} ({e.confidence:.0%} interval "
                        f"{e.lower:+.1f} .. {e.upper:+.1f})")
        return "\n".join([
            f"{self.agent_a} vs {self.agent_b}: {n}x{n} {self.rule} Gomoku (k={self.win_length})"
            f", {self.games} games = {o} opening{'s' * (o != 1)} of {stones} stone"
            f"{'s' * (stones != 1)} x 2 colours x {self.games_per_opening_colour}",
            f"  {self.agent_a}: {self.wins} won, {self.draws} drawn, {self.losses} lost; "
            f"score {self.score:.1%}",
            f"  as black {self.as_black} (W-D-L), as white {self.as_white}",
            f"  Elo difference {self.agent_a} - {self.agent_b}: {interval}",
            f"  mean game length {self.mean_length:.1f} stones",
        ])

    def per_opening_table(self) -> str:
        """Markdown: A's record per opening and colour."""
        from gomoku_jax.benchmarks.timing import markdown_table

        rows = [[str(i), " ".join(f"{r},{c}" for r, c in o), str(b), str(w),
                 f"{(b + w).score:.1%}"]
                for i, (o, (b, w)) in enumerate(zip(self.openings, self.per_opening))]
        return markdown_table(["opening", "moves (offsets)", f"{self.agent_a} black W-D-L",
                               f"{self.agent_a} white W-D-L", "score"], rows)


@functools.lru_cache(maxsize=64)
def compiled_match(env: Gomoku, black: Agent, white: Agent, num_games: int,
                   white_first: bool) -> Callable[..., State]:
    """`play_match` jitted for one (env, agents, batch, side to move), cached:
    f(key, black_params, white_params, start) -> final states [num_games]."""

    def run(key, black_params, white_params, start):
        return play_match(env, black, white, key, num_games, black_params, white_params,
                          start, white_first)

    return jax.jit(run)


def start_states(env: Gomoku, openings: Sequence[Sequence[Sequence[int]]],
                 games_per_opening: int) -> State:
    """The openings' positions, each repeated: leaves [num_openings * games_per_opening],
    game g starting from opening g // games_per_opening."""
    states = openings_lib.opening_states(env, openings)
    return jax.tree.map(lambda x: jnp.repeat(x, games_per_opening, axis=0), states)


def per_opening_colour(total_games: int, num_openings: int) -> int:
    """Games per opening and colour for about `total_games` games in all (rounded up so that
    every opening is played equally often with both colours)."""
    if isinstance(total_games, bool) or not isinstance(total_games, int) or total_games < 1:
        raise ValueError(f"the number of games must be an int >= 1, got {total_games!r}")
    return -(-total_games // (2 * num_openings))


def run_match(env: Gomoku, agent_a: Agent, agent_b: Agent, key: jax.Array,
              games_per_opening_colour: int,
              openings: Sequence[Sequence[Sequence[int]]] = DEFAULT_OPENINGS,
              params_a: Any = None, params_b: Any = None, *,
              names: Optional[tuple[str, str]] = None) -> MatchResult:
    """Play A against B from every opening, `games_per_opening_colour` games with A as black
    and as many with B as black: 2 * len(openings) * games_per_opening_colour games.

    Each colour assignment is one compiled call of `play_match` over the whole batch
    (compiled once per env, agent pair, batch size and side to move, then cached). The
    first half of `key` drives the games with A as black, the second half the others, so
    a result depends on the key only.

    Args:
      openings: move lists of (row, col) offsets from the centre, all of one length
        (`openings.DEFAULT_OPENINGS` by default).
      params_a, params_b: the agents' params (None for fixed agents), whichever colour
        they play.
      names: labels for A and B (default: the agents' `name`).
    Raises:
      ValueError: a bad games count, or openings that don't fit the board (see
        `openings.opening_states`).
    """
    if isinstance(games_per_opening_colour, bool) or not isinstance(
            games_per_opening_colour, int) or games_per_opening_colour < 1:
        raise ValueError(f"games_per_opening_colour must be an int >= 1, got "
                         f"{games_per_opening_colour!r}")
    openings = openings_lib.normalize(openings)
    g, num_openings = games_per_opening_colour, len(openings)
    batch = g * num_openings
    start = start_states(env, openings, g)
    white_first = openings_lib.white_to_move(openings)
    key_a_black, key_b_black = jax.random.split(key)
    a_black = compiled_match(env, agent_a, agent_b, batch, white_first)(
        key_a_black, params_a, params_b, start)
    b_black = compiled_match(env, agent_b, agent_a, batch, white_first)(
        key_b_black, params_b, params_a, start)
    a_black, b_black = jax.device_get((a_black, b_black))
    if not (np.all(a_black.terminated) and np.all(b_black.terminated)):
        raise RuntimeError("play_match returned unfinished games")  # it plays N*N plies
    # A's outcome per game: +1 win, 0 draw, -1 loss; [num_openings, g].
    outcome_black = np.asarray(a_black.winner, np.int32).reshape(num_openings, g)
    outcome_white = -np.asarray(b_black.winner, np.int32).reshape(num_openings, g)
    per_opening = tuple((Record.from_outcomes(b), Record.from_outcomes(w))
                        for b, w in zip(outcome_black, outcome_white))
    as_black = Record.from_outcomes(outcome_black)
    as_white = Record.from_outcomes(outcome_white)
    total = as_black + as_white
    lengths = np.concatenate([a_black.move_count, b_black.move_count])
    cfg = env.config
    return MatchResult(
        agent_a=names[0] if names else agent_a.name,
        agent_b=names[1] if names else agent_b.name,
        board_size=cfg.board_size, win_length=cfg.win_length, rule=cfg.rule,
        openings=openings, games_per_opening_colour=g,
        as_black=as_black, as_white=as_white, per_opening=per_opening,
        mean_length=float(np.mean(lengths)),
        elo=elo.estimate(total.wins, total.draws, total.losses))


# ---------------------------------------------------------------------------- command line


GAME_FLAGS = ("board_size", "win_length", "rule")


def add_game_arguments(parser: argparse.ArgumentParser, board_size: int = 15) -> None:
    """The flags shared by arena and tournament: the game, openings, seed and a trained
    network (--checkpoint, --step). The game flags default to None, which `setup_game`
    reads as the checkpoint's game, else as board_size / 5 / freestyle."""
    parser.add_argument("--board-size", type=int,
                        help=f"board N (default {board_size}, or the checkpoint's)")
    parser.add_argument("--win-length", type=int, help="k (default 5, or the checkpoint's)")
    parser.add_argument("--rule", help="freestyle or exact5 (default freestyle, or the "
                                       "checkpoint's)")
    parser.set_defaults(game_defaults={"board_size": board_size, "win_length": 5,
                                       "rule": "freestyle"})
    parser.add_argument("--openings", metavar="FILE",
                        help="openings file: one move list per line of (row, col) offsets from "
                             "the centre, or JSON (default: the 8 built-in 3-stone openings)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", metavar="PATH",
                        help="a trained network: a run directory of `gomoku-jax train`, its "
                             "checkpoints/ directory or checkpoints/<step>. Agent specs "
                             "'trained[:num_simulations=S]' (the run's eval agent) and "
                             "'mcts|gumbel|policy:evaluator=network,...' then play with it, on "
                             "its game")
    parser.add_argument("--step", type=int, metavar="N",
                        help="the checkpoint step to load (default: the latest)")


def load_network(args: argparse.Namespace):
    """The `TrainedNetwork` of --checkpoint / --step, or None; SystemExit on a bad path."""
    from gomoku_jax.eval.trained import load_for_cli

    return load_for_cli(getattr(args, "checkpoint", None), getattr(args, "step", None))


def setup_game(args: argparse.Namespace, network=None) -> tuple[Gomoku, tuple[Opening, ...]]:
    """(env, openings) from the flags of `add_game_arguments`; SystemExit on bad values.

    With `network` (a `TrainedNetwork`), the env is the network's game (its observation
    form and feature plane included) and game flags that were given must match it."""
    import gomoku_jax

    given = {k: getattr(args, k, None) for k in GAME_FLAGS}
    try:
        if network is not None:
            game = network.game_config
            wrong = [f"--{k.replace('_', '-')} {v}" for k, v in given.items()
                     if v is not None and v != getattr(game, k)]
            if wrong:
                raise ValueError(
                    f"{', '.join(wrong)} doesn't match the checkpoint's game "
                    f"({game.board_size}x{game.board_size}, win length {game.win_length}, "
                    f"{game.rule}); a network plays only the game it was trained on: leave "
                    f"these flags out")
            env = Gomoku.from_config(game)
        else:
            defaults = getattr(args, "game_defaults", None) or {
                "board_size": 15, "win_length": 5, "rule": "freestyle"}
            env = gomoku_jax.make("gomoku", **{k: defaults[k] if v is None else v
                                               for k, v in given.items()})
        openings = (openings_lib.load_openings(args.openings) if args.openings
                    else DEFAULT_OPENINGS)
        openings_lib.opening_states(env, openings)  # validate on this board now
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    return env, openings


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, metavar="SPEC",
                        help="agent A: name or name:field=value,... (e.g. heuristic:defence=1.2)")
    parser.add_argument("--b", required=True, metavar="SPEC", help="agent B, as --a")
    add_game_arguments(parser)
    parser.add_argument("--games", type=int, default=64,
                        help="games in all, rounded up to a multiple of 2 x the number of "
                             "openings (default 64)")
    parser.add_argument("--per-opening", action="store_true",
                        help="also print A's record per opening")
    parser.add_argument("--json", metavar="OUT", help="write the result as JSON")
    return parser


def main(args: argparse.Namespace) -> int:
    from gomoku_jax.eval.specs import make_agent

    network = load_network(args)
    env, openings = setup_game(args, network)
    try:
        agent_a, agent_b = make_agent(args.a, network), make_agent(args.b, network)
        g = per_opening_colour(args.games, len(openings))
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    params = [None if network is None else network.params_for(a) for a in (agent_a, agent_b)]
    t0 = time.perf_counter()
    result = run_match(env, agent_a, agent_b, jax.random.key(args.seed), g, openings,
                       *params, names=(args.a, args.b))
    seconds = time.perf_counter() - t0
    print(result.summary())
    if network is not None:
        print(f"  network: {network.describe()}")
    print(f"  {seconds:.1f} s on {jax.default_backend()} (compiling included)")
    if args.per_opening:
        print()
        print(result.per_opening_table())
    if args.json:
        with open(args.json, "w") as f:
            extra = {"seed": args.seed}
            if network is not None:
                extra["checkpoint"] = network.to_dict()
            json.dump(result.to_dict() | extra, f, indent=1)
    return 0
