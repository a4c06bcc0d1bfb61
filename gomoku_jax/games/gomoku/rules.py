"""Pure Gomoku transition logic on a single state: init, step, incremental win check."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.games.gomoku.config import GameConfig
from gomoku_jax.games.gomoku.state import BLACK, EMPTY, State

# Row / column steps of the four lines through a cell: horizontal, vertical, two diagonals.
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def initial_state(config: GameConfig, black_player: jax.Array) -> State:
    """The empty board with black to move; `black_player` int32[] is black's player id."""
    n = config.board_size
    return State(
        board=jnp.zeros((n, n), jnp.int8),
        color=jnp.int8(BLACK),
        black_player=jnp.asarray(black_player, jnp.int32),
        last_moves=jnp.full((2,), -1, jnp.int32),
        move_count=jnp.int32(0),
        winner=jnp.int8(0),
        rewards=jnp.zeros((2,), jnp.float32),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
        config=config,
    )


def init(config: GameConfig, key: jax.Array) -> State:
    """A new game; `key` decides which player id plays black (pgx randomises it the same way)."""
    return initial_state(config, jax.random.bernoulli(key).astype(jnp.int32))


@functools.lru_cache(maxsize=None)
def _ray_offsets(reach: int) -> tuple[np.ndarray, np.ndarray]:
    """int32[4, reach] row and column offsets 1..reach along each of the 4 directions."""
    dist = np.arange(1, reach + 1, dtype=np.int32)
    d_row = np.array([dr * dist for dr, _ in DIRECTIONS], np.int32)
    d_col = np.array([dc * dist for _, dc in DIRECTIONS], np.int32)
    return d_row, d_col


def wins_through(flat_board: jax.Array, cell: jax.Array, color: jax.Array,
                 config: GameConfig) -> jax.Array:
    """bool[]: does the stone of `color` at `cell` make a winning line?

    Looks only at the 4 lines through `cell` (at most 8k cells), never at the whole board.
    For "freestyle" a run of k or more wins; for "exact5" exactly k (so each side is
    inspected k cells out, one further than freestyle needs, to see an overline).

    Args:
      flat_board: int8[N*N] with the stone already placed.
      cell: int32[] in [0, N*N).
      color: int8[] the colour of the stone at `cell`.
    """
    n, k = config.board_size, config.win_length
    reach = k if config.rule == "exact5" else k - 1
    d_row, d_col = _ray_offsets(reach)
    row, col = cell // n, cell % n

    def run_length(sign: int) -> jax.Array:
        r, c = row + sign * d_row, col + sign * d_col
        on_board = (r >= 0) & (r < n) & (c >= 0) & (c < n)
        same = on_board & (flat_board[jnp.clip(r * n + c, 0, n * n - 1)] == color)
        return jnp.sum(jnp.cumprod(same.astype(jnp.int32), axis=1), axis=1)

    line = 1 + run_length(1) + run_length(-1)
    if config.rule == "exact5":
        return jnp.any(line == k)
    return jnp.any(line >= k)


def step(state: State, action: jax.Array) -> State:
    """One move of the side to move. Pure; batch with `jax.vmap`.

    - A terminated state is returned unchanged, with zero rewards.
    - An illegal action (an occupied cell, or outside [0, N*N)) leaves the board untouched
      and ends the game: the mover loses (-1, the opponent gets +1), as in pgx.
    - A legal move places a stone; the game ends with +1 to the mover if it makes a winning
      line through that cell, or as a draw (zero rewards) if it fills the board.

    Args:
      state: an unbatched State.
      action: int[] flat index `row * N + col`.
    """
    cfg = state.config
    num_actions = cfg.num_actions
    action = jnp.asarray(action, jnp.int32)
    flat = state.board.reshape(num_actions)
    cell = jnp.clip(action, 0, num_actions - 1)
    legal = (action >= 0) & (action < num_actions) & (flat[cell] == EMPTY)
    live = ~state.terminated
    place = live & legal

    flat = flat.at[cell].set(jnp.where(place, state.color, flat[cell]))
    won = place & wins_through(flat, cell, state.color, cfg)
    filled = place & (state.move_count + 1 >= num_actions)
    illegal = live & ~legal

    mover_reward = jnp.where(won, 1.0, 0.0) - jnp.where(illegal, 1.0, 0.0)
    player_ids = jnp.arange(2, dtype=jnp.int32)
    is_mover = player_ids == state.current_player
    rewards = jnp.where(is_mover, mover_reward, 0.0) - jnp.where(is_mover, 0.0, mover_reward)
    winner = jnp.where(won, state.color, jnp.where(illegal, -state.color, state.winner))
    mover_slot = (state.color != BLACK).astype(jnp.int32)  # 0 black, 1 white
    last_moves = jnp.where(live & (player_ids == mover_slot), action, state.last_moves)
    return state.replace(
        board=flat.reshape(state.board.shape),
        color=jnp.where(live, -state.color, state.color).astype(jnp.int8),
        last_moves=last_moves,
        move_count=state.move_count + place.astype(jnp.int32),
        winner=winner.astype(jnp.int8),
        rewards=rewards.astype(jnp.float32),
        terminated=state.terminated | won | filled | illegal,
    )
