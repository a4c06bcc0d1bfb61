"""Region analysis for Faux Go's AI: component labels, exits per cell, neighbour counts, and
the stones an opponent reply would capture. Single-board functions; batch with `jax.vmap`.

Terms (the rules' regions, seen from colour C with opponent O):
  - C's *region mask*: the cells holding neither an O stone nor an O enclosure.
  - *exits* of a region: its empty edge cells (an escaping region has at least one).
  - a *group*: a 4-connected set of stones of one colour.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gomoku_jax.games.fauxgo.rules import flood_bits, from_bits, popcount


def exits_per_cell(region: jax.Array, exits: jax.Array) -> jax.Array:
    """int32[N, N]: for each cell of `region`, how many cells of `exits` its 4-connected
    component (inside `region`) holds; 0 outside `region` and in components without exits.

    Row bitboards in (`region`, `exits` int32[N], `exits` within `region`): one flood per
    component that holds an exit (seeded at its lowest exit cell), so the loop runs once
    per escaping region, not once per cell.
    """
    n = region.shape[-1]

    def body(carry):
        remaining, counts = carry
        row = jnp.argmax(remaining != 0)
        word = remaining[row]
        seed = jnp.zeros_like(remaining).at[row].set(word & -word)
        component = flood_bits(seed, region)
        counts = jnp.where(from_bits(component, n), popcount(component & exits), counts)
        return remaining & ~component, counts

    _, counts = jax.lax.while_loop(lambda c: jnp.any(c[0] != 0), body,
                                   (exits & region, jnp.zeros((n, n), jnp.int32)))
    return counts


def group_heads(stones: jax.Array, singles: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(groups int32[N*N, N], heads bool[N*N]): the group (bitboard) of each cell's stone,
    empty where `stones` (int32[N]) has none, and whether the cell is its group's lowest
    cell, so each group is counted once. `singles`: one bitboard per cell."""
    n = stones.shape[-1]
    groups = jax.vmap(lambda s: flood_bits(s, stones))(singles)
    cells = from_bits(groups, n).reshape(n * n, n * n)
    index = jnp.arange(n * n)
    return groups, cells[index, index] & (jnp.argmax(cells, axis=1) == index)


def count_at_offsets(cells: jax.Array, offsets) -> jax.Array:
    """int32[N, N]: at each cell, how many of the cells at `offsets` ((dr, dc) pairs, static)
    from it are on the board and in `cells` (bool[N, N])."""
    n = cells.shape[-1]
    reach = max(max(abs(dr), abs(dc)) for dr, dc in offsets)
    pad = jnp.pad(cells.astype(jnp.int32), reach)
    return sum(pad[reach + dr:reach + dr + n, reach + dc:reach + dc + n] for dr, dc in offsets)


ORTHOGONAL = ((-1, 0), (1, 0), (0, -1), (0, 1))
MANHATTAN_2 = ((-2, 0), (2, 0), (0, -2), (0, 2), (-1, -1), (-1, 1), (1, -1), (1, 1))


def box(radius: int) -> tuple[tuple[int, int], ...]:
    """The offsets of the (2 radius + 1)^2 square around a cell, the cell included."""
    return tuple((dr, dc) for dr in range(-radius, radius + 1)
                 for dc in range(-radius, radius + 1))


def losses_after_each_reply(mine: jax.Array, theirs: jax.Array, their_land: jax.Array,
                            edge: jax.Array, singles: jax.Array) -> jax.Array:
    """int32[N*N, N]: for each cell g, the stones of `mine` the opponent captures by placing
    a stone on g (row bitboards; meaningful where g is empty and not in my enclosure).

    The opponent's placement seals every region of mine that no longer reaches an empty
    edge cell (the rules' first resolution step); the stones in those regions are lost.

    Args:
      mine, theirs, their_land: int32[N] bitboards of my stones, the opponent's stones and the
        opponent's enclosures (empty cells it owns).
      edge: int32[N], the edge cells; singles: int32[N*N, N], one bitboard per cell.
    """
    n = mine.shape[-1]
    full = (1 << n) - 1
    region = full & ~theirs & ~their_land
    empty = full & ~mine & ~theirs

    def one(g):
        rest = region & ~g
        return mine & ~flood_bits(rest & empty & edge, rest)

    return jax.vmap(one)(singles)
