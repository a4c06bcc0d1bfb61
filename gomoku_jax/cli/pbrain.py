"""`gomoku-jax pbrain`: a Gomocup engine on stdin / stdout (the protocol is
`gomoku_jax.io.pbrain`).

    gomoku-jax pbrain                                  # the default engine (below)
    gomoku-jax pbrain --agent mcts --agent-config num_simulations=256
    gomoku-jax pbrain --checkpoint runs/quick          # the trained network's own agent

Search agents search anytime by default (until the move's time is spent; `--max-nodes`
bounds the tree, and so does INFO max_memory); `--no-anytime` uses `--levels` instead.

Agent configs are `--agent-config KEY=VALUE`, read like agent specs (`gomoku_jax.agents.specs`):
`--agent mcts --agent-config greedy=false` is the spec `mcts:greedy=false`.

The default engine (no --agent, --agent-config or --checkpoint) is the strongest the project
measured (`experiments/strength.py`, docs/strength.md): the shipped 15x15 network's agent
(its search with VCF at the root, and the MCTS-Solver with a VCF proof at every new leaf:
`players.SHIPPED_AGENT`) on 15x15, and `mcts` (PUCT on the heuristic evaluator with VCF) on
every other board size. `--agent trained` is the network's agent without the solver.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Optional, Sequence

from gomoku_jax import agents
from gomoku_jax.agents.base import Agent
from gomoku_jax.agents.specs import TRAINED, build_agent, parse_fields, parse_spec
from gomoku_jax.agents.specs import network_agent as specs_network_agent
from gomoku_jax.games.gomoku.config import RULES, GameConfig
from gomoku_jax.io.pbrain import PbrainEngine
from gomoku_jax.io.player import DEFAULT_MAX_NODES

# The default engine's agent on the board sizes the shipped network does not play (the
# default of every Gomoku config but the shipped network's: `GameConfig.default_agent`).
DEFAULT_AGENT = GameConfig.default_agent

if TYPE_CHECKING:
    from gomoku_jax.players import Player


def agent_config(pairs: Sequence[str]) -> dict[str, str]:
    """{field: text} from `KEY=VALUE` strings (converted by the agent's field types when the
    agent is built); ValueError for a malformed pair or a key given twice."""
    return parse_fields(pairs, "--agent-config")


def build_parser(parser: Optional[argparse.ArgumentParser] = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agent", choices=sorted(agents.AGENTS) + [TRAINED],
                        help="the agent that plays: a registered agent, or 'trained' (the "
                             "checkpoint's eval agent; without --checkpoint the shipped "
                             "15x15 network's); default: the shipped network's agent on "
                             "15x15 and mcts (PUCT on the heuristic evaluator with VCF at the "
                             "root) on other boards, or trained with --checkpoint, or mcts "
                             "with --agent-config")
    parser.add_argument("--agent-config", action="append", default=[], metavar="KEY=VALUE",
                        help="an agent config field, e.g. defence=1.2 (repeatable)")
    parser.add_argument("--checkpoint", metavar="PATH",
                        help="a trained network: a run directory of `gomoku-jax train`, its "
                             "checkpoints/ directory or checkpoints/<step>; the engine then "
                             "plays only the run's board size and win length")
    parser.add_argument("--step", type=int, metavar="N",
                        help="the checkpoint step to load (default: the latest)")
    parser.add_argument("--rule", choices=RULES,
                        help="the rule until the manager sends INFO rule (default: freestyle, "
                             "or the checkpoint's; renju needs win length 5)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the agent's random keys")
    parser.add_argument("--anytime", action=argparse.BooleanOptionalAction, default=True,
                        help="search agents search until the move's time is spent, in "
                             "compiled chunks of num_simulations that continue one tree, "
                             "reused between moves (default); --no-anytime: --levels")
    parser.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES, metavar="N",
                        help="the anytime search's largest tree, in nodes (INFO max_memory "
                             "may bound it further; default %(default)s)")
    parser.add_argument("--levels", type=int, default=3,
                        help="cheaper variants (1/4, 1/16 ... of num_simulations) compiled "
                             "for time control, for agents with num_simulations that do not "
                             "search anytime")
    parser.add_argument("--verbose", action="store_true",
                        help="a MESSAGE with the agent's value and move time before each move")
    return parser


def network_agent(name: str, pairs: Sequence[str], network: "Player") -> Agent:
    """`specs.network_agent` with the config as `KEY=VALUE` strings (--agent-config)."""
    return specs_network_agent(name, agent_config(pairs), network)


def engine_from_args(args: argparse.Namespace) -> PbrainEngine:
    """The engine the flags of `build_parser` describe; SystemExit("error: ...") for bad
    ones (a bad checkpoint path included)."""
    from gomoku_jax.players import SHIPPED_AGENT, load_for_cli

    if args.levels < 1:
        raise SystemExit(f"error: --levels must be >= 1, got {args.levels}")
    if args.max_nodes < 2:
        raise SystemExit(f"error: --max-nodes must be >= 2, got {args.max_nodes}")
    timing = dict(levels=args.levels, anytime=args.anytime, max_nodes=args.max_nodes,
                  verbose=args.verbose)
    default_engine = args.agent is None and args.checkpoint is None and not args.agent_config
    network = load_for_cli(args.checkpoint, args.step,
                           default=args.agent == TRAINED or default_engine)
    name = args.agent or (TRAINED if network is not None else DEFAULT_AGENT)
    try:
        if network is None:
            if name == TRAINED:
                raise ValueError(f"--agent {TRAINED} is a trained network's agent: give "
                                 f"--checkpoint PATH (a run directory)")
            agent = build_agent(name, agent_config(args.agent_config))
            engine = PbrainEngine(agent, rule=args.rule or "freestyle", seed=args.seed,
                                  **timing)
        else:
            game = network.game_spec
            if not isinstance(game, GameConfig):
                raise ValueError(f"the checkpoint's network plays {network.env.id}; pbrain "
                                 f"plays gomoku")
            if default_engine:  # the shipped network's default agent (with the solver)
                agent = specs_network_agent(*parse_spec(SHIPPED_AGENT), network)
            else:
                agent = network_agent(name, args.agent_config, network)
            if args.rule is not None and args.rule != game.rule:
                print(f"warning: the network was trained for {game.rule}; playing {args.rule} "
                      f"with it until INFO rule says otherwise", file=sys.stderr)
            fallback = build_agent(DEFAULT_AGENT, {}) if default_engine else None
            engine = PbrainEngine(agent, params=network.variables, game=game,
                                  fallback=fallback, rule=args.rule or game.rule,
                                  seed=args.seed, **timing)
    except ValueError as e:
        raise SystemExit(f"error: {e}")
    return engine


def main(args: argparse.Namespace) -> int:
    engine = engine_from_args(args)
    for stream in (sys.stdin, sys.stdout):
        if hasattr(stream, "reconfigure"):  # undecodable bytes must not end the engine
            stream.reconfigure(errors="replace")
    try:
        return engine.run(sys.stdin, sys.stdout)
    except BrokenPipeError:  # the manager went away
        return 0
