"""Reading the games we lose: every one of our moves in a file of games, labelled with what
the project's exact threat searches prove, beside the engine's own evaluation.

    python experiments/loss_analysis.py GAMES.jsonl --json out.json > out.md
    python experiments/loss_analysis.py GAMES.jsonl --games 2 --sims 0    # quick, no network

GAMES.jsonl holds one game a line (the format of `data/outside_engine_games`: `moves` as
Gomocup `[x, y]`, x the column, black first; `black` / `white` say which side is `"ours"`;
the first `opening_stones` moves were placed, not chosen). The rule must be freestyle (the
exact solver's rule).

**Proven win.** A side to move has a proven win on a board when one of these finds one, in
this order: the VCF (`vcf.vcf`, shortest line, `--vcf-depth` fours, `--vcf-nodes`), the
VCT (`vct.vct`, threats through fours and open threes, to depth 2, 4, ... and
`--vct-depth` in turn, `--vct-nodes` each), or the exact solver (`Solver.wins_within`,
`--solver-plies`). The searches run jitted, one board after another under `lax.map` (on the
CPU a vmapped search waits for its slowest board), on chunks of boards padded to a fixed
size, so that one program serves every call.

**Labels**, at each of our moves after the opening, for the position P before it (we to
move) and P + our move (the opponent to move):

- `winning`: we had a proven win on P and our move keeps one (it completes our five, or it
  is the first move of the proof found, or every reply of the opponent leaves us a proven
  win).
- `missed_win`: we had a proven win on P and our move does not keep one.
- `allowed_win`: we had none; after our move the opponent has a proven win, and some
  alternative move (every empty cell within `--reach` cells of a stone, Chebyshev) leaves
  it none: those are the *defences* (a defence is "unresolved" when a search ran out of
  nodes on it: not proven safe, only not proven lost).
- `already_lost`: after our move and after every alternative the opponent has a proven win.
- `positional`: no proven win for either side around this move.

Alternatives are checked only when our move left the opponent a proven win (otherwise the
label does not depend on them). A lost game's *first decisive mistake* is its first move
labelled `missed_win` or `allowed_win`; without one, the game was "already lost from move
N", N our first `already_lost` move.

**The engine's evaluation**: the shipped network's own agent (`players.default_network()`,
or `--checkpoint`'s network; the default engine's search without a clock) at `--sims`
simulations from P, one fixed key per game: its root value for us, the visit share of the
move played, and its top move with its share. `--sims 0` skips it. In a lost game, "value
low from" is our first move from which the value stays at or below `-low_value` to the end.

Output: markdown on stdout (the table by category, the first decisive mistake of every lost
game and their distribution, and each lost game's board at that mistake, with the defences
marked `*`); `--json OUT`: every move's label, proofs (kind, length in plies, principal
moves, nodes), defences and engine figures. Moves are printed as Gomocup `x,y` (x the
column: the boards' top axis, y the row: their left axis).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import statistics
import sys
import time
from typing import NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax import configs, progress
from gomoku_jax.configs import NonNegativeInt, PositiveInt
from gomoku_jax.games.gomoku.render import board_to_text
from gomoku_jax.games.gomoku.solver import Solver
from gomoku_jax.games.gomoku.vcf import VCFConfig, vcf
from gomoku_jax.games.gomoku.vct import VCTConfig, VCTResult, vct
from gomoku_jax.markdown import table as markdown_table
from gomoku_jax.markdown import write_report

WIN_LENGTH = 5
RULE = "freestyle"
OURS = "ours"
LABELS = ("missed_win", "allowed_win", "already_lost", "positional", "winning")
DECISIVE = ("missed_win", "allowed_win")


@dataclasses.dataclass(frozen=True)
class Budgets:
    """What a proof may cost (static; hashable).

    Attributes:
      vcf_depth, vcf_nodes: `VCFConfig` (fours in a line, attacker moves tried).
      vct_depth, vct_nodes: `VCTConfig` (threat moves in a line; moves tried by each of the
        searches, to depth 2, 4, ... and vct_depth: `vct_tiers`).
      solver_plies: `Solver.wins_within` plies (odd; 0: no solver).
      reach: alternatives are the empty cells within this Chebyshev distance of a stone.
      recheck: a defence (or a reply in a kept win) whose searches ran out of nodes is
        searched again with this many times the nodes (1: not).
      chunk: boards per jitted call (padded with empty boards).
    """

    vcf_depth: PositiveInt = 10
    vcf_nodes: PositiveInt = 4096
    vct_depth: PositiveInt = 8
    vct_nodes: PositiveInt = 4096
    solver_plies: NonNegativeInt = 5
    reach: PositiveInt = 2
    recheck: PositiveInt = 4
    chunk: PositiveInt = 16

    def __post_init__(self):
        configs.validate(self)
        if self.vct_depth < 2:
            raise ValueError(f"vct_depth must be >= 2, got {self.vct_depth}")
        if self.solver_plies and self.solver_plies % 2 == 0:
            raise ValueError(f"solver_plies must be 0 (off) or odd, got {self.solver_plies}")


# ----------------------------------------------------------------------------- the games

class Turn(NamedTuple):
    """One move of a game: ply (1-based move number), colour (+1 black, -1 white), action
    (flat row * N + col), board int8[N, N] before it."""

    ply: int
    colour: int
    action: int
    board: np.ndarray


def to_action(xy: Sequence[int], n: int) -> int:
    """The flat action `row * N + col` of a Gomocup move `[x, y]` (x the column, y the
    row); ValueError off the board."""
    x, y = (int(v) for v in xy)
    if not (0 <= x < n and 0 <= y < n):
        raise ValueError(f"move {list(xy)} is off the {n}x{n} board")
    return y * n + x


def to_xy(action: int, n: int) -> str:
    """A flat action as Gomocup `x,y` text."""
    return f"{action % n},{action // n}"


def read_games(path: str) -> list[dict]:
    """The games of a JSONL file, checked (ValueError naming the line for a bad one)."""
    games = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                game = json.loads(line)
                check_game(game)
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{i}: {e}") from None
            games.append(game)
    return games


def check_game(game: dict) -> None:
    """ValueError unless `game` is a freestyle game with one side ours and sane moves."""
    if game.get("rule", RULE) != RULE:
        raise ValueError(f"rule must be {RULE!r} (the solver's), got {game['rule']!r}")
    if OURS not in (game["black"], game["white"]) or game["black"] == game["white"]:
        raise ValueError(f"exactly one of black / white must be {OURS!r}")
    n = int(game["board_size"])
    if not 5 <= n <= 32:
        raise ValueError(f"board_size must be in 5..32, got {n}")
    if not 0 <= int(game.get("opening_stones", 0)) <= len(game["moves"]):
        raise ValueError("opening_stones must be in 0..len(moves)")
    if game.get("winner") not in ("black", "white", None):
        raise ValueError(f"winner must be 'black', 'white' or null, got {game['winner']!r}")


def our_colour(game: dict) -> int:
    return 1 if game["black"] == OURS else -1


def result(game: dict) -> str:
    """'won', 'lost' or 'draw', for us."""
    if game.get("winner") is None:
        return "draw"
    return "won" if (game["winner"] == "black") == (our_colour(game) == 1) else "lost"


def replay(game: dict) -> list[Turn]:
    """Every move of `game` with the board before it (ValueError on an occupied cell)."""
    n = int(game["board_size"])
    board = np.zeros((n, n), np.int8)
    turns, colour = [], 1
    for i, xy in enumerate(game["moves"]):
        action = to_action(xy, n)
        if board.flat[action]:
            raise ValueError(f"game {game.get('game')}: move {i + 1} {list(xy)} is occupied")
        turns.append(Turn(i + 1, colour, action, board.copy()))
        board.flat[action] = colour
        colour = -colour
    return turns


def our_turns(game: dict) -> list[Turn]:
    """Our moves after the opening."""
    us = our_colour(game)
    skip = int(game.get("opening_stones", 0))
    return [t for t in replay(game) if t.ply > skip and t.colour == us]


def after(board: np.ndarray, action: int, colour: int) -> np.ndarray:
    """int8[N, N]: `board` with a `colour` stone on `action`."""
    out = board.copy()
    out.flat[action] = colour
    return out


def near_empty(board: np.ndarray, reach: int) -> np.ndarray:
    """int[M] sorted: the empty cells within Chebyshev distance `reach` of a stone (every
    empty cell on an empty board)."""
    stones = board != 0
    if not stones.any():
        return np.flatnonzero(board.reshape(-1) == 0)
    n = board.shape[0]
    padded = np.pad(stones, reach)
    near = np.zeros_like(stones)
    for dr in range(-reach, reach + 1):
        for dc in range(-reach, reach + 1):
            near |= padded[reach + dr:reach + dr + n, reach + dc:reach + dc + n]
    return np.flatnonzero((near & ~stones).reshape(-1))


# ---------------------------------------------------------------------------- the proofs

@dataclasses.dataclass
class Proof:
    """What the searches prove for the side to move on one board.

    found: a forced win was proven; kind: "vcf", "vct" or "solver" (the first that found
    it), "" if none; plies: the win takes at most this many plies, counting the final five
    (a VCF's shortest line: exactly); move: its first move (-1 when unknown: the solver's);
    line: the VCF's principal line (attacker, defender, ..., the five), or [move] for a VCT;
    unknown: none found and some search ran out of nodes; nodes: moves the searches tried.
    """

    found: bool = False
    kind: str = ""
    plies: Optional[int] = None
    move: int = -1
    line: list = dataclasses.field(default_factory=list)
    unknown: bool = False
    nodes: int = 0

    def to_json(self, n: int) -> dict:
        out = dataclasses.asdict(self)
        out["move"] = to_xy(self.move, n) if self.move >= 0 else None
        out["line"] = [to_xy(a, n) for a in self.line]
        return out

    def describe(self, n: int) -> str:
        if not self.found:
            return "none" + (" (budget out)" if self.unknown else "")
        what = f"{self.kind.upper()} {self.plies} plies"
        if self.kind == "vct" or self.kind == "solver":
            what = f"{self.kind.upper()} <= {self.plies} plies"
        return what + (f" from {to_xy(self.move, n)}" if self.move >= 0 else "")


def _vct_none() -> VCTResult:
    return VCTResult(found=jnp.bool_(False), move=jnp.int32(-1), exhausted=jnp.bool_(False),
                     nodes=jnp.int32(0))


def vct_tiers(depth: int) -> tuple[int, ...]:
    """The depths the VCT is searched to in turn: 2, 4, ..., and `depth`."""
    return tuple(sorted(set(range(2, depth + 1, 2)) | {depth}))


def _search_one(board: jax.Array, attacker: jax.Array, vcf_depth: int, vcf_nodes: int,
                vct_depth: int, vct_nodes: int) -> tuple:
    """The VCF, then (while none is found) the VCT to each depth of `vct_tiers` in turn,
    of `attacker` on one board int8[N, N]: (VCFResult, VCTResult with leaves [T]).

    Iterative deepening, each depth with its own `vct_nodes`: a depth-first search with a
    deeper limit spends its nodes in deep lines and can miss a shallow win it would find
    with a shallower one."""
    f = vcf(board, attacker, WIN_LENGTH, RULE,
            VCFConfig(max_depth=vcf_depth, max_nodes=vcf_nodes, shortest=True))
    done, tiers = f.found, []
    for depth in vct_tiers(vct_depth):
        config = VCTConfig(max_depth=depth, max_nodes=vct_nodes)
        res = jax.lax.cond(done, _vct_none,
                           lambda config=config: vct(board, attacker, WIN_LENGTH, RULE, config))
        tiers.append(res)
        done = done | res.found
    return f, jax.tree.map(lambda *xs: jnp.stack(xs), *tiers)


@functools.lru_cache(maxsize=None)
def _searches(vcf_depth: int, vcf_nodes: int, vct_depth: int, vct_nodes: int):
    """The jitted searches of a chunk: boards int8[C, N, N], attackers int8[C] -> the
    results of `_search_one` with a leading axis C (one board at a time, `lax.map`)."""
    one = functools.partial(_search_one, vcf_depth=vcf_depth, vcf_nodes=vcf_nodes,
                            vct_depth=vct_depth, vct_nodes=vct_nodes)
    return jax.jit(lambda boards, attackers: jax.lax.map(lambda x: one(*x),
                                                         (boards, attackers)))


class Prover:
    """Proven wins (`Proof`) for many boards, through the jitted searches and the solver."""

    def __init__(self, board_size: int, budgets: Budgets = Budgets()):
        self.n, self.budgets = board_size, budgets
        self.solver = Solver(board_size, WIN_LENGTH) if budgets.solver_plies else None
        self.boards_searched = 0
        self.rechecked = 0

    def prove(self, boards: Sequence[np.ndarray], attackers: Sequence[int],
              recheck: bool = False) -> list[Proof]:
        """One `Proof` per board (int8[N, N] each) for its attacker (+1 / -1) to move;
        `recheck`: the boards whose searches ran out of nodes are searched again with
        `recheck` times the nodes."""
        proofs = self._prove(boards, attackers, self.budgets)
        again = [i for i, p in enumerate(proofs) if p.unknown]
        if recheck and again and self.budgets.recheck > 1:
            more = dataclasses.replace(self.budgets,
                                       vcf_nodes=self.budgets.vcf_nodes * self.budgets.recheck,
                                       vct_nodes=self.budgets.vct_nodes * self.budgets.recheck)
            redone = self._prove([boards[i] for i in again], [attackers[i] for i in again], more)
            for i, p in zip(again, redone):
                p.nodes += proofs[i].nodes
                proofs[i] = p
            self.rechecked += len(again)
        return proofs

    def _prove(self, boards: Sequence[np.ndarray], attackers: Sequence[int],
               budgets: Budgets) -> list[Proof]:
        if not len(boards):
            return []
        c = budgets.chunk
        m = len(boards)
        pad = -m % c
        stack = np.concatenate([np.asarray(boards, np.int8),
                                np.zeros((pad, self.n, self.n), np.int8)])
        colours = np.concatenate([np.asarray(attackers, np.int8), np.ones(pad, np.int8)])
        fn = _searches(budgets.vcf_depth, budgets.vcf_nodes, budgets.vct_depth,
                       budgets.vct_nodes)
        parts = [jax.device_get(fn(stack[i:i + c], colours[i:i + c]))
                 for i in range(0, m + pad, c)]
        f, t = (jax.tree.map(lambda *xs: np.concatenate(xs)[:m], *(p[j] for p in parts))
                for j in range(2))
        self.boards_searched += m
        return [self._proof(boards[i], int(attackers[i]), f, t, i) for i in range(m)]

    def _proof(self, board, attacker, f, t, i: int) -> Proof:
        """The Proof of board i from the searches' leaves (f: VCF [M], t: VCT [M, T])."""
        nodes = int(f.nodes[i] + t.nodes[i].sum())
        if f.found[i]:
            line = [int(a) for a in f.line[i] if a >= 0]
            return Proof(True, "vcf", 2 * int(f.depth[i]) + 1, int(f.move[i]), line,
                         nodes=nodes)
        for j, depth in enumerate(vct_tiers(self.budgets.vct_depth)):
            if t.found[i, j]:
                move = int(t.move[i, j])
                return Proof(True, "vct", 2 * depth + 1, move, [move], nodes=nodes)
        unknown = bool(f.exhausted[i] | t.exhausted[i].any())
        if self.solver is not None and self.solver.wins_within(board.reshape(-1), attacker,
                                                                 self.budgets.solver_plies):
            return Proof(True, "solver", self.budgets.solver_plies, nodes=nodes)
        return Proof(False, unknown=unknown, nodes=nodes)


# ---------------------------------------------------------------------------- the labels

def completes_five(board: np.ndarray, action: int, colour: int, solver: Solver) -> bool:
    """Whether a `colour` stone on `action` completes a five."""
    return bool(np.isin(action, solver.five_cells(board.reshape(-1), colour)))


def opponent_lost(prover: Prover, board: np.ndarray, us: int, solver: Solver) -> bool:
    """Whether the opponent (to move on `board`, int8[N, N]) is proven lost: it has no five
    cell, and after every one of its replies (every empty cell) we have a proven win (the
    replies go in chunks, the nearest first, and the first that saves it ends the check)."""
    flat = board.reshape(-1)
    if solver.five_cells(flat, -us).size:
        return False
    if solver.five_cells(flat, us).size >= 2:
        return True
    near = near_empty(board, prover.budgets.reach)
    replies = np.concatenate([near, np.setdiff1d(np.flatnonzero(flat == 0), near)])
    c = prover.budgets.chunk
    for start in range(0, len(replies), c):  # near replies first: one that saves ends it
        part = replies[start:start + c]
        proofs = prover.prove([after(board, r, -us) for r in part], [us] * len(part),
                              recheck=True)
        if not all(p.found for p in proofs):
            return False
    return True


def label_turn(prover: Prover, turn: Turn, own: Proof, theirs: Proof) -> dict:
    """The label of our move `turn` (module doc) from the proofs already made: `own` (ours
    on the board before it) and `theirs` (the opponent's after it). Returns {label,
    defences: [action], unresolved: [action] (defences a search ran out on), checked:
    alternatives checked, keeps: how a win was kept or None}."""
    us, board, action = turn.colour, turn.board, turn.action
    solver = prover.solver or Solver(prover.n, WIN_LENGTH)
    out = {"defences": [], "unresolved": [], "checked": 0, "keeps": None}
    if own.found:
        if completes_five(board, action, us, solver):
            keeps = "five"
        elif action == own.move:
            keeps = "proof"
        elif opponent_lost(prover, after(board, action, us), us, solver):
            keeps = "every reply"
        else:
            keeps = None
        return {**out, "label": "winning" if keeps else "missed_win", "keeps": keeps}
    if not theirs.found:
        return {**out, "label": "positional"}
    alternatives = [int(m) for m in near_empty(board, prover.budgets.reach) if m != action]
    proofs = prover.prove([after(board, m, us) for m in alternatives], [-us] * len(alternatives),
                          recheck=True)
    defences = [m for m, p in zip(alternatives, proofs) if not p.found]
    unresolved = [m for m, p in zip(alternatives, proofs) if not p.found and p.unknown]
    label = "allowed_win" if defences else "already_lost"
    return {**out, "label": label, "defences": defences, "unresolved": unresolved,
            "checked": len(alternatives) + 1}


def label_move(prover: Prover, turn: Turn) -> dict:
    """`label_turn` of one move, its two proofs made here: {label, ..., own, theirs}."""
    us = turn.colour
    own, theirs = prover.prove([turn.board, after(turn.board, turn.action, us)], [us, -us])
    solver = prover.solver or Solver(prover.n, WIN_LENGTH)
    if completes_five(turn.board, turn.action, us, solver):
        theirs = Proof()
    return {**label_turn(prover, turn, own, theirs), "own": own, "theirs": theirs}


def analyse_game(prover: Prover, game: dict, engine: Optional["Engine"] = None,
                 key: Optional[jax.Array] = None, tick=lambda: None) -> dict:
    """Every one of our moves in `game` labelled (`label_turn`), with the engine's figures
    when `engine` is given; `tick()` after each move."""
    n = int(game["board_size"])
    us = our_colour(game)
    turns = our_turns(game)
    boards = [t.board for t in turns] + [after(t.board, t.action, us) for t in turns]
    proofs = prover.prove(boards, [us] * len(turns) + [-us] * len(turns))
    own, theirs = proofs[:len(turns)], proofs[len(turns):]
    solver = prover.solver or Solver(n, WIN_LENGTH)
    figures = engine.evaluate(game, turns, key) if engine is not None and turns else None
    moves = []
    for i, turn in enumerate(turns):
        if completes_five(turn.board, turn.action, us, solver):  # the game ends: nothing after
            theirs[i] = Proof()
        lab = label_turn(prover, turn, own[i], theirs[i])
        move = {"ply": turn.ply, "move": to_xy(turn.action, n), "action": turn.action,
                "label": lab["label"], "keeps": lab["keeps"],
                "ours_before": own[i].to_json(n), "theirs_after": theirs[i].to_json(n),
                "alternatives_checked": lab["checked"],
                "defences": [to_xy(a, n) for a in lab["defences"]],
                "defences_unresolved": [to_xy(a, n) for a in lab["unresolved"]],
                "_defences": lab["defences"], "_theirs": theirs[i], "_own": own[i]}
        if figures is not None:
            move["engine"] = figures[i]
            move["engine"]["top_defends"] = figures[i]["_top"] in lab["defences"]
        moves.append(move)
        tick()
    return {"game": game.get("game"), "ours": "black" if us == 1 else "white",
            "result": result(game), "plies": len(game["moves"]),
            "opening_stones": int(game.get("opening_stones", 0)), "moves": moves}


def first_decisive(record: dict) -> Optional[dict]:
    """A lost game's first decisive mistake: {ply, kind: the label or "already_lost"
    (the first already_lost move, when no mistake was found), index}; None if neither."""
    for i, m in enumerate(record["moves"]):
        if m["label"] in DECISIVE:
            return {"ply": m["ply"], "kind": m["label"], "index": i}
    for i, m in enumerate(record["moves"]):
        if m["label"] == "already_lost":
            return {"ply": m["ply"], "kind": "already_lost", "index": i}
    return None


def value_low_from(record: dict, low: float) -> Optional[int]:
    """The ply of our first move from which the engine's value stays <= -low (low >= 0);
    None when it does not, or without the engine's values."""
    values = [m["engine"]["value"] for m in record["moves"] if "engine" in m]
    if len(values) != len(record["moves"]) or not values:
        return None
    start = None
    for m, v in zip(record["moves"], values):
        if v <= -low:
            start = m["ply"] if start is None else start
        else:
            start = None
    return start


def first_proven_loss(record: dict) -> Optional[int]:
    """The ply of our first move after which the opponent had a proven win."""
    for m in record["moves"]:
        if m["theirs_after"]["found"]:
            return m["ply"]
    return None


# ---------------------------------------------------------------------------- the engine

class Engine:
    """A network's own agent (the shipped one's, or `checkpoint`'s: a run directory as
    `players.load` takes it) at a fixed number of simulations, no clock."""

    def __init__(self, sims: int, chunk: int = 8, checkpoint: Optional[str] = None):
        from gomoku_jax import players

        player = players.load(checkpoint) if checkpoint else players.default_network()
        self.env = player.env
        self.agent = player.agent(sims).bind(self.env)
        self.params = player.variables
        self.chunk = chunk
        self.act = jax.jit(self.agent.act_batch)

    def evaluate(self, game: dict, turns: Sequence[Turn], key: jax.Array) -> list[dict]:
        """Per turn {value: the root value for us, share_played, top (x,y), share_top,
        _top: its action}: the agent searched from the board before the move (chunks of
        `chunk` positions, keys from `key` and the chunk's index)."""
        n = int(game["board_size"])
        moves = [to_action(xy, n) for xy in game["moves"]]
        states = [self.env.from_moves(moves[:t.ply - 1]) for t in turns]
        out = []
        for start in range(0, len(states), self.chunk):
            part = states[start:start + self.chunk]
            padded = part + [part[0]] * (self.chunk - len(part))
            batch = jax.tree.map(lambda *xs: jnp.stack(xs), *padded)
            keys = jax.random.split(jax.random.fold_in(key, start), self.chunk)
            _, _, info = self.act(self.params, None, batch, keys)
            policy, value = np.asarray(info["policy"]), np.asarray(info["value"])
            for j, turn in enumerate(turns[start:start + len(part)]):
                top = int(np.argmax(policy[j]))
                out.append({"value": float(value[j]),
                            "share_played": float(policy[j, turn.action]),
                            "top": to_xy(top, n), "share_top": float(policy[j, top]),
                            "_top": top})
        return out


# ---------------------------------------------------------------------------- the report

def marked_board(board: np.ndarray, action: int, marks: Sequence[int]) -> str:
    """`render.board_to_text` of `board` (int8[N, N]) with `action` bracketed and `*` on
    the empty cells `marks`."""
    n = board.shape[0]
    lines = board_to_text(board, action).split("\n")
    for cell in marks:
        r, c = divmod(int(cell), n)
        row = list(lines[r + 1].ljust(4 + 3 * n))
        row[4 + 3 * c + 1] = "*"
        lines[r + 1] = "".join(row).rstrip()
    return "\n".join(lines)


def category_table(records: Sequence[dict]) -> str:
    """Counts of our moves per label, all games / lost / won, and for the moves after
    which the opponent had a proven win, by the kind of its proof."""
    rows = []
    for label in LABELS:
        ms = [(r, m) for r in records for m in r["moves"] if m["label"] == label]
        lost = sum(r["result"] == "lost" for r, _ in ms)
        won = sum(r["result"] == "won" for r, _ in ms)
        kinds = {k: sum(m["theirs_after"]["kind"] == k for _, m in ms)
                 for k in ("vcf", "vct", "solver")}
        rows.append([f"`{label}`", str(len(ms)), str(lost), str(won),
                     " / ".join(str(kinds[k]) for k in ("vcf", "vct", "solver"))])
    total = sum(len(r["moves"]) for r in records)
    rows.append(["all", str(total), str(sum(len(r["moves"]) for r in records
                                            if r["result"] == "lost")),
                 str(sum(len(r["moves"]) for r in records if r["result"] == "won")), ""])
    return markdown_table(["label", "our moves", "in lost games", "in won games",
                           "opponent's win after it: VCF / VCT / solver"], rows)


def _value(m: dict) -> str:
    return f"{m['engine']['value']:+.2f}" if "engine" in m else "—"


def game_row(record: dict, n: int, low: float) -> list[str]:
    """One lost game's row of the first-decisive-mistake table."""
    first = first_decisive(record)
    proven, low_from = first_proven_loss(record), value_low_from(record, low)
    base = [str(record["game"]), record["ours"], str(record["plies"])]
    tail = [str(proven or "—"), str(low_from or "—")]
    if first is None:
        return base + ["none found", "—", "—", "—", "—"] + tail
    m = record["moves"][first["index"]]
    what = (f"move {m['ply']} {m['move']}: `{m['label']}`" if first["kind"] in DECISIVE
            else f"already lost from move {m['ply']}")
    defences = ", ".join(m["defences"][:4]) + (" …" if len(m["defences"]) > 4 else "")
    if m["defences_unresolved"]:
        defences += f" ({len(m['defences_unresolved'])} of {len(m['defences'])} unresolved)"
    top = "—"
    if "engine" in m:
        top = f"{m['engine']['top']} ({'defends' if m['engine']['top_defends'] else 'loses'})"
        if first["kind"] == "missed_win":
            top = m["engine"]["top"]
    return base + [what, m["_theirs"].describe(n) if first["kind"] != "missed_win"
                   else m["_own"].describe(n), defences or "—", _value(m), top] + tail


def distribution(records: Sequence[dict]) -> str:
    """How the lost games were decided: counts by the first decisive mistake's kind (an
    allowed win split by the kind of the opponent's proof)."""
    counts: dict[str, int] = {}
    for r in records:
        if r["result"] != "lost":
            continue
        first = first_decisive(r)
        if first is None:
            key = "no proven loss found"
        elif first["kind"] == "allowed_win":
            m = r["moves"][first["index"]]
            key = f"allowed_win (their win: {m['_theirs'].kind.upper()})"
            if len(m["defences_unresolved"]) == len(m["defences"]):
                key += ", no defence proven"
        else:
            key = first["kind"]
        counts[key] = counts.get(key, 0) + 1
    return markdown_table(["first decisive mistake", "lost games"],
                          [[k, str(v)] for k, v in sorted(counts.items(), key=lambda kv: -kv[1])])


def budget_summary(records: Sequence[dict]) -> list[str]:
    """Lines on where the searches ran out of nodes (a limit of what is proven)."""
    moves = [m for r in records for m in r["moves"]]
    own = sum(m["ours_before"]["unknown"] for m in moves)
    theirs = sum(m["theirs_after"]["unknown"] for m in moves)
    lost_first = [r for r in records if r["result"] == "lost"
                  and (first_decisive(r) or {}).get("kind") == "already_lost"]
    earlier = [r for r in lost_first if first_decisive(r)["index"] > 0
               and r["moves"][first_decisive(r)["index"] - 1]["theirs_after"]["unknown"]]
    opening = [r for r in lost_first if first_decisive(r)["index"] == 0]
    out = [f"- The searches ran out of nodes (no proof either way) for our win before "
           f"{own} of the {len(moves)} moves and for the opponent's after {theirs}."]
    if lost_first:
        out.append(f"- Of the {len(lost_first)} games already lost at their first proven "
                   f"loss, {len(earlier)} had the opponent's searches run out of nodes after "
                   f"our move before it (perhaps lost there already, past these budgets), "
                   f"and {len(opening)} were proven lost at our first move after the "
                   f"opening.")
    return out


def value_lag(record: dict, low: float) -> Optional[int]:
    """Our moves from the first that left the opponent a proven win to the first from which
    the engine's value stays <= -low (negative: the value fell first); None without both."""
    proven, low_from = first_proven_loss(record), value_low_from(record, low)
    if proven is None or low_from is None:
        return None
    return (low_from - proven) // 2


def _lag_line(lost: Sequence[dict], low: float) -> list[str]:
    lags = [x for x in (value_lag(r, low) for r in lost) if x is not None]
    if not lags:
        return []
    bound = f"{-low:+.2f}" if low else "0"
    return [f"- Lost games where the value fell to <= {bound} for good: {len(lags)} of "
            f"{len(lost)}; it got there a median of {statistics.median(lags):+g} of our moves "
            f"after our first move that left the opponent a proven win (negative: before it; "
            f"from {min(lags):+d} to {max(lags):+d})."]


def engine_summary(records: Sequence[dict], low: float, sims: int) -> list[str]:
    """Lines on where the engine's value first disagrees with the proven outcome."""
    lost = [r for r in records if r["result"] == "lost" and r["moves"]
            and "engine" in r["moves"][0]]
    if not lost:
        return []
    out = _lag_line(lost, 0.0) + _lag_line(lost, low)
    proven = [m for r in lost for m in r["moves"]
              if m["theirs_after"]["found"] and m["label"] != "missed_win"]
    blind = sum(m["engine"]["value"] > -low for m in proven)
    out.append(f"- Our moves after which the opponent had a proven win: {len(proven)}; the "
               f"engine's value before them was above {-low:+.2f} at {blind}.")
    moves = [m for r in records for m in r["moves"] if "engine" in m]
    same = sum(m["engine"]["top"] == m["move"] for m in moves)
    out.append(f"- The engine's top move at {sims} simulations was the move played in the "
               f"game at {same} of our {len(moves)} moves.")
    firsts = [r["moves"][f["index"]] for r in lost
              for f in [first_decisive(r)] if f is not None and f["kind"] == "allowed_win"]
    if firsts:
        fine = sum(m["engine"]["value"] > 0 for m in firsts)
        top = sum(m["engine"]["top_defends"] for m in firsts)
        out.append(f"- At the {len(firsts)} first decisive `allowed_win`s the engine's value "
                   f"was above 0 at {fine}; its top move at {sims} simulations was a defence "
                   f"at {top}.")
    return out


def network_name(meta: dict) -> str:
    """'shipped', or the `--checkpoint` path the engine's network came from."""
    checkpoint = meta.get("checkpoint", "shipped")
    return checkpoint if checkpoint == "shipped" else f"`{checkpoint}`"


def report(records: Sequence[dict], meta: dict) -> str:
    """The markdown report."""
    n, low = meta["board_size"], meta["low_value"]
    results = [r["result"] for r in records]
    out = [f"# Reading the games we lose: {meta['games_file']}", "",
           f"{len(records)} games ({results.count('won')} won, {results.count('lost')} lost, "
           f"{results.count('draw')} drawn), {sum(len(r['moves']) for r in records)} of our "
           f"moves after the openings. Proofs: VCF {meta['budgets']['vcf_depth']} fours / "
           f"{meta['budgets']['vcf_nodes']} nodes, VCT to depth "
           f"{', '.join(map(str, vct_tiers(meta['budgets']['vct_depth'])))} in turn, "
           f"{meta['budgets']['vct_nodes']} nodes each, "
           f"solver {meta['budgets']['solver_plies']} plies; alternatives within "
           f"{meta['budgets']['reach']} cells. Engine: "
           + (f"the {network_name(meta)} network's agent, {meta['sims']} simulations."
              if meta["sims"]
              else "not run (--sims 0).")
           + f" {meta['seconds']:.0f} s.", "",
           "## Our moves by label", "", category_table(records), ""]
    lost = [r for r in records if r["result"] == "lost"]
    out += ["## First decisive mistake of each lost game", "",
            markdown_table(["game", "we play", "plies", "first decisive mistake",
                            "the win it allowed (or missed)", "defences (x,y)",
                            "engine value", "engine's top move",
                            "first proven loss (move)", f"value <= {-low:+.2f} from"],
                           [game_row(r, n, low) for r in lost]), "",
            distribution(records), ""]
    out += budget_summary(records) + engine_summary(records, low, meta["sims"]) + [""]
    out += ["## The boards at the first decisive mistakes", "",
            "Our move in brackets (X black, O white), defences `*`; columns (x) across the "
            "top, rows (y) down the left.", ""]
    for r in lost:
        first = first_decisive(r)
        if first is None:
            continue
        m = r["moves"][first["index"]]
        board = after(np.asarray(r["_boards"][first["index"]]), m["action"],
                      1 if r["ours"] == "black" else -1)
        title = (f"### Game {r['game']}, move {m['ply']} {m['move']} (`{m['label']}`; we are "
                 f"{r['ours']})")
        note = (f"Opponent's win after it: {m['_theirs'].describe(n)}. Defences: "
                f"{', '.join(m['defences']) or 'none'}"
                + (f" (unresolved: {', '.join(m['defences_unresolved'])})"
                   if m["defences_unresolved"] else "") + ".")
        if m["label"] == "missed_win":
            note = f"Our win before it: {m['_own'].describe(n)} (`*`)."
        if "engine" in m:
            note += (f" Engine: value {m['engine']['value']:+.2f}, played move "
                     f"{m['engine']['share_played']:.0%} of visits, top {m['engine']['top']} "
                     f"{m['engine']['share_top']:.0%}.")
        marks = m["_defences"] if m["label"] != "missed_win" else [m["_own"].move]
        marks = [c for c in marks if c >= 0 and c != m["action"]]
        out += [title, "", note, "", "```", marked_board(board, m["action"], marks),
                "```", ""]
    return "\n".join(out)


def to_json(records: Sequence[dict], meta: dict) -> dict:
    """Everything, without the private fields."""
    def clean(m):
        m = {k: v for k, v in m.items() if not k.startswith("_")}
        if "engine" in m:
            m["engine"] = {k: v for k, v in m["engine"].items() if not k.startswith("_")}
        return m

    games = []
    for r in records:
        first = first_decisive(r)
        low = meta["low_value"]
        games.append({**{k: v for k, v in r.items() if not k.startswith("_")},
                      "moves": [clean(m) for m in r["moves"]],
                      "first_decisive": first and {k: v for k, v in first.items()
                                                   if k != "index"},
                      "first_proven_loss": first_proven_loss(r),
                      "value_low_from": value_low_from(r, low),
                      "value_nonpositive_from": value_low_from(r, 0.0)})
    return {"meta": meta, "games": games}


# ---------------------------------------------------------------------------- the command

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    d = Budgets()
    parser.add_argument("games_file", metavar="GAMES.jsonl")
    parser.add_argument("--games", type=int, default=0, help="only the first N games (0: all)")
    parser.add_argument("--json", help="write everything as JSON here")
    parser.add_argument("--out", help="also write the markdown here")
    parser.add_argument("--sims", type=int, default=1024,
                        help="the engine's simulations per position (0: no engine)")
    parser.add_argument("--seed", type=int, default=0, help="the engine's key")
    parser.add_argument("--checkpoint", metavar="PATH",
                        help="the engine's network: a run directory (default: the shipped one)")
    parser.add_argument("--low-value", type=float, default=0.5,
                        help="'value low from': the value stays <= minus this")
    for name in ("vcf_depth", "vcf_nodes", "vct_depth", "vct_nodes", "solver_plies", "reach",
                 "recheck"):
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=getattr(d, name))
    progress.add_argument(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        budgets = Budgets(args.vcf_depth, args.vcf_nodes, args.vct_depth, args.vct_nodes,
                          args.solver_plies, args.reach, args.recheck)
        games = read_games(args.games_file)
        if args.games < 0 or args.sims < 0 or not 0 < args.low_value <= 1:
            raise ValueError("--games and --sims must be >= 0, --low-value in (0, 1]")
        if args.checkpoint and not args.sims:
            raise ValueError("--checkpoint names the engine's network: it needs --sims > 0")
    except (ValueError, OSError) as e:
        raise SystemExit(f"error: {e}")
    games = games[:args.games] if args.games else games
    sizes = {int(g["board_size"]) for g in games}
    if len(sizes) != 1:
        raise SystemExit(f"error: the games must share one board size, got {sorted(sizes)}")
    n = sizes.pop()
    try:
        engine = Engine(args.sims, checkpoint=args.checkpoint) if args.sims else None
    except (ValueError, OSError) as e:
        raise SystemExit(f"error: --checkpoint: {e}")
    if engine is not None and engine.env.config.board_size != n:
        raise SystemExit(f"error: the network plays {engine.env.config.board_size}x"
                         f"{engine.env.config.board_size}, the games are {n}x{n}: use --sims 0")
    prover = Prover(n, budgets)
    t0 = time.perf_counter()
    records = []
    total = sum(len(our_turns(g)) for g in games)
    with progress.bar(total, "loss analysis", "move", enabled=not args.no_progress) as bar:
        for game in games:
            key = jax.random.fold_in(jax.random.key(args.seed), int(game.get("game") or 0))
            record = analyse_game(prover, game, engine, key, tick=lambda: bar.update(1))
            record["_boards"] = [t.board for t in our_turns(game)]
            records.append(record)
    meta = {"games_file": args.games_file, "board_size": n, "games": len(games),
            "budgets": dataclasses.asdict(budgets), "sims": args.sims, "seed": args.seed,
            "checkpoint": args.checkpoint or "shipped",
            "low_value": args.low_value, "seconds": time.perf_counter() - t0,
            "boards_searched": prover.boards_searched, "boards_rechecked": prover.rechecked}
    text = report(records, meta)
    print(text)
    write_report(text, args.out, args.json, to_json(records, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
