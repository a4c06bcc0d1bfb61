"""A plug-in package for gomoku_jax, outside it: a game (tic-tac-toe), a search algorithm
(PUCT with a wider exploration) and an agent (the first legal move), each registered with
`gomoku_jax.plugins.register` when this module is imported."""

from __future__ import annotations

import dataclasses
from typing import Optional

import jax
import jax.numpy as jnp
from flax import struct

from gomoku_jax import plugins
from gomoku_jax.agents.base import Agent
from gomoku_jax.games.protocol import Env, GameSpec
from gomoku_jax.search import PUCT

# The eight lines of three on the 3x3 board (actions row * 3 + col).
LINES = jnp.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8],
                   [0, 4, 8], [2, 4, 6]], jnp.int32)


@dataclasses.dataclass(frozen=True)
class TicTacToeSpec(GameSpec):
    """Tic-tac-toe's config: no fields; the class attributes are its defaults for the
    layers above (what `compare` rates against, what plays it by default)."""

    id = "tictactoe"
    default_agent = "first_legal"
    references = ("random", "first_legal")


@struct.dataclass
class State:
    """board int8[9] (+1 the first mover's marks, -1 the other's, 0 empty); current_player
    int32[]; legal_action_mask bool[9]; rewards float32[2] (by player id); terminated,
    truncated bool[]; ply int32[]."""

    board: jax.Array
    current_player: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    ply: jax.Array


@plugins.register("game")  # under TicTacToeSpec.id
class TicTacToe(Env):
    """Tic-tac-toe on the game protocol: player 0 moves first, three in a row wins."""

    Spec = TicTacToeSpec

    @property
    def id(self) -> str:
        return TicTacToeSpec.id

    @property
    def version(self) -> str:
        return "1"

    @property
    def num_actions(self) -> int:
        return 9

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (3, 3, 2)  # the mover's marks, the opponent's

    def init(self, key: jax.Array) -> State:
        del key
        return State(board=jnp.zeros(9, jnp.int8), current_player=jnp.int32(0),
                     legal_action_mask=jnp.ones(9, bool), rewards=jnp.zeros(2, jnp.float32),
                     terminated=jnp.bool_(False), truncated=jnp.bool_(False),
                     ply=jnp.int32(0))

    def step(self, state: State, action: jax.Array, key: Optional[jax.Array] = None) -> State:
        action = jnp.asarray(action, jnp.int32)
        over = state.terminated | state.truncated
        legal = (action >= 0) & (action < 9) & state.legal_action_mask[jnp.clip(action, 0, 8)]
        mark = jnp.where(state.current_player == 0, 1, -1).astype(jnp.int8)
        board = jnp.where(legal, state.board.at[jnp.clip(action, 0, 8)].set(mark), state.board)
        won = jnp.any(jnp.all(board[LINES] == mark, axis=1))
        full = jnp.all(board != 0)
        mover = jnp.arange(2) == state.current_player
        win = jnp.where(mover, 1.0, -1.0).astype(jnp.float32)
        rewards = jnp.where(~legal, -win, jnp.where(won, win, 0.0))
        ended = ~legal | won | full
        stepped = State(board=board, current_player=1 - state.current_player,
                        legal_action_mask=jnp.where(ended, True, board == 0),
                        rewards=rewards, terminated=ended, truncated=jnp.bool_(False),
                        ply=state.ply + 1)
        finished = state.replace(rewards=jnp.zeros(2, jnp.float32))
        return jax.tree.map(lambda a, b: jnp.where(over, a, b), finished, stepped)

    def observe(self, state: State) -> jax.Array:
        mine = jnp.where(state.current_player == 0, 1, -1)
        planes = jnp.stack([state.board == mine, state.board == -mine], axis=-1)
        return planes.reshape(3, 3, 2).astype(jnp.float32)

    def move_number(self, state: State) -> jax.Array:
        return state.ply


@plugins.register("search algorithm", "wide_puct")
@dataclasses.dataclass(frozen=True)
class WidePUCT(PUCT):
    """PUCT exploring more widely (a larger `pb_c_init`); its `name` is its registered
    name, which a training config's `search.algorithm` records."""

    name = "wide_puct"

    pb_c_init: float = 2.5


@plugins.register("agent", "first_legal")
@dataclasses.dataclass(frozen=True)
class FirstLegalAgent(Agent):
    """The legal move with the lowest index, in any game."""

    name = "first_legal"

    def act(self, params, agent_state, state, key):
        legal = state.legal_action_mask
        policy = legal / jnp.sum(legal)
        return jnp.argmax(legal).astype(jnp.int32), agent_state, {
            "policy": policy.astype(jnp.float32), "value": jnp.float32(0.0)}
