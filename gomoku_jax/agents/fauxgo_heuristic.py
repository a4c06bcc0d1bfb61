"""Faux Go's heuristic player: seed 004's vetoes, nine weighted scores and a draw among the
moves within 2 points of the best (`games.fauxgo.heuristic` has the rules of each part)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.agents.base import Agent
from gomoku_jax.configs import PositiveInt
from gomoku_jax.games.fauxgo.heuristic import FauxGoHeuristicConfig, analyse, choose
from gomoku_jax.games.fauxgo.rules import scores


@dataclasses.dataclass(frozen=True)
class FauxGoHeuristicAgent(FauxGoHeuristicConfig, Agent):
    """Seed 004's AI; its fields are `FauxGoHeuristicConfig`'s (the seed's defaults).

    Passes only when every legal placement is vetoed. `info["policy"]`: uniform over the
    moves it drew from; `info["value"]`: tanh(score margin / N) for the side to move, the
    margin being its score minus the opponent's on the board as it stands (komi included).
    """

    name = "fauxgo_heuristic"
    games = ("fauxgo",)

    # Boards analysed at once by `act_batch`: a large batch goes through `lax.map` in chunks
    # of this many (a move holds ~N^4 bitboard rows per board, and 1024 boards at once ran
    # 1.7x slower per board than chunks of 64 on a 2-core CPU).
    batch_chunk: PositiveInt = 64  # checked with the config's fields (`configs.validate`)

    def act(self, params, agent_state, state, key):
        action, policy, _ = choose(self, analyse(self, state), key)
        black, white = scores(state.board, state.owner, state.komi)
        margin = jnp.where(state.color > 0, black - white, white - black)
        value = jnp.tanh(margin / state.board.shape[-1])
        return action, agent_state, {"policy": policy, "value": value.astype(jnp.float32)}

    def act_batch(self, params, agent_states, states, keys):
        b = keys.shape[0]
        if b <= self.batch_chunk:
            return super().act_batch(params, agent_states, states, keys)
        # A whole number of chunks, the last padded with copies of board 0: `lax.map` would
        # compile a remainder as a second copy of the whole move.
        rows = np.concatenate([np.arange(b), np.zeros(-b % self.batch_chunk, np.int32)])
        padded = jax.tree.map(lambda x: x[rows], (agent_states, states, keys))
        out = jax.lax.map(lambda x: self.act(params, *x), padded, batch_size=self.batch_chunk)
        return jax.tree.map(lambda x: x[:b], out)
