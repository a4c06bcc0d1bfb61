"""Fingerprints of the search programs: a hash of the StableHLO that `jax.jit(...).lower`
gives for each of a fixed set of searches and agents, so that a refactor which must not
change what runs (the same trees, the same compiled speed) can be checked exactly.

    python experiments/program_fingerprints.py --json after.json
    git stash; python experiments/program_fingerprints.py --json before.json; git stash pop
    python experiments/program_fingerprints.py --compare before.json after.json

Nothing is compiled: each program is traced and lowered only (about 20 s on a 2-core CPU
for all of them). Equal StableHLO means XLA compiles the same program, so a search gives
the same trees for the same keys and runs at the same speed; a hash that changed names the
program to look at. The lowered text carries no source locations, so two checkouts in
different directories agree. The programs (9×9 Gomoku, a batch of 4, 8 simulations):
PUCT, Gumbel and pure MCTS with the uniform and the heuristic evaluator, with their
self-play and their playing configs, with and without a root mask; each with `loop="mctx"`
and from a given tree; PUCT with leaf parallelism; the agents `mcts` (with and without
tree reuse), `gumbel` and `pure_mcts` (`act_batch`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Callable, Iterator, Optional, Sequence

import jax

from gomoku_jax import agents, games, progress, search
from gomoku_jax.games.gomoku.heuristic_evaluator import HeuristicEvaluator
from gomoku_jax.search import tree_loop

BATCH, SIMULATIONS, BOARD = 4, 8, 9


def programs() -> Iterator[tuple[str, Callable, tuple]]:
    """(name, function, arguments) of every fingerprinted program."""
    env = games.make("gomoku", board_size=BOARD)
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), BATCH))
    key = jax.random.key(1)
    evaluators = {"uniform": search.UniformEvaluator(), "heuristic": HeuristicEvaluator()}
    playing = {"puct": {"greedy": True}, "pure_mcts": {"greedy": True},
               "gumbel": {"gumbel_scale": 0.0, "sample_plies": 4}}
    for name in ("puct", "gumbel", "pure_mcts"):
        for evaluator_name, evaluator in evaluators.items():
            for config_name, config in (("self-play", {}), ("play", playing[name])):
                algorithm = search.make(name, **config)
                label = f"{name} {evaluator_name} {config_name}"
                yield (label, lambda s, k, a=algorithm, e=evaluator: a.search(
                    env, e, None, s, k, SIMULATIONS), (states, key))
                yield (f"{label} root mask", lambda s, k, a=algorithm, e=evaluator: a.search(
                    env, e, None, s, k, SIMULATIONS, root_mask=s.legal_action_mask),
                    (states, key))
        mctx_loop = search.make(name, loop="mctx")
        yield (f"{name} loop=mctx", lambda s, k, a=mctx_loop: a.search(
            env, search.UniformEvaluator(), None, s, k, SIMULATIONS), (states, key))
        algorithm = search.make(name)
        tree = tree_loop.empty_tree(states, 2 * SIMULATIONS + 1, env.num_actions)
        yield (f"{name} from a tree", lambda s, k, t, a=algorithm: a.search(
            env, search.UniformEvaluator(), None, s, k, SIMULATIONS, tree=t),
            (states, key, tree))
    parallel = search.make("puct", leaves_per_step=4)
    yield ("puct leaves_per_step=4", lambda s, k: parallel.search(
        env, search.UniformEvaluator(), None, s, k, SIMULATIONS), (states, key))
    for spec in ("mcts", "mcts reuse_tree", "gumbel", "pure_mcts"):
        name, _, reuse = spec.partition(" ")
        agent = agents.make(name, env=env, num_simulations=SIMULATIONS,
                            **({"reuse_tree": True} if reuse else {}))
        agent_states = (jax.vmap(agent.init)(jax.random.split(key, BATCH))
                        if agent.init(key) is not None else None)
        yield (f"agent {spec}", lambda s, k, a=agent, st=agent_states: a.act_batch(
            None, st, s, jax.random.split(k, BATCH)), (states, key))


def fingerprint(function: Callable, args: tuple) -> str:
    """The first 16 hex digits of the sha256 of `function`'s lowered StableHLO text."""
    text = jax.jit(function).lower(*args).as_text()
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprints(enabled: bool = True) -> dict[str, str]:
    """{program name: fingerprint} of every program of `programs()`."""
    found = list(programs())
    out = {}
    with progress.bar(total=len(found), desc="lowering", unit="program",
                      enabled=enabled) as bar:
        for name, function, args in found:
            out[name] = fingerprint(function, args)
            bar.update(1)
    return out


def compare(before: dict[str, str], after: dict[str, str]) -> tuple[str, bool]:
    """(a markdown table of the programs of both, True when every one is unchanged)."""
    lines = ["| program | before | after | same |", "|---|---|---|---|"]
    same = True
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name, "-"), after.get(name, "-")
        same &= a == b
        lines.append(f"| {name} | {a} | {b} | {'yes' if a == b else '**no**'} |")
    return "\n".join(lines), same


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=None, metavar="PATH",
                        help="write {program: fingerprint} here (default: print it)")
    parser.add_argument("--compare", nargs=2, default=None, metavar=("BEFORE", "AFTER"),
                        help="compare two such files instead: a table, exit status 1 if any "
                             "program changed")
    progress.add_argument(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.compare:
        before, after = (json.loads(open(path).read()) for path in args.compare)
        table, same = compare(before, after)
        print(table)
        print(f"\nall {len(before)} programs unchanged" if same else "\nsome programs changed")
        return 0 if same else 1
    found = fingerprints(enabled=not args.no_progress)
    text = json.dumps(found, indent=1, sort_keys=True)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
        print(f"{len(found)} fingerprints written to {args.json}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
