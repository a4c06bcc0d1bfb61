"""Pure Gomoku transition logic on a single state: init, step, incremental win check."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.games.gomoku.config import CARO_RULES, DIRECTIONS, EXACT_RULES, GameConfig
from gomoku_jax.games.gomoku.state import BLACK, EMPTY, State


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


def _reach(config: GameConfig) -> int:
    """How far along each ray `wins_through` looks: k - 1 for freestyle; k where an overline
    must be seen (exact5, caro_exact5, renju); the whole line for caro, whose win depends on
    the cells just beyond both ends of the maximal run, however long it is."""
    n, k, rule = config.board_size, config.win_length, config.rule
    if rule == "caro":
        return n - 1
    if rule in EXACT_RULES or rule == "renju":
        return k
    return k - 1


def wins_through(flat_board: jax.Array, cell: jax.Array, color: jax.Array,
                 config: GameConfig) -> jax.Array:
    """bool[]: does the stone of `color` at `cell` make a winning line?

    Looks only at the 4 lines through `cell` (at most 8 (N - 1) cells), never at the whole
    board. The maximal run of `color` through `cell` along a line wins when its length L is:
      freestyle: L >= k; exact5: L == k; renju: L == 5 for black, L >= 5 for white;
      caro / caro_exact5: L >= k / L == k, and the cells just beyond the run's two ends are
      not both opponent stones (the edge of the board does not block).
    (The rule is static: one Python branch, so freestyle costs what it always did.)

    Args:
      flat_board: int8[N*N] with the stone already placed.
      cell: int32[] in [0, N*N).
      color: int8[] the colour of the stone at `cell` (may be traced).
    """
    n, k, rule = config.board_size, config.win_length, config.rule
    reach = _reach(config)
    caro = rule in CARO_RULES
    d_row, d_col = _ray_offsets(reach)
    row, col = cell // n, cell % n

    def ray(sign: int) -> tuple[jax.Array, jax.Array]:
        """(int32[4] run of `color` beyond `cell`, bool[4] the cell after it is an opponent
        stone: only computed for caro)."""
        r, c = row + sign * d_row, col + sign * d_col
        on_board = (r >= 0) & (r < n) & (c >= 0) & (c < n)
        stones = flat_board[jnp.clip(r * n + c, 0, n * n - 1)]
        same = on_board & (stones == color)
        run = jnp.sum(jnp.cumprod(same.astype(jnp.int32), axis=1), axis=1)
        if not caro:
            return run, None
        opponent = on_board & (stones == -color)
        # The cell just past the run, when it is within the ray (past it: off the board
        # for caro, or a run too long to matter for caro_exact5).
        after = jnp.take_along_axis(opponent, jnp.minimum(run, reach - 1)[:, None], axis=1)
        return run, after[:, 0] & (run < reach)

    (forward, stop_f), (backward, stop_b) = ray(1), ray(-1)
    line = 1 + forward + backward
    if rule == "renju":
        five = jnp.where(color == BLACK, line == k, line >= k)
    elif rule in EXACT_RULES:
        five = line == k
    else:
        five = line >= k
    if caro:
        five = five & ~(stop_f & stop_b)
    return jnp.any(five)


def step(state: State, action: jax.Array) -> State:
    """One move of the side to move. Pure; batch with `jax.vmap`.

    - A terminated state is returned unchanged, with zero rewards.
    - An illegal action (an occupied cell, outside [0, N*N), or under "renju" a forbidden
      point for black: a double-three, double-four or overline that makes no five) leaves
      the board untouched and ends the game: the mover loses (-1, the opponent gets +1), as
      in pgx.
    - A legal move places a stone; the game ends with +1 to the mover if it makes a winning
      line through that cell (`wins_through`, per the rule), or as a draw (zero rewards) if
      it fills the board.

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
    if cfg.rule == "renju":  # black may not play a forbidden point (it makes no five)
        from gomoku_jax.games.gomoku.renju import forbidden_at
        legal = legal & ~((state.color == BLACK) & forbidden_at(flat, cell, cfg.board_size))
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
