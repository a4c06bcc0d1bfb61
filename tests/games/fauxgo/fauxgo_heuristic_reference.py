"""Seed 004's Faux Go AI in plain Python, written from the definitions in the docstring of
`gomoku_jax.games.fauxgo.heuristic` (not from its JAX code), over the reference game of
`fauxgo_reference.py`: the oracle of the heuristic's differential test.

Every "what if" is played out on a copy of the reference game, so captures and enclosures
come from the reference rules, and regions from breadth-first search.
"""

from __future__ import annotations

import copy
from collections import deque

from fauxgo_reference import Game

WEIGHTS = {"position": 1, "liberties": 2, "connection": 3, "territory": 5, "capture": 10,
           "progress": 15, "block": 30, "urgent": 50, "capture_block": 100}


def position_of(n: int, board, owner, to_move: int) -> Game:
    """A reference game at a given position (no ply count, no passes)."""
    game = Game(n)
    for r in range(n):
        for c in range(n):
            game.stone[(r, c)] = int(board[r][c])
            game.owner[(r, c)] = int(owner[r][c])
    game.to_move = to_move
    return game


def clone(game: Game) -> Game:
    """A copy of `game` to play on: its mutable position copied, the neighbour table (never
    written) shared (deepcopy spent most of the reference's time copying it)."""
    out = copy.copy(game)
    out.stone, out.owner, out.captured = dict(game.stone), dict(game.owner), dict(game.captured)
    return out


def after(game: Game, cell) -> Game:
    """A copy of `game` after its side to move places on `cell` (the ply count is reset so
    the cap never ends a what-if)."""
    out = clone(game)
    out.plies = 0
    out.play(cell[0] * game.n + cell[1])
    return out


def captured_by_reply(game: Game, cell, replier: int) -> int:
    """The stones `replier` captures by placing on `cell` (0 where it may not place)."""
    if game.stone[cell] != 0 or game.owner[cell] == -replier:
        return 0
    trial = clone(game)
    trial.to_move, trial.plies, trial.over = replier, 0, False
    before = trial.captured[replier]
    trial.play(cell[0] * game.n + cell[1])
    return trial.captured[replier] - before


def flood(start, inside, game: Game) -> set:
    seen, todo = {start}, deque([start])
    while todo:
        cell = todo.popleft()
        for nb in game.adjacent[cell]:
            if nb not in seen and inside(nb):
                seen.add(nb)
                todo.append(nb)
    return seen


def group_of(game: Game, cell) -> set:
    color = game.stone[cell]
    if color == 0:
        return set()
    return flood(cell, lambda x: game.stone[x] == color, game)


def region_exits(game: Game, cell, color: int) -> int:
    """The exits of `color`'s region holding `cell` (0 if `cell` is outside it)."""
    def inside(x):
        return game.stone[x] != -color and game.owner[x] != -color

    if not inside(cell):
        return 0
    region = flood(cell, inside, game)
    return sum(game.stone[x] == 0 and game.on_edge(x) for x in region)


def around(game: Game, cells: set) -> set:
    return {nb for x in cells for nb in game.adjacent[x]} - cells


def opponent_share(game: Game, cells: set, opponent: int) -> float:
    ring = around(game, cells)
    walls = sum(game.stone[x] == opponent or (game.stone[x] == 0 and game.owner[x] == opponent)
                for x in ring)
    return walls / max(len(ring), 1)


def groups(game: Game, color: int) -> list[set]:
    seen, out = set(), []
    for cell in sorted(game.stone):
        if game.stone[cell] == color and cell not in seen:
            g = group_of(game, cell)
            seen |= g
            out.append(g)
    return out


def vetoes(game: Game, cell) -> tuple[bool, bool]:
    """(one move from encirclement, danger zone) for the side to move placing on `cell`."""
    a, o = game.to_move, -game.to_move
    sp = after(game, cell)
    if sp.stone[cell] != a:
        return True, True
    grp = group_of(sp, cell)
    ring = around(sp, grp)
    gaps = [x for x in ring if sp.stone[x] == 0 and sp.owner[x] != a]
    one_move = any(captured_by_reply(sp, g, o) > 0 for g in gaps)

    exits = region_exits(sp, cell, a)
    share = opponent_share(sp, grp, o)
    region = flood(cell, lambda x: sp.stone[x] != o and sp.owner[x] != o, sp)
    critical = 0
    for g in region:
        if sp.stone[g] != 0 or sp.owner[g] != 0:
            continue
        if not any(sp.stone[nb] == o for nb in sp.adjacent[g]):
            continue
        if sp.on_edge(g):
            critical += 1
            continue
        trial = clone(sp)
        trial.to_move, trial.plies = o, 0
        trial.play(g[0] * sp.n + g[1])
        critical += trial.stone[cell] != a
    danger = (exits == 0 or (exits <= 2 and share >= 0.6)
              or (exits <= 4 and share >= 0.4 and critical >= exits))
    return one_move, danger


def components(game: Game, cell) -> dict[str, float]:
    """The nine unweighted scores of the side to move placing on `cell`."""
    n, a, o = game.n, game.to_move, -game.to_move
    r, c = cell
    sp = after(game, cell)
    half = (n - 1) / 2
    out = {"position": 1 - max(abs(r - half), abs(c - half)) / half}
    out["liberties"] = 5.0 * sum(game.stone[x] == 0 and game.owner[x] != o
                                 for x in game.adjacent[cell])
    near2 = [(r + dr, c + dc) for dr in range(-2, 3) for dc in range(-2, 3)
             if abs(dr) + abs(dc) == 2 and 0 <= r + dr < n and 0 <= c + dc < n]
    out["connection"] = (10.0 * sum(game.stone[x] == a for x in game.adjacent[cell])
                         + 2.0 * sum(game.stone[x] == a for x in near2))
    square = [(rr, cc) for rr in range(r - 2, r + 3) for cc in range(c - 2, c + 3)
              if 0 <= rr < n and 0 <= cc < n]
    stones = [game.stone[x] for x in square if game.stone[x] != 0]
    out["territory"] = 30.0 * stones.count(a) / len(stones) if stones else 0.0

    taken = sp.captured[a] - game.captured[a]
    new = sum(sp.owner[x] == a and game.owner[x] != a for x in game.stone)
    out["capture"] = 50.0 * taken + 200.0 * (new > 0) + 5.0 * new

    progress = 0.0
    for grp in groups(game, o):
        first = min(grp)
        e0 = region_exits(game, first, o)
        e1 = region_exits(sp, first, o) if sp.stone[first] == o else 0
        if e1 < e0:
            progress += 30 + 10 * (e0 - e1) + 5 * (e1 <= 3)
    out["progress"] = progress

    block = urgent = 0.0
    for grp in groups(game, a):
        first = min(grp)
        e0 = region_exits(game, first, a)
        e1 = region_exits(sp, first, a) if sp.stone[first] == a else 0
        gap = cell in around(game, grp)
        if e0 <= 3 and opponent_share(game, grp, o) >= 0.5 and gap and e1 > e0:
            block += 30 + 5 * e1
        if e0 <= 2:
            king = any(max(abs(r - x[0]), abs(c - x[1])) == 1 for x in grp)
            urgent += 50 * king + 80 * gap + 100 * (e1 > e0)
    out["block"], out["urgent"] = block, urgent

    k = captured_by_reply(game, cell, o)
    next_to_mine = any(game.stone[x] == a for x in game.adjacent[cell])
    out["capture_block"] = 150.0 + 30.0 * k if k > 0 and next_to_mine else 0.0
    return out


def legal_placements(game: Game) -> list:
    return [x for x in sorted(game.stone)
            if game.stone[x] == 0 and game.owner[x] != -game.to_move]
