"""Faux Go's transition on a single state: regions, escape, captures and enclosures, scoring.

The rules (version "v1"; docs/games/fauxgo.md has them in full):

- Regions of a colour C: the 4-connected components of the cells that hold neither an
  opponent stone nor an opponent enclosure. A region *escapes* if it holds an empty edge
  cell; otherwise it is *sealed*.
- After P places a stone (O the opponent): every sealed region of O becomes P's enclosure
  (its O stones are captured, its cells become empty cells owned by P; a sealed region without
  O stones, an empty pocket, becomes P's too: a fort). Then every sealed region of P that holds
  P stones is captured the same way by O (a self-sealing move).
- Two passes in a row, or 2 N^2 plies, end the game; each colour scores its stones plus the
  empty cells it owns (komi, the state's `komi` leaf, to white); the higher score wins.

Regions are found by flooding on row bitboards: each row of a cell set is one int32 (bit c
for column c), so growing a set to its 4-neighbours is two shifts and two row offsets on N
words. A flood grows from the empty edge cells inside a colour's region mask in a
`lax.while_loop` (eight growth steps per convergence check) until it stops changing; the
sealed cells are whatever it does not reach, so no component labels are needed.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.games.fauxgo.config import FauxGoConfig
from gomoku_jax.games.fauxgo.state import BLACK, EMPTY, State

_SPREADS_PER_CHECK = 8  # flood steps between two convergence checks


@functools.lru_cache(maxsize=None)
def edge_mask(board_size: int) -> np.ndarray:
    """bool[N, N]: the cells on the board's edge."""
    edge = np.ones((board_size, board_size), bool)
    edge[1:-1, 1:-1] = False
    return edge


def to_bits(cells: jax.Array) -> jax.Array:
    """bool[N, N] -> int32[N]: bit c of word r is cell (r, c) (N <= 19 fits)."""
    n = cells.shape[-1]
    return jnp.sum(cells.astype(jnp.int32) << jnp.arange(n, dtype=jnp.int32), axis=-1)


def from_bits(bits: jax.Array, n: int) -> jax.Array:
    """int32[N] -> bool[N, N], the inverse of `to_bits`."""
    return ((bits[..., None] >> jnp.arange(n, dtype=jnp.int32)) & 1).astype(bool)


def spread_rows(x: jax.Array) -> jax.Array:
    """int32[N]: the cells of `x` and the cells above and below them (row bitboards)."""
    zero = jnp.zeros_like(x[..., :1])
    below = jnp.concatenate([x[..., 1:], zero], axis=-1)
    above = jnp.concatenate([zero, x[..., :-1]], axis=-1)
    return x | below | above


def spread_bits(x: jax.Array) -> jax.Array:
    """int32[N]: the cells of `x` and their 4-neighbours (row bitboards; the caller masks
    off bit N, which a left shift may set)."""
    return spread_rows(x) | (x << 1) | (x >> 1)


def cell_bits(cell: jax.Array, n: int) -> jax.Array:
    """int32[N]: the bitboard of the single cell `cell` (flat index `row * N + col`)."""
    return jnp.where(jnp.arange(n) == cell // n, jnp.int32(1) << (cell % n), 0)


def popcount(bits: jax.Array) -> jax.Array:
    """int32[]: the number of cells of a bitboard."""
    return jnp.sum(jax.lax.population_count(bits), dtype=jnp.int32)


def flood_bits(seed: jax.Array, mask: jax.Array) -> jax.Array:
    """int32[N]: the cells of `mask` 4-connected inside `mask` to a cell of `seed & mask`
    (row bitboards; `mask` holds no bit at or above N)."""
    def body(carry):
        reached, _ = carry
        grown = reached
        for _ in range(_SPREADS_PER_CHECK):
            grown = mask & spread_bits(grown)
        return grown, jnp.any(grown != reached)

    reached, _ = jax.lax.while_loop(lambda c: c[1], body, (seed & mask, jnp.bool_(True)))
    return reached


def _sealed_bits(region: jax.Array, empty: jax.Array, edge: jax.Array) -> jax.Array:
    """int32[N]: the cells of `region` (bitboard) in components without an empty edge cell."""
    return region & ~flood_bits(region & empty & edge, region)


def sealed_cells(board: jax.Array, owner: jax.Array, color: jax.Array) -> jax.Array:
    """bool[N, N]: the cells of `color`'s sealed regions (regions with no empty edge cell)."""
    n = board.shape[-1]
    region = to_bits((board != -color) & (owner != -color))
    empty = to_bits(board == EMPTY)
    return from_bits(_sealed_bits(region, empty, to_bits(edge_mask(n))), n)


def resolve(board: jax.Array, owner: jax.Array, mover: jax.Array
            ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """The captures and enclosures after `mover` placed a stone (already on `board`).

    Returns (board, owner, stones captured by the mover, stones the mover lost), the counts
    int32[].
    """
    n = board.shape[-1]
    full = (1 << n) - 1
    edge = to_bits(edge_mask(n))
    mine, theirs = to_bits(board == mover), to_bits(board == -mover)
    my_land = to_bits((board == EMPTY) & (owner == mover))
    their_land = to_bits((board == EMPTY) & (owner == -mover))

    # 1. every sealed region of the opponent becomes the mover's enclosure
    taken = _sealed_bits(full & ~mine & ~my_land, full & ~mine & ~theirs, edge)
    captured = popcount(taken & theirs)
    theirs, their_land, my_land = theirs & ~taken, their_land & ~taken, my_land | taken
    # 2. then the mover's sealed regions holding its stones go to the opponent
    sealed = _sealed_bits(full & ~theirs & ~their_land, full & ~mine & ~theirs, edge)
    lost_cells = flood_bits(sealed & mine, sealed)
    lost = popcount(lost_cells & mine)
    mine, my_land, their_land = mine & ~lost_cells, my_land & ~lost_cells, their_land | lost_cells

    color = jnp.asarray(mover, jnp.int8)
    board = (from_bits(mine, n).astype(jnp.int8) - from_bits(theirs, n).astype(jnp.int8)) * color
    owner = (from_bits(my_land, n).astype(jnp.int8)
             - from_bits(their_land, n).astype(jnp.int8)) * color
    return board.astype(jnp.int8), owner.astype(jnp.int8), captured, lost


def scores(board: jax.Array, owner: jax.Array, komi: jax.Array) -> jax.Array:
    """float32[2]: (black, white) scores, stones on the board plus owned empty cells, komi
    (float32[], a state's `komi`) to white."""
    def of(color):
        return jnp.sum((board == color) | ((board == EMPTY) & (owner == color)),
                       dtype=jnp.int32).astype(jnp.float32)

    return jnp.stack([of(BLACK), of(-BLACK) + jnp.asarray(komi, jnp.float32)])


def initial_state(config: FauxGoConfig, black_player: jax.Array) -> State:
    """The empty board of `config`, black to move, its komi; `black_player` int32[] is
    black's player id."""
    n = config.board_size
    return State(
        board=jnp.zeros((n, n), jnp.int8), owner=jnp.zeros((n, n), jnp.int8),
        color=jnp.int8(BLACK), black_player=jnp.asarray(black_player, jnp.int32),
        passes=jnp.int32(0), ply=jnp.int32(0), captures=jnp.zeros((2,), jnp.int32),
        last_action=jnp.int32(-1), winner=jnp.int8(0), rewards=jnp.zeros((2,), jnp.float32),
        terminated=jnp.bool_(False), truncated=jnp.bool_(False),
        komi=jnp.float32(config.komi))


def init(config: FauxGoConfig, key: jax.Array) -> State:
    """A new game; `key` draws which player id plays black (as pgx does)."""
    return initial_state(config, jax.random.bernoulli(key).astype(jnp.int32))


def step(state: State, action: jax.Array) -> State:
    """One move of the side to move (`action` int[]: `row * N + col`, or N*N to pass).
    Pure; batch with `jax.vmap`.

    - A finished game is returned unchanged, with zero rewards.
    - An illegal action (out of [0, N*N], an occupied cell, a cell in the opponent's
      enclosure) leaves the board as it is and ends the game: the mover loses (-1, +1).
    - A placement resolves captures and enclosures (`resolve`); a pass does nothing else.
    - The second pass in a row, or the move reaching 2 N^2 plies, ends the game: the higher
      score gets +1 and the other -1 (0 each for equal scores).
    """
    cfg = FauxGoConfig(board_size=state.board.shape[-1])  # the geometry; komi is the state's
    n2 = cfg.num_cells
    action = jnp.asarray(action, jnp.int32)
    color = state.color
    live = ~state.terminated
    in_range = (action >= 0) & (action <= n2)
    legal = in_range & state.legal_action_mask[jnp.clip(action, 0, n2)]
    is_pass = action == n2
    place = live & legal & ~is_pass
    illegal = live & ~legal

    cell = jnp.clip(action, 0, n2 - 1)
    row, col = cell // cfg.board_size, cell % cfg.board_size
    placed = state.board.at[row, col].set(color)
    cleared = state.owner.at[row, col].set(0)
    board, owner, captured, lost = resolve(placed, cleared, color)
    board = jnp.where(place, board, state.board)
    owner = jnp.where(place, owner, state.owner)
    mover_slot = (color != BLACK).astype(jnp.int32)  # 0 black, 1 white
    gains = jnp.where(place, jnp.where(jnp.arange(2) == mover_slot, captured, lost), 0)

    passes = jnp.where(live & legal, jnp.where(is_pass, state.passes + 1, 0), state.passes)
    ply = state.ply + (live & legal).astype(jnp.int32)
    scored = live & legal & ((passes >= 2) | (ply >= cfg.max_plies))
    black, white = scores(board, owner, state.komi)
    result = jnp.sign(black - white).astype(jnp.int8)  # +1 black ahead, -1 white, 0 equal
    winner = jnp.where(scored, result, jnp.where(illegal, -color, state.winner)).astype(jnp.int8)

    ids = jnp.arange(2, dtype=jnp.int32)
    black_id = state.black_player
    colour_of_id = jnp.where(ids == black_id, BLACK, -BLACK)
    ended_by_rules = scored | illegal
    rewards = jnp.where(ended_by_rules, (colour_of_id * winner).astype(jnp.float32), 0.0)
    return state.replace(
        board=board, owner=owner,
        color=jnp.where(live, -color, color).astype(jnp.int8),
        passes=passes, ply=ply, captures=state.captures + gains,
        last_action=jnp.where(live, action, state.last_action),
        winner=winner, rewards=rewards.astype(jnp.float32),
        terminated=state.terminated | ended_by_rules)
