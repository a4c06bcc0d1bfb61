"""Anytime search: chunks under a fake clock never overrun the budget, the tree carries
over between moves, and the tree's size follows the node and memory bounds."""

from __future__ import annotations

import random
import threading

import jax
import numpy as np
import pytest
from conftest import compiled
from engine_search import SMALL_TREE, search_agent

from gomoku_jax import agents
from gomoku_jax.agents.anytime import DEFAULT_MAX_NODES, AnytimeSearch, node_bytes, supports
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.games.gomoku.opening_rule import OpeningGomoku
from gomoku_jax.search import reuse

ENV = Gomoku(7, 5)
# The uniform evaluator: what these tests check does not depend on the evaluator, and the
# heuristic's would make every chunk's compile longer. The threat search is on (the
# default).
AGENT = agents.make("mcts", num_simulations=8, evaluator="uniform")
KEY = jax.random.key(0)


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def slow(searcher: AnytimeSearch, clock: FakeClock, seconds: dict, jitter=(1.0, 1.0),
         seed: int = 0, estimates: bool = False) -> list:
    """Make every compiled call of `searcher` take `seconds[kind]` (times a random factor
    in `jitter`) on `clock`, and with `estimates` start its running estimates (7x7) at
    those times; returns the list the calls' (kind, seconds) go to."""
    if estimates:
        searcher._compiled_for(ENV).estimates.update(seconds)
    real = AnytimeSearch._call.__get__(searcher)  # the real call, not an earlier fake
    rng = random.Random(seed)
    calls = []

    def call(kind, fn, *args):
        out = real(kind, fn, *args)
        dt = seconds[kind] * rng.uniform(*jitter)
        clock.now += dt
        calls.append((kind, dt))
        return out

    searcher._call = call
    return calls


@pytest.fixture(scope="module")
def searcher():
    clock = FakeClock()
    s = AnytimeSearch(AGENT, clock=clock, max_nodes=1025)
    s.prepare(ENV, KEY)
    return s, clock


def position(*moves):
    return ENV.from_moves(list(moves))


def test_supports_and_sizes():
    assert supports(AGENT) and not supports(agents.make("heuristic"))
    assert not supports(agents.make("mcts", search=AGENT.search.__class__(loop="mctx")))
    s = AnytimeSearch(AGENT)
    assert s.sizes() == (8, 1) and AnytimeSearch(AGENT, chunk=64).sizes() == (64, 8)
    with pytest.raises(ValueError, match="anytime search needs a search agent"):
        AnytimeSearch(agents.make("heuristic"))
    with pytest.raises(ValueError, match="small_chunk"):
        AnytimeSearch(AGENT, small_chunk=16)


def test_never_over_budget_on_a_slow_clock(searcher):
    """Chunks of 0.1 s (+-15 %) and short ones of 0.02 s: every move ends within its budget,
    and it stops only when the next chunk would not have fitted."""
    s, clock = searcher
    calls = slow(s, clock, {"start": 0.01, 8: 0.1, 1: 0.02}, jitter=(0.9, 1.15),
                 estimates=True)
    tree = s.init_state(ENV)
    state = position(24, 25)
    for budget in (0.05, 0.3, 1.0, 2.5, 0.5):
        calls.clear()
        m = s.move(ENV, state, tree, KEY, budget)
        assert m.seconds <= budget, (budget, m)
        assert m.simulations == sum(m.chunks) and m.simulations >= 1
        assert sum(dt for _, dt in calls) == pytest.approx(m.seconds)
        # it stopped because the smallest chunk was predicted not to fit
        assert m.predicted_s > budget
        assert m.predicted_s - m.seconds <= s.safety * 0.02 * 1.15 + 1e-9
        assert np.asarray(state.legal_action_mask)[m.action]
        if budget >= 1.0:
            assert m.chunks.count(8) >= 6
        tree = s.init_state(ENV)  # each budget from a fresh tree


def test_a_budget_of_zero_runs_the_least(searcher):
    s, clock = searcher
    slow(s, clock, {"start": 0.01, 8: 0.1, 1: 0.02}, estimates=True)
    state = position(24, 25)
    m = s.move(ENV, state, s.init_state(ENV), KEY, 0.0)
    assert m.chunks == (1,) and m.reused == 0  # an empty tree: one short chunk anyway
    assert np.asarray(state.legal_action_mask)[m.action]
    # with a tree that holds the position, nothing is searched: its most visited move
    full = s.move(ENV, state, s.init_state(ENV), KEY, None)
    m = s.move(ENV, state, full.tree, KEY, 0.0)
    assert m.chunks == () and m.reused == 9 and m.simulations == 0
    visits = np.asarray(full.tree.children_visits[0, 0])
    assert visits[m.action] == visits.max()


def test_no_budget_is_one_chunk_and_a_full_tree_stops(searcher):
    s, clock = searcher
    slow(s, clock, {"start": 0.0, 8: 0.001, 1: 0.001}, estimates=True)
    state = position(24, 25)
    m = s.move(ENV, state, s.init_state(ENV), KEY, None)
    assert m.chunks == (8,) and int(m.tree.node_visits[0, 0]) == 9
    m = s.move(ENV, state, s.init_state(ENV), KEY, 1e6)  # time enough: the tree fills
    assert m.simulations == 1024 and int(m.tree.node_visits[0, 0]) == 1025
    assert m.chunks[-1] == 8 and m.tree.node_visits.shape == (1, 1025)


def test_the_tree_carries_over_two_plies(searcher):
    s, clock = searcher
    slow(s, clock, {"start": 0.0, 8: 0.01, 1: 0.002}, estimates=True)
    # White to move faces black's VCF: the threat search keeps a few refutations at the
    # root, so that (with the uniform evaluator) the tree grows deep under them.
    state = position(8, 42, 9, 43, 10)
    first = s.move(ENV, state, s.init_state(ENV), KEY, 1.0)
    assert first.simulations >= 600
    tree = jax.device_get(jax.tree.map(lambda x: x[0], first.tree))
    ours = int(tree.children_index[0, first.action])
    reply = int(np.argmax(tree.children_visits[ours]))
    grandchild = int(tree.children_index[ours, reply])
    assert grandchild > 0
    step = compiled(ENV).step
    later = step(step(state, np.int32(first.action)), np.int32(reply))
    assert int(jax.jit(reuse.find_node)(tree, later)) == grandchild
    second = s.move(ENV, later, first.tree, KEY, 0.2)
    subtree = int(np.sum(jax.jit(reuse.subtree_mask)(tree, grandchild)))
    assert second.reused == subtree > 1
    root_visits = int(tree.node_visits[grandchild])
    assert int(second.tree.node_visits[0, 0]) == root_visits + second.simulations
    # a position that is not in the tree starts a fresh one
    third = s.move(ENV, position(0, 48), second.tree, KEY, None)
    assert third.reused == 0 and int(third.tree.node_visits[0, 0]) == 9


def test_capacity_follows_nodes_and_memory():
    per_node = node_bytes(ENV)
    assert per_node == 24 * 49 + sum(x.size * x.dtype.itemsize
                                     for x in jax.tree.leaves(ENV.init(KEY)))
    s = AnytimeSearch(AGENT, max_nodes=4097)
    assert s.capacity(ENV) == 4097
    s.set_max_tree_bytes(100 * per_node + 5)
    assert s.capacity(ENV) == 65  # rounded down to a power of two plus one
    s.set_max_tree_bytes(per_node)  # too little: still room for one chunk
    assert s.capacity(ENV) == 9
    s.set_max_tree_bytes(0)
    assert s.capacity(ENV) == 4097
    with pytest.raises(ValueError, match="max_tree_bytes"):
        s.set_max_tree_bytes(-1)


def test_forced_wins_and_refutations_come_from_the_threat_search(searcher):
    """A VCF for the side to move is played without a chunk; facing the opponent's, every
    chunk searches only its refutations (the hook's root mask)."""
    s, clock = searcher
    slow(s, clock, {"start": 0.0, 8: 0.01, 1: 0.002})
    c = s._compiled_for(ENV)

    def forcing_moves(state):  # the agent's threat search, through the searcher's compiled
        # start (the reroot of an empty tree and `AGENT.forcing_moves`)
        _, win, mask, _ = c.start(c.fresh(), jax.tree.map(lambda x: x[None], state))
        return int(win), np.asarray(mask[0])

    # Black (to move) has three in a row with both ends open twice over: fours win.
    win_state = position(8, 42, 9, 43, 10, 40)  # black 8, 9, 10 on row 1; white scattered
    win, _ = forcing_moves(win_state)
    assert win >= 0
    move = s.move(ENV, win_state, s.init_state(ENV), KEY, 1.0)
    assert move.action == win and move.simulations == 0 and move.chunks == ()
    # White to move faces that same VCF: its root keeps the refutations only.
    threatened = position(8, 42, 9, 43, 10)
    win, mask = forcing_moves(threatened)
    assert win == -1 and 0 < mask.sum() < int(np.sum(np.asarray(
        threatened.legal_action_mask)))
    move = s.move(ENV, threatened, s.init_state(ENV), KEY, 0.2)
    visits = np.asarray(move.tree.children_visits[0, 0])
    assert move.simulations > 0 and visits[~mask].sum() == 0 and mask[move.action]


def network_agent():
    """(agent, params): PUCT over a tiny network without the threat search, and the
    network's params as a restored network's are, committed arrays."""
    from gomoku_jax.nets.resnet import NET_PRESETS, PolicyValueModel

    model = PolicyValueModel.for_env(NET_PRESETS["tiny"], ENV)
    params = jax.device_put(jax.jit(model.init)(KEY), jax.devices()[0])
    return agents.make("mcts", num_simulations=8, evaluator="network", network=model,
                       threat_search=0), params


def test_committed_params_compile_nothing_on_the_clock():
    """A restored network's params are committed arrays; the searcher makes them
    uncommitted, so the trees its calls return, fed back at the next moves, match what
    `prepare` compiled (pbrain's network moves compiled anew on the clock before)."""
    agent, params = network_agent()
    assert all(x.committed for x in jax.tree.leaves(params))
    # one chunk size (the moves below run one chunk each): one chunk program to compile
    s = AnytimeSearch(agent, params, max_nodes=33, small_chunk=8)
    s.prepare(ENV, KEY)
    c = s._compiled_for(ENV)
    calls = [c.start, *c.chunks.values()]
    assert all(f._cache_size() == 1 for f in calls)
    tree, moves = s.init_state(ENV), [24]
    for i in range(3):
        out = s.move(ENV, position(*moves), tree, jax.random.key(i))
        tree = out.tree
        moves += [out.action, next(a for a in range(49) if a not in moves + [out.action])]
    assert [f._cache_size() for f in calls] == [1] * len(calls)


def test_a_time_hint_grows_the_tree_on_a_thread_and_moves_go_on_meanwhile():
    # The engine tests' search on pbrain's 7x7 game (tests/engine_search.py), from
    # SMALL_TREE to DEFAULT_MAX_NODES nodes: the two capacities the pbrain tests compile, so
    # that the persistent cache serves them. What this checks does not depend on the sizes
    # nor on what a chunk computes.
    env = OpeningGomoku(7)
    clock = FakeClock()
    s = AnytimeSearch(search_agent(), clock=clock, max_nodes=SMALL_TREE)
    assert s.sizes() == (1,)
    assert s.nodes_for(env, 1.0) == 0  # nothing measured yet
    s.prepare(env, KEY)
    s._compiled_for(env).estimates[s.chunk] = 2e-4  # 1 simulation in 0.2 ms: 5000 a second
    assert s.nodes_for(env, 1.0) == DEFAULT_MAX_NODES  # 1.5 x 5000 = 7500, up to 2^13 + 1
    assert s.nodes_for(env, None) == 0
    slow(s, clock, {"start": 0.0, 1: 0.01})  # (a few chunks in each move's 50 ms)

    started = threading.Event()
    release = threading.Event()
    real_build = s._build

    def gated_build(env, capacity):  # hold the compile thread until the move is made
        started.set()
        release.wait()
        return real_build(env, capacity)

    s._build = gated_build
    thread = s.grow_for(env, 1.0, KEY)
    assert thread is not None and started.wait()
    assert s.capacity(env) == DEFAULT_MAX_NODES and s.prepared(env)
    first = env.from_moves([24])
    move = s.move(env, first, s.init_state(env), KEY, budget_s=0.05)  # no compile
    assert move.tree.node_visits.shape[-1] == SMALL_TREE
    release.set()
    thread.join()
    move = s.move(env, first, move.tree, KEY, budget_s=0.05)
    assert move.tree.node_visits.shape[-1] == DEFAULT_MAX_NODES  # the grown tree, a fresh one
    s._compiled_for(env).estimates[s.chunk] = 2e-4  # (the fake clock measured 10 ms)
    assert s.grow_for(env, 1.0, KEY) is None  # compiled already

    s.set_max_tree_bytes(100 * node_bytes(env))  # memory bounds a grown tree too
    assert s.capacity(env) == 65
    s.set_max_tree_bytes(0)
    assert s.grow_for(env, None, KEY) is None and s.capacity(env) == SMALL_TREE  # max_nodes
