"""Synthetic tactical examples (seed 000, level 3: tactical augmentation).

Two kinds, drawn 50/50 per example, each set in a cluster of random stones and with its
key cells next to them (the seed's level-3 proximity filter: no example teaches a move far
from the stones):

  complete five  the side to move has a four: target uniform over every cell where it wins
                 at once (one, or two for an open four), value +1.
  block four     the opponent has a four with exactly one completing cell and the side to
                 move has no five to make: target one-hot on that cell, no value target (the
                 outcome after the forced block is not known).

The construction is random and can fail (a random stone extends the four into a five, or
makes a second four), so every example is checked on the finished position, and one that
fails gets weight 0. Pure JAX: jit with `config` and `num` static; vmap over keys.

    examples = tactical_examples(config, key, 256)   # Examples, leaves [256, ...]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax import configs
from gomoku_jax.games.gomoku import rules
from gomoku_jax.games.gomoku.config import DIRECTIONS, EXACT_RULES, GameConfig
from gomoku_jax.games.gomoku.features.lines import line_planes, run_length
from gomoku_jax.games.gomoku.features.proximity import ProximityConfig, proximity_mask
from gomoku_jax.games.gomoku.state import BLACK, WHITE, State
from gomoku_jax.games.protocol import Examples
from gomoku_jax.games.random_play import pick_legal

# "Near" = proximity >= 0.5 under the seed's weights, i.e. Chebyshev distance <= 2 to a
# stone; with opening_stones=1 only the empty board is exempt (anywhere is near).
_NEAR = ProximityConfig(opening_stones=1)
_NEAR_WEIGHT = 0.5


def tactical_examples(config: GameConfig, key: jax.Array, num: int, *, min_stones: int = 6,
                      max_stones: int = 20) -> Examples:
    """`num` random tactical examples, half "complete five" and half "block four" on average.

    Construction of one example: a random position of s stones (s uniform in [min_stones,
    max_stones], black first, alternating, each stone near the earlier ones); an anchor, the
    four's gap, on an empty cell near them; k-1 stones of the attacker (the mover for
    complete-five, the opponent for block-four) on the other cells of a random k-cell line
    through the anchor that fits on the board; the two flanks (the cells just beyond the
    line) empty or the defender's at random, never the attacker's (that could make a five or
    an overline); when the gap is at an end, the cell after the far flank sometimes the
    attacker's, so that the far flank, if empty, makes an overline (no win under exact5, a
    second winning cell under freestyle), and for block-four the far flank the defender's
    unless that overline keeps the four from being open; no other attacker stone on the
    cells after the flanks; stone counts balanced for the side to move by removing random
    stones of the excess colour off these cells, then, if too few, adding stones of the
    other colour near the others. So the final stone count is about s, not exactly.

    Args:
      config: the game (static); any board size, k and rule.
      key: a `jax.random` key.
      num: examples to make (static).
      min_stones, max_stones: range of s, 0 <= min_stones <= max_stones <= N*N (static).

    Returns:
      `games.protocol.Examples` with leaves of leading axis [num]:
        state: board int8[num, N, N]; color int8 (the side to move, random); black_player
          int32 (random 0 / 1); last_moves int32[num, 2] (a random stone of each colour, -1
          if it has none; for block-four the opponent's is a stone of its four); move_count
          int32 (stones on the board); winner 0; rewards 0; terminated, truncated False.
        policy: float32[num, N*N], the target described above; all zeros where invalid.
        value: float32, +1 for complete-five, 0 for block-four.
        weight: float32, 1 where the example is valid, else 0 (ignore the rest of it).
        value_weight: float32, 1 for complete-five, 0 for block-four.
      Valid means, on the final position: no winning line on the board for either colour;
      black has as many stones as white (black to move) or one more (white to move);
      complete-five: the mover has at least one winning cell; block-four: the mover has
      none and the opponent exactly one (under renju, for black, not a forbidden point).
      Winning cells follow the rule (`rules.wins_through`: under exact5 a move making an
      overline is not one; under caro a five blocked at both ends is not one). Under caro
      the block-four target is the five cell; a stone just past the end of the four's run
      can be another defence that the target leaves out.

    Raises:
      ValueError: num, min_stones or max_stones out of range.
    """
    n = config.board_size
    for name, v in (("num", num), ("min_stones", min_stones), ("max_stones", max_stones)):
        configs.check_int(name, v, 0)
    if not min_stones <= max_stones <= n * n:
        raise ValueError(f"need min_stones <= max_stones <= board_size**2 ({n * n}), got "
                         f"min_stones={min_stones}, max_stones={max_stones}")
    keys = jax.random.split(key, int(num))
    return jax.vmap(lambda k: _example(config, k, int(min_stones), int(max_stones)))(keys)


def _example(config: GameConfig, key: jax.Array, min_stones: int, max_stones: int
             ) -> Examples:
    """One example (see `tactical_examples`); `key` a single key."""
    n, k = config.board_size, config.win_length
    a = n * n
    # One draw of uniforms for everything (a threefry call per random choice compiles slowly).
    scalars, end_u, stone_u, drop_u, add_u = jnp.split(
        jax.random.uniform(key, (9 + (k + 4) + max_stones + 2 * a,)),
        np.cumsum([9, k + 4, max_stones, a]))
    u_kind, u_mover, u_count, u_anchor, u_line, u_last_b, u_last_w, u_last_four, u_player = (
        scalars)

    complete = u_kind < 0.5
    mover = jnp.where(u_mover < 0.5, BLACK, WHITE).astype(jnp.int8)
    attacker = jnp.where(complete, mover, -mover).astype(jnp.int8)
    defender = -attacker

    # The random position: stone i (black for even i) while i < s, each one near the others.
    s = min_stones + jnp.floor(u_count * (max_stones - min_stones + 1)).astype(jnp.int32)

    def place(flat, xs):
        i, u_i = xs
        near = _near(flat.reshape(n, n)).reshape(a)
        cell = pick_legal(u_i, near)
        colour = jnp.where(i % 2 == 0, BLACK, WHITE).astype(jnp.int8)
        return flat.at[cell].set(jnp.where((i < s) & near[cell], colour, flat[cell])), None

    flat, _ = jax.lax.scan(place, jnp.zeros((a,), jnp.int8),
                           (jnp.arange(max_stones), stone_u))

    # The line: anchor (the gap) near the stones; (direction, gap position) among those whose
    # k cells fit. Along it, positions -2..k+1 (indices 0..k+3 below): the outer cells, the
    # flanks just beyond the line, and the k line cells.
    anchor = pick_legal(u_anchor, _near(flat.reshape(n, n)).reshape(a))
    rel = np.arange(-2, k + 2)[None, :] - np.arange(k)[:, None]  # [gap position, index]
    rows = anchor // n + np.array([dr for dr, _ in DIRECTIONS])[:, None, None] * rel
    cols = anchor % n + np.array([dc for _, dc in DIRECTIONS])[:, None, None] * rel
    on_board = (rows >= 0) & (rows < n) & (cols >= 0) & (cols < n)  # [4, k, k+4]
    choice = pick_legal(u_line, jnp.all(on_board[..., 2:k + 2], -1).reshape(4 * k))
    gap = choice % k
    cells = jnp.where(on_board, rows * n + cols, a).reshape(4 * k, k + 4)[choice]  # a: off
    on_board = cells < a
    idx = jnp.arange(k + 4)
    outer = (idx == 0) | (idx == k + 3)
    flank = (idx == 1) | (idx == k + 2)
    four = ~outer & ~flank & (idx != gap + 2)  # the k-1 attacker stones
    # With the gap at one end, the far flank (beyond the stones) would complete a five too
    # if empty (an open four), unless an attacker stone on the outer cell after it makes
    # that an overline (exact5). An outer cell holds an attacker stone only there:
    # elsewhere one could make a second four with an empty flank and the line's stones.
    far_flank = ((gap == 0) & (idx == k + 2)) | ((gap == k - 1) & (idx == 1))
    far_outer = ((gap == 0) & (idx == k + 3)) | ((gap == k - 1) & (idx == 0))
    outer_attacker = far_outer & on_board & (end_u < 0.5)
    overline = _exact_for(config, attacker) & jnp.any(outer_attacker)
    flank_defender = flank & ((end_u < 0.5) | (far_flank & ~complete & ~overline))
    current = flat[jnp.minimum(cells, a - 1)]
    values = jnp.select([four, flank_defender, outer_attacker, outer & (current != attacker)],
                        [attacker, defender, attacker, current], 0).astype(jnp.int8)
    flat = flat.at[cells].set(values, mode="drop")
    protected = jnp.zeros((a,), bool).at[cells].set(True, mode="drop")
    four_cells = jnp.zeros((a,), bool).at[cells].set(four, mode="drop")

    # Balance the counts: black - white must be 0 (black to move) or 1 (white to move).
    excess = _count(flat, BLACK) - _count(flat, WHITE) - (mover == WHITE)
    over = jnp.where(excess > 0, BLACK, WHITE).astype(jnp.int8)
    need = jnp.abs(excess)
    drop = _random_subset(drop_u, (flat == over) & ~protected, need)
    flat = jnp.where(drop, 0, flat).astype(jnp.int8)
    add = _random_subset(add_u, _near(flat.reshape(n, n)).reshape(a) & ~protected,
                         need - jnp.sum(drop))
    flat = jnp.where(add, -over, flat).astype(jnp.int8)

    last = jnp.stack([_random_stone(u_last_b, flat == BLACK),
                      _random_stone(u_last_w, flat == WHITE)])
    attacker_slot = (attacker == WHITE).astype(jnp.int32)
    last = jnp.where(~complete & (jnp.arange(2) == attacker_slot),
                     _random_stone(u_last_four, four_cells & (flat == attacker)), last)

    # The check, on the final position.
    board = flat.reshape(n, n)
    empty = board == 0
    mover_line = _on_winning_line(board, mover, config)
    opp_line = _on_winning_line(board, -mover, config)
    won = jnp.any((board == mover) & mover_line) | jnp.any((board == -mover) & opp_line)
    mover_wins, opp_wins = empty & mover_line, empty & opp_line
    num_mover, num_opp = jnp.sum(mover_wins), jnp.sum(opp_wins)
    balanced = _count(flat, BLACK) - _count(flat, WHITE) == (mover == WHITE)
    tactic = jnp.where(complete, num_mover >= 1, (num_mover == 0) & (num_opp == 1))
    if config.rule == "renju":  # black cannot block a four on its forbidden point
        from gomoku_jax.games.gomoku.renju import forbidden_points

        tactic = tactic & ~(~complete & (mover == BLACK)
                            & jnp.any(opp_wins & forbidden_points(board)))
    valid = ~won & balanced & tactic
    target = jnp.where(complete, mover_wins, opp_wins).reshape(a).astype(jnp.float32)
    policy = jnp.where(valid, target / jnp.maximum(jnp.sum(target), 1.0), 0.0)

    state = State(
        board=board,
        color=mover,
        black_player=(u_player < 0.5).astype(jnp.int32),
        last_moves=last.astype(jnp.int32),
        move_count=jnp.sum(flat != 0).astype(jnp.int32),
        winner=jnp.int8(0),
        rewards=jnp.zeros((2,), jnp.float32),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
        config=config,
    )
    outcome = complete.astype(jnp.float32)
    return Examples(state=state, policy=policy, value=outcome, value_weight=outcome,
                    weight=valid.astype(jnp.float32))


def _exact_for(config: GameConfig, colour: jax.Array) -> jax.Array:
    """bool[]: an overline does not win for `colour` under the rule."""
    if config.rule == "renju":
        return colour == BLACK
    return jnp.bool_(config.rule in EXACT_RULES)


def _on_winning_line(board: jax.Array, colour: jax.Array, config: GameConfig) -> jax.Array:
    """bool[N, N]: a stone of `colour` on the cell (whatever it holds now) is part of a
    winning line: on an empty cell, the move wins; on a `colour` stone, the line exists.
    Any rule (`rules.wins_through` on every cell; freestyle and exact5 on the line planes)."""
    if config.rule not in ("freestyle", "exact5"):
        n = config.board_size
        flat = board.reshape(n * n)
        cells = jnp.arange(n * n, dtype=jnp.int32)
        return jax.vmap(lambda c: rules.wins_through(flat.at[c].set(colour), c, colour,
                                                     config))(cells).reshape(n, n)
    k, exact = config.win_length, config.rule == "exact5"
    reach = k if exact else k - 1  # exact5 looks one cell further, to see an overline
    own = line_planes(board, reach) == colour  # [2 reach + 1, 4, N, N]
    run = (1 + run_length([own[reach + o] for o in range(1, reach + 1)])
           + run_length([own[reach - o] for o in range(1, reach + 1)]))
    return jnp.any((run == k) if exact else (run >= k), axis=0)


def _near(board: jax.Array) -> jax.Array:
    """bool[N, N]: empty cells within Chebyshev distance 2 of a stone (all, on an empty board)."""
    return proximity_mask(board, _NEAR) >= _NEAR_WEIGHT


def _count(flat: jax.Array, colour: int) -> jax.Array:
    return jnp.sum(flat == colour).astype(jnp.int32)


def _random_subset(u: jax.Array, mask: jax.Array, size: jax.Array) -> jax.Array:
    """bool like `mask`: min(size, count) of its True cells, uniformly at random given
    `u`, float32 uniforms of mask's shape."""
    score = jnp.where(mask, u, 2.0)
    rank = jnp.argsort(jnp.argsort(score))
    return mask & (rank < size)


def _random_stone(u: jax.Array, mask: jax.Array) -> jax.Array:
    """int32[]: the True cell of `mask` at quantile `u` (uniform), or -1 if it has none."""
    return jnp.where(jnp.any(mask), pick_legal(u, mask), -1).astype(jnp.int32)
