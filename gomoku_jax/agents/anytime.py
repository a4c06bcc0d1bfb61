"""Anytime tree search: a `SearchAgent`'s search run in compiled chunks that continue one
tree until a move's time budget is spent (for protocol engines: `io/player.py`, pbrain).

    searcher = AnytimeSearch(agents.make("mcts", num_simulations=64))
    searcher.prepare(env, key)              # compile + time each chunk size (off the clock)
    tree = searcher.init_state(env)         # an empty tree of `capacity(env)` nodes
    move = searcher.move(env, state, tree, key, budget_s=1.0)
    move.action, move.simulations, move.seconds; tree = move.tree   # reused next move

How a move runs (`move`):

1. **Reuse and threats.** The tree of the last move (batch 1, `capacity` nodes) is
   rerooted at the node holding the position on the board (`search.reuse`: two plies on,
   the grandchild of our last move and the opponent's reply) with its statistics; a
   position not in the tree starts an empty one. The agent's threat search runs too
   (`SearchAgent.forcing_moves`, Gomoku's VCF): a forced win found there is played at
   once, and the refutations of the opponent's restrict the root of every chunk. One
   compiled call (`start`). The threat search's time depends on the position (a few ms
   on a quiet board, its whole node budget on a sharp one: 0.3-0.4 s for Gomoku's 512
   nodes on a loaded 2-core CPU), and nothing can stop it once it runs, so it is predicted
   by the *longest* it took so far (x `safety`): when that does not fit the budget, the
   move starts without it (a second compiled call: the reroot alone, every legal move at
   the root). So a sharp position can overrun a short budget once, the first time the
   threat search meets one, and not again: a move whose budget is shorter than that
   worst time searches without the threat search.
2. **Chunks.** The agent's search (`agent.search.search(..., tree=tree)`) runs `chunk`
   simulations (default: the agent's `num_simulations`) per compiled call, each call
   continuing the tree of the one before, or `small_chunk` simulations (default chunk / 8,
   a multiple of the search's `leaves_per_step`) when a full chunk would not fit the time
   left. Before each call the next one's time is *predicted*: `safety` x the larger of
   that size's running estimate (measured by `prepare`, refreshed by every chunk) and its
   last time in this move; the call is made only when the time spent so far plus the
   prediction fits the budget, and when the tree has room for the chunk's nodes (a tree
   of capacity C holds C - 1 simulations). So the search stops *before* a chunk that
   would overrun, never after it.
3. **The move.** The search's own choice on the whole tree after the last chunk (PUCT
   and pure MCTS at play strength: the most visited root move, a found win first). When
   no chunk fits, the reused tree's most visited root move is played (nothing is
   computed but the reroot); only when the reused tree is empty too does one small chunk
   run anyway (it is the least a move can cost: a budget of 0 means "as fast as
   possible").

`budget_s=None` (no clock known) runs exactly one chunk: the agent's `num_simulations`.

Tree size: `capacity(env)` nodes. Without a time hint it is `max_nodes` (8193 by
default). With one (`grow_for(env, budget_s, key)`: the longest a move may take, which
pbrain derives from INFO timeout_turn / timeout_match), it is the power of two plus one
that holds 1.5 x the simulations such a move runs at the measured rate (`nodes_for`),
never less than `max_nodes`: a 5 s move needs several times the nodes of a 1 s one, and a
tree too small stops the search when it is full, not when the time is spent. Either way it
is bounded by memory: `max_tree_bytes`, or `DEFAULT_TREE_BYTES` (512 MiB) for a tree grown
by a time hint, over the bytes of one node (`search.base.tree_bytes`: 24 x A + the state's
bytes), rounded down to a power of two plus one; at least `chunk + 1` (`small_chunk + 1`
when memory is that short). Not larger by default, because the reroot at the start of each
move touches every node: 10 ms at 8193 nodes, 0.3-0.5 s at 65537 on 15x15 (a loaded
2-core CPU). Up to about three trees of that size are alive during a move (the kept tree,
the rerooted one, XLA's temporaries), so a caller with a process memory limit passes a
fraction of it (pbrain: a quarter of INFO max_memory).

A new capacity compiles again. `prepare` compiles it at once; `prepare_async` compiles it
on a thread while moves go on with the largest capacity already compiled for the game, so a
time control that arrives just before the first move (pbrain's INFO) costs that move
nothing but the compile thread's share of the CPU.

Only agents whose search can continue a tree (`supports`: a `SearchAgent` with the
"gomoku_jax" loop) run this way. Everything compiled is cached per (env, capacity), so a
new game on the same board (RESTART) compiles nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
import time
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from gomoku_jax.agents.search import SearchAgent
from gomoku_jax.search import reuse, selection, tree_loop
from gomoku_jax.search.base import VisitSampling, tree_bytes

DEFAULT_MAX_NODES = 8192 + 1
DEFAULT_TREE_BYTES = 512 * 2 ** 20  # the most a tree grown by a time hint takes, by default
HEADROOM = 1.5  # nodes per simulation a budget is expected to run (reuse, rate changes)
_GREEDY = VisitSampling(greedy=True)


def uncommitted(params: Any) -> Any:
    """`params` as uncommitted arrays on the default device. Restored params are
    committed (a network restored for a mesh, even of one device, carries a
    `NamedSharding`); the compiled calls' outputs (the tree) then come out committed, and
    fed back in at the next move they no longer match the uncommitted signature `prepare`
    compiled, so the move on the clock compiles again (11-24 s a move in pbrain)."""
    if params is None:
        return None
    return jax.tree.map(lambda x: jnp.asarray(np.asarray(x)), params)


def supports(agent: Any) -> bool:
    """Whether `agent` can search anytime: a `SearchAgent` whose loop continues trees."""
    return isinstance(agent, SearchAgent) and agent.search.loop == "gomoku_jax"


@functools.lru_cache(maxsize=256)
def node_bytes(env) -> int:
    """Bytes of one tree node for `env` (`tree_bytes` of one node: 24 x A + a state).
    Cached per game: `capacity` needs it on every move under a memory limit, and tracing
    `env.init` took 10-30 ms a call (twice a move, on the clock)."""
    shapes = jax.eval_shape(env.init, jax.random.key(0))
    state = sum(math.prod(x.shape) * np.dtype(x.dtype).itemsize
                for x in jax.tree.leaves(shapes))
    return tree_bytes(1, 0, env.num_actions, state)


class AnytimeMove(NamedTuple):
    """What `AnytimeSearch.move` returns."""

    action: int
    tree: Any  # the tree after the move's search (leaves [1, capacity, ...]), for reuse
    value: float  # the root's value for the side to move (0.0 when nothing was searched)
    policy: Optional[jax.Array]  # float32[A] the search's policy (None: no chunk ran)
    simulations: int  # simulations run in this move
    reused: int  # nodes carried over from the last move's tree (0: a fresh tree)
    chunks: tuple[int, ...]  # simulations of each chunk run, in order
    seconds: float  # wall time of the whole move
    predicted_s: float  # the time the move was predicted to take when it stopped
    threats: bool = True  # whether the threat search ran (False: it would not fit)


@dataclasses.dataclass
class _Compiled:
    capacity: int
    treedef: Any
    fresh: Callable
    start: Callable  # the reroot and the threat search
    plain_start: Callable  # the reroot alone (the threat search's move when it won't fit)
    pick: Callable
    chunks: dict[int, Callable]
    estimates: dict[Any, float]  # chunk size, "start" (its longest), "plain_start" -> s


class AnytimeSearch:
    """A search agent's search in compiled chunks under a clock (see the module docstring).

    Args:
      agent: a `SearchAgent` with the "gomoku_jax" loop (see `supports`); its
        `reuse_tree` and `tree_capacity` are not used (this class keeps its own tree).
      params: the agent's parameters (None for fixed evaluators).
      chunk: simulations per chunk (0: the agent's `num_simulations`).
      small_chunk: simulations of the short chunk that fills the end of a budget (0:
        chunk / 8 rounded down to a multiple of `leaves_per_step`, at least one step).
      max_nodes: the largest tree, in nodes. max_tree_bytes: its memory (0: no limit).
      safety: factor on the predicted time of the next call.
      smoothing: weight of the newest time in a chunk size's running estimate.
      clock: seconds as a float (for tests).
    """

    def __init__(self, agent: SearchAgent, params: Any = None, *, chunk: int = 0,
                 small_chunk: int = 0, max_nodes: int = DEFAULT_MAX_NODES,
                 max_tree_bytes: int = 0, safety: float = 1.3, smoothing: float = 0.5,
                 clock: Callable[[], float] = time.perf_counter):
        if not supports(agent):
            raise ValueError(f"anytime search needs a search agent with the 'gomoku_jax' "
                             f"loop, got {agent!r}")
        width = agent.search.leaves_per_step
        chunk = chunk or agent.num_simulations
        small_chunk = small_chunk or max(width, (chunk // 8) // width * width)
        for name, value in (("chunk", chunk), ("small_chunk", small_chunk)):
            if value < 1 or value % width:
                raise ValueError(f"{name} must be a positive multiple of leaves_per_step "
                                 f"({width}), got {value}")
        if small_chunk > chunk:
            raise ValueError(f"small_chunk ({small_chunk}) must be <= chunk ({chunk})")
        if max_nodes < 2 or max_tree_bytes < 0 or safety < 1.0 or not 0 < smoothing <= 1:
            raise ValueError(f"need max_nodes >= 2, max_tree_bytes >= 0, safety >= 1 and "
                             f"smoothing in (0, 1], got {max_nodes}, {max_tree_bytes}, "
                             f"{safety}, {smoothing}")
        self.agent = agent
        self.params = uncommitted(params)
        self.chunk, self.small_chunk = chunk, small_chunk
        self.max_nodes, self.max_tree_bytes = max_nodes, max_tree_bytes
        self.safety, self.smoothing = safety, smoothing
        self._clock = clock
        self._grown: dict = {}  # env -> the nodes its time hint asks for (`grow_for`)
        self._compiled: dict[tuple, _Compiled] = {}
        self._compiling: dict[tuple, threading.Thread] = {}

    # ------------------------------------------------------------------ sizes

    def capacity(self, env) -> int:
        """Nodes of the tree for `env` under `max_nodes`, the time hint (`grow_for`) and
        the memory bound (see the module docstring)."""
        nodes = max(self.max_nodes, self._grown.get(env, 0))
        limit = self.max_tree_bytes or (DEFAULT_TREE_BYTES if nodes > self.max_nodes else 0)
        if limit:
            # A power of two (plus one) of nodes: each capacity compiles anew and stays
            # compiled, so changing memory limits must map to a few capacities, not one each.
            fits = limit // node_bytes(env)
            nodes = min(nodes, fits if fits < 3 else 2 ** ((fits - 1).bit_length() - 1) + 1)
        return max(nodes, min(self.chunk + 1, self.max_nodes), self.small_chunk + 1)

    def nodes_for(self, env, budget_s: Optional[float]) -> int:
        """The power of two plus one of nodes that holds `HEADROOM` x the simulations a move
        of `budget_s` seconds runs on `env`, at the rate measured at the largest capacity
        compiled for it (0 when no budget is given, or nothing is measured for `env`)."""
        compiled = [c for (e, _), c in self._compiled.items() if e == env]
        if not budget_s or not compiled:
            return 0
        c = max(compiled, key=lambda c: c.capacity)
        if c.estimates[self.chunk] < 1e-4:  # no real measurement (an injected clock)
            return 0
        rate = self.chunk / c.estimates[self.chunk]
        need = int(HEADROOM * rate * budget_s)
        return 2 ** max(need - 1, 1).bit_length() + 1

    def grow_for(self, env, budget_s: Optional[float], key: jax.Array
                 ) -> Optional[threading.Thread]:
        """Size `env`'s tree for moves of up to `budget_s` seconds (None or 0: back to
        `max_nodes`), from the rate measured now (compiling `env` first at `max_nodes` if
        nothing is), and compile a new capacity on a thread (`prepare_async`; returned, or
        None when nothing compiles). The size is fixed here, not on every move, so a rate
        that drifts never asks for a compile on the clock."""
        if not any(e == env for e, _ in self._compiled):
            self.prepare(env, key)
        nodes = self.nodes_for(env, budget_s)
        if nodes > self.max_nodes:
            self._grown[env] = nodes
        else:
            self._grown.pop(env, None)
        return self.prepare_async(env, key)

    def set_max_tree_bytes(self, max_tree_bytes: int) -> None:
        """A new memory limit (0: none); takes effect at the next `prepare` / move."""
        if max_tree_bytes < 0:
            raise ValueError(f"max_tree_bytes must be >= 0, got {max_tree_bytes}")
        self.max_tree_bytes = int(max_tree_bytes)

    def sizes(self) -> tuple[int, ...]:
        """The chunk sizes, largest first."""
        return (self.chunk,) if self.small_chunk == self.chunk else (self.chunk,
                                                                    self.small_chunk)

    # ------------------------------------------------------------------ compiling

    def prepared_envs(self) -> set:
        """The games compiled for (at any capacity)."""
        return {env for env, _ in self._compiled}

    def prepared(self, env) -> bool:
        """Whether a move on `env` compiles nothing: its capacity is compiled, or one is
        while another compiles on a thread (`prepare_async`)."""
        return self._usable(env) is not None

    def estimates(self, env) -> dict:
        """Predicted seconds of each call for `env` ("start" and each chunk size)."""
        return dict(self._compiled_for(env).estimates)

    def _usable(self, env) -> Optional[_Compiled]:
        """The compiled calls a move on `env` uses now: those of its capacity, or while that
        one compiles on a thread, of the largest capacity compiled for it (None: none)."""
        key = (env, self.capacity(env))
        if key in self._compiled:
            return self._compiled[key]
        if key not in self._compiling:
            return None
        compiled = [c for (e, _), c in self._compiled.items() if e == env]
        return max(compiled, key=lambda c: c.capacity, default=None)

    def _compiled_for(self, env) -> _Compiled:
        c = self._usable(env)
        if c is None:
            raise KeyError(f"nothing compiled for {env!r}: prepare it first")
        return c

    def prepare_async(self, env, key: jax.Array) -> Optional[threading.Thread]:
        """Compile `env` at its current capacity on a thread (None when it is
        compiled or compiling already); moves use the largest capacity compiled for `env`
        until it is done. Compiles synchronously when nothing is compiled for `env`."""
        capacity = self.capacity(env)
        if (env, capacity) in self._compiled or (env, capacity) in self._compiling:
            return None
        if not any(e == env for e, _ in self._compiled):
            self.prepare(env, key)
            return None

        def run():
            try:
                self.prepare(env, key, capacity)
            finally:
                self._compiling.pop((env, capacity), None)

        # Not a daemon: an interpreter that exits while XLA compiles on a daemon thread
        # aborts; this one is waited for (seconds).
        thread = threading.Thread(target=run, name=f"anytime-compile-{capacity}")
        self._compiling[(env, capacity)] = thread
        thread.start()
        return thread

    def _build(self, env, capacity: int) -> _Compiled:
        agent = self.agent.bind(env)
        one = jax.eval_shape(lambda: jax.tree.map(lambda x: x[None],
                                                  env.init(jax.random.key(0))))

        def fresh():
            blank = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), one)
            return tree_loop.empty_tree(blank, capacity, env.num_actions)

        def start(tree, states, threats=True):
            node = jax.vmap(reuse.find_node)(tree, states)
            tree = jax.vmap(reuse.reroot, in_axes=(0, 0, None))(
                tree, node, capacity - self.small_chunk)
            win, root_mask = agent.forcing_moves(states) if threats else (None, None)
            if win is None:
                win, root_mask = jnp.full((1,), -1, jnp.int32), states.legal_action_mask
            return tree, win[0], root_mask, tree_loop.used_nodes(tree)[0]

        def pick(tree, states, key):
            return selection.choose_by_visits(_GREEDY, tree, key)[0]

        def make_chunk(size):
            def run(params, tree, states, root_mask, key, index):
                out = agent.search_from(params, states, jax.random.fold_in(key, index), size,
                                        tree, root_mask)
                tree = out.tree.replace(extra_data=None, root_invalid_actions=out.tree
                                        .root_invalid_actions.astype(bool))
                return (tree, out.action[0], out.value[0], out.policy[0],
                        tree_loop.used_nodes(tree)[0])
            return jax.jit(run, donate_argnums=(1,))

        full = jax.jit(start)
        plain = full if not getattr(agent, "threat_search", 0) else jax.jit(
            lambda tree, states: start(tree, states, threats=False))
        return _Compiled(capacity, jax.tree.structure(jax.eval_shape(fresh)), jax.jit(fresh),
                         full, plain, jax.jit(pick),
                         {s: make_chunk(s) for s in self.sizes()}, {})

    def prepare(self, env, key: jax.Array, capacity: Optional[int] = None) -> dict:
        """Compile every call for `env` at `capacity` (default: the current one; once) and
        time a warm run of each on the initial position; returns the estimates of the calls
        a move uses now (`estimates`)."""
        capacity = capacity or self.capacity(env)
        if (env, capacity) in self._compiled:
            return self.estimates(env)
        c = self._build(env, capacity)
        states = jax.tree.map(lambda x: x[None], env.init(key))
        for timed in (False, True):  # compile, then time warm calls
            t0 = self._clock()
            self._call("start", c.plain_start, c.fresh(), states)
            if timed:
                c.estimates["plain_start"] = self._clock() - t0
            tree = c.fresh()
            t0 = self._clock()
            tree, _, root_mask, used = self._call("start", c.start, tree, states)
            if timed:
                c.estimates["start"] = self._clock() - t0
            for size in self.sizes():
                t0 = self._clock()
                tree, *_, used = self._call(size, c.chunks[size], self.params, tree, states,
                                            root_mask, key, np.int32(0))
                if timed:
                    c.estimates[size] = self._clock() - t0
            jax.block_until_ready(c.pick(tree, states, key))
        self._compiled[(env, capacity)] = c
        return self.estimates(env)

    def init_state(self, env) -> Any:
        """An empty tree for `env` (leaves [1, capacity, ...]); compiles if not prepared."""
        if not self.prepared(env):
            self.prepare(env, jax.random.key(0))
        return self._compiled_for(env).fresh()

    def _call(self, kind, fn: Callable, *args):
        """Run a compiled call and wait for its result (the hook tests time)."""
        out = fn(*args)
        if isinstance(out, tuple):
            int(out[-1])  # blocks: the used-node count is computed last
        else:
            jax.block_until_ready(out)
        return out

    # ------------------------------------------------------------------ a move

    def _predict(self, c: _Compiled, kind, last: dict) -> float:
        return self.safety * max(c.estimates[kind], last.get(kind, 0.0))

    def _measured(self, c: _Compiled, kind, seconds: float, last: dict) -> None:
        last[kind] = seconds
        w = self.smoothing
        c.estimates[kind] = (1 - w) * c.estimates[kind] + w * seconds

    def move(self, env, state: Any, tree: Any, key: jax.Array,
             budget_s: Optional[float] = None) -> AnytimeMove:
        """Search from `state` (one board, the side to move's turn) continuing `tree` (the
        last move's, or `init_state`'s) until `budget_s` seconds are spent (None: one
        chunk of `chunk` simulations); see the module docstring."""
        t0 = self._clock()
        if not self.prepared(env):
            self.prepare(env, key)
        c = self._compiled_for(env)
        if tree is None or jax.tree.structure(tree) != c.treedef \
                or tree.node_visits.shape[-1] != c.capacity:
            tree = c.fresh()  # another game's or size's tree (a new rule, a new capacity)
        states = jax.tree.map(lambda x: jnp.asarray(x)[None], state)
        last: dict = {}
        t = self._clock()
        threats = budget_s is None or c.plain_start is c.start or \
            t - t0 + self.safety * c.estimates["start"] <= budget_s
        tree, win, root_mask, used = self._call("start", c.start if threats else c.plain_start,
                                                tree, states)
        seconds = self._clock() - t
        if threats:  # the longest so far: the threat search's time depends on the position
            c.estimates["start"] = max(c.estimates["start"], seconds)
        else:
            self._measured(c, "plain_start", seconds, last)
        used = reused = int(used)
        chunks: list[int] = []
        action, value, policy, predicted = None, 0.0, None, 0.0
        if int(win) >= 0:  # the threat search found a forced win: no search needed
            return AnytimeMove(int(win), tree, 1.0, None, 0, reused, (), self._clock() - t0,
                               0.0, threats)
        while True:
            elapsed = self._clock() - t0
            size = None
            for s in self.sizes():
                if used + s > c.capacity:
                    continue
                if budget_s is None:
                    size = s if not chunks else None
                    break
                if elapsed + self._predict(c, s, last) <= budget_s:
                    size = s
                    break
            if size is None and not chunks and reused <= 1:
                size = self.small_chunk  # an empty tree and no time: the least a move costs
            if size is None:
                smallest = min((s for s in self.sizes() if used + s <= c.capacity),
                               default=None)
                predicted = elapsed + (0.0 if smallest is None
                                       else self._predict(c, smallest, last))
                break
            t = self._clock()
            tree, act, val, policy, used = self._call(
                size, c.chunks[size], self.params, tree, states, root_mask, key,
                np.int32(len(chunks)))
            self._measured(c, size, self._clock() - t, last)
            used = int(used)
            action, value = int(act), float(val)
            chunks.append(size)
        if action is None:  # no chunk: the reused tree's most visited move
            action = int(c.pick(tree, states, key))
        return AnytimeMove(action, tree, value, policy, sum(chunks), reused, tuple(chunks),
                           self._clock() - t0, predicted, threats)
