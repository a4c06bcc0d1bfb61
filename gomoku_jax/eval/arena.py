"""The arena: agent A against agent B over many games at once, every opening both ways.

`run_match` builds the start positions from a set of openings (action sequences; by
default the game's `default_openings()`), each repeated `games_per_opening_colour` times,
and plays them twice with one compiled match (a loop over the whole batch): once
with A as the game's first player, once with B (A passing its first turn). The result
counts A's wins, draws and losses, in total, per side and per opening, with A's score and
two estimates of the Elo difference A - B: the head-to-head interval from the colour-swapped
game pairs (`MatchResult.elo_paired`, pentanomial: `elo.estimate_pairs`), and the rating
fit of the games with their colours (`MatchResult.elo_fit`: `elo.fit_games` over A and B
with a first-move term, which both colours make identifiable). It works for any game of the
platform.

Progress (`run_match(..., on_games=f)`): the games of a half run in lockstep inside one
compiled loop, so a count that moved only between calls would tick twice a match. With
`on_games`, the same compiled loop (`match.advance_match`, whose step bound `until` is a
traced argument) is called in chunks of steps sized to take about half a second, and `f`
hears how many games ended after each chunk. Why not a host callback inside the loop
(`jax.debug.callback`, compiled in only with progress)? It makes a second program, which
JAX's persistent compilation cache does not store (it holds a host callback; checked with
jax 0.10), so every command run with a bar would compile the match anew; and its results
would match the program without the callback only as far as XLA compiles the loop body the
same way in both. The chunks call the very program that plays without progress: the same
bits come out, and it is compiled and cached once. Without `on_games` a half is one call,
with no host round trip inside a game; with it, one small read (which games are over) per
chunk.

15x15 freestyle Gomoku is a proven first-player win, and fixed agents replay the same game
from one position, so a fair match plays several openings with both sides (the first
player's advantage of an opening then cancels in the score).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import time
from typing import Any, Callable, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax import configs
from gomoku_jax.agents.base import Agent
from gomoku_jax.eval import elo
from gomoku_jax.eval.match import (
    MatchCarry,
    MatchOutcome,
    advance_match,
    match_outcome,
    max_steps,
    start_match,
)
from gomoku_jax.eval.rating import ABOVE, BELOW, json_number
from gomoku_jax.games.protocol import Env, is_over
from gomoku_jax.markdown import table as markdown_table

Opening = tuple[int, ...]


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
    """A's results against B (each opening played with A as the first player and as the
    second: black and white in Gomoku).

    Attributes:
      agent_a, agent_b: the agents' labels.
      game: the env's `describe()` (id, version and config).
      openings: the openings, as action sequences, and as text (`env.action_to_text`).
      games_per_opening_colour: games from each opening with each side assignment.
      as_first, as_second: A's record as the game's first player / second player.
      per_opening: for each opening, (A's record as first, A's record as second).
      mean_length: the mean number of moves of the games (openings included).
      elo: the Elo difference A - B with its interval, from the games as if independent
        (trinomial; kept for its readers: the summary shows `elo_paired` and `elo_fit`).
      pair_points: A's points per game pair, `[opening][replica]`: the game with A first and
        the one with B first from the same opening (replica r of each side), 0 to 2.
      distinct_games: how many of the games differ (see `final_position_keys`).
    """

    agent_a: str
    agent_b: str
    game: dict
    openings: tuple[Opening, ...]
    opening_text: tuple[str, ...]
    games_per_opening_colour: int
    as_first: Record
    as_second: Record
    per_opening: tuple[tuple[Record, Record], ...]
    mean_length: float
    elo: elo.EloEstimate
    pair_points: Optional[tuple[tuple[float, ...], ...]] = None
    distinct_games: Optional[int] = None

    @property
    def pairs(self) -> Optional[tuple[int, int, int, int, int]]:
        """How many pairs A scored 0, 1/2, 1, 3/2, 2 points in (None without pairs)."""
        return None if self.pair_points is None else elo.pair_counts(self.pair_points)

    @property
    def elo_paired(self) -> Optional[elo.PairedEloEstimate]:
        """The paired (pentanomial) Elo difference A - B (None without pairs): the
        head-to-head interval."""
        return None if self.pair_points is None else elo.estimate_pairs(self.pairs)

    def game_records(self, a: int = 0, b: int = 1
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first, second, score): one record per game as `elo.fit_games` takes them, A as
        player `a` and B as `b` (see `game_records`)."""
        return game_records(self.as_first, self.as_second, a, b)

    @functools.cached_property
    def elo_fit(self) -> elo.GameFit:
        """The rating fit of this match: `elo.fit_games` over its games with their colours,
        players (A, B), B the anchor, so `ratings[0]` (with `lower[0]`, `upper[0]`,
        `covariance[0, 0]` and `status[0]`) is A - B, and `first_move` the fitted
        advantage of the game's first player. A sweep makes A "above" or "below" B: an
        infinite estimate with a one-sided bound."""
        return elo.fit_games(*self.game_records(), num_players=2, anchor=1)

    @property
    def record(self) -> Record:
        """A's total record."""
        return self.as_first + self.as_second

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

    @property
    def game_label(self) -> str:
        """The game in a few words, e.g. "gomoku (board_size=15, win_length=5, ...)"."""
        options = ", ".join(f"{k}={v}" for k, v in self.game.items()
                            if k not in ("id", "version"))
        return f"{self.game['id']}" + (f" ({options})" if options else "")

    def to_dict(self) -> dict:
        """JSON-ready (infinite Elo values become None)."""
        return {
            "agent_a": self.agent_a, "agent_b": self.agent_b, "game": self.game,
            "games": self.games, "games_per_opening_colour": self.games_per_opening_colour,
            **self.record.to_dict(), "score": self.score,
            "elo": self.elo.to_dict(),
            "as_first": self.as_first.to_dict(), "as_second": self.as_second.to_dict(),
            "mean_length": self.mean_length,
            "pairs": None if self.pairs is None else list(self.pairs),
            "pair_points": None if self.pair_points is None else [
                list(p) for p in self.pair_points],
            "elo_paired": None if self.pair_points is None else self.elo_paired.to_dict(),
            "elo_fit": fit_to_dict(self.elo_fit, 0),
            "distinct_games": self.distinct_games,
            "openings": [{"actions": list(o), "moves": t, "a_first": f.to_dict(),
                          "a_second": sec.to_dict()}
                         for o, t, (f, sec) in zip(self.openings, self.opening_text,
                                                   self.per_opening)],
        }

    def summary(self) -> str:
        """A few lines of text: the game, A's record, score, per-side results, and the Elo
        difference A - B twice: paired (the head-to-head interval) and from the rating fit
        (with the first-move advantage)."""
        o, moves = len(self.openings), len(self.openings[0])
        lines = [
            f"{self.agent_a} vs {self.agent_b}: {self.game_label}, {self.games} games = {o} "
            f"opening{'s' * (o != 1)} of {moves} move{'s' * (moves != 1)} x 2 sides x "
            f"{self.games_per_opening_colour}",
            f"  {self.agent_a}: {self.wins} won, {self.draws} drawn, {self.losses} lost; "
            f"score {self.score:.1%}",
            f"  as first player {self.as_first} (W-D-L), as second {self.as_second}",
        ]
        name = f"{self.agent_a} - {self.agent_b}"
        if self.pair_points is not None:
            p = self.elo_paired
            lines.append(f"  Elo difference {name}, paired (the head-to-head interval): "
                         f"{elo.format_paired(p)} ({p.confidence:.0%}"
                         f"{', one-sided' if p.method == 'exact' else ''}; pentanomial over "
                         f"{p.pairs} colour-swapped pairs scoring 0/½/1/1½/2: "
                         f"{'/'.join(map(str, p.counts))})")
        else:  # no pairs recorded: the games as if independent
            e = self.elo
            if math.isinf(e.diff):
                interval = (f"{elo.format_elo(e)} ({e.confidence:.0%} one-sided bound: a "
                            f"{e.score:.0%} score has no finite estimate)")
            else:
                interval = (f"{e.diff:+.1f} ± {e.margin:.1f} ({e.confidence:.0%} interval "
                            f"{e.lower:+.1f} .. {e.upper:+.1f})")
            lines.append(f"  Elo difference {name}, games as if independent: {interval}")
        f = self.elo_fit
        one_sided = ", one-sided" if f.status[0] in (ABOVE, BELOW) else ""
        lines.append(f"  Elo difference {name}, rating fit (the games with their colours and "
                     f"a first-move term): {format_fit(f, 0)} ({f.confidence:.0%}{one_sided}); "
                     f"first-move advantage {format_first_move(f)}")
        lines.append(f"  mean game length {self.mean_length:.1f} moves")
        if self.distinct_games is not None:
            lines.append(f"  distinct games: {self.distinct_games} of {self.games}")
        return "\n".join(lines)

    def per_opening_table(self) -> str:
        """Markdown: A's record per opening and side."""
        rows = [[str(i), text or "(start)", str(f), str(sec), f"{(f + sec).score:.1%}"]
                for i, (text, (f, sec)) in enumerate(zip(self.opening_text, self.per_opening))]
        return markdown_table(["opening", "moves", f"{self.agent_a} first W-D-L",
                               f"{self.agent_a} second W-D-L", "score"], rows)


def game_records(as_first: Record, as_second: Record, a: int = 0, b: int = 1
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One record per game from A's record as the game's first player and as its second:
    (first: int64[G], second: int64[G], score: float64[G], the first mover's score 1 / ½ / 0),
    A as player `a`, B as `b`, the arrays `elo.fit_games` takes."""
    first = np.array([a] * as_first.games + [b] * as_second.games, np.int64)
    second = np.array([b] * as_first.games + [a] * as_second.games, np.int64)
    score = np.array([1.0] * as_first.wins + [0.5] * as_first.draws + [0.0] * as_first.losses
                     # B moved first: B's score is A's loss
                     + [1.0] * as_second.losses + [0.5] * as_second.draws
                     + [0.0] * as_second.wins, np.float64)
    return first, second, score


def format_fit(fit: elo.GameFit, i: int) -> str:
    """Player i's rating in `fit` with its interval: '+118.0 ± 107.9', '0 (anchor)', or for a
    separated player its one-sided bound: '> +365.2' / '< -365.2'; 'undetermined', or
    'no games'."""
    status = fit.status[i]
    if status == "anchor":
        return "0 (anchor)"
    if status == ABOVE:
        return f"> {fit.lower[i]:+.1f}" if math.isfinite(fit.lower[i]) else "> ? (no bound)"
    if status == BELOW:
        return f"< {fit.upper[i]:+.1f}" if math.isfinite(fit.upper[i]) else "< ? (no bound)"
    if status != "rated":
        return status
    return f"{fit.ratings[i]:+.1f} ± {(fit.upper[i] - fit.lower[i]) / 2.0:.1f}"


def format_first_move(fit: elo.GameFit) -> str:
    """'+35.0 Elo (SE 20.0)', or why the fit has none."""
    if fit.first_move_fitted:
        return f"{fit.first_move:+.1f} Elo (SE {fit.first_move_se:.1f})"
    if math.isnan(fit.first_move):
        return "not identified by these games (fixed at 0)"
    return "not fitted"


def fit_to_dict(fit: elo.GameFit, i: int) -> dict:
    """JSON-ready: player i's rating in `fit` (for `MatchResult.elo_fit`, A - B) with its
    interval, standard error and status, and the fit's first-move term and draw model
    (infinite or undefined values become None)."""
    se = math.sqrt(fit.covariance[i, i]) if math.isfinite(fit.covariance[i, i]) else math.nan
    return {"diff": json_number(fit.ratings[i]), "lower": json_number(fit.lower[i]),
            "upper": json_number(fit.upper[i]), "se": json_number(se), "status": fit.status[i],
            "first_move": json_number(fit.first_move),
            "first_move_se": json_number(fit.first_move_se),
            "first_move_fitted": fit.first_move_fitted, "draws": fit.draws,
            "confidence": fit.confidence}


class CompiledMatch(NamedTuple):
    """A match of one (env, agents, batch), jitted: `start(key, start, first_passes)` ->
    MatchCarry and `advance(carry, first_params, second_params, until)` -> MatchCarry, with
    `until` an int32 scalar (see `match.start_match`, `match.advance_match`). `first_passes`
    and `until` are traced: one program of each plays both side assignments, in one call or
    in chunks."""

    start: Callable[..., MatchCarry]
    advance: Callable[..., MatchCarry]


@functools.lru_cache(maxsize=64)
def compiled_match(env: Env, first: Agent, second: Agent, num_games: int) -> CompiledMatch:
    """The match of one (env, agents, batch), jitted and cached (see `CompiledMatch`)."""

    def start(key, start_states, first_passes):
        return start_match(env, first, second, key, num_games, start_states, first_passes)

    def advance(carry, first_params, second_params, until):
        return advance_match(env, first, second, carry, first_params, second_params, until)

    return CompiledMatch(jax.jit(start), jax.jit(advance))


def next_chunk(steps: int, seconds: float, target: float = 0.5) -> int:
    """The steps of the next chunk: `steps` scaled to take about `target` seconds, given
    that they took `seconds`, at most doubled (the first chunk's time includes compiling)
    and at least 1."""
    return max(1, min(2 * steps, int(steps * target / max(seconds, 1e-6))))


def play_half(match: CompiledMatch, env: Env, key: jax.Array, params: tuple[Any, Any],
              start: Any, first_passes: bool,
              on_games: Optional[Callable[[int], None]] = None) -> MatchOutcome:
    """One side assignment of a match, every game to its end: one `match.advance` call, or
    with `on_games` several (chunks of about half a second), after each of which
    `on_games(n)` hears the n games that ended in it (maybe 0). Both ways run the same
    program over the same steps, so the outcome is the same."""
    cap = np.int32(max_steps(env))
    carry = match.start(key, start, first_passes)
    if on_games is None:
        return match_outcome(match.advance(carry, *params, cap))
    steps, step, done = 1, 0, 0
    while True:
        t0 = time.perf_counter()
        carry = match.advance(carry, *params, np.int32(min(step + steps, cap)))
        over = int(np.sum(np.asarray(is_over(carry.states))))
        step = int(carry.step)
        on_games(over - done)  # 0 too: a bar then still refreshes its clock
        done = over
        if over == len(carry.plies) or step >= cap:
            return match_outcome(carry)
        steps = next_chunk(steps, time.perf_counter() - t0)


def opening_states(env: Env, openings: Sequence[Sequence[int]]) -> Any:
    """The positions after each opening (replayed with `env.from_moves`), stacked: leaves
    [num_openings, ...].

    Raises:
      ValueError: no openings, openings of different lengths, an illegal move, or an opening
        that ends the game; the message names the opening.
    """
    openings = [tuple(int(a) for a in o) for o in openings]
    if not openings:
        raise ValueError("the opening set is empty; give at least one opening")
    if len({len(o) for o in openings}) > 1:
        lengths = sorted({len(o) for o in openings})
        raise ValueError(f"all openings must have the same number of moves (the games of a "
                         f"match run in lockstep), got lengths {lengths}")
    states = []
    for i, opening in enumerate(openings):
        text = " ".join(env.action_to_text(a) for a in opening)
        try:
            state = env.from_moves(list(opening))
        except ValueError as e:
            raise ValueError(f"opening {i} [{text}]: {e}") from None
        if bool(is_over(state)):
            raise ValueError(f"opening {i} [{text}] already ends the game")
        states.append(state)
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def per_opening_colour(total_games: int, num_openings: int) -> int:
    """Games per opening and side for about `total_games` games in all (rounded up so that
    every opening is played equally often with both sides)."""
    total_games = configs.check_int("the number of games", total_games, 1)
    return -(-total_games // (2 * num_openings))


def _outcomes(out: MatchOutcome, a_is_first: bool, num_openings: int, g: int) -> np.ndarray:
    """A's outcome per game, [num_openings, g]: +1 win, 0 draw, -1 loss (`a_is_first`: A
    is the match's `first` agent, whose player id is `out.first_player`)."""
    if not np.all(np.asarray(is_over(out.states))):
        raise RuntimeError("the match returned unfinished games: the game's "
                           "max_game_length is too short")
    player = np.asarray(out.first_player)
    a_player = player if a_is_first else 1 - player
    returns = np.asarray(out.returns)
    return np.sign(returns[np.arange(len(player)), a_player]).reshape(num_openings, g)


def final_position_keys(out: MatchOutcome) -> list[bytes]:
    """A digest per game of its final state (every leaf: for Gomoku the board, the last
    moves, the stone count, the winner) and its length.

    Games that repeat move for move end in the same state, so the number of different keys
    never overcounts the different games; two move orders that end in the same position
    count once (a lower bound, exact unless games transpose into one final position). It
    needs nothing from the compiled match beyond the final states it already returns.
    """
    leaves = [np.asarray(x) for x in jax.tree.leaves(out.states)] + [np.asarray(out.plies)]
    rows = [x.reshape(x.shape[0], -1) for x in leaves]
    return [hashlib.blake2b(b"".join(np.ascontiguousarray(r[i]).tobytes() for r in rows),
                            digest_size=16).digest() for i in range(rows[0].shape[0])]


def run_match(env: Env, agent_a: Agent, agent_b: Agent, key: jax.Array,
              games_per_opening_colour: int,
              openings: Optional[Sequence[Sequence[int]]] = None,
              params_a: Any = None, params_b: Any = None, *,
              names: Optional[tuple[str, str]] = None,
              on_games: Optional[Callable[[int], None]] = None) -> MatchResult:
    """Play A against B from every opening, `games_per_opening_colour` games with A as the
    first player and as many with B: 2 * len(openings) * games_per_opening_colour games.

    Both side assignments run one compiled match over the whole batch (compiled once per
    env, agent pair and batch size, then cached). The first half of `key` drives the games
    with A first, the second half the others, so a result depends on the key only (not on
    `on_games`: see the module doc).

    Args:
      openings: action sequences, all of one length (default: `env.default_openings()`).
      params_a, params_b: the agents' params (None for fixed agents).
      names: labels for A and B (default: the agents' `name`).
      on_games: for a progress bar: the halves are played in chunks of about half a second
        (see the module doc), and after each chunk on_games(n) hears the n games that ended
        in it (maybe 0), 2 * len(openings) * games_per_opening_colour in all.
    Raises:
      ValueError: a bad games count, or openings that don't fit the game (see
        `opening_states`).
    """
    games_per_opening_colour = configs.check_int("games_per_opening_colour",
                                                 games_per_opening_colour, 1)
    agent_a, agent_b = agent_a.bind(env), agent_b.bind(env)
    openings = tuple(tuple(int(a) for a in o) for o in (
        env.default_openings() if openings is None else openings))
    g, num_openings = games_per_opening_colour, len(openings)
    start = jax.tree.map(lambda x: jnp.repeat(x, g, axis=0), opening_states(env, openings))
    # The game's first player is to move at the start after an even number of moves.
    a_moves_first = len(openings[0]) % 2 == 0
    key_a_first, key_b_first = jax.random.split(key)
    first, second = (agent_a, agent_b) if a_moves_first else (agent_b, agent_a)
    params_first, params_second = (params_a, params_b) if a_moves_first else (params_b,
                                                                              params_a)
    # One program for both halves: in the second, `first` passes its first turn, so `second`
    # moves at the start and A has the game's other side.
    match = compiled_match(env, first, second, g * num_openings)
    params = (params_first, params_second)
    a_first = play_half(match, env, key_a_first, params, start, False, on_games)
    b_first = play_half(match, env, key_b_first, params, start, True, on_games)
    a_first, b_first = jax.device_get((a_first, b_first))
    outcome_first = _outcomes(a_first, a_moves_first, num_openings, g)
    outcome_second = _outcomes(b_first, a_moves_first, num_openings, g)
    per_opening = tuple((Record.from_outcomes(f), Record.from_outcomes(s))
                        for f, s in zip(outcome_first, outcome_second))
    as_first = Record.from_outcomes(outcome_first)
    as_second = Record.from_outcomes(outcome_second)
    total = as_first + as_second
    lengths = np.concatenate([a_first.plies, b_first.plies]) + len(openings[0])
    # Pair (opening o, replica r): A first in game (o, r) of one half, second in the other's.
    pair_points = (outcome_first + 1.0) / 2.0 + (outcome_second + 1.0) / 2.0
    distinct = len(set(final_position_keys(a_first)) | set(final_position_keys(b_first)))
    return MatchResult(
        agent_a=names[0] if names else agent_a.name,
        agent_b=names[1] if names else agent_b.name,
        game=env.describe(), openings=openings,
        opening_text=tuple(" ".join(env.action_to_text(a) for a in o) for o in openings),
        games_per_opening_colour=g, as_first=as_first, as_second=as_second,
        per_opening=per_opening, mean_length=float(np.mean(lengths)),
        elo=elo.estimate(total.wins, total.draws, total.losses),
        pair_points=tuple(tuple(float(x) for x in row) for row in pair_points),
        distinct_games=distinct)
