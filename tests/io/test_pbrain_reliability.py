"""The engine under a tournament manager's absurd values: INFO numbers of any size, signs and
forms, and memory limits that change all the time (experiments/engine_fuzz.py and
engine_soak.py are the long runs; their smoke tests are in tests/experiments/)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import pytest
from engine_search import SEARCH, SMALL_TREE

from gomoku_jax import agents
from gomoku_jax.agents.anytime import AnytimeSearch, node_bytes
from gomoku_jax.games.gomoku.env import Gomoku
from gomoku_jax.io.pbrain import MAX_INFO_VALUE, OpeningGomoku, PbrainEngine


@pytest.fixture()
def random7():
    engine = PbrainEngine("random", seed=1)
    assert engine.handle("START 7") == ["OK"]
    return engine


def test_huge_info_values_are_accepted_and_clamped(random7):
    """A manager's `INFO timeout_turn 10^30` is an integer: read as MAX_INFO_VALUE (it was
    an ERROR "expects an integer" past 15 digits), and the move still plays at once."""
    e = random7
    huge = "1" + "0" * 30
    for key in ("timeout_turn", "timeout_match", "time_left", "max_memory"):
        assert e.handle(f"INFO {key} {huge}") == [], key
        assert e.limits[key] == MAX_INFO_VALUE
    assert e.move_budget_s() == pytest.approx(MAX_INFO_VALUE / 1000 / 20 * 0.8 - 0.05)
    out = e.handle("INFO rule " + huge)  # any bitmask: its unknown bits are named
    assert e.rule == "freestyle" and len(out) == 1 and "unknown bits" in out[0]
    x, y = map(int, e.handle("TURN 3,3")[0].split(","))
    assert e.board[y, x] == 1


@pytest.mark.parametrize("value, reason", [
    ("1" + "0" * 45, "expects an integer (up to 40 digits)"),
    ("5000.5", "expects an integer"), ("1e3", "expects an integer"),
    ("soon", "expects an integer"), ("", "expects an integer"), ("-1", "must be >= 0"),
])
def test_bad_timeout_turn_is_an_error_and_keeps_the_value(random7, value, reason):
    e = random7
    assert e.handle("INFO timeout_turn 200") == []
    out = e.handle(f"INFO timeout_turn {value}")
    assert len(out) == 1 and out[0].startswith("ERROR INFO timeout_turn") and reason in out[0]
    assert e.limits["timeout_turn"] == 200


def test_negative_time_left_is_the_fastest_move(random7):
    e = random7
    assert e.handle("INFO timeout_match 1000") == [] and e.handle("INFO time_left -50") == []
    assert e.limits["time_left"] == 0 and e.move_budget_s() == 0.0


def test_tree_capacities_under_memory_limits_are_few():
    """Every max_memory value compiles its tree capacity once and keeps it: the capacities
    are powers of two plus one (was: one per value, an unbounded set of compilations)."""
    agent = agents.make("mcts", num_simulations=8, evaluator="heuristic", threat_search=0)
    search = AnytimeSearch(agent, max_nodes=8193)
    env = Gomoku(7)
    per_node = node_bytes(env)
    capacities = set()
    for nodes in sorted({int(1.3 ** i) for i in range(9, 36)}):  # 10 .. 9727, each octave
        search.set_max_tree_bytes(nodes * per_node + per_node // 2)
        capacity = search.capacity(env)
        assert capacity <= nodes and capacity > nodes // 2, (nodes, capacity)
        capacities.add(capacity)
    assert capacities == {2 ** k + 1 for k in range(3, 14)}
    search.set_max_tree_bytes(1)  # less than a node: the least a chunk needs
    assert search.capacity(env) == search.chunk + 1
    search.set_max_tree_bytes(0)
    assert search.capacity(env) == 8193


@pytest.fixture(scope="module")
def small_mcts():
    """An anytime search without the threat search (its compile is most of the time): the
    engine tests' one configuration (`engine_search`)."""
    return PbrainEngine("mcts", SEARCH, seed=1)


def test_no_compile_on_the_clock_and_each_tree_size_compiles_once(small_mcts):
    """The first move after START compiles nothing (it compiled JAX's conversions of the
    position's last moves, 15 ms alone, more on a busy machine); then max_memory values
    that change often compile each tree size once."""
    e = small_mcts
    assert e.handle("START 7") == ["OK"]
    per_node = node_bytes(e.env)
    compiles = []
    listener = lambda name, *args, **kwargs: compiles.append(name)  # noqa: E731
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        assert e.handle("TURN 3,3")[0] != ""
        assert [c for c in compiles if "backend_compile" in c] == []
        for nodes in (140, 180, 220, 256):  # all in [129, 257): one tree size, not the 257
            assert e.handle(f"INFO max_memory {4 * nodes * per_node}") == []
            assert e._agent_state.node_visits.shape == (1, SMALL_TREE) == (1, 129)
        first = len([c for c in compiles if "backend_compile" in c])
        for nodes in (200, 240, 0, 150):  # that size again, no bound, that size again
            e.handle(f"INFO max_memory {4 * nodes * per_node}")
        assert e.handle("TURN 1,1")[0] != ""
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert [c for c in compiles if "backend_compile" in c][first:] == []


def test_restart_keeps_the_tree_and_the_next_game_starts_a_new_one(small_mcts):
    """RESTART allocates no tree (it did: tens of MB zeroed on 20x20, 0.5 s answers on a
    busy machine); the next game's position is not in the old tree, so it starts anew."""
    e = small_mcts
    assert e.handle("START 7") == ["OK"] and e.handle("INFO max_memory 0") == []
    e.handle("BEGIN")
    e.handle("TURN 0,0")
    tree = e._agent_state
    assert e.handle("RESTART") == ["OK"] and e._agent_state is tree and not e.board.any()
    x, y = map(int, e.handle("TURN 2,2")[0].split(","))
    assert e.board[y, x] == 1 and e.last_move["anytime"].reused == 0


MCTS = type(agents.make("mcts"))


@dataclasses.dataclass(frozen=True)
class QuietThreats(MCTS):
    """`mcts` whose threat search finds nothing (its VCF compile would be most of the
    test's time; its cost is the fake clock's)."""

    def forcing_moves(self, states):
        return jnp.full(states.legal_action_mask.shape[:1], -1, jnp.int32), \
            states.legal_action_mask


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_threat_search_that_does_not_fit_is_skipped_after_its_first_overrun():
    """The threat search (VCF) runs in every move's first call and cannot stop: 0.3-0.4 s
    on a sharp 15x15 position here, against 0.15 s budgets late in a 5 s match (46 moves
    over budget and 7 games lost on time in 200, experiments/engine_soak.py). Its longest
    time so far now predicts it: the move after an overrun starts without it."""
    clock = FakeClock()
    # The engine tests' search and game (`engine_search`: its chunks are their compiled
    # programs) with the default threat search, so that a move without it is another call.
    agent = QuietThreats(**{k: v for k, v in SEARCH.items() if k != "threat_search"})
    assert agent.threat_search > 0
    search = AnytimeSearch(agent, max_nodes=SMALL_TREE, clock=clock)
    env = OpeningGomoku(7)
    key = jax.random.key(0)
    search.prepare(env, key)
    c = search._compiled_for(env)
    real = AnytimeSearch._call.__get__(search)
    calls = []

    def call(kind, fn, *args):
        out = real(kind, fn, *args)
        dt = (0.4 if fn is c.start else 0.001) if kind == "start" else 0.01
        clock.now += dt
        calls.append(("threats" if fn is c.start else "plain") if kind == "start" else kind)
        return out

    search._call = call
    state = env.from_moves([24, 16])  # black to move
    first = search.move(env, state, search.init_state(env), key, budget_s=0.15)
    assert first.threats and calls[0] == "threats" and first.seconds > 0.15  # once
    second = search.move(env, state, first.tree, key, budget_s=0.15)
    assert not second.threats and "threats" not in calls[len(calls) - len(second.chunks) - 1:]
    assert second.seconds <= 0.15 and second.simulations >= 8
    assert state.legal_action_mask[second.action]
    third = search.move(env, state, second.tree, key, budget_s=1.0)  # 1.3 x 0.4 fits
    assert third.threats


def test_node_bytes_is_traced_once_per_game(monkeypatch):
    """`capacity` runs on every move under INFO max_memory (which managers always send):
    tracing the game's init for its node size each time took 10-30 ms twice a move."""
    traced = []
    real = jax.eval_shape
    monkeypatch.setattr(jax, "eval_shape", lambda *a, **k: traced.append(1) or real(*a, **k))
    env = Gomoku(6, 4, "exact5")
    sizes = {node_bytes(env) for _ in range(3)}
    assert len(sizes) == 1 and len(traced) <= 1
