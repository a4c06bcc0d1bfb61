"""The search agent of the engine tests (pbrain, the web UI) that are not about the search
itself (tests/ is on the import path, as for conftest's helpers).

One configuration, so that their anytime searches compile the same programs: the
persistent compilation cache (conftest.py) then serves every engine after the first, on
either xdist worker.

- No threat search at the root (tests/agents/test_anytime.py and the 20x20 test of
  tests/io/test_pbrain.py play with it): it is most of a search's compile.
- The heuristic evaluator, not the uniform one (which compiles a little less): a test of
  tree reuse needs a search that agrees with itself from move to move.
- One simulation a chunk: then there is no short chunk, and one chunk program a tree size
  (two chunk sizes are tests/agents/test_anytime.py's).
"""

from __future__ import annotations

from gomoku_jax import agents

SEARCH = {"num_simulations": 1, "evaluator": "heuristic", "threat_search": 0}
SEARCH_SPEC = "mcts:" + ",".join(f"{k}={v}" for k, v in SEARCH.items())
SMALL_TREE = 129  # nodes: the tree size the memory-limit tests bound it to


def search_agent():
    """`mcts` with `SEARCH`."""
    return agents.make("mcts", **SEARCH)
