"""Gomoku's tactical test suite, generated and labelled by the exact solver (`solver.py`).

Eight categories, each a position with the side to move and the complete set of correct
moves (exact for freestyle, except the conservative `fours_*` sets below; horizon in plies in
brackets):

- `five`        complete five: the moves that make k in a row [1].
- `block_four`  block a four: the opponent threatens five on exactly one cell and the side
                to move cannot win at once; the only move that does not lose [2].
- `open_four`   make an open four (or a double four): the moves that win within 3 plies.
- `stop_three`  stop an open three: the opponent (if it moved) would win within 3 plies, the
                side to move has no four to make; the moves after which the opponent no
                longer wins within 3 plies.
- `fours_win`   win by a short run of fours: no win within 3 plies, a win within 5 that
                starts with a four (four, forced block, then an open or double four); every
                move that wins within 5 plies.
- `fours_7`     win by continuous fours (VCF) in 7 plies: the side to move has no win
                within 5 plies (`Solver.wins_within`, exact), the opponent has no five cell
                (no threat forcing a reply), and a VCF wins within 7 plies (three fours, the
                last an open or double four, then five) but none within 5; the solutions are
                every first move of a VCF that wins within 7 plies (`Solver.vcf_moves`).
- `fours_9`     the same with a VCF within 9 plies (four fours) but none within 7.
- `vct`         win by a threat that is no four: no win within 3 plies, no threat to stop
                (the opponent has no win within 3 plies), a win within 5 plies, none of
                whose first moves is a four (typically a double three), and no VCF within
                `VCT_VCF_PLIES` = 9 plies (so no line of fours answers it either); every
                move that wins within 5 plies [5].

The `fours_7` / `fours_9` solution sets are conservative: a move that wins in time by a line
that is not all fours (a VCT, e.g. a four followed by a three-three, or an open three first)
also wins but is not listed, and scores as a miss. Whether the side to move wins within 7
plies by other means is not checked (the exact search is too slow at 15x15), so a `fours_9`
position may also have a 7-ply win by threes.

Positions come from random play near existing stones (a seeded NumPy generator), classified
in the order above, so a position in a later category has none of the earlier features.
`default_suite()` loads the suite shipped with the package (15x15 freestyle, 40 puzzles per
category, 320 in all); `gomoku_jax.eval.puzzles.solve_rates` scores an agent on
`suite.puzzles_for_eval()`.

The shipped file was built in three steps. Its first 200 puzzles (the five basic
categories) come from an earlier version of `generate` and are kept byte for byte (the
current code with seed 0 draws other positions). The 80 `fours_7` / `fours_9` puzzles were
appended by `generate(15, 40, seed=0, categories=FOURS_CATEGORIES)`, i.e.

    python experiments/make_tactics_suite.py --categories fours_7,fours_9 --seed 0 \
        --append gomoku_jax/games/gomoku/data/tactics_15x15_freestyle.json

and the 40 `vct` puzzles the same way with `--categories vct` (the 280 before them
unchanged).
"""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Collection, Optional

import numpy as np

from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.positions import from_board
from gomoku_jax.games.gomoku.render import board_to_text
from gomoku_jax.games.gomoku.solver import Solver

BASIC_CATEGORIES = ("five", "block_four", "open_four", "stop_three", "fours_win")
FOURS_PLIES = {"fours_7": 7, "fours_9": 9}  # VCF categories and their horizons
FOURS_CATEGORIES = tuple(FOURS_PLIES)
VCT_CATEGORIES = ("vct",)
CATEGORIES = BASIC_CATEGORIES + FOURS_CATEGORIES + VCT_CATEGORIES
VCT_VCF_PLIES = 9  # a `vct` position has no VCF within this many plies
_SYMBOLS = {"x": 1, "o": -1, ".": 0}
DEFAULT_SUITE = "tactics_15x15_freestyle.json"


@dataclasses.dataclass(frozen=True)
class Puzzle:
    """One position: `board` int8[N, N] (+1 black, -1 white), `to_move` (+1 / -1) and the
    flat actions (row * N + col) that solve it."""

    id: str
    category: str
    board: np.ndarray
    to_move: int
    solutions: tuple[int, ...]

    def __str__(self) -> str:
        n = self.board.shape[0]
        sols = ", ".join(f"({a // n}, {a % n})" for a in self.solutions)
        side = "black" if self.to_move == 1 else "white"
        return f"{self.id} [{self.category}] {side} to move; solutions {sols}\n" \
            + board_to_text(self.board)


@dataclasses.dataclass(frozen=True)
class Suite:
    config: GameConfig
    puzzles: tuple[Puzzle, ...]

    @property
    def env(self) -> Gomoku:
        return Gomoku.from_config(self.config)

    def by_category(self) -> dict[str, list[Puzzle]]:
        return {c: [p for p in self.puzzles if p.category == c] for c in CATEGORIES}

    def puzzles_for_eval(self, config: Optional[GameConfig] = None
                         ) -> list[tuple[str, str, Any, tuple[int, ...]]]:
        """(id, category, state, solutions) per puzzle, for `eval.puzzles.solve_rates`;
        the states of `config` (default: the suite's; another observation, for a network)."""
        config = config or self.config
        return [(p.id, p.category, from_board(config, p.board, p.to_move), p.solutions)
                for p in self.puzzles]


# -- labelling ----------------------------------------------------------------------------
def classify(solver: Solver, board: np.ndarray, to_move: int,
             categories: Collection[str] = CATEGORIES) -> Optional[tuple[str, list[int]]]:
    """(category, solutions) for a position with no five on it, or None if it fits none
    (or fits a category not in `categories`).

    A position's category does not depend on `categories`; the selection only skips the
    searches that could not lead to a selected category (e.g. with only `FOURS_CATEGORIES`,
    the 3- and 5-ply searches are replaced by one `wins_within(5)` check, made last).
    """
    wanted = set(categories)
    if not wanted <= set(CATEGORIES):
        raise ValueError(f"categories must be among {CATEGORIES}, got {sorted(wanted)}")
    label = _classify(solver, board.reshape(-1), to_move, wanted)
    return label if label is not None and label[0] in wanted else None


def _classify(solver: Solver, b: np.ndarray, me: int, wanted: set[str]
              ) -> Optional[tuple[str, list[int]]]:
    own_fives = solver.five_cells(b, me)
    if own_fives.size:
        return "five", own_fives.tolist()
    threats = solver.five_cells(b, -me)
    if threats.size:
        return ("block_four", threats.tolist()) if threats.size == 1 else None
    fours = set(solver.four_moves(b, me).tolist())
    basic = bool(wanted & {"open_four", "stop_three", "fours_win", "vct"})
    if basic:
        quick = solver.winning_moves(b, me, 3)
        if quick:
            return "open_four", quick
        if not fours:
            saves = solver.saving_moves(b, me, 3)
            if saves or saves == [] or "vct" not in wanted:
                return ("stop_three", saves) if saves else None
            return _vct(solver, b, me, solver.winning_moves(b, me, 5))
        wins = solver.winning_moves(b, me, 5)
        if wins:
            if fours.intersection(wins):
                return "fours_win", wins
            return _vct(solver, b, me, wins) if "vct" in wanted else None
    if not fours or not wanted & set(FOURS_CATEGORIES):
        return None  # (a VCF starts with a four)
    depth = solver.vcf_depth(b, me, max(FOURS_PLIES.values()))
    category = {p: c for c, p in FOURS_PLIES.items()}.get(depth)
    if category is None:
        return None
    if not basic and solver.wins_within(b, me, 5):
        return None  # (when `basic` ran, no win within 5 plies is already known)
    return category, solver.vcf_moves(b, me, depth)


def _vct(solver: Solver, b: np.ndarray, me: int, wins: list[int]
         ) -> Optional[tuple[str, list[int]]]:
    """The `vct` label of a position with no win within 3 plies, no threat to stop, and
    `wins` its moves that win within 5 plies, none of them a four: one, unless the side to
    move also has a VCF within `VCT_VCF_PLIES` (then a VCF could be a correct answer)."""
    if not wins or solver.vcf_depth(b, me, VCT_VCF_PLIES) is not None:
        return None
    return "vct", wins


def random_position(rng: np.random.Generator, board_size: int, num_stones: int,
                    radius: int = 2) -> Optional[np.ndarray]:
    """int8[N, N] after `num_stones` random moves (black first), each on an empty cell within
    `radius` (Chebyshev) of a stone; None if a five appeared on the way."""
    n = board_size
    board = np.zeros((n, n), np.int8)
    c = n // 2
    board[c + rng.integers(-2, 3), c + rng.integers(-2, 3)] = 1
    for i in range(1, num_stones):
        near = np.zeros_like(board, bool)
        for r, q in np.argwhere(board != 0):
            near[max(0, r - radius):r + radius + 1, max(0, q - radius):q + radius + 1] = True
        cells = np.argwhere(near & (board == 0))
        if not len(cells):
            return None
        r, q = cells[rng.integers(len(cells))]
        board[r, q] = 1 if i % 2 == 0 else -1
    return board


def _has_five(solver: Solver, board: np.ndarray) -> bool:
    sums = board.reshape(-1)[solver.windows].sum(axis=1)
    return bool(np.any(np.abs(sums) == solver.k))


def generate(board_size: int = 15, per_category: int = 40, seed: int = 0,
             stones: tuple[int, int] = (10, 40), max_positions: int = 200_000,
             max_solutions: int = 12, log: Callable[[str], None] = lambda s: None,
             categories: Collection[str] = CATEGORIES,
             on_found: Callable[[str], None] = lambda category: None) -> Suite:
    """Sample random positions until each of `categories` has `per_category` puzzles (or
    `max_positions` were tried), freestyle, k = 5. `log` hears a line of counts and
    `on_found` the category of every puzzle kept (for a progress bar: per_category *
    len(categories) of them unless `max_positions` runs out first).

    Puzzles with more than `max_solutions` correct moves are dropped (too easy to hit).
    The puzzles of one category do not depend on which other categories are selected
    (the same random positions are drawn and labelled the same way), as long as
    `max_positions` is not reached first. On 15x15 about 1 random position in 90 gives a
    `fours_7` or `fours_9` puzzle (the shipped 80 took 7,200 positions, under a minute).
    """
    selected = [c for c in CATEGORIES if c in set(categories)]
    if not selected or len(selected) != len(set(categories)):
        raise ValueError(f"categories must be a non-empty selection of {CATEGORIES}, "
                         f"got {list(categories)}")
    config = GameConfig(board_size=board_size, win_length=5, rule="freestyle")
    solver = Solver(board_size, 5)
    rng = np.random.default_rng(seed)
    found: dict[str, list[Puzzle]] = {c: [] for c in selected}
    seen = set()
    tried = 0
    while tried < max_positions and any(len(v) < per_category for v in found.values()):
        tried += 1
        board = random_position(rng, board_size, int(rng.integers(*stones)))
        if board is None or _has_five(solver, board) or board.tobytes() in seen:
            continue
        seen.add(board.tobytes())
        to_move = 1 if np.sum(board == 1) == np.sum(board == -1) else -1
        label = classify(solver, board, to_move, selected)
        if label is None or len(label[1]) > max_solutions:
            continue
        category, solutions = label
        if len(found[category]) < per_category:
            found[category].append(Puzzle(f"{category}-{len(found[category]):03d}", category,
                                          board, to_move, tuple(sorted(solutions))))
            on_found(category)
            log(f"{tried} positions: " + ", ".join(f"{c} {len(v)}" for c, v in found.items()))
    log(f"done: {tried} positions drawn (seed {seed})")
    return Suite(config, tuple(p for c in selected for p in found[c]))


# -- files --------------------------------------------------------------------------------
def to_json(suite: Suite) -> dict[str, Any]:
    cfg = suite.config
    rows = lambda b: ["".join(".xo"[int(v)] for v in row) for row in b]  # noqa: E731
    return {"board_size": cfg.board_size, "win_length": cfg.win_length, "rule": cfg.rule,
            "puzzles": [{"id": p.id, "category": p.category, "board": rows(p.board),
                         "to_move": "black" if p.to_move == 1 else "white",
                         "solutions": [[a // cfg.board_size, a % cfg.board_size]
                                       for a in p.solutions]} for p in suite.puzzles]}


def save(suite: Suite, path: str | Path) -> None:
    Path(path).write_text(json.dumps(to_json(suite), indent=1) + "\n")


def from_json(data: dict[str, Any], source: str = "suite") -> Suite:
    """A Suite from its JSON form; ValueError naming the puzzle and what is wrong."""
    try:
        config = GameConfig(board_size=int(data["board_size"]),
                            win_length=int(data["win_length"]), rule=str(data["rule"]))
        items = list(data["puzzles"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{source}: needs board_size, win_length, rule and puzzles ({e})")
    n, puzzles = config.board_size, []
    for i, item in enumerate(items):
        where = f"{source}: puzzle {i} ({item.get('id', '?') if isinstance(item, dict) else '?'})"
        try:
            rows = item["board"]
            if len(rows) != n or any(len(r) != n for r in rows):
                raise ValueError(f"board must be {n} rows of {n} characters")
            board = np.array([[_SYMBOLS[ch] for ch in r] for r in rows], np.int8)
            if item["category"] not in CATEGORIES:
                raise ValueError(f"category must be one of {CATEGORIES}")
            state = from_board(config, board, item["to_move"])
            solutions = tuple(sorted(int(r) * n + int(c) for r, c in item["solutions"]))
            if not solutions or any(not 0 <= a < n * n or board.reshape(-1)[a] != 0
                                    for a in solutions):
                raise ValueError("solutions must be a non-empty list of empty [row, col] cells")
        except (KeyError, TypeError) as e:
            raise ValueError(f"{where}: missing or malformed field ({e})") from None
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        puzzles.append(Puzzle(str(item["id"]), item["category"], board, int(state.color),
                              solutions))
    return Suite(config, tuple(puzzles))


def load(path: str | Path) -> Suite:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read tactical suite {path}: {e}") from None
    return from_json(data, str(path))


def default_suite() -> Suite:
    """The suite shipped with the package: 15x15 freestyle, 40 puzzles per category (320:
    the five basic categories, then `fours_7` and `fours_9`, then `vct`; see the module
    doc)."""
    text = resources.files("gomoku_jax.games.gomoku").joinpath("data", DEFAULT_SUITE).read_text()
    return from_json(json.loads(text), DEFAULT_SUITE)
