"""Host-side construction of states from a board or a move list, with validation.

These are boundary functions (puzzles, notebooks, protocol lines): they run in NumPy on the
host, check everything, and raise a ValueError that says what is wrong and what is allowed.
"""

from __future__ import annotations

from typing import Iterable, Sequence, Union

import jax.numpy as jnp
import numpy as np

from gomoku_jax.games.gomoku.config import CARO_RULES, DIRECTIONS, EXACT_RULES, GameConfig
from gomoku_jax.games.gomoku.state import BLACK, WHITE, State

Move = Union[int, Sequence[int]]
_COLOUR_NAMES = {BLACK: "black", WHITE: "white"}


def _ahead(mask: np.ndarray, dr: int, dc: int) -> np.ndarray:
    """out[r, c] = mask[r + dr, c + dc], False where that cell is off the board."""
    n = mask.shape[0]
    out = np.zeros_like(mask)
    rows_out = slice(max(0, -dr), min(n, n - dr))
    cols_out = slice(max(0, -dc), min(n, n - dc))
    rows_in = slice(max(0, dr), min(n, n + dr))
    cols_in = slice(max(0, dc), min(n, n + dc))
    out[rows_out, cols_out] = mask[rows_in, cols_in]
    return out


def winning_colours(board: np.ndarray, config: GameConfig) -> set[int]:
    """Colours (+1 / -1) with a winning line anywhere on `board` under `config.rule`: a
    full-board NumPy scan of the maximal runs (k or more; exactly k under exact5,
    caro_exact5 and for black under renju; under caro not with opponent stones just past
    both ends).

    Independent of the incremental check in `rules.wins_through`, which tests compare it to.
    """
    k, rule = config.win_length, config.rule
    board = np.asarray(board)
    n = board.shape[0]
    rows, cols = np.indices(board.shape)
    found = set()
    for colour in (BLACK, WHITE):
        mine, theirs = board == colour, board == -colour
        exact = rule in EXACT_RULES or (rule == "renju" and colour == BLACK)
        for dr, dc in DIRECTIONS:
            start = mine & ~_ahead(mine, -dr, -dc)  # the first stone of each maximal run
            length = np.zeros(board.shape, np.int32)
            alive = mine.copy()
            for i in range(1, n + 1):
                length += alive
                alive &= _ahead(mine, i * dr, i * dc)
            wins = start & ((length == k) if exact else (length >= k))
            if rule in CARO_RULES:
                r, c = rows + length * dr, cols + length * dc
                inside = (r >= 0) & (r < n) & (c >= 0) & (c < n)
                after = inside & theirs[np.clip(r, 0, n - 1), np.clip(c, 0, n - 1)]
                wins &= ~(_ahead(theirs, -dr, -dc) & after)
            if wins.any():
                found.add(colour)
    return found


def _parse_colour(to_move) -> int:
    if isinstance(to_move, str):
        names = {"black": BLACK, "b": BLACK, "white": WHITE, "w": WHITE}
        if to_move.lower() in names:
            return names[to_move.lower()]
    elif not isinstance(to_move, bool) and to_move in (BLACK, WHITE):
        return int(to_move)
    raise ValueError(f"to_move must be +1 / 'black' or -1 / 'white', got {to_move!r}")


def _check_player(black_player) -> int:
    if isinstance(black_player, bool) or black_player not in (0, 1):
        raise ValueError(f"black_player must be 0 or 1, got {black_player!r}")
    return int(black_player)


def _make_state(board: np.ndarray, colour: int, last_moves: tuple[int, int], winner: int,
                terminated: bool, black_player: int, config: GameConfig) -> State:
    return State(
        board=jnp.asarray(board, jnp.int8),
        color=jnp.int8(colour),
        black_player=jnp.int32(black_player),
        last_moves=jnp.asarray(last_moves, jnp.int32),
        move_count=jnp.int32(np.count_nonzero(board)),
        winner=jnp.int8(winner),
        rewards=jnp.zeros((2,), jnp.float32),
        terminated=jnp.bool_(terminated),
        truncated=jnp.bool_(False),
        config=config,
    )


def from_board(config: GameConfig, board, to_move=None, *, allow_terminal: bool = False,
               black_player: int = 0) -> State:
    """A State for an arbitrary position.

    Args:
      board: int array-like [N, N] with values in {-1, 0, 1} (+1 black, -1 white).
      to_move: +1 / "black" or -1 / "white"; by default deduced from the stone counts
        (black moves first, so black is to move iff both colours have as many stones).
      allow_terminal: accept a position that is already over (a winning line, or a full
        board); it comes back terminated, with its winner. Otherwise such a board is an error.
      black_player: the player id (0 or 1) that plays black.

    The last-move planes of its observation are empty: a board does not say which stone
    came last (use `from_moves` for that).

    Raises:
      ValueError: wrong shape or dtype, values outside {-1, 0, 1}, stone counts that don't
        fit the side to move, or a finished position when `allow_terminal` is False.
    """
    n = config.board_size
    arr = np.asarray(board)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.integer)
                                   or arr.dtype == np.bool_):
        raise ValueError(
            f"board must hold integers (+1 black, -1 white, 0 empty), got dtype {arr.dtype}")
    if arr.dtype == np.bool_:
        raise ValueError("board must hold integers (+1 black, -1 white, 0 empty), got bool")
    if arr.shape != (n, n):
        raise ValueError(f"board must have shape ({n}, {n}) for this game, got {arr.shape}")
    bad = ~np.isin(arr, (-1, 0, 1))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(
            f"board values must be -1 (white), 0 (empty) or 1 (black); found {arr[r, c]} at "
            f"row {r}, col {c}")
    arr = arr.astype(np.int8)
    blacks, whites = int(np.sum(arr == BLACK)), int(np.sum(arr == WHITE))
    if blacks == whites:
        colour = BLACK
    elif blacks == whites + 1:
        colour = WHITE
    else:
        raise ValueError(
            f"stone counts don't fit alternating play with black first: {blacks} black, "
            f"{whites} white (black must have as many stones as white, or one more)")
    if to_move is not None and _parse_colour(to_move) != colour:
        raise ValueError(
            f"to_move={to_move!r} does not fit the stone counts ({blacks} black, {whites} "
            f"white): {_COLOUR_NAMES[colour]} is to move")
    black_player = _check_player(black_player)

    winners = winning_colours(arr, config)
    full = blacks + whites == n * n
    if len(winners) == 2:
        raise ValueError("both colours have a winning line: not a reachable position")
    winner = winners.pop() if winners else 0
    if winner == colour:
        raise ValueError(
            f"{_COLOUR_NAMES[winner]} has a winning line but is to move: the game would have "
            f"ended at {_COLOUR_NAMES[winner]}'s last move")
    terminated = bool(winner) or full
    if terminated and not allow_terminal:
        what = f"{_COLOUR_NAMES[winner]} has already won" if winner else "the board is full"
        raise ValueError(f"the position is over ({what}); pass allow_terminal=True to accept it")
    return _make_state(arr, colour, (-1, -1), winner, terminated, black_player, config)


def _parse_move(move: Move, n: int, index: int) -> int:
    if isinstance(move, (bool, np.bool_)):
        raise ValueError(f"move {index}: expected an action index or a (row, col) pair, got "
                         f"{move!r}")
    if isinstance(move, (int, np.integer)):
        if not 0 <= move < n * n:
            raise ValueError(f"move {index}: action {move} is off the board (0..{n * n - 1})")
        return int(move)
    try:
        row, col = move
    except (TypeError, ValueError):
        raise ValueError(f"move {index}: expected an action index or a (row, col) pair, got "
                         f"{move!r}") from None
    for name, v in (("row", row), ("col", col)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) \
                or not 0 <= v < n:
            raise ValueError(f"move {index}: {name} {v!r} is not an int in 0..{n - 1}")
    return int(row) * n + int(col)


def from_moves(config: GameConfig, moves: Iterable[Move], *, allow_terminal: bool = False,
               black_player: int = 0) -> State:
    """The State after playing `moves` from the empty board, black first.

    Args:
      moves: actions `row * N + col`, or (row, col) pairs.
      allow_terminal: accept a list whose last move ends the game.
      black_player: the player id (0 or 1) that plays black.

    Raises:
      ValueError: a move off the board, onto an occupied cell, after the game ended, or a
        final position that is over when `allow_terminal` is False.
    """
    n = config.board_size
    board = np.zeros((n, n), np.int8)
    last = [-1, -1]
    colour, winner, terminated = BLACK, 0, False
    for i, move in enumerate(moves):
        if terminated:
            raise ValueError(f"move {i}: the game already ended at move {i - 1}")
        action = _parse_move(move, n, i)
        r, c = divmod(action, n)
        if board[r, c]:
            raise ValueError(f"move {i}: cell (row {r}, col {c}) = action {action} is occupied")
        board[r, c] = colour
        last[0 if colour == BLACK else 1] = action
        if colour in winning_colours(board, config):
            winner, terminated = colour, True
        elif np.all(board != 0):
            terminated = True
        colour = -colour
    if terminated and not allow_terminal:
        what = f"{_COLOUR_NAMES[winner]} won" if winner else "the board is full"
        raise ValueError(f"the game is over ({what}); pass allow_terminal=True to accept it")
    return _make_state(board, colour, tuple(last), winner, terminated,
                       _check_player(black_player), config)
