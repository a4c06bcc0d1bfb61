"""Every rule's win condition (`rules.step`, `rules.wins_through`,
`positions.winning_colours`) against the pure-Python reference written from the rules
(`rules_reference.py`): random games and random dense positions on small boards, plus the
hand-made cases each rule is about (caro's blocked ends and the edge, exact five's overline,
renju's colours and forbidden points).

One compiled `play` (conftest) and one compiled all-cells `wins_through` per config.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import rules_reference as ref
from conftest import compiled, play_moves
from hypothesis import given, settings
from hypothesis import strategies as st

import gomoku_jax
from gomoku_jax.games.gomoku import positions, rules
from gomoku_jax.games.gomoku.state import BLACK, WHITE

# Small boards, one per rule (renju needs k = 5 and a board where its shapes fit).
CONFIGS = {
    "freestyle": (7, 4), "exact5": (8, 4), "caro": (7, 4), "caro_exact5": (8, 4),
    "renju": (9, 5),
}


def env_of(rule: str, n: int | None = None, k: int | None = None):
    dn, dk = CONFIGS[rule]
    return gomoku_jax.make("gomoku", board_size=n or dn, win_length=k or dk, rule=rule)


mask_of = jax.jit(lambda state: state.legal_action_mask)  # one compile per config


def renju_forbidden():
    """`forbidden(board, r, c)` from the renju reference (pure Python, full recursion)."""
    import renju_reference

    return lambda board, r, c: renju_reference.forbidden(board, (r, c))


@functools.lru_cache(maxsize=None)
def all_cells_wins(env):
    """jit: (board int8[N, N], colour) -> bool[N*N]: `wins_through` after a `colour` stone
    on each cell (whatever it held)."""
    cfg = env.config
    a = cfg.num_actions

    @jax.jit
    def f(board, colour):
        flat = board.reshape(a)
        return jax.vmap(lambda c: rules.wins_through(flat.at[c].set(colour), c, colour, cfg))(
            jnp.arange(a, dtype=jnp.int32))

    return f


def random_games(rng: np.random.Generator, n: int, count: int) -> np.ndarray:
    """int32[count, n*n + 2]: each game a random order of the cells, with now and then a
    repeated cell (an illegal move) or an off-board action."""
    games = np.stack([rng.permutation(n * n) for _ in range(count)]).astype(np.int32)
    extra = np.full((count, 2), -1, np.int32)
    games = np.concatenate([games, extra], axis=1)
    for g in range(count):
        if rng.random() < 0.3:  # an illegal move somewhere
            t = rng.integers(1, n * n)
            games[g, t] = games[g, rng.integers(0, t)] if rng.random() < 0.8 else n * n + 3
    return games


def check_game(actions, trajectory, g: int, n: int, k: int, rule: str, forbidden=None):
    board = [[0] * n for _ in range(n)]
    colour, over = BLACK, False
    for t, action in enumerate(actions):
        term = bool(trajectory.terminated[t, g])
        winner = int(trajectory.winner[t, g])
        if over:
            assert term
            continue
        outcome = ref.step_outcome(board, colour, int(action), k, rule, forbidden)
        expected_winner = {"win": colour, "illegal": -colour}.get(outcome, 0)
        assert term == (outcome != "play"), (t, outcome, actions[:t + 1])
        assert winner == expected_winner, (t, outcome, actions[:t + 1])
        rewards = np.asarray(trajectory.rewards[t, g])
        black_id = 0  # conftest's play: black_player 0
        assert rewards[black_id] == expected_winner and rewards[1 - black_id] == -expected_winner
        if outcome in ("play", "win", "draw"):
            r, c = divmod(int(action), n)
            board[r][c] = colour
        over = outcome != "play"
        colour = -colour


@pytest.mark.parametrize("rule", ["freestyle", "exact5", "caro", "caro_exact5", "renju"])
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_random_games_match_the_reference(rule, seed):
    forbidden = renju_forbidden() if rule == "renju" else None
    env = env_of(rule)
    n, k = env.config.board_size, env.config.win_length
    actions = random_games(np.random.default_rng(seed), n, 16)
    trajectory = jax.device_get(compiled(env).play(jnp.asarray(actions)))
    for g in range(actions.shape[0]):
        check_game(actions[g], trajectory, g, n, k, rule, forbidden)


@pytest.mark.parametrize("rule", ["freestyle", "exact5", "caro", "caro_exact5", "renju"])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), density=st.floats(0.2, 0.95))
def test_wins_through_matches_the_reference_on_dense_positions(rule, seed, density):
    env = env_of(rule)
    n, k = env.config.board_size, env.config.win_length
    rng = np.random.default_rng(seed)
    board = np.where(rng.random((n, n)) < density, rng.choice([BLACK, WHITE], (n, n)), 0)
    f = all_cells_wins(env)
    for colour in (BLACK, WHITE):
        got = np.asarray(f(jnp.asarray(board, jnp.int8), jnp.int8(colour)))
        for cell in range(n * n):
            r, c = divmod(cell, n)
            want = ref.wins_at(ref.place(board.tolist(), r, c, colour), r, c, k, rule)
            assert got[cell] == want, (rule, colour, (r, c), board.tolist())
    # The host-side full-board scan that from_board and pbrain use.
    assert positions.winning_colours(board, env.config) == ref.winners(board.tolist(), k, rule)


# ------------------------------------------------------------------ hand-made cases

def line_board(n: int, row: str, r: int = 3) -> list[list[int]]:
    """A board with `row` (x black, o white, . empty) on row r from column 0."""
    board = [[0] * n for _ in range(n)]
    for c, ch in enumerate(row):
        board[r][c] = {"x": BLACK, "o": WHITE, ".": 0}[ch]
    return board


CASES = [  # (rule, row before the move, column of black's move, black wins)
    ("caro", "ox.xxo", 2, False),     # blocked at both ends by white
    ("caro", "ox.xx.", 2, True),      # one end open
    ("caro", "x.xxo", 1, True),       # the edge is not a block
    ("caro", "x.xx", 1, True),        # edge at one end, open at the other (7x7: col 4 empty)
    ("caro", "oxx.xxo", 3, False),    # a blocked overline
    ("caro", "oxx.xx.", 3, True),     # an open overline
    ("caro_exact5", "oxx.xx.", 3, False),  # overline: never under exact
    ("caro_exact5", ".x.xx.", 2, True),
    ("caro_exact5", "ox.xxo", 2, False),
    ("freestyle", "ox.xxo", 2, True),  # freestyle ignores the blocks
    ("exact5", "ox.xxo", 2, True),
]


@pytest.mark.parametrize("rule,row,col,wins", CASES)
def test_caro_blocked_ends_and_the_edge(rule, row, col, wins):
    env = env_of(rule, n=8, k=4)
    board = line_board(8, row)
    assert ref.wins_at(ref.place(board, 3, col, BLACK), 3, col, 4, rule) == wins
    got = all_cells_wins(env)(jnp.asarray(board, jnp.int8), jnp.int8(BLACK))
    assert bool(got[3 * 8 + col]) == wins
    # White's stones play the same role for white with the colours swapped.
    flipped = [[-v for v in r] for r in board]
    got = all_cells_wins(env)(jnp.asarray(flipped, jnp.int8), jnp.int8(WHITE))
    assert bool(got[3 * 8 + col]) == wins


def test_caro_game_goes_on_after_a_blocked_five():
    env = env_of("caro", n=7, k=4)
    # White o at (0,0) and (0,5); black fills (0,1..4) between them: blocked, no win.
    black = [(0, 1), (0, 2), (0, 3), (0, 4), (6, 6)]
    white = [(0, 0), (0, 5), (3, 0), (6, 0)]
    moves = [m for pair in zip(black, white) for m in pair] + [black[-1]]
    states = play_moves(env, [r * 7 + c for r, c in moves])
    # Black's 4th stone on row 0 makes a four of k = 4 blocked at both ends: play goes on.
    assert not any(bool(s.terminated) for s in states)


def test_renju_colours_overline_and_forbidden_points():
    forbidden = renju_forbidden()
    env = env_of("renju")  # 9x9
    n = 9
    # Black overline: xxx.xx on row 4 (black to move at col 3) does not win for black...
    board = line_board(n, "xxx.xx", 4)
    blacks = sum(v == BLACK for row in board for v in row)
    board[8][8], board[8][6], board[6][8], board[8][0], board[0][8] = -1, -1, -1, -1, -1
    assert blacks == 5
    ref_out = ref.step_outcome(board, BLACK, 4 * n + 3, 5, "renju", forbidden)
    state = env.from_board(np.array(board), BLACK)
    after = compiled(env).step(state, jnp.int32(4 * n + 3))
    assert ref_out == "illegal"  # an overline that makes no five is a forbidden point
    assert bool(after.terminated) and int(after.winner) == WHITE
    assert not bool(mask_of(state)[4 * n + 3])
    # ...while the same shape of white's stones wins for white.
    flipped = [[-v for v in row] for row in board]
    flipped[8][7] = BLACK  # one more black stone: white to move
    state = env.from_board(np.array(flipped), WHITE)
    after = compiled(env).step(state, jnp.int32(4 * n + 3))
    assert bool(after.terminated) and int(after.winner) == WHITE
    assert bool(mask_of(state)[4 * n + 3])


def test_renju_mask_falls_back_to_the_empty_cells():
    from gomoku_jax.games.gomoku.renju import forbidden_points

    env = env_of("renju")
    rng = np.random.default_rng(0)
    # Dense random boards: wherever every empty cell is forbidden for black, the mask is
    # the empty cells; elsewhere the empty cells that are not forbidden.
    fp = jax.jit(forbidden_points)
    boards = [np.where(rng.random((9, 9)) < 0.8, rng.choice([BLACK, WHITE], (9, 9)), 0)
              for _ in range(30)] + [only_an_overline_point_left()]
    seen = fallback = 0
    for board in boards:
        board = np.asarray(board, np.int8)
        state = rules.initial_state(env.config, 0).replace(board=jnp.asarray(board))
        forb = np.asarray(fp(jnp.asarray(board))).reshape(-1)
        empty = board.reshape(-1) == 0
        mask = np.asarray(mask_of(state))
        allowed = empty & ~forb
        np.testing.assert_array_equal(mask, allowed if allowed.any() else empty)
        np.testing.assert_array_equal(np.asarray(mask_of(state.replace(color=jnp.int8(WHITE)))),
                                      empty)
        seen += bool(forb.any())
        fallback += not allowed.any()
    assert seen and fallback  # the boards did exercise forbidden points and the fallback


def only_an_overline_point_left() -> list[list[int]]:
    """A full 9x9 board (no four in a row of either colour) but for (4, 3), where black's
    xxx.xx on row 4 would make an overline: black's only empty cell is forbidden."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        board = [[0] * 9 for _ in range(9)]
        for c, v in enumerate([1, 1, 1, 0, 1, 1]):
            board[4][c] = v
        ok = True
        for r in range(9):
            for c in range(9):
                if board[r][c] or (r, c) == (4, 3) or (r == 4 and c < 6):
                    continue
                for v in rng.permutation([BLACK, WHITE]):
                    board[r][c] = int(v)
                    if all(ref.maximal_run(board, r, c, dr, dc)[0] < 4 for dr, dc in ref.LINES):
                        break
                else:
                    ok = False
        if ok:
            return board
    raise AssertionError("no filler found")


def test_renju_forbidden_points_carry_no_threat_for_black():
    from gomoku_jax.games.gomoku.features.cell_values import cell_values
    from gomoku_jax.games.gomoku.features.patterns import FOUR, NONE, threats

    # Black x x x on row 4 and on column 4 meeting at (4, 4): a double four there,
    # forbidden; white's stones at the outer ends.
    board = np.zeros((9, 9), np.int8)
    board[4, 1:4] = BLACK
    board[1:4, 4] = BLACK
    board[4, 0] = board[0, 4] = WHITE

    @jax.jit
    def f(b):
        return (threats(b, BLACK, 5, "renju"), threats(b, BLACK, 5, "exact5"),
                threats(b, WHITE, 5, "renju"), threats(b, WHITE, 5, "freestyle"),
                cell_values(b, BLACK, 5, "renju").value, cell_values(b, BLACK, 5, "exact5").value)

    black, exact, white, free, value, exact_value = map(np.asarray, f(jnp.asarray(board)))
    assert sorted(exact[4, 4].tolist()) == [NONE, NONE, FOUR, FOUR]  # two fours: forbidden
    assert (black[4, 4] == NONE).all() and value[4, 4] == 0 < exact_value[4, 4]
    np.testing.assert_array_equal(white, free)  # white plays freestyle
    other = np.ones((9, 9), bool)
    other[4, 4] = False
    np.testing.assert_array_equal(black[other], exact[other])
