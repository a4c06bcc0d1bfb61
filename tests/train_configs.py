"""The training configs the tests share, so that each program compiles once a session (the
persistent cache and `trainer_for` serve the rest): AlphaZero's is the session's
`trained_run` (conftest), GMO's its test preset.

    override(preset(ALGORITHMS[algo].test_preset, algo), [*ALGO_SETS[algo], ...])

What a test changes on top is the host's (eval.*, run.*: the arena, the length and the
checkpoints of a run), not what the iteration computes.
"""

from __future__ import annotations

from conftest import TRAINED_SETS

# The assignments of `trained_run`'s config that change what its iteration computes.
PROGRAM_SETS = tuple(s for s in TRAINED_SETS if not s.startswith(("eval.", "run.")))
ALGO_SETS = {"alphazero": PROGRAM_SETS, "gmo": ()}
