"""Agents: one interface (`base.Agent`), one registry (`registry.AGENTS`); `make(name, **config)`
and agent specs (`specs.make_agent("mcts:num_simulations=256")`)."""

from gomoku_jax.agents.base import Agent, BatchedAgent, play_best
from gomoku_jax.agents.baselines import ProximityRandomAgent, RandomAgent
from gomoku_jax.agents.heuristic import HeuristicAgent
from gomoku_jax.agents.registry import AGENTS, make
from gomoku_jax.agents.search import GumbelAgent, PolicyAgent, PureMCTSAgent, SearchAgent

__all__ = ["AGENTS", "Agent", "BatchedAgent", "GumbelAgent", "HeuristicAgent", "PolicyAgent",
           "ProximityRandomAgent", "PureMCTSAgent", "RandomAgent", "SearchAgent", "make",
           "play_best"]
