"""A compiled agent that plays one move at a time under a clock (for protocol engines).

`TimedPlayer(agent)` holds one jitted `act` per *variant* of the agent and game, strongest
first: the agent itself and, when it has a `num_simulations` field, cheaper copies of it
made with `dataclasses.replace` (a quarter, a sixteenth ... of the simulations; see
`variants`), each bound to the game it plays.

    player = TimedPlayer(agents.make("heuristic"))
    player.prepare(env, key)                 # compile + time one warm move per variant
    played = player.move(env, state, agent_state, key, budget_s=0.5)

`prepare` compiles every variant for a game and measures one warm move of each (from the
game's initial position), so that no compilation ever happens while a move is on the
clock. `move` plays with the
strongest variant whose estimated move time fits `budget_s` (the cheapest one when none
does; all of them when `budget_s` is None) and refreshes that variant's estimate with the
time the move took. Agents without `num_simulations` have a single variant whose time is
only measured: there is nothing to scale.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Callable, NamedTuple, Optional, Sequence

import jax

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
    variant: int  # index into `TimedPlayer.variants`


class TimedPlayer:
    """Compiled variants of one agent with per-game move-time estimates.

    Args:
      agent: any registered agent (see `gomoku_jax.agents`).
      params: the agent's learned parameters (None for the fixed agents).
      levels: how many variants to compile when the agent has `num_simulations`.
      clock: seconds as a float (injectable for tests).
      smoothing: weight of the newest measured time in a variant's running estimate.
    """

    def __init__(self, agent: Agent, params: Any = None, *, levels: int = 3,
                 clock: Callable[[], float] = time.perf_counter, smoothing: float = 0.5):
        self.agent = agent
        self.params = params
        self.variants = variants(agent, levels)
        self._clock = clock
        self._smoothing = smoothing
        self._acts: dict[Env, list[Callable]] = {}
        self._estimates: dict[Env, list[float]] = {}

    def prepared(self, env: Env) -> bool:
        return env in self._estimates

    def estimates(self, env: Env) -> list[float]:
        """Estimated seconds per move of each variant for `env` (after `prepare`)."""
        return list(self._estimates[env])

    def prepare(self, env: Env, key: jax.Array) -> list[float]:
        """Compile every variant for `env` (once) and time one warm move of each on the
        initial position; returns the estimates in seconds."""
        if env not in self._estimates:
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

    def move(self, env: Env, state: Any, agent_state: Any, key: jax.Array,
             budget_s: Optional[float] = None) -> Played:
        """One move for the side to move of `state` with the strongest variant that fits
        `budget_s` seconds (see `choose_variant`). Compiles first if `env` was not prepared
        (avoid that on the clock: call `prepare` ahead)."""
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
