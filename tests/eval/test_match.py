"""`play_match`: batched games between two agents, the first one to move at the start,
for any game.

Two deterministic agents (lowest / highest empty cell) make whole games predictable move by
move; random play checks the general invariants; connect_four shows the loop is generic.
One compiled match per agent pairing and start kind.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from conftest import EndCell

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.eval import play_match
from gomoku_jax.games.gomoku import winning_colours
from gomoku_jax.games.gomoku.state import BLACK, WHITE

N = 9
ENV = gomoku_jax.make("gomoku", board_size=N)
CFG = ENV.config
GAMES = 64
MATCH = jax.jit(play_match, static_argnums=(0, 1, 2, 4))


FIRST, LAST = EndCell(last=False), EndCell(last=True)
RANDOM = agents.make("random")


def batch_of(state, count: int):
    return jax.tree.map(lambda x: jnp.stack([x] * count), state)


def expected_board(black_cells, white_cells) -> np.ndarray:
    board = np.zeros(N * N, np.int8)
    board[list(black_cells)] = BLACK
    board[list(white_cells)] = WHITE
    return board.reshape(N, N)


@functools.lru_cache(maxsize=None)
def random_match(seed: int):
    """Finals of GAMES random-vs-random games from the empty board."""
    return jax.device_get(MATCH(ENV, RANDOM, RANDOM, jax.random.key(seed), GAMES))


def test_first_agent_moves_first_from_the_start():
    # `first_passes` as an array: the program of the test below (the default, a constant
    # False, is the swapped agents' and the random games')
    out = jax.device_get(MATCH(ENV, FIRST, LAST, jax.random.key(0), 4, None, None, None,
                               jnp.bool_(False)))
    finals = out.states
    # Black takes cells 0, 1, 2, ... and white 80, 79, ...: black's fifth stone wins.
    board = expected_board(range(5), range(80, 76, -1))
    for i in range(4):
        np.testing.assert_array_equal(finals.board[i], board)
    assert (finals.winner == BLACK).all() and finals.terminated.all()
    assert (finals.move_count == 9).all() and (out.plies == 9).all()
    # Returns by player id: the first agent's player won.
    rows = np.arange(4)
    assert (out.returns[rows, out.first_player] == 1).all()
    assert (out.returns[rows, 1 - out.first_player] == -1).all()
    assert (out.first_player == finals.black_player).all()


def test_swapping_the_agents_swaps_the_colours():
    finals = jax.device_get(MATCH(ENV, LAST, FIRST, jax.random.key(0), 4)).states
    board = expected_board(range(80, 75, -1), range(4))
    np.testing.assert_array_equal(finals.board, np.stack([board] * 4))
    assert (finals.winner == BLACK).all()


def test_when_the_first_agent_passes_its_first_turn_the_second_moves_first():
    """`first_passes`: the game LAST-vs-FIRST, played by the FIRST-vs-LAST program."""
    out = jax.device_get(MATCH(ENV, FIRST, LAST, jax.random.key(0), 4, None, None, None,
                               jnp.bool_(True)))
    board = expected_board(range(80, 75, -1), range(4))
    np.testing.assert_array_equal(out.states.board, np.stack([board] * 4))
    assert (out.states.move_count == 9).all() and (out.plies == 9).all()
    # `first` (FIRST) played white, and lost
    assert (out.first_player == 1 - out.states.black_player).all()
    rows = np.arange(4)
    assert (out.returns[rows, out.first_player] == -1).all()


def test_a_start_batch_with_white_to_move_lets_white_move_first():
    # One black stone in the centre; the first agent (LAST) plays white: 80, then black
    # (FIRST) 0, white 79, ... white's fifth stone (76..80) comes before black's.
    start = ENV.from_board(expected_board([40], []))
    assert int(start.color) == WHITE
    out = jax.device_get(MATCH(ENV, LAST, FIRST, jax.random.key(0), 4,
                               start=batch_of(start, 4)))
    board = expected_board([40, 0, 1, 2, 3], range(76, 81))
    np.testing.assert_array_equal(out.states.board, np.stack([board] * 4))
    assert (out.states.winner == WHITE).all() and out.states.terminated.all()
    assert (out.states.move_count == 10).all() and (out.plies == 9).all()
    assert (out.first_player == 1 - out.states.black_player).all()


def test_a_start_batch_with_black_to_move_continues_from_it():
    # The agents of the test above (one program): the first agent (LAST) plays black now,
    # 80, 79, ..., and its fifth stone (76..80) comes before white's (FIRST: 0, 1, ...).
    start = ENV.from_board(expected_board([40], [44]))
    finals = jax.device_get(MATCH(ENV, LAST, FIRST, jax.random.key(0), 4,
                                  start=batch_of(start, 4))).states
    board = expected_board([40, 80, 79, 78, 77, 76], [44, 0, 1, 2, 3])
    np.testing.assert_array_equal(finals.board, np.stack([board] * 4))
    assert (finals.winner == BLACK).all()


def test_random_games_all_end_with_a_winner_that_fits_the_board():
    out = random_match(1)
    finals = out.states
    assert finals.terminated.all() and finals.board.shape == (GAMES, N, N)
    for board, winner, count in zip(finals.board, finals.winner, finals.move_count):
        assert winning_colours(board, CFG) == ({int(winner)} if winner else set())
        if not winner:
            assert (board != 0).all()
        blacks, whites = int(np.sum(board == BLACK)), int(np.sum(board == WHITE))
        assert count == blacks + whites  # moves after the end changed nothing
        # Black moved first and the winner's stone came last (a full 9x9 board: black's).
        assert blacks - whites == (0 if winner == WHITE else 1)
    assert len(set(finals.winner.tolist())) >= 2  # both colours win some random games


def test_random_games_depend_on_the_key_only():
    a, c = random_match(1).states, random_match(2).states
    again = jax.device_get(MATCH(ENV, RANDOM, RANDOM, jax.random.key(1), GAMES)).states
    np.testing.assert_array_equal(a.board, again.board)
    np.testing.assert_array_equal(a.winner, again.winner)
    assert not np.array_equal(a.board, c.board)
    # Different games within one batch too.
    assert len({bd.tobytes() for bd in a.board}) == GAMES


def test_returns_follow_the_winner_and_the_loop_stops_when_every_game_is_over():
    out = random_match(1)
    winner_player = np.where(out.states.winner == BLACK, out.states.black_player,
                             1 - out.states.black_player)
    decided = out.states.winner != 0
    rows = np.arange(GAMES)
    assert (out.returns[rows[decided], winner_player[decided]] == 1).all()
    assert (out.returns[~decided] == 0).all()
    assert (out.plies == out.states.move_count).all()


def test_connect_four_games_run_to_the_end():
    env = gomoku_jax.make("pgx/connect_four")
    out = jax.device_get(MATCH(env, RANDOM, RANDOM, jax.random.key(0), 16))
    assert (out.states.terminated | out.states.truncated).all()
    assert (np.abs(out.returns.sum(-1)) < 1e-6).all() and (out.plies <= 42).all()
    assert (out.plies >= 7).all()  # four in a row needs at least 7 moves
