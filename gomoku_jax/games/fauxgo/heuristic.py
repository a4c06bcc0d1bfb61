"""Seed 004's Faux Go AI ("Simply GO") as pure functions of one position: hard vetoes, nine
weighted scores, and a choice among the moves within a margin of the best.

A is the side to move, O the opponent; S the position, and S_p the position after A places a
stone on p (the rules' resolution included). Exits, regions and groups are defined in
`regions.py`. Where the seed leaves a detail open, the choice made here is written down:

Vetoes (a legal placement p is rejected before scoring):
  1. inside O's enclosure: the rules already make it illegal;
  2. one move from encirclement: p's stone is lost at once (a self-sealing move), or O placing
     on some gap of p's group in S_p (an empty 4-neighbour of the group, outside A's
     enclosures) would capture A stones;
  3. danger zone, in S_p: E = exits of p's region, R = the share of the cells 4-adjacent to
     p's group that are O stones or O enclosures, C = the critical gaps of p's region (empty
     unowned cells of the region next to an O stone that are on the edge, or that O could
     fill to cut p from every exit). Danger when E = 0; E <= `danger_few_exits` (2) and
     R >= `danger_few_share` (0.6); or E <= `danger_some_exits` (4), R >=
     `danger_some_share` (0.4) and C >= E.

Scores of p (the seed's components, each multiplied by its weight):
  1. position (1x): 1 - d / ((N-1)/2), d the Chebyshev distance from the centre (1 at the
     centre, 0 on the edge);
  2. liberties (2x): 5 per 4-neighbour of p that is empty and not O's enclosure;
  3. connection (3x): 10 per A stone 4-adjacent to p, 2 per A stone at Manhattan distance 2;
  4. territory (5x): 30 x (A stones / all stones) in the 5x5 square around p (0 if none);
  5. capture (10x): 50 per stone captured, +200 if the move makes a new A enclosure, +5 per
     cell A newly owns;
  6. encirclement progress (15x): for each O group, e0 = its region's exits in S and e1 in
     S_p (0 once captured): if e1 < e0, 30 + 10 (e0 - e1) + (5 if e1 <= 3);
  7. encirclement block (30x): for each endangered A group (exits <= 3 and R >= 0.5 in S), if
     p is 4-adjacent to it and its exits grow in S_p to e1: 30 + 5 e1 (counted per group, not
     per stone);
  8. urgent defence (50x): for each critical A group (exits <= 2): +50 if p is 8-adjacent to
     it, +80 if p is a gap of it (4-adjacent), +100 if its exits grow in S_p;
  9. capture blocking (100x): if O placing on p in S would capture k > 0 A stones and p is
     4-adjacent to an A stone: 150 + 30 k.
Placing a stone never adds an empty cell, so a group's exits grow only when the move captures.
An edge stone takes one exit from every O region it lies in, so component 6 pays for edge
moves from the first move on: sealing the edge is how Faux Go captures. (Capping the exit
count at 5, as the seed's "5+ exits: safe" might suggest, cut the score against random on
9x9 from 83% to 43%.)

Select: uniformly among the unvetoed placements scoring within `select_margin` (2) of the
best; when every placement is vetoed (or none is legal) the AI passes.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from gomoku_jax import configs
from gomoku_jax.configs import FiniteFloat, NonNegativeFloat, NonNegativeInt, UnitFloat
from gomoku_jax.games.fauxgo import regions, rules
from gomoku_jax.games.fauxgo.state import EMPTY, State

COMPONENTS = ("position", "liberties", "connection", "territory", "capture", "progress",
              "block", "urgent", "capture_block")


@dataclasses.dataclass(frozen=True)
class FauxGoHeuristicConfig:
    """Every weight and threshold of seed 004's AI; the defaults are the seed's values.

    `<component>_weight` multiplies a component (`COMPONENTS`); the other fields are the
    points and thresholds inside the components and vetoes (see the module doc).
    """

    position_weight: FiniteFloat = 1.0
    liberties_weight: FiniteFloat = 2.0
    connection_weight: FiniteFloat = 3.0
    territory_weight: FiniteFloat = 5.0
    capture_weight: FiniteFloat = 10.0
    progress_weight: FiniteFloat = 15.0
    block_weight: FiniteFloat = 30.0
    urgent_weight: FiniteFloat = 50.0
    capture_block_weight: FiniteFloat = 100.0

    liberty_points: FiniteFloat = 5.0
    adjacent_friend_points: FiniteFloat = 10.0
    nearby_friend_points: FiniteFloat = 2.0
    territory_radius: NonNegativeInt = 2
    territory_points: FiniteFloat = 30.0
    capture_stone_points: FiniteFloat = 50.0
    enclosure_bonus: FiniteFloat = 200.0
    enclosure_cell_points: FiniteFloat = 5.0
    progress_points: FiniteFloat = 30.0
    progress_exit_points: FiniteFloat = 10.0
    progress_close_points: FiniteFloat = 5.0
    progress_close_exits: NonNegativeInt = 3
    endangered_exits: NonNegativeInt = 3
    endangered_share: UnitFloat = 0.5
    block_points: FiniteFloat = 30.0
    block_exit_points: FiniteFloat = 5.0
    critical_exits: NonNegativeInt = 2
    urgent_adjacent_points: FiniteFloat = 50.0
    urgent_gap_points: FiniteFloat = 80.0
    urgent_escape_points: FiniteFloat = 100.0
    capture_block_points: FiniteFloat = 150.0
    capture_block_stone_points: FiniteFloat = 30.0

    veto_one_move: bool = True
    veto_danger: bool = True
    danger_few_exits: NonNegativeInt = 2
    danger_few_share: UnitFloat = 0.6
    danger_some_exits: NonNegativeInt = 4
    danger_some_share: UnitFloat = 0.4

    select_margin: NonNegativeFloat = 2.0

    def __post_init__(self):
        configs.validate(self)  # the agent's fields too, where it is an agent's base

    @property
    def weights(self) -> tuple[float, ...]:
        """The component weights, in `COMPONENTS` order."""
        return tuple(getattr(self, f"{name}_weight") for name in COMPONENTS)


class MoveAnalysis(NamedTuple):
    """What the AI sees of each cell p as A's next move (arrays over the N*N cells).

    placeable: bool[N*N], legal placements; one_move: bool[N*N], veto 2; danger: bool[N*N],
    veto 3; components: float32[9, N*N], the unweighted scores in `COMPONENTS` order.
    """

    placeable: jax.Array
    one_move: jax.Array
    danger: jax.Array
    components: jax.Array


def _bits_to_cells(bits: jax.Array, n: int) -> jax.Array:
    """int32[..., N] bitboards -> bool[..., N*N]."""
    cells = rules.from_bits(bits, n)
    return cells.reshape(*cells.shape[:-2], n * n)


def _spread8(x: jax.Array) -> jax.Array:
    """int32[N]: the cells of `x` and their 8-neighbours (unmasked above bit N-1)."""
    return rules.spread_rows(x | (x << 1) | (x >> 1))


class _Sides(NamedTuple):
    """A position as bitboards (int32[..., N]) from A's side: A's stones, O's stones, A's
    enclosures, O's enclosures."""

    mine: jax.Array
    theirs: jax.Array
    my_land: jax.Array
    their_land: jax.Array

    @classmethod
    def of(cls, board: jax.Array, owner: jax.Array, a: jax.Array) -> "_Sides":
        empty = board == EMPTY
        return cls(rules.to_bits(board == a), rules.to_bits(board == -a),
                   rules.to_bits(empty & (owner == a)), rules.to_bits(empty & (owner == -a)))

    def flipped(self) -> "_Sides":
        return _Sides(self.theirs, self.mine, self.their_land, self.my_land)

    def exits(self) -> jax.Array:
        """int32[N*N]: the exits of A's region holding each cell (0 outside A's regions)."""
        n = self.mine.shape[-1]
        full = (1 << n) - 1
        region = full & ~self.theirs & ~self.their_land
        empty = full & ~self.mine & ~self.theirs
        edge = rules.to_bits(rules.edge_mask(n))
        return regions.exits_per_cell(region, region & empty & edge).reshape(n * n)


def _vetoes(cfg: FauxGoHeuristicConfig, p_bit: jax.Array, after: _Sides, singles: jax.Array
            ) -> tuple[jax.Array, jax.Array]:
    """(one move from encirclement, danger zone) of the move p (`p_bit`), in S_p (`after`)."""
    n = p_bit.shape[-1]
    full = (1 << n) - 1
    edge = rules.to_bits(rules.edge_mask(n))
    mine, theirs, my_land, their_land = after
    empty = full & ~mine & ~theirs
    alive = jnp.any(mine & p_bit != 0)
    group = rules.flood_bits(p_bit, mine)
    around = full & rules.spread_bits(group) & ~group
    gaps = around & empty & ~my_land
    region = rules.flood_bits(p_bit, full & ~theirs & ~their_land)
    lost = regions.losses_after_each_reply(mine, theirs, their_land, edge, singles)
    captures_any = jnp.any(lost != 0, axis=-1)
    cuts_p = jnp.any(lost & p_bit != 0, axis=-1)
    one_move = ~alive | jnp.any(_bits_to_cells(gaps, n) & captures_any)

    exits = rules.popcount(region & empty & edge)
    share = rules.popcount(around & (theirs | their_land)) / jnp.maximum(
        rules.popcount(around), 1)
    fillable = region & empty & ~my_land & rules.spread_bits(theirs)
    critical = _bits_to_cells(fillable, n) & (_bits_to_cells(edge, n) | cuts_p)
    n_critical = jnp.sum(critical, dtype=jnp.int32)
    danger = ((exits == 0)
              | ((exits <= cfg.danger_few_exits) & (share >= cfg.danger_few_share))
              | ((exits <= cfg.danger_some_exits) & (share >= cfg.danger_some_share)
                 & (n_critical >= exits)))
    return one_move, danger


def _local_scores(cfg: FauxGoHeuristicConfig, board: jax.Array, owner: jax.Array,
                  a: jax.Array) -> list[jax.Array]:
    """Components 1-4 (position, liberties, connection, territory), float32[N*N] each."""
    n = board.shape[-1]
    cells = jnp.arange(n * n)
    half = (n - 1) / 2
    distance = jnp.maximum(jnp.abs(cells // n - half), jnp.abs(cells % n - half))
    mine = board == a
    open_cells = (board == EMPTY) & (owner != -a)
    square = regions.box(cfg.territory_radius)
    friends = regions.count_at_offsets(mine, square)
    everyone = regions.count_at_offsets(board != EMPTY, square)
    liberties = cfg.liberty_points * regions.count_at_offsets(open_cells, regions.ORTHOGONAL)
    connection = (cfg.adjacent_friend_points * regions.count_at_offsets(mine, regions.ORTHOGONAL)
                  + cfg.nearby_friend_points * regions.count_at_offsets(mine,
                                                                        regions.MANHATTAN_2))
    territory = cfg.territory_points * friends / jnp.maximum(everyone, 1)
    return [(half - distance) / half] + [x.reshape(n * n)
                                         for x in (liberties, connection, territory)]


def _group_scores(cfg: FauxGoHeuristicConfig, now: _Sides, flat_p: jax.Array,
                  exits_p: jax.Array, their_exits_p: jax.Array, singles: jax.Array,
                  a: jax.Array) -> list[jax.Array]:
    """Components 6-8 (progress, block, urgent), float32[N*N] each, from the exits of every
    group's region in S (`now`) and in each S_p (`exits_p`, `their_exits_p`: [p, cell];
    `flat_p`: the boards S_p, int8[p, N*N])."""
    n = now.mine.shape[-1]
    full = (1 << n) - 1
    # 6: O's groups, before and after
    _, their_heads = regions.group_heads(now.theirs, singles)
    e0 = now.flipped().exits()[None, :]
    e1 = jnp.where(flat_p == -a, their_exits_p, 0)
    closed = their_heads[None, :] & (e1 < e0)
    progress = jnp.sum(jnp.where(
        closed, cfg.progress_points + cfg.progress_exit_points * (e0 - e1)
        + cfg.progress_close_points * (e1 <= cfg.progress_close_exits), 0.0), axis=1)
    # 7, 8: A's groups in danger, [head, p] arrays
    groups, heads = regions.group_heads(now.mine, singles)
    around = full & rules.spread_bits(groups) & ~groups
    share = jax.vmap(rules.popcount)(around & (now.theirs | now.their_land)) / jnp.maximum(
        jax.vmap(rules.popcount)(around), 1)
    gap4 = _bits_to_cells(around, n)
    near8 = _bits_to_cells(full & _spread8(groups) & ~groups, n)
    g0 = now.exits()
    g1 = jnp.where(flat_p == a, exits_p, 0).T
    grows = g1 > g0[:, None]
    endangered = heads & (g0 <= cfg.endangered_exits) & (share >= cfg.endangered_share)
    block = jnp.sum(jnp.where(endangered[:, None] & gap4 & grows,
                              cfg.block_points + cfg.block_exit_points * g1, 0.0), axis=0)
    critical = heads & (g0 <= cfg.critical_exits)
    urgent = jnp.sum(jnp.where(
        critical[:, None],
        cfg.urgent_adjacent_points * near8 + cfg.urgent_gap_points * gap4
        + cfg.urgent_escape_points * grows, 0.0), axis=0)
    return [progress, block, urgent]


def analyse(config: FauxGoHeuristicConfig, state: State) -> MoveAnalysis:
    """The vetoes and component scores of every cell as the side to move's next stone."""
    cfg = config
    board, owner, a = state.board, state.owner, state.color
    n = board.shape[-1]
    n2 = n * n
    cells = jnp.arange(n2, dtype=jnp.int32)
    singles = jax.vmap(lambda c: rules.cell_bits(c, n))(cells)  # int32[N*N, N]
    now = _Sides.of(board, owner, a)
    placeable = ((board == EMPTY) & (owner != -a)).reshape(n2)

    def after(p):
        placed = board.at[p // n, p % n].set(a)
        cleared = owner.at[p // n, p % n].set(0)
        b, w, captured, _ = rules.resolve(placed, cleared, a)
        return b, w, captured

    boards_p, owners_p, captured_p = jax.vmap(after)(cells)  # S_p for every p
    after_p = jax.vmap(_Sides.of, in_axes=(0, 0, None))(boards_p, owners_p, a)
    one_move, danger = jax.vmap(lambda p, s: _vetoes(cfg, p, s, singles))(singles, after_p)

    # 5: the capture the move makes
    new_land = rules.to_bits(owners_p == a) & ~rules.to_bits(owner == a)
    new_cells = jax.vmap(rules.popcount)(new_land)
    capture = (cfg.capture_stone_points * captured_p + cfg.enclosure_bonus * (new_cells > 0)
               + cfg.enclosure_cell_points * new_cells)

    exits_p = jax.vmap(_Sides.exits)(after_p)
    their_exits_p = jax.vmap(lambda s: s.flipped().exits())(after_p)
    progress, block, urgent = _group_scores(cfg, now, boards_p.reshape(n2, n2), exits_p,
                                            their_exits_p, singles, a)

    # 9: O's capturing replies next to A's stones, blocked by playing there first
    edge = rules.to_bits(rules.edge_mask(n))
    k = jax.vmap(rules.popcount)(
        regions.losses_after_each_reply(now.mine, now.theirs, now.their_land, edge, singles))
    next_to_mine = regions.count_at_offsets(board == a, regions.ORTHOGONAL).reshape(n2) > 0
    threat = (k > 0) & (owner.reshape(n2) != a) & next_to_mine
    capture_block = jnp.where(
        threat, cfg.capture_block_points + cfg.capture_block_stone_points * k, 0.0)

    components = jnp.stack(_local_scores(cfg, board, owner, a) + [
        capture, progress, block, urgent, capture_block]).astype(jnp.float32)
    return MoveAnalysis(placeable, one_move & placeable, danger & placeable,
                        jnp.where(placeable, components, 0.0))


def choose(config: FauxGoHeuristicConfig, analysis: MoveAnalysis, key: jax.Array
           ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """(action int32[], policy float32[N*N + 1], total float32[N*N]): a uniform draw among the
    unvetoed placements within `select_margin` of the best total; the pass (action N*N) when
    none is left."""
    weights = jnp.asarray(config.weights, jnp.float32)
    total = jnp.tensordot(weights, analysis.components, axes=1)
    ok = analysis.placeable
    if config.veto_one_move:
        ok = ok & ~analysis.one_move
    if config.veto_danger:
        ok = ok & ~analysis.danger
    best = jnp.max(jnp.where(ok, total, -jnp.inf))
    top = jnp.append(ok & (total >= best - config.select_margin), ~jnp.any(ok))
    policy = top / jnp.sum(top)
    action = jax.random.choice(key, top.shape[0], p=policy).astype(jnp.int32)
    return action, policy.astype(jnp.float32), total
