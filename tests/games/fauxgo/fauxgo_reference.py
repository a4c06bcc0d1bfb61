"""A slow, independent Faux Go in plain Python, written from the rules in the README (not
from the JAX code): the oracle of the differential test.

A position is a dict of cells: `stone[(r, c)]` in {1, -1, 0} and `owner[(r, c)]` in
{1, -1, 0}. Regions are found by breadth-first search.
"""

from __future__ import annotations

from collections import deque


class Game:
    def __init__(self, n: int, komi: float = 0.0):
        self.n, self.komi = n, komi
        self.stone = {(r, c): 0 for r in range(n) for c in range(n)}
        self.owner = {(r, c): 0 for r in range(n) for c in range(n)}
        self.to_move = 1
        self.passes = 0
        self.plies = 0
        self.captured = {1: 0, -1: 0}  # stones taken by each colour
        self.over = False
        self.result = 0  # +1 black won, -1 white won, 0 draw / not over
        self.adjacent = {cell: tuple(self.neighbours(cell)) for cell in self.stone}

    # ---------------------------------------------------------------- rules

    def neighbours(self, cell):
        r, c = cell
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= rr < self.n and 0 <= cc < self.n:
                yield rr, cc

    def on_edge(self, cell) -> bool:
        return cell[0] in (0, self.n - 1) or cell[1] in (0, self.n - 1)

    def regions(self, color):
        """[(cells, escapes)]: the components of the cells holding neither an opponent stone
        nor an opponent enclosure; a region escapes when it holds an empty edge cell."""
        def inside(cell):
            return self.stone[cell] != -color and self.owner[cell] != -color

        seen, out = set(), []
        for start in self.stone:
            if start in seen or not inside(start):
                continue
            cells, todo = [], deque([start])
            seen.add(start)
            while todo:
                cell = todo.popleft()
                cells.append(cell)
                for nb in self.adjacent[cell]:
                    if nb not in seen and inside(nb):
                        seen.add(nb)
                        todo.append(nb)
            escapes = any(self.stone[x] == 0 and self.on_edge(x) for x in cells)
            out.append((cells, escapes))
        return out

    def legal_moves(self):
        """Placements (r * n + c) then the pass n * n."""
        moves = [r * self.n + c for (r, c), s in sorted(self.stone.items())
                 if s == 0 and self.owner[(r, c)] != -self.to_move]
        return moves + [self.n * self.n]

    def enclose(self, cells, new_owner):
        """The cells become empty cells of `new_owner`; returns the stones removed."""
        removed = 0
        for cell in cells:
            removed += self.stone[cell] != 0
            self.stone[cell] = 0
            self.owner[cell] = new_owner
        return removed

    def play(self, move: int) -> None:
        assert not self.over and move in self.legal_moves()
        p, o = self.to_move, -self.to_move
        if move == self.n * self.n:
            self.passes += 1
        else:
            self.passes = 0
            cell = divmod(move, self.n)
            self.stone[cell] = p
            self.owner[cell] = 0
            for cells, escapes in self.regions(o):
                if not escapes:
                    self.captured[p] += self.enclose(cells, p)
            for cells, escapes in self.regions(p):
                if not escapes and any(self.stone[x] == p for x in cells):
                    self.captured[o] += self.enclose(cells, o)
        self.plies += 1
        self.to_move = o
        if self.passes >= 2 or self.plies >= 2 * self.n * self.n:
            black, white = self.scores()
            self.over = True
            self.result = (black > white) - (black < white)

    def scores(self):
        def of(color):
            return sum(1 for x in self.stone if self.stone[x] == color
                       or (self.stone[x] == 0 and self.owner[x] == color))

        return of(1), of(-1) + self.komi

    # ---------------------------------------------------------------- views

    def board(self):
        return [[self.stone[(r, c)] for c in range(self.n)] for r in range(self.n)]

    def owners(self):
        return [[self.owner[(r, c)] for c in range(self.n)] for r in range(self.n)]
