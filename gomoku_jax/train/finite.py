"""The numerical guard of a run: an iteration whose metrics or trained params hold a NaN
or an Inf stops the run before anything of it is written (`check`)."""

from __future__ import annotations

import math
from typing import Any, Optional

import jax
import jax.numpy as jnp


class NonFiniteError(RuntimeError):
    """An iteration produced a NaN or an Inf (in its loss, another metric or the params)."""


@jax.jit
def all_finite(tree: Any) -> jax.Array:
    """bool[]: every float of `tree` is finite (one reduction on device, one scalar back)."""
    flags = [jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tree)
             if jnp.issubdtype(x.dtype, jnp.inexact)]
    return jnp.all(jnp.stack(flags)) if flags else jnp.array(True)


def poison(tree: Any) -> Any:
    """`tree` with every float array NaN (the `nan@params` failpoint)."""
    return jax.tree.map(lambda x: x * jnp.nan if jnp.issubdtype(x.dtype, jnp.inexact) else x,
                        tree)


def check(iteration: int, metrics: dict, params_finite: bool, last_step: Optional[int],
          run_dir: Any) -> None:
    """NonFiniteError naming what is not finite at `iteration`, and the last good
    checkpoint (`last_step`, None for none), unless the metrics and params are finite."""
    bad = sorted(k for k, v in metrics.items() if isinstance(v, float) and not math.isfinite(v))
    if not params_finite:
        bad.append("the params")
    if not bad:
        return
    kept = (f"its last checkpoint, step {last_step}, is kept and nothing newer was written"
            if last_step is not None else "no checkpoint was written")
    raise NonFiniteError(
        f"iteration {iteration} of {run_dir} produced NaN or Inf in {', '.join(bad)}: the "
        f"run stopped there; {kept} (its metrics line included). A resume would repeat "
        f"the same iteration: change the config (e.g. a lower optim.learning_rate) in a "
        f"new run")
