"""A small exact threat solver for freestyle Gomoku (NumPy, host side).

It answers "can the side to move force a win within d plies?" exactly, for small odd d
(1, 3, 5), and lists the moves that do; and the same for wins by continuous fours (VCF) at
larger depths (7, 9 plies on 15x15). It labels the tactical suite (`tactics.py`);
it is not a playing engine.

Boards are flat `int8[N*N]` arrays (+1 black, -1 white, 0 empty); `attacker` is the colour
trying to win. The search is a plain AND/OR search over *relevant* moves only, which keeps
it exact and small:

- A move for the side to move that completes k in a row wins at once; a side facing a
  completed-five threat (a "four") must block it, and two distinct fours cannot be blocked.
- With `a` attacker moves left, a window of k cells can only take part in the attacker's
  win (as the final five, or as a four that forces a reply and is followed by another
  attacker move) if it has no defender stone and at least k - a attacker stones. Likewise a
  defender window can only produce a forcing four if it has no attacker stone and at least
  k - 1 - b defender stones, with `b` defender moves left.
- A stone on an empty cell outside every such window can never matter within the horizon:
  it acts as a pass. For the defender all such cells are equivalent, so one of them stands
  for all. For the attacker a pass is never needed: in freestyle an extra stone never hurts
  its owner, so if "pass, then win within d - 2 whatever the defender does" works, winning
  within d - 2 from the current position works too, and the shorter win's first move is
  itself relevant.

VCF (victory by continuous fours; `vcf_wins_within`, `vcf_moves`, `vcf_depth`) is the same
question with the attacker restricted to fives and fours, so every defender reply is forced:

- The attacker wins at once if it has a five cell. Otherwise, if the defender has two or more
  five cells the VCF fails; with one, the attacker must play there and that move must make a
  four; with none it may play any cell that makes a four (`four_moves`: k - 1 own stones in
  an otherwise empty k-window).
- After the attacker's four, two or more distinct attacker five cells win (the defender has
  no five: it was blocked or absent); with one, the defender must block it and the VCF goes
  on.
- Counting: a VCF of d fours wins at ply 2d + 1. The last four, the one that leaves two five
  cells (an open four or a double four), is ply 2d - 1, the defender's useless block ply 2d,
  and the five ply 2d + 1. So "within 7 plies" is at most three fours, "within 9" four.

The VCF search is exhaustive over the four moves (no node limit; a transposition table keyed
by the board and the plies left), so it is a reference, not a fast engine. A VCF win within p
plies is a win within p plies (`wins_within`); the converse fails (a win may need a three).

This is exact for the freestyle rule only (under exact5 an extra own stone can turn a five
into an overline, so the pass argument fails); `Solver` refuses other rules. Tests compare it
with a brute-force minimax over every empty cell on small boards.
"""

from __future__ import annotations

import functools
from typing import Optional

import numpy as np

from gomoku_jax.games.gomoku.rules import DIRECTIONS


@functools.lru_cache(maxsize=None)
def windows(board_size: int, win_length: int) -> np.ndarray:
    """int32[W, k]: the flat cells of every straight run of k cells on the board."""
    n, k = board_size, win_length
    out = []
    for dr, dc in DIRECTIONS:
        for r in range(n):
            for c in range(n):
                end_r, end_c = r + dr * (k - 1), c + dc * (k - 1)
                if 0 <= end_r < n and 0 <= end_c < n:
                    out.append([(r + dr * i) * n + c + dc * i for i in range(k)])
    return np.asarray(out, np.int32).reshape(-1, k)


class Solver:
    """Exact depth-limited threat search for one board size and win length (freestyle)."""

    def __init__(self, board_size: int, win_length: int = 5, rule: str = "freestyle"):
        if rule != "freestyle":
            raise ValueError(f"the solver is exact for the freestyle rule only, got {rule!r}")
        if not 2 <= win_length <= board_size:
            raise ValueError(f"win_length must be in 2..{board_size}, got {win_length}")
        self.n, self.k = board_size, win_length
        self.windows = windows(board_size, win_length)

    # -- primitives -------------------------------------------------------------------
    def _counts(self, board: np.ndarray, colour: int) -> tuple[np.ndarray, np.ndarray]:
        cells = board[self.windows]
        return np.sum(cells == colour, axis=1), np.sum(cells == -colour, axis=1)

    def _empties_of(self, board: np.ndarray, selected: np.ndarray) -> np.ndarray:
        cells = self.windows[selected].ravel()
        return np.unique(cells[board[cells] == 0])

    def five_cells(self, board: np.ndarray, colour: int) -> np.ndarray:
        """int[M] sorted: empty cells where a `colour` stone completes k in a row."""
        own, other = self._counts(board, colour)
        return self._empties_of(board, (own == self.k - 1) & (other == 0))

    def four_moves(self, board: np.ndarray, colour: int) -> np.ndarray:
        """int[M] sorted: empty cells where a `colour` stone makes a new four (k - 1 in an
        otherwise empty window)."""
        own, other = self._counts(board, colour)
        return self._empties_of(board, (own == self.k - 2) & (other == 0))

    def _relevant(self, board: np.ndarray, attacker: int, attacker_moves: int,
                  defender_moves: int) -> np.ndarray:
        own, other = self._counts(board, attacker)
        live = (((own >= self.k - attacker_moves) & (other == 0))
                | ((other >= self.k - 1 - defender_moves) & (own == 0)))
        return self._empties_of(board, live)

    def _defender_moves(self, board: np.ndarray, attacker: int, plies: int
                        ) -> tuple[list[int], Optional[int]]:
        """The defender's moves worth trying with `plies` left (its move first): the
        relevant cells, and one stand-in for all the others (None if there are none)."""
        relevant = self._relevant(board, attacker, plies // 2, (plies + 1) // 2)
        others = np.flatnonzero(board == 0)
        others = others[~np.isin(others, relevant)]
        return relevant.tolist(), (int(others[0]) if others.size else None)

    def _attacker_moves(self, board: np.ndarray, attacker: int, plies: int) -> np.ndarray:
        """The attacker's moves worth trying with `plies` left (its move first), when it has
        no five to complete: the forced block of the defender's only five, none against two,
        else the relevant cells."""
        threats = self.five_cells(board, -attacker)
        if threats.size:
            return threats if threats.size == 1 else threats[:0]
        return self._relevant(board, attacker, (plies + 1) // 2, (plies - 1) // 2)

    # -- the search ------------------------------------------------------------------
    def wins_within(self, board: np.ndarray, attacker: int, plies: int) -> bool:
        """Whether `attacker`, to move, forces k in a row within `plies` (odd) plies.

        Args:
          board: int8[N*N] or [N, N]; not modified. plies: 1, 3, 5 (larger is exact but slow).
        """
        b = self._flat(board)
        return self._attacker_wins(b, attacker, plies)

    def _attacker_wins(self, b: np.ndarray, attacker: int, plies: int) -> bool:
        if self.five_cells(b, attacker).size:
            return True
        if plies < 3 or not (b == 0).any():
            return False
        for m in self._attacker_moves(b, attacker, plies):
            b[m] = attacker
            won = self._defender_loses(b, attacker, plies - 1)
            b[m] = 0
            if won:
                return True
        return False

    def _defender_loses(self, b: np.ndarray, attacker: int, plies: int) -> bool:
        """Defender to move with `plies` (even) left: does every reply lose in time?"""
        if self.five_cells(b, -attacker).size:
            return False
        threats = self.five_cells(b, attacker)
        if threats.size >= 2:
            return True
        if threats.size == 0 and plies <= 2:
            return False  # a defender stone cannot create an attacker five
        if not (b == 0).any():
            return False  # full board: a draw
        if threats.size == 1:
            replies = threats.tolist()
        else:
            relevant, stand_in = self._defender_moves(b, attacker, plies)
            replies = relevant + ([stand_in] if stand_in is not None else [])
        for r in replies:
            b[r] = -attacker
            won = self._attacker_wins(b, attacker, plies - 1)
            b[r] = 0
            if not won:
                return False
        return True

    def winning_moves(self, board: np.ndarray, attacker: int, plies: int) -> list[int]:
        """Every move that forces a win within `plies`, for a position with no faster win.

        Raises:
          ValueError: if `attacker` already wins within `plies - 2` (then moves outside the
            relevant set can win too, and the list would not be complete).
        """
        b = self._flat(board)
        if plies == 1:
            return self.five_cells(b, attacker).tolist()
        if self._attacker_wins(b, attacker, plies - 2):
            raise ValueError(f"the position is already won within {plies - 2} plies")
        out = []
        for m in self._attacker_moves(b, attacker, plies):
            b[m] = attacker
            if self._defender_loses(b, attacker, plies - 1):
                out.append(int(m))
            b[m] = 0
        return out

    def saving_moves(self, board: np.ndarray, defender: int, plies: int
                     ) -> Optional[list[int]]:
        """Moves for `defender` (to move) after which the opponent no longer forces a win
        within `plies` (odd) plies (completing the defender's own five counts: the game is
        over); None when every move would do (there is no threat to stop)."""
        b = self._flat(board)
        attacker = -defender
        own_fives = self.five_cells(b, defender).tolist()
        threats = self.five_cells(b, attacker)
        if threats.size >= 2:
            candidates, stand_in = [], None
        elif threats.size == 1:
            candidates, stand_in = threats.tolist(), None
        else:
            candidates, stand_in = self._defender_moves(b, attacker, plies + 1)
        if stand_in is not None:
            b[stand_in] = defender
            idle_saves = not self._attacker_wins(b, attacker, plies)
            b[stand_in] = 0
            if idle_saves:
                return None  # a move that changes nothing saves, so every move does
        out = set(own_fives)
        for m in set(candidates) - out:
            b[m] = defender
            if not self._attacker_wins(b, attacker, plies):
                out.add(int(m))
            b[m] = 0
        return None if len(out) == np.sum(b == 0) else sorted(out)

    # -- victory by continuous fours (VCF) ----------------------------------------------
    def vcf_wins_within(self, board: np.ndarray, attacker: int, plies: int) -> bool:
        """Whether `attacker`, to move, wins by continuous fours within `plies` (odd) plies.

        Every attacker move is a five, or a four (see the module doc, "VCF"); the defender's
        replies are forced. Exhaustive over the four moves, with a transposition table.
        """
        return self._vcf(self._flat(board), attacker, plies, {})

    def vcf_moves(self, board: np.ndarray, attacker: int, plies: int) -> list[int]:
        """Every first move (sorted) of a VCF that wins within `plies` (odd) plies: the
        five cells, and the fours after which the forced line wins in time. Complete under
        the VCF rules at any horizon (a faster VCF's first moves are included too)."""
        b = self._flat(board)
        fives = self.five_cells(b, attacker)
        out = set(fives.tolist())
        if plies >= 3:
            memo: dict = {}
            for m in self._vcf_candidates(b, attacker):
                if int(m) not in out and self._vcf_four_wins(b, attacker, int(m), plies, memo):
                    out.add(int(m))
        return sorted(out)

    def vcf_depth(self, board: np.ndarray, attacker: int, max_plies: int) -> Optional[int]:
        """The fewest (odd) plies, up to `max_plies`, in which `attacker` wins by a VCF;
        None if it has no VCF within `max_plies`."""
        b, memo = self._flat(board), {}
        for plies in range(1, max_plies + 1, 2):
            if self._vcf(b, attacker, plies, memo):
                return plies
        return None

    def _vcf_candidates(self, b: np.ndarray, attacker: int) -> np.ndarray:
        """The attacker's four moves allowed by the VCF rules (no five of its own on the
        board): against one defender five only its block, if that makes a four; against two,
        none."""
        threats = self.five_cells(b, -attacker)
        if threats.size >= 2:
            return threats[:0]
        fours = self.four_moves(b, attacker)
        if threats.size == 1:
            return threats if np.isin(threats, fours).all() else threats[:0]
        return fours

    def _vcf(self, b: np.ndarray, attacker: int, plies: int, memo: dict) -> bool:
        if self.five_cells(b, attacker).size:
            return True
        if plies < 3:
            return False
        key = (b.tobytes(), plies)
        if key in memo:
            return memo[key]
        won = False
        for m in self._vcf_candidates(b, attacker):
            if self._vcf_four_wins(b, attacker, int(m), plies, memo):
                won = True
                break
        memo[key] = won
        return won

    def _vcf_four_wins(self, b: np.ndarray, attacker: int, m: int, plies: int,
                       memo: dict) -> bool:
        """After the four `m` (plies >= 3 left, counting it): two five cells win at ply 3;
        one is blocked and the VCF goes on with plies - 2."""
        b[m] = attacker
        try:
            fives = self.five_cells(b, attacker)
            if fives.size >= 2:
                return True
            if plies < 5 or fives.size == 0:
                return False
            b[fives[0]] = -attacker
            won = self._vcf(b, attacker, plies - 2, memo)
            b[fives[0]] = 0
            return won
        finally:
            b[m] = 0

    def _flat(self, board) -> np.ndarray:
        b = np.array(board, dtype=np.int8).reshape(-1)
        if b.size != self.n * self.n:
            raise ValueError(f"board must have {self.n}x{self.n} cells, got {b.size}")
        return b
