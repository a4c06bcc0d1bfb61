"""A Gomocup (piskvork) engine: any registered agent speaking the pbrain protocol on
stdin / stdout, one command per line, one answer per command.

  START N        board N x N (5..20, `GameConfig`'s MAX_BOARD_SIZE; 20 is the Gomocup
                 freestyle board): compiles and warms up the agent, then `OK`
  RECTSTART W,H  the same when W == H; rectangular boards are an ERROR
  RESTART        a new game on the same board: `OK` (nothing is compiled again)
  BEGIN          we play first (black) on the empty board: our move `x,y`
  TURN X,Y       the opponent played X,Y: our move `x,y`
  BOARD          then lines `X,Y,FIELD` (1 own stone, 2 opponent's) and `DONE`: the whole
                 position, and our move; colours follow from the stone counts (equal
                 counts: we are black)
  TAKEBACK X,Y   remove the stone on X,Y: `OK`; the position before it, exactly (the
                 stones' order is kept, so each side's last move is its stone before)
  INFO KEY VALUE timeout_turn, timeout_match, time_left (ms), max_memory (bytes: a quarter
                 bounds the search tree, 0 no bound), game_type, rule, folder, ...; no
                 answer; unknown keys are ignored (absurd values: see "INFO values")
  ABOUT          name="gomoku-jax", version="<installed version>", author, country, www
                 (from the package's metadata, "-" where it has none), agent
  END            exit

Coordinates are `x,y` with x the column and y the row, 0-based (action = y * N + x).
Commands are matched case-insensitively; blank lines, extra whitespace and Windows line
endings are ignored.

Answers besides moves: `UNKNOWN <what>` for a command the protocol does not have, and
`ERROR <reason>` for a line that is malformed or out of order (bad coordinates, a TURN onto
an occupied cell or before START, a size outside 5..20, a BOARD line that is not X,Y,FIELD,
a position that is over or whose stone counts don't fit alternating play ...). A line
answered with ERROR changes nothing (a broken BOARD is discarded: the position before it
stays), and the engine keeps running. `MESSAGE <text>` lines are information, e.g. about a
rule that is only approximated.

Rules (INFO rule, a bitmask; `rule_from_bitmask`): 0 freestyle (five or more wins), 1
exact five (overlines don't win), 4 (or 5) renju, 8 caro (five or more, not blocked at both
ends by the opponent's stones; the edge is no block), 9 caro with exactly five; the env
plays that rule exactly (`GameConfig.rule`). Bit 2 (continuous game) is played as the other
bits, with a MESSAGE; 12 / 13 (renju and caro) is no defined combination: renju, with a
MESSAGE; unknown bits (16 and up) are ignored, with a MESSAGE. A BOARD field 3 (continuous
games) is an ERROR. A rule the game cannot take (renju with a network of another win
length) is an ERROR and the rule stays. Under renju the engine never plays a forbidden point
(`renju.forbidden_points`: a double-three, double-four or overline that makes no five) when
it is black: not the agent's move, not the no-search move, not the opening rule's or the
illegal-move fallback's (if every empty cell is forbidden, which the rule makes a loss, it
plays one). A TURN that puts the opponent's black stone on a forbidden point, or a BOARD
where black moved last (we are white) whose last listed black stone stands on one (judged
without that stone), is an ERROR naming the rule (black has lost by the rule: no move to
make) and changes nothing, as a TURN or BOARD after a won game is.

INFO values: timeout_turn, timeout_match, time_left, max_memory, game_type and rule take an
integer (up to 40 digits, an optional sign); anything else (text, `5000.5`, `1e3`, more
digits) is an `ERROR` and the value before stays. A negative value is an `ERROR` too, but
for time_left, which the manager may let run below zero (read as 0: a no-search move).
Values above `MAX_INFO_VALUE` (10^15: ms, 30,000 years; bytes, a petabyte) are read as
that. A huge timeout_turn does not make a move think forever: an anytime search stops when
its tree is full (at most 512 MiB of nodes without INFO max_memory: 65,537 on 15x15, about
30-60 s for the shipped network on a 2-core CPU), other agents run their strongest variant
once. timeout_turn 0 means "as fast
as possible": the least a move costs (one short chunk, or the cheapest variant). rule is a
bitmask of any size (see "Rules"); max_memory bounds the tree to a power of two (plus one)
of nodes, so that a manager's changing values compile a few tree sizes, not one each.

Time: every move gets min(timeout_turn, spare / max(10, 20 - own stones)) * 0.8 minus 50 ms
(the second term only with a match clock: timeout_match above 0), counted from the moment
its command arrives (timeout_turn 0: as fast as possible), where spare = time_left - a
reserve for the moves that may still come: ceil(empty cells / 2), this one included, times
`quick_s` (5 ms), the most a move without search costs (`io.quick_move`: NumPy, nothing
compiled; a five, a block of one, else the longest run; under renju as black also one
compiled call of the forbidden-point scan, `io.forbidden`). When spare is less
than the cheapest search move (1.5 x its measured time, the player's `cheapest_s`: the
reroot and one short chunk, or the cheapest variant, + `quick_s`), the move is that
no-search move; so under a match clock the engine never runs out of time while each
no-search move keeps within `quick_s`, however long the game (a 15x15 game reserves 113 x 5
ms at its start), and a search move at budget 0 costs its floor only while the spare pays
for it. Search agents (`SearchAgent` with the "gomoku_jax" loop) search *anytime*
(`agents.anytime`): chunks of `num_simulations` simulations (and short ones of 1/8)
continue one tree until the next chunk's predicted time would not fit the budget, then the
most visited move is played; the tree is kept and rerooted at the next position, so the
work on the expected reply carries over. Its size follows the time control: `max_nodes`
(8193) at first, and when INFO timeout_turn / timeout_match allow longer moves, 1.5 x the
simulations the longest move runs at the measured rate, rounded up to a power of two plus
one (`AnytimeSearch.grow_for`), compiled on a thread while moves go on with the smaller
tree; never more than a quarter of INFO max_memory, or 512 MiB without it. The threat
search at the root (VCF) cannot stop once it runs (up to 0.4 s on a
sharp 15x15 position on a loaded 2-core CPU): a move whose budget is shorter than the
longest it has taken so far starts without it, so it overruns a short budget at most once.
RESTART keeps the tree (the next game's position is not in it: it starts anew). Other
agents with a `num_simulations` field are compiled at START in cheaper copies too (1/4,
1/16 of the simulations) and each move uses the strongest copy whose measured move time
fits; other agents are only timed. Nothing is compiled while a move is on the clock: an
INFO rule or max_memory that changes what runs compiles when the INFO arrives.

Openings (the engine's rule, for every agent): on the empty board we play the centre
(N // 2, N // 2; a search agent plays it without searching); with 1 to 4 stones we play
within Chebyshev distance 2 of a stone: the agent's move when it is such a cell, else the
allowed cell its policy likes best (ties, or no policy: the one nearest the centre). The
search's prior follows the same rule (`OpeningGomoku`'s candidate weights: centre-weighted
on the empty board, 1.0 / 0.5 / 0 by distance with 1 to 4 stones), because the proximity
mask's opening exception (all ones under 5 stones) let the search answer at the edge.

A trained network (`--checkpoint RUN_DIR`, a run of `gomoku-jax train`) plays its own game
only: START with another board size is an ERROR (or, with a `fallback` agent, is played by
that agent: the default engine plays the shipped 15x15 network on 15x15 and `mcts` on the
other sizes), and the win length is the run's. The
agent is then the run's eval agent (`--agent trained`, the default: the run's search at
full strength with `eval.agent_simulations`; `--agent-config num_simulations=S`), or a
search or policy agent with `evaluator=network` (their default with a checkpoint).
The command line is `gomoku_jax.cli.pbrain`.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import math
import re
import time
from typing import Any, Callable, NamedTuple, Optional, TextIO

import jax
import jax.numpy as jnp
import numpy as np

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.agents.base import Agent
from gomoku_jax.games.gomoku.config import MAX_BOARD_SIZE, MIN_BOARD_SIZE, GameConfig
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.opening_rule import (  # noqa: F401
    NEAR,
    OPENING,
    OpeningGomoku,
    opening_cells,
    opening_weights,
)
from gomoku_jax.games.gomoku.positions import winning_colours
from gomoku_jax.games.gomoku.state import BLACK, WHITE
from gomoku_jax.io.forbidden import forbidden_for_black, renju_cells
from gomoku_jax.io.forbidden import warm as warm_forbidden
from gomoku_jax.io.player import DEFAULT_MAX_NODES, Played, TimedPlayer, simulations
from gomoku_jax.io.quick_move import quick_move

OWN, OPPONENT, EMPTY = 1, -1, 0  # the engine's board: our stones vs the opponent's
FIELDS = {1: OWN, 2: OPPONENT}  # BOARD's FIELD values
NAME = "gomoku_jax"  # ABOUT's name when the package's metadata is not installed
AUTHOR = "gomoku_jax developers"

EXACT_FIVE, CONTINUOUS, RENJU, CARO = 1, 2, 4, 8  # the bits of INFO rule
KNOWN_BITS = EXACT_FIVE | CONTINUOUS | RENJU | CARO
TIME_KEYS = ("timeout_turn", "timeout_match", "time_left")
INT_KEYS = TIME_KEYS + ("max_memory", "game_type", "rule")

_NUMBER = r"([0-9]{1,4})"
_XY = re.compile(rf"{_NUMBER}\s*,\s*{_NUMBER}")
_XY_FIELD = re.compile(rf"{_NUMBER}\s*,\s*{_NUMBER}\s*,\s*{_NUMBER}")
_SIZE = re.compile(_NUMBER)
_INT = re.compile(r"[+-]?[0-9]{1,40}")
MAX_INFO_VALUE = 10**15  # timeout_turn, timeout_match, time_left and max_memory above: read as this


class ProtocolError(Exception):
    """A line understood but not accepted: answered `ERROR <message>`, state unchanged."""


def rule_from_bitmask(mask: int) -> tuple[str, Optional[str]]:
    """(rule, note) for an INFO rule bitmask (mask >= 0): renju when bit 4 is set, else caro
    (bit 8) or caro_exact5 (bits 8 and 1), else exact5 (bit 1), else freestyle; `note` says
    what is not played as given (None when everything is): bit 2 (continuous game), renju
    with caro (12 / 13: no defined combination), unknown bits (16 and up)."""
    if mask & RENJU:
        rule = "renju"  # black's exact five is part of renju: bit 1 changes nothing
    elif mask & CARO:
        rule = "caro_exact5" if mask & EXACT_FIVE else "caro"
    else:
        rule = "exact5" if mask & EXACT_FIVE else "freestyle"
    missing = []
    if mask & CONTINUOUS:
        missing.append("continuous game (2) not supported")
    if mask & RENJU and mask & CARO:
        missing.append("renju (4) with caro (8) is not a defined combination")
    if mask & ~KNOWN_BITS:
        missing.append(f"unknown bits {mask & ~KNOWN_BITS} ignored")
    note = None if not missing else f"rule {mask}: {'; '.join(missing)}; playing {rule}"
    return rule, note


def plan_move(limits: dict, own: int, empty: int, cheapest_s: float = 0.0,
              quick_s: float = 0.0, *, safety: float = 0.8, margin_s: float = 0.05,
              match_divisor: float = 20.0, min_moves_left: float = 10.0
              ) -> tuple[Optional[float], bool]:
    """(budget in seconds or None when no limit is known, whether to play the no-search
    move) for a move with `own` stones of ours and `empty` empty cells on the board, under
    INFO `limits` (ms): the rule in the module docstring ("Time"). cheapest_s: what the
    cheapest search move costs (with its safety factor); quick_s: the most a no-search
    move costs. With both 0 the budget is the one without a reserve (an upper bound)."""
    times = []
    if "timeout_turn" in limits:
        times.append(limits["timeout_turn"] / 1000)
    quick = False
    if limits.get("timeout_match", 0) > 0 and "time_left" in limits:
        to_come = (empty + 1) // 2  # our moves, this one included
        spare = max(limits["time_left"], 0) / 1000 - to_come * quick_s
        quick = spare < cheapest_s or spare < 0
        times.append(max(spare, 0.0) / max(min_moves_left, match_divisor - own))
    if not times:
        return None, False
    return max(0.0, min(times) * safety - margin_s), quick


def _quote(text: str, limit: int = 40) -> str:
    return ascii(text if len(text) <= limit else text[:limit] + "...")


def _line(kind: str, text: str) -> str:
    """`KIND text` on one printable ASCII line."""
    text = " ".join(str(text).split()).encode("ascii", "backslashreplace").decode("ascii")
    return f"{kind} {text or '-'}"


def about_fields() -> dict[str, str]:
    """ABOUT's fields: the installed distribution's name, version and home page (from
    `importlib.metadata`; "-" where it has none), the author and country."""
    try:
        meta = importlib.metadata.metadata("gomoku_jax")
        name, version = meta["Name"], meta["Version"]
        urls = [u.split(",", 1)[-1].strip() for u in meta.get_all("Project-URL") or []]
        www = meta.get("Home-page") or (urls[0] if urls else "-")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        name, version, www = NAME, gomoku_jax.__version__, "-"
    return {"name": name, "version": version, "author": AUTHOR, "country": "-", "www": www}


class _Seat(NamedTuple):
    """An agent of the engine with its timed player, and the game it is fixed to (None:
    every board size)."""

    agent: Agent
    player: TimedPlayer
    game: Optional[GameConfig]


@dataclasses.dataclass
class _Pending:
    """A BOARD being received: stones so far and the last stone listed of each side."""

    board: np.ndarray
    last: dict
    moves: list  # (side, action) in the order listed


class PbrainEngine:
    """The protocol as a state machine: `handle(line) -> output lines`; `run(stdin, stdout)`
    is the loop the `pbrain` subcommand runs.

    Args:
      agent: an `Agent`, or a registry name built with `agent_config`.
      agent_config: config fields for a registry name.
      params: the agent's parameters (None for agents without networks).
      rule: the rule until an INFO rule says otherwise (one of `config.RULES`).
      win_length: stones in a row that win (5 in Gomocup).
      game: a fixed game for an agent that plays only one (a trained network's
        `game_config`): START accepts only its board size (other sizes are an ERROR), its
        win length, observation form and feature plane are used (`win_length` is ignored),
        and INFO rule still sets the rule, with a MESSAGE when it differs from the game's.
      fallback: with `game`, an agent (without params) that plays the other board sizes:
        each START picks the network's agent on its board size, else this one (the
        default engine: the shipped 15x15 network, and `mcts` elsewhere).
      seed: seeds the agent's random keys.
      levels: how many variants (see `player.variants`) to compile for agents with
        `num_simulations` that do not search anytime.
      anytime: search agents search anytime (see the module docstring); False: variants.
      max_nodes: the anytime search's tree, in nodes, before the time control asks for a
        larger one (see the module docstring).
      memory_share: the part of INFO max_memory the anytime search's tree may take.
      safety, margin_s, match_divisor, min_moves_left: the move budget is
        min(timeout_turn, spare / max(min_moves_left, match_divisor - own stones) if
        timeout_match > 0) * safety - margin_s, counted from the moment the command
        arrived (`plan_move`; spare: time_left less the reserve).
      quick_s, floor_safety: the reserve is `quick_s` per move that may come; the
        no-search move is played when the spare is under floor_safety x the player's
        cheapest move + quick_s.
      verbose: a MESSAGE line with the agent's value and move time before every move.
      clock: seconds as a float (for tests).

    Attributes (read them, don't write them): `size` (None before START), `rule`,
    `board` (int8[N, N] indexed [y, x]: +1 ours, -1 the opponent's, 0 empty), `info` (INFO
    values as given), `limits` (the integer ones), `ended`, `moves_computed` (agent calls),
    `last_move` (a dict about the latest move), `moves` (the stones in the order played:
    (side, action) pairs, side +1 ours, -1 the opponent's).
    """

    def __init__(self, agent: Agent | str = "heuristic", agent_config: Optional[dict] = None, *,
                 params: Any = None, rule: str = "freestyle", win_length: int = 5,
                 game: Optional[GameConfig] = None, fallback: Optional[Agent] = None,
                 seed: int = 0, levels: int = 3,
                 anytime: bool = True, max_nodes: int = DEFAULT_MAX_NODES,
                 memory_share: float = 0.25, safety: float = 0.8, margin_s: float = 0.05,
                 match_divisor: float = 20.0, min_moves_left: float = 10.0,
                 quick_s: float = 0.005, floor_safety: float = 1.5,
                 verbose: bool = False, clock: Callable[[], float] = time.perf_counter):
        if isinstance(agent, str):
            agent = agents.make(agent, **(agent_config or {}))
        elif agent_config:
            raise ValueError("agent_config goes with an agent name, not an Agent instance")
        if game is not None:
            win_length = game.win_length
        if fallback is not None and game is None:
            raise ValueError("a fallback agent plays the board sizes a game's network does "
                             "not; give it with game=")

        def seat(agent: Agent, params: Any, game: Optional[GameConfig]) -> _Seat:
            # Validates the rule, and that the agent plays Gomoku (a network's agent: the
            # network's own game, whose shapes it may check).
            agent.check_game(
                Gomoku(MIN_BOARD_SIZE, min(win_length, MIN_BOARD_SIZE), rule) if game is None
                else Gomoku.from_config(dataclasses.replace(game, rule=rule)))
            return _Seat(agent, TimedPlayer(agent, params, levels=levels, anytime=anytime,
                                            max_nodes=max_nodes, clock=clock), game)

        self._seats = [seat(agent, params, game)] + (
            [] if fallback is None else [seat(fallback, None, None)])
        self.agent, self.player, self.game = self._seats[0]
        self.win_length = win_length
        self.safety, self.margin_s, self.match_divisor = safety, margin_s, match_divisor
        self.min_moves_left, self.memory_share = min_moves_left, memory_share
        self.quick_s, self.floor_safety = quick_s, floor_safety
        self._clock = clock
        self._line_time = clock()
        self.verbose = verbose
        self._base_key = jax.random.key(seed)
        self._draws = 0
        self.rule = rule
        self.size: Optional[int] = None
        self.env: Optional[Gomoku] = None
        self.board: Optional[np.ndarray] = None
        self._last: dict = {OWN: None, OPPONENT: None}
        self.moves: list[tuple[int, int]] = []
        self._pending: Optional[_Pending] = None
        self._agent_state: Any = None
        self.info: dict[str, str] = {}
        self.limits: dict[str, int] = {}
        self.ended = False
        self.moves_computed = 0
        self.last_move: Optional[dict] = None
        self._handlers = {
            "START": self._start, "RECTSTART": self._rectstart, "RESTART": self._restart,
            "BEGIN": self._begin, "TURN": self._turn, "BOARD": self._board,
            "DONE": self._done_outside, "TAKEBACK": self._takeback, "INFO": self._info,
            "ABOUT": self._about, "END": self._end,
        }

    # ------------------------------------------------------------------ the loop

    def run(self, stdin: TextIO, stdout: TextIO) -> int:
        """Answer lines from `stdin` on `stdout` until END or end of input; returns 0."""
        while not self.ended:
            line = stdin.readline()
            if not line:
                break
            out = self.handle(line)
            if out:
                stdout.write("".join(o + "\n" for o in out))
                stdout.flush()
        return 0

    def handle(self, line: str) -> list[str]:
        """The answer lines to one input line (none for INFO, BOARD lines, blank lines).
        Never raises: a failure is an `ERROR` line and leaves the engine as it was."""
        if self.ended:
            return []
        text = line.strip()
        if not text:
            return []
        self._line_time = self._clock()  # a move's clock starts when its command arrives
        in_board = self._pending is not None
        keeps_board = in_board and text.split(None, 1)[0].upper() == "INFO"
        saved = self._snapshot()
        try:
            return self._board_line(text) if in_board and not keeps_board else self._command(text)
        except ProtocolError as e:
            message = str(e)
        except Exception as e:  # a bug: say so, and stay usable
            message = f"internal error ({type(e).__name__}: {e}); nothing changed"
            keeps_board = False
        self._restore(saved)
        if in_board and not keeps_board:
            self._pending = None
            if "BOARD" not in message:
                message += "; the BOARD was discarded"
        return [_line("ERROR", message)]

    # ------------------------------------------------------------------ commands

    def _command(self, text: str) -> list[str]:
        parts = text.split(None, 1)
        word, arg = parts[0].upper(), (parts[1].strip() if len(parts) > 1 else "")
        handler = self._handlers.get(word)
        if handler is None:
            if _XY_FIELD.fullmatch(text):
                raise ProtocolError(f"{_quote(text)}: an X,Y,FIELD line outside BOARD ... DONE")
            return [_line("UNKNOWN", f"command {_quote(parts[0])}")]
        return handler(arg)

    def _start(self, arg: str) -> list[str]:
        if not _SIZE.fullmatch(arg):
            raise ProtocolError(f"START expects a board size N in {MIN_BOARD_SIZE}.."
                                f"{MAX_BOARD_SIZE}, got {_quote(arg)}")
        return self._new_game(int(arg))

    def _rectstart(self, arg: str) -> list[str]:
        m = _XY.fullmatch(arg)
        if m is None:
            raise ProtocolError(f"RECTSTART expects W,H, got {_quote(arg)}")
        width, height = map(int, m.groups())
        if width != height:
            raise ProtocolError(f"rectangular boards ({width}x{height}) are not supported; "
                                f"use START N with N in {MIN_BOARD_SIZE}..{MAX_BOARD_SIZE}")
        return self._new_game(width)

    def _new_game(self, n: int) -> list[str]:
        if not MIN_BOARD_SIZE <= n <= MAX_BOARD_SIZE:
            raise ProtocolError(f"board size {n} is not supported (START N with N in "
                                f"{MIN_BOARD_SIZE}..{MAX_BOARD_SIZE})")
        seats = [s for s in self._seats if s.game is None or s.game.board_size == n]
        if not seats:
            m = self.game.board_size
            raise ProtocolError(f"board size {n} is not supported: this engine's network "
                                f"plays only {m}x{m} (START {m})")
        if self.win_length > n:
            raise ProtocolError(f"board size {n} is smaller than the win length "
                                f"{self.win_length}")
        self.agent, self.player, self.game = seats[0]
        env = self._env(n, self.rule)
        self.player.prepare(env, self._next_key())  # compile + warm up before OK
        _warm_forbidden(env)
        self.env, self.size = env, n
        self._size_tree()
        self.board = np.zeros((n, n), np.int8)
        self._reset_position_memory()
        # The first `position` compiles JAX's small conversions (their first use in the
        # process): off the clock, not in the first move.
        jax.block_until_ready(self.position())
        return ["OK"]

    def _restart(self, arg: str) -> list[str]:
        self._require_start("RESTART")
        self._no_argument("RESTART", arg)
        self.board[:] = EMPTY
        # An anytime tree stays: the next move finds its position in it or starts anew (as
        # after TAKEBACK or BOARD), so RESTART allocates no tree (tens of MB on 20x20).
        self._reset_position_memory(keep_tree=self.player.anytime is not None)
        return ["OK"]

    def _begin(self, arg: str) -> list[str]:
        self._require_start("BEGIN")
        self._no_argument("BEGIN", arg)
        stones = int(np.count_nonzero(self.board))
        if stones:
            raise ProtocolError(f"BEGIN needs an empty board, this one has {stones} stones "
                                f"(RESTART first, or continue with TURN / BOARD)")
        return self._play()

    def _turn(self, arg: str) -> list[str]:
        self._require_start("TURN")
        x, y = self._cell("TURN", arg)
        if self.board[y, x] != EMPTY:
            owner = "ours" if self.board[y, x] == OWN else "the opponent's"
            raise ProtocolError(f"TURN {x},{y}: that cell is occupied ({owner})")
        self._check_black_stone(self.board, OPPONENT, y * self.size + x, "TURN")
        self.board[y, x] = OPPONENT
        self._last[OPPONENT] = y * self.size + x
        self.moves.append((OPPONENT, y * self.size + x))
        return self._play()

    def _board(self, arg: str) -> list[str]:
        self._require_start("BOARD")
        self._no_argument("BOARD", arg)
        self._pending = _Pending(np.zeros_like(self.board), {OWN: None, OPPONENT: None}, [])
        return []

    def _done_outside(self, arg: str) -> list[str]:
        raise ProtocolError("DONE without BOARD")

    def _takeback(self, arg: str) -> list[str]:
        self._require_start("TAKEBACK")
        x, y = self._cell("TAKEBACK", arg)
        owner = int(self.board[y, x])
        if owner == EMPTY:
            raise ProtocolError(f"TAKEBACK {x},{y}: that cell is empty")
        action = y * self.size + x
        self.board[y, x] = EMPTY
        # The position before that stone: its side's last move is its stone played before.
        self.moves = [m for m in self.moves if m != (owner, action)]
        self._last[owner] = next((a for side, a in reversed(self.moves) if side == owner),
                                 None)
        if self.player.anytime is None:  # an anytime tree finds the position or starts anew
            self._agent_state = self._new_agent_state()
        return ["OK"]

    def _info(self, arg: str) -> list[str]:
        parts = arg.split(None, 1)
        if not parts:
            raise ProtocolError("INFO expects a key and a value, e.g. INFO timeout_turn 5000")
        key, value = parts[0].lower(), (parts[1].strip() if len(parts) > 1 else "")
        out: list[str] = []
        if key in INT_KEYS:
            if not _INT.fullmatch(value):
                raise ProtocolError(f"INFO {key} expects an integer (up to 40 digits), got "
                                    f"{_quote(value)}")
            number = int(value)
            if number < 0 and key != "time_left":  # time_left may run below zero
                raise ProtocolError(f"INFO {key} must be >= 0, got {number}")
            if key == "rule":
                out = self._set_rule(number)
            if key == "max_memory":
                self._set_max_memory(min(number, MAX_INFO_VALUE))
            self.limits[key] = max(number, 0) if key in ("rule", "game_type") else \
                min(max(number, 0), MAX_INFO_VALUE)
            if key in ("timeout_turn", "timeout_match"):
                self._size_tree()
        self.info[key] = value
        return out

    def _size_tree(self) -> None:
        """Size the anytime search's tree for the longest move the time control allows:
        the first move's budget under timeout_turn and timeout_match (`plan_move` with the
        whole match left; time_left is left out, as it changes every move). A larger tree
        compiles on a thread while moves go on with the one compiled
        (`AnytimeSearch.grow_for`)."""
        if self.size is None:
            return
        limits = {k: self.limits[k] for k in ("timeout_turn", "timeout_match")
                  if k in self.limits}
        if limits.get("timeout_match"):
            limits["time_left"] = limits["timeout_match"]
        budget, _ = plan_move(limits, 0, self.size * self.size)
        self.player.grow_for(self.env, budget, self._next_key())

    def _set_rule(self, mask: int) -> list[str]:
        rule, note = rule_from_bitmask(mask)
        if rule != self.rule:
            try:  # e.g. renju with a network of another win length
                GameConfig(MAX_BOARD_SIZE, self.win_length, rule)
            except ValueError as e:
                raise ProtocolError(f"INFO rule {mask} ({rule}): {e}; the rule stays "
                                    f"{self.rule}") from None
            self.rule = rule
            if self.size is not None:  # compile now, not on the next move's clock
                self.env = self._env(self.size, rule)
                self.player.prepare(self.env, self._next_key())
                _warm_forbidden(self.env)
                self._size_tree()
        notes = [] if note is None else [note]
        if self.game is not None and rule != self.game.rule:
            notes.append(f"the network was trained for {self.game.rule}; playing {rule} "
                         f"with it")
        return [_line("MESSAGE", n) for n in notes]

    def _set_max_memory(self, max_memory: int) -> None:
        """Bound the anytime search's tree by `memory_share` of `max_memory` bytes (0: no
        bound); a new tree size is compiled now, not on the next move's clock, and starts
        a new tree."""
        for seat in self._seats:  # every seat's bound; only the one playing compiles now
            if seat.player.set_max_tree_bytes(int(max_memory * self.memory_share)) \
                    and seat.player is self.player and self.size is not None:
                self.player.prepare(self.env, self._next_key())
                self._agent_state = self._new_agent_state()

    def _seat(self) -> "_Seat":
        return _Seat(self.agent, self.player, self.game)

    def _env(self, n: int, rule: str) -> Gomoku:
        if self.game is None:
            return OpeningGomoku(n, self.win_length, rule)
        # The network's own inputs (observation form, feature plane) under the new rule.
        return OpeningGomoku.from_config(dataclasses.replace(self.game, rule=rule))

    def _about(self, arg: str) -> list[str]:
        self._no_argument("ABOUT", arg)
        sims = simulations(self.agent)
        agent = self.agent.name + (f" {sims} simulations" if sims is not None else "")
        if self.player.anytime is not None:
            agent = f"{self.agent.name} anytime, {self.player.anytime.chunk} per chunk"
        fields = {**about_fields(), "agent": agent}
        return [", ".join(f'{k}="{v}"' for k, v in fields.items())]

    def _end(self, arg: str) -> list[str]:
        self.ended = True  # END always ends, whatever follows it on the line
        return []

    # ------------------------------------------------------------------ BOARD mode

    def _board_line(self, text: str) -> list[str]:
        word = text.split(None, 1)[0].upper()
        if word == "DONE" and text.upper() == "DONE":
            return self._done()
        if word == "END":
            return self._end("")
        m = _XY_FIELD.fullmatch(text)
        if m is None:
            raise ProtocolError(f"after BOARD: expected X,Y,FIELD or DONE, got {_quote(text)}; "
                                f"the BOARD was discarded (the line was not executed)")
        x, y, field = map(int, m.groups())
        n = self.size
        if x >= n or y >= n:
            raise ProtocolError(f"BOARD stone {x},{y} is off the {n}x{n} board (x and y in "
                                f"0..{n - 1}); the BOARD was discarded")
        if field not in FIELDS:
            what = ("field 3 (continuous games) is not supported" if field == 3
                    else f"field {field} must be 1 (own) or 2 (opponent)")
            raise ProtocolError(f"BOARD stone {x},{y}: {what}; the BOARD was discarded")
        pending = self._pending
        if pending.board[y, x] != EMPTY:
            raise ProtocolError(f"BOARD lists {x},{y} twice; the BOARD was discarded")
        pending.board[y, x] = FIELDS[field]
        pending.last[FIELDS[field]] = y * n + x
        pending.moves.append((FIELDS[field], y * n + x))
        return []

    def _done(self) -> list[str]:
        pending, self._pending = self._pending, None
        self.board, self._last, self.moves = pending.board, pending.last, pending.moves
        if self.player.anytime is None:  # an anytime tree finds the position or starts anew
            self._agent_state = self._new_agent_state()
        try:
            latest = pending.last[OPPONENT]
            if latest is not None and np.sum(pending.board == OPPONENT) > np.sum(
                    pending.board == OWN):  # the opponent is black and moved last
                before = pending.board.copy()
                before.flat[latest] = EMPTY
                self._check_black_stone(before, OPPONENT, latest, "BOARD")
            return self._play()
        except ProtocolError as e:
            raise ProtocolError(f"BOARD position not accepted, the previous one stays: {e}")

    # ------------------------------------------------------------------ moving

    def move_plan(self) -> tuple[Optional[float], bool]:
        """(seconds the next move may take, None: no limit known; whether it is the
        no-search move), counted from the moment its command arrives (`plan_move`)."""
        board = self.board if self.board is not None else np.zeros((0, 0), np.int8)
        cheapest = 0.0
        if self.env is not None and self.player.prepared(self.env):
            cheapest = self.floor_safety * self.player.cheapest_s(self.env) + self.quick_s
        return plan_move(self.limits, int(np.sum(board == OWN)), int(np.sum(board == EMPTY)),
                         cheapest, self.quick_s, safety=self.safety, margin_s=self.margin_s,
                         match_divisor=self.match_divisor, min_moves_left=self.min_moves_left)

    def move_budget_s(self) -> Optional[float]:
        """Seconds the next move may take (None: no limit known), counted from the
        moment its command arrives."""
        return self.move_plan()[0]

    def position(self, build: bool = True):
        """The env state of the position on the board with us to move (its last moves
        from the stones played: see `moves`), or a ProtocolError saying why there is none
        (stone counts that don't fit, a game that is over, a full board). build=False:
        the checks only, None (the no-search move needs no state: 2-3 ms saved)."""
        self._require_start("a position")
        board, n = self.board, self.size
        own, opp = int(np.sum(board == OWN)), int(np.sum(board == OPPONENT))
        if own == opp:
            colour = BLACK
        elif opp == own + 1:
            colour = WHITE
        else:
            raise ProtocolError(
                f"the stone counts don't fit alternating play: {own} own and {opp} opponent "
                f"stones with us to move (we need as many as the opponent, or one fewer)")
        absolute = (board * colour).astype(np.int8)  # +1 black, -1 white
        winners = winning_colours(absolute, self.env.config)
        if winners:
            who = ("both sides have" if len(winners) == 2 else
                   "we have" if colour in winners else "the opponent has")
            raise ProtocolError(f"the game is over: {who} a winning line ({self.rule}); "
                                f"no move to make")
        if own + opp == n * n:
            raise ProtocolError("the board is full (a draw); no move to make")
        if not build:
            return None
        try:
            state = self.env.from_board(absolute)
        except ValueError as e:
            raise ProtocolError(f"position not accepted: {e}") from None
        mine, theirs = self._last[OWN], self._last[OPPONENT]
        black_last, white_last = (mine, theirs) if colour == BLACK else (theirs, mine)
        return state.replace(last_moves=jnp.asarray(
            [-1 if a is None else a for a in (black_last, white_last)], jnp.int32))

    def _play(self) -> list[str]:
        """Our move on `self.board` (us to move), or a ProtocolError saying why not."""
        board, n = self.board, self.size
        budget, quick = self.move_plan()
        state = self.position(build=not quick)
        left = None if budget is None else max(0.0, budget - (self._clock() - self._line_time))
        legal, forbidden = self._legal_cells(board)
        allowed = opening_cells(board)
        if allowed is not None and (allowed & legal).any():
            allowed = allowed & legal
        if allowed is not None and allowed.sum() == 1 and self.player.anytime is not None:
            # A forced opening move (the centre): nothing to search.
            played = Played(int(np.argmax(allowed)), self._agent_state, {"value": 0.0}, 0.0,
                            0, 0)
        elif quick:  # the clock cannot pay for a search: the no-search move
            t = self._clock()
            action = quick_move(board, self.env.config.win_length, self.env.config.rule,
                                legal if allowed is None else allowed,
                                black=bool(np.sum(board == OWN) == np.sum(board == OPPONENT)))
            if self.player.anytime is None:  # the agent's state missed a move: start anew
                self._agent_state = self._new_agent_state()
            played = Played(action, self._agent_state, {"value": 0.0}, self._clock() - t, 0, 0)
        else:
            played = self.player.move(self.env, state, self._agent_state, self._next_key(),
                                      left)
            self.moves_computed += 1
        out = []
        action = played.action
        if not 0 <= action < n * n or not legal[action]:
            fallback = _nearest_to_centre(legal if allowed is None else allowed)
            why = (" (a forbidden point for black under renju)"
                   if 0 <= action < n * n and forbidden[action] else "")
            out.append(_line("MESSAGE", f"agent {self.agent.name} chose illegal action "
                                        f"{action}{why}; playing {fallback % n},"
                                        f"{fallback // n}"))
            action = fallback
        opening = allowed is not None and not allowed[action]
        if opening:  # the opening rule: the agent's best allowed move instead
            action = _best_allowed(allowed, played.info.get("policy"), n)
        row, col = divmod(action, n)
        if board[row, col] != EMPTY:  # unreachable by construction; never print such a move
            raise ProtocolError(f"refusing to play the occupied cell {col},{row}")
        board[row, col] = OWN
        self._last[OWN] = action
        self.moves.append((OWN, action))
        self._agent_state = played.agent_state
        variant = self.player.variants[played.variant]
        sims = simulations(variant) if played.simulations is None else played.simulations
        value = float(played.info["value"]) if "value" in played.info else 0.0
        self.last_move = {"x": col, "y": row, "action": action, "seconds": played.seconds,
                          "total_seconds": self._clock() - self._line_time,
                          "budget_s": budget, "variant": played.variant,
                          "num_simulations": sims, "value": value,
                          "opening_rule": opening, "anytime": played.anytime,
                          "quick": quick,  # the no-search move (state: None)
                          "state": state}
        if self.verbose:
            extra = ""
            if played.anytime is not None:
                extra = (f", {len(played.anytime.chunks)} chunks, "
                         f"{played.anytime.reused} nodes reused")
            out.append(_line("MESSAGE", f"value {value:+.3f}, {played.seconds * 1000:.0f} ms"
                                        + (f", {sims} simulations" if sims else "") + extra
                                        + (f", budget {budget * 1000:.0f} ms"
                                           if budget is not None else "")))
        out.append(f"{col},{row}")
        return out

    # ------------------------------------------------------------------ renju

    def _legal_cells(self, board: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(legal, forbidden), bool[N*N] each, for us to move on `board` (ours +1): the
        empty cells less black's forbidden points when the rule is renju and we are black
        (all empty cells when every one is forbidden: the mask's fallback); `forbidden`
        those points (all False under the other rules, or when we are white)."""
        empty = board.reshape(-1) == EMPTY
        if self.env.config.rule != "renju":
            return empty, np.zeros_like(empty)
        black = np.sum(board == OWN) == np.sum(board == OPPONENT)
        return renju_cells(board if black else -board, bool(black))

    def _check_black_stone(self, before: np.ndarray, side: int, action: int,
                           command: str) -> None:
        """ProtocolError when `side`'s stone on `action`, put on `before` (the engine's
        board without it), is black's and on a forbidden point under renju."""
        if self.env.config.rule != "renju" or np.sum(before == side) != np.sum(before == -side):
            return  # not renju, or `side` plays white
        if forbidden_for_black(before * side)[action]:
            n = self.size
            raise ProtocolError(
                f"{command}: black's stone on {action % n},{action // n} is on a forbidden point "
                f"under renju (a double-three, double-four or overline that makes no five): "
                f"black has lost by the rule; no move to make")

    # ------------------------------------------------------------------ helpers

    def _require_start(self, command: str) -> None:
        if self.size is None:
            raise ProtocolError(f"{command} before START: no board yet")

    @staticmethod
    def _no_argument(command: str, arg: str) -> None:
        if arg:
            raise ProtocolError(f"{command} takes no argument, got {_quote(arg)}")

    def _cell(self, command: str, arg: str) -> tuple[int, int]:
        m = _XY.fullmatch(arg)
        if m is None:
            raise ProtocolError(f"{command} expects X,Y (two integers from 0, x the column), "
                                f"got {_quote(arg)}")
        x, y = map(int, m.groups())
        n = self.size
        if x >= n or y >= n:
            raise ProtocolError(f"{command} {x},{y} is off the {n}x{n} board (x and y in "
                                f"0..{n - 1})")
        return x, y

    def _next_key(self) -> jax.Array:
        self._draws += 1
        return jax.random.fold_in(self._base_key, self._draws)

    def _new_agent_state(self) -> Any:
        """The agent's state for a new game, from the agent bound to the current board (a
        search that reuses its tree sizes it by the game)."""
        if self.env is None:
            return self.agent.init(self._next_key())
        return self.player.init_state(self.env, self._next_key())

    def _reset_position_memory(self, keep_tree: bool = False) -> None:
        self._last = {OWN: None, OPPONENT: None}
        self.moves = []
        self._pending = None
        if not keep_tree:
            self._agent_state = self._new_agent_state()

    def _snapshot(self) -> tuple:
        pending = self._pending and _Pending(self._pending.board.copy(),
                                             dict(self._pending.last),
                                             list(self._pending.moves))
        board = None if self.board is None else self.board.copy()
        return (self.size, self.env, self.rule, board, dict(self._last), list(self.moves),
                pending, self._agent_state, dict(self.info), dict(self.limits), self.ended,
                self._seat())

    def _restore(self, saved: tuple) -> None:
        (self.size, self.env, self.rule, self.board, self._last, self.moves, self._pending,
         self._agent_state, self.info, self.limits, self.ended,
         (self.agent, self.player, self.game)) = saved


def _best_allowed(allowed: np.ndarray, policy: Any, n: int) -> int:
    """The allowed move the agent's policy (float[N*N], or None) likes best, ties and a
    missing policy broken by the distance to the centre."""
    rows, cols = np.divmod(np.arange(n * n), n)
    closeness = -np.maximum(abs(rows - n // 2), abs(cols - n // 2)).astype(np.float64)
    score = np.zeros(n * n)
    if policy is not None:
        p = np.asarray(policy, np.float64).reshape(-1)
        if p.shape == (n * n,):
            score = np.nan_to_num(p, nan=0.0)
    key = np.where(allowed, score * 1e3 + closeness * 1e-3, -np.inf)
    return int(np.argmax(key))


def _nearest_to_centre(cells: np.ndarray) -> int:
    """The action of the cell of `cells` (bool[N*N]) nearest the centre."""
    n = math.isqrt(cells.size)
    rows, cols = np.indices((n, n))
    distance = np.maximum(abs(rows - (n - 1) / 2), abs(cols - (n - 1) / 2))
    return int(np.argmin(np.where(cells.reshape(n, n), distance, np.inf)))


def _warm_forbidden(env: Gomoku) -> None:
    """Compile `forbidden_for_black` for a renju env's board (off the clock)."""
    if env.config.rule == "renju":
        warm_forbidden(env.config.board_size)
