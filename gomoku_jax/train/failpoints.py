"""Failpoints: a test hook that makes a training run fail at a chosen point, as a kill, a
full disk or a numerical blow-up would. A no-op unless $GOMOKU_JAX_FAILPOINTS names points:

    GOMOKU_JAX_FAILPOINTS="kill@checkpoint_write:3"     # SIGKILL in the middle of checkpoint 3
    GOMOKU_JAX_FAILPOINTS="nan@params:2,kill@iteration:4"

Each entry is ACTION@POINT:ITERATION. Points (`POINTS`): where in the run driver (and in
the checkpoint writer) `hit(point, iteration)` is called. Actions:

- kill: the process sends itself SIGKILL there (nothing after it runs: no `finally`, no
  flush), as `kill -9` from outside would;
- enospc: an OSError(ENOSPC) is raised there, as a full disk's write would;
- nan: `hit` returns "nan" and the caller poisons what the point names (the params, the
  loss) with NaN.

For tests and experiments/kill_resume.py only; nothing else sets the variable.
"""

from __future__ import annotations

import errno
import functools
import os
import signal
from typing import Optional

ENV_VAR = "GOMOKU_JAX_FAILPOINTS"
ACTIONS = ("kill", "enospc", "nan")
POINTS = {
    "iteration": "the iteration's compiled call has been dispatched and its results not "
                 "fetched yet (on an asynchronous backend it is running)",
    "params": "after the iteration, before its checks (nan: every float array of the state)",
    "loss": "after the iteration, before its checks (nan: the loss metric)",
    "checkpoint_write": "inside orbax's save of the step, with its temporary directory "
                        "half written",
    "manifest": "after orbax finished the step, before its integrity.json is written",
    "checkpoint_done": "after the step's checkpoint is complete, before the next iteration",
}


@functools.lru_cache(maxsize=8)
def parse(text: str) -> dict[tuple[str, int], str]:
    """{(point, iteration): action} of a failpoint spec; ValueError for a bad one."""
    out = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        try:
            action, rest = entry.split("@")
            point, iteration = rest.split(":")
            iteration = int(iteration)
        except ValueError:
            raise ValueError(f"${ENV_VAR}: {entry!r} is not ACTION@POINT:ITERATION") from None
        if action not in ACTIONS or point not in POINTS:
            raise ValueError(f"${ENV_VAR}: {entry!r}: actions are {', '.join(ACTIONS)}; "
                             f"points are {', '.join(POINTS)}")
        out[(point, iteration)] = action
    return out


def hit(point: str, iteration: int) -> Optional[str]:
    """Act on the failpoint `point` of `iteration` if $GOMOKU_JAX_FAILPOINTS names it: kill
    the process, raise OSError(ENOSPC), or return "nan" for the caller to act on; None
    (and nothing done) otherwise."""
    text = os.environ.get(ENV_VAR)
    if not text:
        return None
    action = parse(text).get((point, int(iteration)))
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "enospc":
        raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (failpoint "
                                    f"enospc@{point}:{iteration})")
    return action
