"""Which agent plays each game config by default: the one place pbrain, the play UI and the
tactics runner ask. The defaults are the strongest the project measured (docs: strength):
the shipped network's agent with the MCTS-Solver (`SHIPPED_AGENT`) on its own game (15x15
freestyle five), else the game's own
default (its spec's `default_agent`: `mcts`, PUCT on the heuristic evaluator with VCF at the
root, on any other Gomoku; Faux Go's heuristic AI, `fauxgo_heuristic`, on Faux Go; `mcts`
elsewhere).
"""

from __future__ import annotations

import functools

from gomoku_jax.games.protocol import GameSpec
from gomoku_jax.players import run_dir
from gomoku_jax.players.loader import default_network_path, load

TRAINED = "trained"  # the spec of a network's own agent
# What the shipped network plays by default (pbrain, the web UI): its own agent with the
# MCTS-Solver and a VCF proof at every new leaf, which beat the same agent without them at
# equal time (docs/strength.md, "Proofs in the tree").
SHIPPED_AGENT = f"{TRAINED}:solver=true,proof_nodes=16"


def default_network():
    """The network shipped with the package (`DEFAULT_NETWORK`), what `trained` plays when
    no checkpoint is given."""
    return load(default_network_path())


@functools.lru_cache(maxsize=1)
def shipped_game() -> GameSpec:
    """The shipped network's game spec, read from its config alone (no arrays loaded)."""
    path = default_network_path()
    return run_dir.section(run_dir.config_data(path), "game", GameSpec, path)


def same_game(a: GameSpec, b: GameSpec) -> bool:
    """Whether two game specs are the same game for a person (the game's `playable`
    fields)."""
    return a.id == b.id and all(getattr(a, f) == getattr(b, f) for f in a.playable or ())


def default_agent_spec(game: GameSpec) -> str:
    """The agent spec that plays `game` by default: `SHIPPED_AGENT` (the shipped network's
    agent, with the MCTS-Solver) on the shipped network's game, else the game's own (its
    spec's `default_agent`)."""
    if same_game(shipped_game(), game):
        return SHIPPED_AGENT
    return game.default_agent
