"""The GMO agent (`agents/gmo.py`): the novelty memory against a deque, the projection onto
legal moves, the top-scored move without ascent, and legal moves with it, on two games.

One tiny network config throughout; every compiled function is built once per module, the
agents of one game in one program.
"""

from __future__ import annotations

import collections
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gomoku_jax
from gomoku_jax import agents
from gomoku_jax.agents.gmo import NoveltyMemory, project

TINY = dict(state_dim=16, move_dim=16, hidden_dim=32, part_dim=8, mc_samples=4,
            novelty_memory_size=8)
SIZE, DIM = 4, 3


@functools.lru_cache(maxsize=None)
def _memory_ops():
    push = jax.jit(NoveltyMemory.push)
    novelty = jax.jit(NoveltyMemory.novelty)
    return push, novelty


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.floats(-3, 3), min_size=DIM, max_size=DIM), max_size=11),
       st.lists(st.floats(-3, 3), min_size=DIM, max_size=DIM))
def test_novelty_memory_is_a_ring_buffer_like_a_deque(pushes, query):
    push, novelty = _memory_ops()
    memory = NoveltyMemory.empty(SIZE, DIM)
    reference = collections.deque(maxlen=SIZE)
    for vector in pushes:
        memory = push(memory, jnp.asarray(vector, jnp.float32))
        reference.append(np.asarray(vector, np.float32))
    kept = np.asarray(memory.embeddings)[np.asarray(memory.valid)]
    assert sorted(map(tuple, kept)) == sorted(map(tuple, reference))
    got = float(novelty(memory, jnp.asarray(query, jnp.float32)))
    want = min((np.linalg.norm(np.asarray(query, np.float32) - e) for e in reference),
               default=0.0)
    assert got == pytest.approx(want, abs=1e-3)


@functools.lru_cache(maxsize=None)
def _project():
    return jax.jit(project)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.integers(1, 5))
def test_projection_lands_on_the_most_similar_legal_move(seed, k):
    rng = np.random.default_rng(seed)
    moves = rng.normal(size=(12, 4)).astype(np.float32)
    legal = rng.random(12) < 0.4
    legal[rng.integers(12)] = True
    embeddings = rng.normal(size=(5, 4)).astype(np.float32)[:k]
    got = np.asarray(_project()(embeddings, moves, legal))
    assert legal[got].all()
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)  # noqa: E731
    cosine = np.where(legal, unit(embeddings) @ unit(moves).T, -np.inf)
    np.testing.assert_array_equal(cosine[np.arange(k), got], cosine.max(axis=1))


def random_positions(env, count: int, plies: int, seed: int):
    """`count` states after `plies` random moves each (live games), batched (NumPy leaves:
    no compile)."""
    rng = np.random.default_rng(seed)
    states = []
    while len(states) < count:
        try:
            cells = env.config.board_size ** 2
            states.append(env.from_moves(rng.permutation(cells)[:plies].tolist()))
        except ValueError:
            continue
    return jax.tree.map(lambda *x: np.stack(x), *states)


# The module's agents: (game, optim_steps) -> (positions, plies, seed) of the positions
# they move from, and the seed of their keys.
CASES = {("gomoku", 0): (6, 9, 1, 2), ("gomoku", 3): (4, 6, 3, 4), ("fauxgo", 3): (4, 6, 3, 4)}


@functools.lru_cache(maxsize=None)
def chosen(game: str) -> dict:
    """{optim_steps: (env, agent, states, choice, (actions, memory after, info))}: for each
    case of `game` in CASES, `choose` (vmapped) and `act_batch` on the same arguments (fresh
    memories, the fresh params), on the host; every case of the game in one compiled program
    (XLA computes each choice once)."""
    env = gomoku_jax.make(game, board_size=5 if game == "fauxgo" else 7)
    cases = {steps: spec for (g, steps), spec in CASES.items() if g == game}
    bound = {steps: agents.make("gmo", optim_steps=steps, **TINY).bind(env) for steps in cases}
    states = {steps: random_positions(env, *cases[steps][:3]) for steps in cases}
    params = {steps: agent.params_or_fresh(None) for steps, agent in bound.items()}

    @jax.jit
    def run(params, states):
        out = {}
        for steps, agent in bound.items():
            count, key = cases[steps][0], cases[steps][3]
            memory = jax.vmap(agent.init)(jax.random.split(jax.random.key(0), count))
            args = (params[steps], memory, states[steps],
                    jax.random.split(jax.random.key(key), count))
            out[steps] = (jax.vmap(agent.choose, in_axes=(None, 0, 0, 0))(*args),
                          agent.act_batch(*args))
        return out

    outs = jax.device_get(run(params, states))
    return {steps: (env, bound[steps], states[steps], *outs[steps]) for steps in cases}


def test_without_ascent_gmo_plays_the_top_scored_move():
    _, _, _, choice, _ = chosen("gomoku")[0]
    scores = np.asarray(choice.scores)
    np.testing.assert_array_equal(choice.action, scores.argmax(axis=1))
    np.testing.assert_array_equal(choice.projected, choice.candidates)


def test_with_ascent_moves_are_legal_and_remembered_on_both_games():
    for game in ("gomoku", "fauxgo"):
        env, agent, states, choice, (actions, after, info) = chosen(game)[3]
        legal = np.asarray(states.legal_action_mask)
        assert legal[np.arange(4), np.asarray(actions)].all()
        np.testing.assert_array_equal(actions, choice.action)
        assert all(a in p for a, p in zip(np.asarray(choice.action),
                                          np.asarray(choice.projected)))
        np.testing.assert_array_equal(after.count, 1)
        played = np.asarray(choice.moves)[np.arange(4), np.asarray(actions)]
        np.testing.assert_allclose(np.asarray(after.embeddings)[:, 0], played)
        np.testing.assert_array_equal(np.asarray(info["policy"]).argmax(1), actions)
