"""The heuristic player (`gomoku_jax.agents.heuristic`): win, else block, else the best mix.

Positions are generated in NumPy (a planted four plus random stones of both colours) and
checked with an independent window count; the agent runs once per batch, jitted and vmapped,
through one compiled program per agent config (all batches are padded to BATCH).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.eval import play_match
from gomoku_jax.games.gomoku import rules, winning_colours
from gomoku_jax.games.gomoku.state import BLACK, WHITE

N = 9
ENV = gomoku_jax.make("gomoku", board_size=N)
CFG = ENV.config
BATCH = 256
HEURISTIC = agents.make("heuristic").bind(ENV)
RANDOM = agents.make("random").bind(ENV)


def _five_windows(n: int, k: int = 5) -> np.ndarray:
    """int[W, k]: the flat cells of every k-window along the 4 line directions."""
    out = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for r in range(n):
            for c in range(n):
                cells = [(r + i * dr, c + i * dc) for i in range(k)]
                if all(0 <= rr < n and 0 <= cc < n for rr, cc in cells):
                    out.append([rr * n + cc for rr, cc in cells])
    return np.asarray(out)


WINDOWS = _five_windows(N)


def completion_cells(boards: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """bool[B, N*N]: the empty cells where a stone of `colours[b]` makes five in a row.

    Freestyle: exactly the empty cells of 5-windows holding four such stones and nothing else.
    """
    flat = boards.reshape(len(boards), -1)
    vals = flat[:, WINDOWS]  # [B, W, 5]
    own = vals == colours[:, None, None]
    empty = vals == 0
    hit = (own.sum(-1) == 4) & (empty.sum(-1) == 1)
    out = np.zeros(flat.shape, bool)
    b_idx, w_idx = np.nonzero(hit)
    out[b_idx, WINDOWS[w_idx][empty[b_idx, w_idx]]] = True
    return out


@functools.lru_cache(maxsize=None)
def batched_act(agent):
    """One jitted, vmapped `act` per agent config (shared by every test of this module)."""
    return jax.jit(jax.vmap(agent.act, in_axes=(None, None, 0, 0)))


def stack(states):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def run_act(agent, states: list, seed: int):
    """(actions, policies, values) as NumPy for a list of single states (padded to BATCH)."""
    n = len(states)
    assert n <= BATCH
    batch = stack(list(states) + [states[0]] * (BATCH - n))
    keys = jax.random.split(jax.random.key(seed), BATCH)
    actions, agent_state, info = batched_act(agent)(None, None, batch, keys)
    assert agent_state is None
    return (np.asarray(actions)[:n], np.asarray(info["policy"])[:n],
            np.asarray(info["value"])[:n])


def _fill(rng, board, mover, total, protected):
    """Add random stones (off `protected`) so that about `total` lie on the board and the
    stone counts make `mover` the side to move."""
    b, w = int(np.sum(board == BLACK)), int(np.sum(board == WHITE))
    if mover == BLACK:
        fb = fw = max(total // 2, b, w)
    else:
        fw = max(total // 2, w, b - 1)
        fb = fw + 1
    free = np.flatnonzero((board.reshape(-1) == 0) & ~protected)
    cells = rng.permutation(free)[: (fb - b) + (fw - w)]
    flat = board.reshape(-1)
    flat[cells[: fb - b]] = BLACK
    flat[cells[fb - b:]] = WHITE


def _plant_four(rng, board, colour, protected):
    """Four `colour` stones in a random free 5-window, its fifth cell left empty.
    Returns the empty cell, or None when the window drawn is not free."""
    window = WINDOWS[rng.integers(len(WINDOWS))]
    if protected[window].any():
        return None
    gap = window[rng.integers(5)]
    board.reshape(-1)[window] = colour
    board.reshape(-1)[gap] = 0
    protected[window] = True
    return gap


def generate(kind: str, count: int, seed: int):
    """`count` live positions as (boards int8[B, N, N], movers int[B], extra bool[B]).

    kind "win": the side to move has a planted four (so a five to complete); in the
      positions with extra=True the opponent has a planted four too.
    kind "block": the opponent has exactly one cell completing a five, the side to move
      none; in the positions with extra=True the side to move also has an open three.
    """
    rng = np.random.default_rng(seed)
    boards, movers, extras = [], [], []
    while len(boards) < count:
        mover = BLACK if len(boards) % 2 == 0 else WHITE
        extra = bool(rng.integers(2))
        board = np.zeros((N, N), np.int8)
        protected = np.zeros(N * N, bool)
        planted = _plant_four(rng, board, mover if kind == "win" else -mover, protected)
        if planted is None:
            continue
        if extra and kind == "win":
            if _plant_four(rng, board, -mover, protected) is None:
                continue
        if extra and kind == "block":  # an open three: _XXX_ in a free 5-window + 1
            window = WINDOWS[rng.integers(len(WINDOWS))]
            if protected[window].any():
                continue
            board.reshape(-1)[window[1:4]] = mover
            protected[window] = True
        _fill(rng, board, mover, int(rng.integers(10, 36)), protected)
        if winning_colours(board, CFG):
            continue
        own = completion_cells(board[None], np.array([mover]))[0]
        opp = completion_cells(board[None], np.array([-mover]))[0]
        if kind == "win" and not own[planted]:
            continue
        if kind == "block" and (own.any() or opp.sum() != 1):
            continue
        boards.append(board)
        movers.append(mover)
        extras.append(extra)
    return np.stack(boards), np.asarray(movers), np.asarray(extras)


def states_of(boards, movers):
    return [ENV.from_board(b, to_move=int(m)) for b, m in zip(boards, movers)]


@pytest.fixture(scope="module")
def win_positions():
    boards, movers, extras = generate("win", BATCH, seed=1)
    return boards, movers, extras, states_of(boards, movers)


@pytest.fixture(scope="module")
def block_positions():
    boards, movers, extras = generate("block", BATCH, seed=2)
    return boards, movers, extras, states_of(boards, movers)


def test_generated_positions_are_what_they_claim(win_positions, block_positions):
    boards, movers, extras, states = win_positions
    assert len(boards) >= 200 and set(movers.tolist()) == {BLACK, WHITE}
    assert np.asarray([s.color for s in states]).tolist() == movers.tolist()
    assert completion_cells(boards, movers).any(axis=1).all()
    both = completion_cells(boards, -movers).any(axis=1)
    assert both[extras].all() and extras.sum() >= 80  # many with a four on each side
    boards, movers, extras, states = block_positions
    assert len(boards) >= 200 and set(movers.tolist()) == {BLACK, WHITE}
    assert not completion_cells(boards, movers).any()
    assert (completion_cells(boards, -movers).sum(axis=1) == 1).all()
    assert extras.sum() >= 80
    assert not any(bool(s.terminated) for s in states)


def test_always_completes_an_available_five(win_positions):
    boards, movers, extras, states = win_positions
    actions, policy, value = run_act(HEURISTIC, states, seed=0)
    wins = completion_cells(boards, movers)
    for board, mover, action in zip(boards, movers, actions):
        after = board.copy().reshape(-1)
        assert after[action] == 0, "the heuristic played on an occupied cell"
        after[action] = mover
        assert mover in winning_colours(after.reshape(N, N), CFG)
    assert wins[np.arange(len(actions)), actions].all()
    # The policy is uniform over the winning cells, and nothing else.
    assert (policy[~wins] == 0).all()
    np.testing.assert_allclose(policy.sum(1), 1.0, atol=1e-5)
    np.testing.assert_allclose(policy[wins], np.repeat(1 / wins.sum(1), wins.sum(1)),
                               rtol=1e-5)
    np.testing.assert_array_equal(value, 1.0)  # a win on the board is worth +1


def test_always_blocks_a_lone_opponent_four(block_positions):
    boards, movers, extras, states = block_positions
    actions, policy, value = run_act(HEURISTIC, states, seed=0)
    block = np.argmax(completion_cells(boards, -movers), axis=1)
    np.testing.assert_array_equal(actions, block)
    np.testing.assert_array_equal(policy, np.eye(N * N, dtype=np.float32)[block])
    assert ((value > -1.0) & (value < 1.0)).all()  # one five to block: not yet lost


def test_same_key_same_move_and_forced_moves_ignore_the_key(block_positions):
    *_, states = block_positions
    a1, p1, v1 = run_act(HEURISTIC, states, seed=5)
    a2, p2, v2 = run_act(HEURISTIC, states, seed=5)
    a3, _, _ = run_act(HEURISTIC, states, seed=6)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(a1, a3)  # a single best move whatever the key


def test_ties_are_broken_at_random_with_the_key():
    empty = ENV.init(jax.random.key(0))
    actions, policy, value = run_act(HEURISTIC, [empty] * BATCH, seed=3)
    # Every cell ties on the empty board: uniform policy, first move varies with the key.
    np.testing.assert_allclose(policy, 1 / (N * N), rtol=1e-6)
    assert len(set(actions.tolist())) >= 50
    assert (value == 0).all()
    again, _, _ = run_act(HEURISTIC, [empty] * BATCH, seed=3)
    np.testing.assert_array_equal(actions, again)
    other, _, _ = run_act(HEURISTIC, [empty] * BATCH, seed=4)
    assert (actions != other).any()


def test_two_winning_cells_are_both_chosen_and_worth_plus_one():
    # Black: _XXXX_ on row 4 (cells (4,1) and (4,6) win); white stones far away.
    board = np.zeros((N, N), np.int8)
    board[4, 2:6] = BLACK
    board[0, 0] = board[0, 8] = board[8, 0] = board[8, 8] = WHITE
    state = ENV.from_board(board)
    actions, policy, value = run_act(HEURISTIC, [state] * BATCH, seed=7)
    assert set(actions.tolist()) == {4 * N + 1, 4 * N + 6}
    np.testing.assert_allclose(policy[:, [4 * N + 1, 4 * N + 6]], 0.5)
    np.testing.assert_array_equal(value, 1.0)


def test_an_open_four_to_block_is_worth_minus_one():
    # White (the opponent) has _WWWW_: two fives to block, black has none.
    board = np.zeros((N, N), np.int8)
    board[4, 2:6] = WHITE
    board[0, 0] = board[0, 8] = board[8, 0] = board[8, 8] = BLACK
    state = ENV.from_board(board)
    actions, _, value = run_act(HEURISTIC, [state], seed=0)
    assert actions[0] in (4 * N + 1, 4 * N + 6)
    assert value[0] == -1.0


def _three_each():
    """Black to move; black has _XXX_ on row 2, white _OOO_ on row 6."""
    board = np.zeros((N, N), np.int8)
    board[2, 2:5] = BLACK
    board[6, 2:5] = WHITE
    return ENV.from_board(board)


def test_attack_and_defence_weights_choose_between_extending_and_blocking():
    state = _three_each()
    extend, block = {2 * N + 1, 2 * N + 5}, {6 * N + 1, 6 * N + 5}
    default, _, _ = run_act(HEURISTIC, [state] * 64, seed=0)
    assert set(default.tolist()) == extend  # attack 1.0 > defence 0.9: make the open four
    defensive = agents.make("heuristic", attack=0.0, defence=1.0).bind(ENV)
    chosen, policy, _ = run_act(defensive, [state] * 64, seed=0)
    assert set(chosen.tolist()) == block  # only the opponent's threats count
    np.testing.assert_allclose(policy[:, sorted(block)], 0.5)


def test_the_heuristic_plays_gomoku_only():
    agent = agents.make("heuristic")
    assert agent.env is None and agent.games == ("gomoku",)
    assert agent.bind(ENV) == HEURISTIC and HEURISTIC.env == ENV
    with pytest.raises(ValueError, match="plays \\['gomoku'\\], not 'pgx/tic_tac_toe'"):
        agent.bind(gomoku_jax.make("pgx/tic_tac_toe"))


GAMES = 128  # per colour


@pytest.fixture(scope="module")
def heuristic_vs_random():
    """One match of 2 * GAMES games, the heuristic moving first in every one (one compiled
    program: the heuristic's compile is most of this module's time). The first GAMES start
    from the empty board, so the heuristic plays black; the others start after one
    uniformly random black move (the random player's first move, drawn here), so the
    heuristic plays white and the random player black from then on.

    Returns (outcome, heuristic_is_black bool[2 * GAMES]), as NumPy.
    """
    k_first, k_play = jax.random.split(jax.random.key(11))

    @jax.jit  # one program, not each operation's
    def starts(k_first):
        empty = jax.vmap(lambda _: rules.initial_state(CFG, 0))(jnp.arange(2 * GAMES))
        first = jax.random.randint(k_first, (GAMES,), 0, N * N)
        opened = jax.vmap(ENV.step)(jax.tree.map(lambda x: x[GAMES:], empty), first)
        return jax.tree.map(lambda a, b: jnp.concatenate([a[:GAMES], b]), empty, opened)

    start = starts(k_first)
    match = jax.jit(play_match, static_argnums=(0, 1, 2, 4))
    out = match(ENV, HEURISTIC, RANDOM, k_play, 2 * GAMES, start=start)
    return jax.device_get(out), np.arange(2 * GAMES) < GAMES


def test_heuristic_beats_random_in_95_percent_of_games(heuristic_vs_random):
    out, is_black = heuristic_vs_random
    winner = out.states.winner
    black_wins, white_wins = winner[is_black] == BLACK, winner[~is_black] == WHITE
    wins = int(np.sum(black_wins)) + int(np.sum(white_wins))
    games = len(winner)
    assert games >= 200 and len(black_wins) == len(white_wins) == GAMES
    print(f"heuristic vs random: {wins}/{games} = {wins / games:.3f}")
    assert wins / games >= 0.95
    # Each colour on its own too.
    assert np.mean(black_wins) >= 0.9
    assert np.mean(white_wins) >= 0.9


def test_heuristic_match_finals_are_consistent(heuristic_vs_random):
    out, is_black = heuristic_vs_random
    finals = out.states
    assert finals.terminated.all() and not finals.truncated.any()
    # The heuristic (the first agent) has black's player id where it plays black, and the
    # returns by player id are the outcome for that player's colour.
    games = np.arange(len(is_black))
    np.testing.assert_array_equal(
        out.first_player, np.where(is_black, finals.black_player, 1 - finals.black_player))
    np.testing.assert_array_equal(out.returns[games, finals.black_player], finals.winner)
    np.testing.assert_array_equal(out.returns.sum(axis=1), 0.0)
    np.testing.assert_array_equal(out.plies, finals.move_count - ~is_black)
    assert (finals.move_count[~is_black] >= 2).all()
    for board, winner in zip(finals.board, finals.winner):
        found = winning_colours(board, CFG)
        assert found == ({int(winner)} if winner else set())
        if not winner:
            assert (board != 0).all()  # a draw only on a full board
