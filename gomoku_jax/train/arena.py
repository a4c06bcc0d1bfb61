"""The training run's arena: the trained agent at full strength against the opponents of
`eval.opponents`, any training algorithm's."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

from gomoku_jax.agents.specs import make_agent
from gomoku_jax.eval.arena import per_opening_colour, run_match

PREVIOUS = "previous"  # the opponent spec of the trained agent with the previous params


def evaluate(trainer: Any, params: Any, previous: Any, key: jax.Array) -> dict[str, dict]:
    """{opponent spec: {"score", "wins", "draws", "losses", "elo"}}, from the trained
    agent's side (`trainer.agent()` with `params`), every opening of the game with both
    sides. A search agent plays without the game's threat search at the root
    (`SearchAgent.threat_search`), so the arena measures the network and its search alone."""
    cfg = trainer.config
    env = trainer.env
    g = per_opening_colour(cfg.eval.games, len(env.default_openings()))
    agent = trainer.agent()
    if any(f.name == "threat_search" for f in dataclasses.fields(agent)):  # search agents
        agent = dataclasses.replace(agent, threat_search=0)
    results = {}
    for i, spec in enumerate(cfg.eval.opponents):
        if spec == PREVIOUS:
            opponent, params_b = agent, previous
        else:
            opponent, params_b = make_agent(spec), None
        r = run_match(env, agent, opponent, jax.random.fold_in(key, i), g,
                      params_a=params, params_b=params_b)
        results[spec] = {"score": r.score, "wins": r.wins, "draws": r.draws,
                         "losses": r.losses,
                         # None for a 0% or 100% score (an infinite difference; not JSON)
                         "elo": r.elo.diff if np.isfinite(r.elo.diff) else None}
    return results


def validate_opponents(config: Any) -> None:
    """ValueError naming the first bad agent spec of `config.eval.opponents`."""
    env = config.env()
    for spec in config.eval.opponents:
        if spec != PREVIOUS:
            make_agent(spec).bind(env)  # ValueError naming the bad spec


def arena_table(arena: dict[str, dict]) -> str:
    """A markdown table of `evaluate`'s results (an infinite Elo difference, stored as None,
    shows as +∞ for a 100% score and -∞ for 0%)."""
    rows = ["| opponent | W-D-L | score | Elo diff |", "|---|---|---|---|"]
    for spec, r in arena.items():
        infinite = "+∞" if r["score"] > 0.5 else "-∞"
        elo = infinite if r["elo"] is None else f"{r['elo']:+.0f}"
        rows.append(f"| {spec} | {r['wins']}-{r['draws']}-{r['losses']} | {r['score']:.3f} | "
                    f"{elo} |")
    return "\n".join(rows)
