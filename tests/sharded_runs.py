"""A training run sharded over several devices or processes against the same run on one
device: tests/train/test_alphazero.py (8 devices) and tests/train/test_multiprocess.py (2
processes).

Both compute the same games, buffer, keys and counters exactly, and the same floats up to
the order of their reductions -- except where Adam amplifies that float noise: the
gradients agree to ~1e-6 of their scale, but a coordinate whose gradient is ~1e-8 (dead-ReLU
inputs of the value head, ~40% of that kernel) gets the step lr * g / (|g| + eps) with
eps = 1e-8, so a reduction-order difference of 1e-8 in g moves it by a good part of lr.
Those few entries (a handful of 400K) must still be within 2 * lr per SGD step of each
other.
"""

from __future__ import annotations

from typing import Callable

import jax
import numpy as np
import pytest

from gomoku_jax.train.driver import TIMING_KEYS


def leaves(tree) -> dict[str, np.ndarray]:
    """{path: NumPy array} of a pytree's leaves."""
    return {jax.tree_util.keystr(p): np.asarray(x)
            for p, x in jax.tree_util.tree_leaves_with_path(jax.device_get(tree))}


def assert_metrics_match(sharded: list[dict], one: list[dict]) -> None:
    """Per iteration, every number both records hold (but the wall-clock ones) within float
    noise."""
    assert len(sharded) == len(one) > 0
    for it, (a, b) in enumerate(zip(sharded, one), 1):
        keys = [k for k, v in a.items() if k in b and k not in TIMING_KEYS
                and isinstance(v, (int, float))]
        assert {"loss", "sgd_steps", "games"} <= set(keys), keys
        for k in keys:
            assert a[k] == pytest.approx(b[k], rel=1e-4, abs=1e-5), (it, k, a[k], b[k])


def assert_leaves_match(sharded: dict[str, np.ndarray], one: dict[str, np.ndarray],
                        learning_rate: float, sgd_steps: int,
                        is_param: Callable[[str], bool] = lambda path: True) -> None:
    """Every leaf: integers exactly, floats with allclose(rtol=1e-4, atol=1e-5) but for
    Adam's float noise in the params (`is_param(path)`; see the module docstring), in at
    most 50 entries in all."""
    assert sharded.keys() == one.keys()
    report = []
    for path, x in sharded.items():
        y = one[path]
        assert x.shape == y.shape and x.dtype == y.dtype, path
        if x.dtype.kind == "f":
            bad = int(np.sum(~np.isclose(x, y, rtol=1e-4, atol=1e-5)))
            diff = float(np.max(np.abs(x - y), initial=0))
        else:
            bad, diff = int(np.sum(x != y)), 0.0
        if bad:
            report.append({"path": path, "kind": x.dtype.kind, "size": int(x.size),
                           "bad": bad, "max_diff": diff})
    for r in report:
        adam_noise = (is_param(r["path"]) and r["kind"] == "f"
                      and r["bad"] <= max(1e-4 * r["size"], 1)
                      and r["max_diff"] <= 2 * learning_rate * sgd_steps)
        assert adam_noise, f"the sharded run differs beyond Adam's float-noise allowance: {report}"
    assert sum(r["bad"] for r in report) <= 50, report
