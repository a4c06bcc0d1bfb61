"""A compiled agent that plays one move at a time under a clock (for protocol engines).

Two ways to spend a move's time, chosen by the agent:

- **Anytime search** (a `SearchAgent` whose loop continues trees, see
  `agents.anytime.supports`): the search runs in compiled chunks that continue one tree
  until the move's budget is spent, predicting each chunk's time and stopping before one
  would overrun, and the tree of the last move, rerooted at the new position, carries its
  work over to the next (`agents.anytime.AnytimeSearch`). The agent state is that tree.
- **Variants** (any other agent): one jitted `act` per *variant* of the agent and game,
  strongest first: the agent itself and, when it has a `num_simulations` field, cheaper
  copies of it made with `dataclasses.replace` (a quarter, a sixteenth ... of the
  simulations; see `variants`), each bound to the game it plays. A move uses the strongest
  variant whose estimated move time fits the budget (the cheapest one when none does; all
  of them when `budget_s` is None) and refreshes that variant's estimate with the time the
  move took. Agents without `num_simulations` have a single variant whose time is only
  measured: there is nothing to scale.

    player = TimedPlayer(agents.make("heuristic"))
    player.prepare(env, key)                 # compile + time warm calls (off the clock)
    agent_state = player.init_state(env, key)
    played = player.move(env, state, agent_state, key, budget_s=0.5)

`prepare` compiles everything for a game and measures warm calls from the game's initial
position, so that no compilation ever happens while a move is on the clock; what is
compiled is kept per game (and, for anytime search, per tree capacity), so a new game on
the same board compiles nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Callable, NamedTuple, Optional, Sequence

import jax

from gomoku_jax.agents.anytime import DEFAULT_MAX_NODES, AnytimeMove, AnytimeSearch, uncommitted
from gomoku_jax.agents.anytime import supports as anytime_supports
from gomoku_jax.agents.base import Agent
from gomoku_jax.games.protocol import Env

SIMULATIONS_FIELD = "num_simulations"


def variants(agent: Agent, levels: int = 3, factor: int = 4) -> tuple[Agent, ...]:
    """`agent` and up to `levels - 1` cheaper copies of it, strongest first.

    The hook for time control: an agent whose dataclass has a `num_simulations` field gets
    copies with `num_simulations // factor`, `// factor**2`, ... (each at least 1; a copy
    the agent's own validation rejects ends the list), and the agent's `tree_capacity`
    when it reuses its tree, so that every variant takes the same agent state. Any other
    agent is its only variant.
    """
    if levels < 1 or factor < 2:
        raise ValueError(f"need levels >= 1 and factor >= 2, got {levels} and {factor}")
    if SIMULATIONS_FIELD not in {f.name for f in dataclasses.fields(agent)}:
        return (agent,)
    out = [agent]
    sims = int(getattr(agent, SIMULATIONS_FIELD))
    # An agent that carries its search tree between moves (`reuse_tree`) keeps one tree
    # size in every variant: the game's agent state passes from one variant to the next.
    same_state = ({"tree_capacity": agent.capacity} if getattr(agent, "reuse_tree", False)
                  else {})
    while len(out) < levels and sims // factor >= 1:
        sims //= factor
        try:
            out.append(dataclasses.replace(agent, **{SIMULATIONS_FIELD: sims}, **same_state))
        except ValueError:
            break
    return tuple(out)


def simulations(agent: Agent) -> Optional[int]:
    """The agent's `num_simulations`, or None when it has no such field."""
    value = getattr(agent, SIMULATIONS_FIELD, None)
    return None if value is None else int(value)


def choose_variant(estimates_s: Sequence[float], budget_s: Optional[float]) -> int:
    """Index of the first (strongest) variant whose estimated seconds fit `budget_s`; the
    last (cheapest) when none does; 0 when there is no budget (None)."""
    if budget_s is None:
        return 0
    for i, seconds in enumerate(estimates_s):
        if seconds <= budget_s:
            return i
    return len(estimates_s) - 1


@functools.lru_cache(maxsize=64)
def _jitted_act(agent: Agent) -> Callable:
    # Keyed on the (frozen, hashable) agent, so engines in one process share compilations.
    return jax.jit(agent.act)


def jitted_act(agent: Agent) -> Callable:
    """`jax.jit(agent.act)`, shared between equal agents when the agent is hashable."""
    try:
        return _jitted_act(agent)
    except TypeError:  # an unhashable config field
        return jax.jit(agent.act)


class Played(NamedTuple):
    """What `TimedPlayer.move` returns."""

    action: int  # as the agent chose it (the caller checks legality)
    agent_state: Any
    info: dict
    seconds: float  # wall time of the move, transfer of the action included
    variant: int  # index into `TimedPlayer.variants` (0 for anytime search)
    simulations: Optional[int] = None  # simulations run (None: the variant's field)
    anytime: Optional[AnytimeMove] = None  # the anytime search's record of the move


class TimedPlayer:
    """One agent compiled per game, with move-time estimates (see the module docstring).

    Args:
      agent: any registered agent (see `gomoku_jax.agents`).
      params: the agent's learned parameters (None for the fixed agents).
      levels: how many variants to compile when the agent has `num_simulations` and does
        not search anytime.
      anytime: search anytime when the agent can (False: variants for every agent).
      max_nodes, max_tree_bytes: bound the anytime search's tree (`AnytimeSearch`).
      clock: seconds as a float (injectable for tests).
      smoothing: weight of the newest measured time in a running estimate.
    """

    def __init__(self, agent: Agent, params: Any = None, *, levels: int = 3,
                 anytime: bool = True, max_nodes: int = DEFAULT_MAX_NODES,
                 max_tree_bytes: int = 0, clock: Callable[[], float] = time.perf_counter,
                 smoothing: float = 0.5):
        self.agent = agent
        self.params = uncommitted(params)
        params = self.params
        self.anytime: Optional[AnytimeSearch] = None
        if anytime and anytime_supports(agent):
            self.anytime = AnytimeSearch(agent, params, max_nodes=max_nodes,
                                         max_tree_bytes=max_tree_bytes, clock=clock,
                                         smoothing=smoothing)
        self.variants = (agent,) if self.anytime else variants(agent, levels)
        self._clock = clock
        self._smoothing = smoothing
        self._acts: dict[Env, list[Callable]] = {}
        self._estimates: dict[Env, list[float]] = {}

    def prepared(self, env: Env) -> bool:
        if self.anytime is not None:
            return self.anytime.prepared(env)
        return env in self._estimates

    def estimates(self, env: Env) -> list[float]:
        """Estimated seconds per move of each variant for `env` (after `prepare`); for
        anytime search, of each chunk size, largest first."""
        if self.anytime is not None:
            estimates = self.anytime.estimates(env)
            return [estimates[s] for s in self.anytime.sizes()]
        return list(self._estimates[env])

    def cheapest_s(self, env: Env) -> float:
        """Estimated seconds of the cheapest move for `env` (after `prepare`): anytime
        search's reroot without the threat search and one short chunk, or the cheapest
        variant; the estimates follow the moves' measured times."""
        if self.anytime is not None:
            estimates = self.anytime.estimates(env)
            return estimates["plain_start"] + estimates[self.anytime.small_chunk]
        return min(self._estimates[env])

    def set_max_tree_bytes(self, max_tree_bytes: int) -> bool:
        """A memory bound for the anytime search's tree (0: none); True when the tree's
        capacity for some prepared game changes (prepare again, and start a new tree)."""
        if self.anytime is None:
            return False
        envs = self.anytime.prepared_envs()
        before = {env: self.anytime.capacity(env) for env in envs}
        self.anytime.set_max_tree_bytes(max_tree_bytes)
        return any(self.anytime.capacity(env) != c for env, c in before.items())

    def grow_for(self, env: Env, budget_s: Optional[float], key: jax.Array) -> None:
        """Size the anytime search's tree for moves of up to `budget_s` seconds on `env`
        (`AnytimeSearch.grow_for`: a larger tree compiles on a thread; None: back to
        `max_nodes`). Nothing for the other agents."""
        if self.anytime is not None:
            self.anytime.grow_for(env, budget_s, key)

    def prepare(self, env: Env, key: jax.Array) -> list[float]:
        """Compile every variant (or the anytime search's calls) for `env` (once) and time
        warm calls on the initial position; returns the estimates in seconds."""
        if self.anytime is not None:
            self.anytime.prepare(env, key)
        elif env not in self._estimates:
            acts = [jitted_act(v.bind(env)) for v in self.variants]
            state = env.init(key)
            agent_state = self.agent.bind(env).init(key)
            times = []
            for act in acts:
                jax.block_until_ready(act(self.params, agent_state, state, key))  # compile
                start = self._clock()
                jax.block_until_ready(act(self.params, agent_state, state, key))
                times.append(self._clock() - start)
            self._acts[env] = acts
            self._estimates[env] = times
        return self.estimates(env)

    def init_state(self, env: Env, key: jax.Array) -> Any:
        """The agent state for a new game on `env`: the anytime search's empty tree, else
        the agent's own `init`."""
        if self.anytime is not None:
            return self.anytime.init_state(env)
        return self.agent.bind(env).init(key)

    def move(self, env: Env, state: Any, agent_state: Any, key: jax.Array,
             budget_s: Optional[float] = None) -> Played:
        """One move for the side to move of `state` within `budget_s` seconds: anytime
        search, or the strongest variant that fits (see `choose_variant`). Compiles first if
        `env` was not prepared (avoid that on the clock: call `prepare` ahead)."""
        if self.anytime is not None:
            m = self.anytime.move(env, state, agent_state, key, budget_s)
            info = {"value": m.value} if m.policy is None else {"value": m.value,
                                                                 "policy": m.policy}
            return Played(m.action, m.tree, info, m.seconds, 0, m.simulations, m)
        if env not in self._estimates:
            self.prepare(env, key)
        estimates = self._estimates[env]
        index = choose_variant(estimates, budget_s)
        start = self._clock()
        action, agent_state, info = self._acts[env][index](self.params, agent_state, state, key)
        action = int(action)  # blocks until the move is computed
        seconds = self._clock() - start
        w = self._smoothing
        estimates[index] = (1 - w) * estimates[index] + w * seconds
        return Played(action, agent_state, info, seconds, index)
