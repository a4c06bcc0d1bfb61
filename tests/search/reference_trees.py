"""Every reference search (search_helpers.REFERENCE) in one compiled program, shared by
test_tree_loop.py (our loop against mctx's) and test_masking.py (no visit on a masked
child).

The program is the same in both modules, so it compiles once per run: the persistent
compilation cache (conftest.py) serves the second module, on either xdist worker. (One
program of all the searches compiles in about the time of its parts; what it saves is the
second module's compiles.)
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import mctx
import pytest
from search_helpers import REFERENCE, REFERENCE_SIMS, reference_positions, reference_root_mask

from gomoku_jax import search
from gomoku_jax.search import selection

# Each REFERENCE config through our loop and mctx's ("mctx"), with mctx's semantics at a
# game-over node (`stop_at_terminal=False`), so that both loops build the same tree; PUCT's
# also with the algorithms' default, `stop_at_terminal` ("stop"), and so with mctx's own
# PUCT selection, which masks the root only ("unmasked": test_masking.py's control).
VARIANTS = {"ours": {}, "mctx": {"loop": "mctx"}}
PUCT_VARIANTS = {"stop": {"stop_at_terminal": True},
                 "unmasked": {"stop_at_terminal": True}}


def _unmasked_selection(rng_key, tree, node_index, depth, *, pb_c_init, pb_c_base,
                        qtransform):
    return mctx.muzero_action_selection(rng_key, tree, node_index, depth, pb_c_init=pb_c_init,
                                        pb_c_base=pb_c_base, qtransform=qtransform)


def _searches():
    """[(name, variant, algorithm, evaluator)] of the program."""
    out = []
    for name, (algorithm_name, evaluator, fields) in REFERENCE.items():
        variants = dict(VARIANTS, **(PUCT_VARIANTS if name == "puct-peaked-alphazero" else {}))
        for variant, changes in variants.items():
            algorithm = search.make(algorithm_name, **{"stop_at_terminal": False, **fields,
                                                       **changes})
            out.append((name, variant, algorithm, evaluator))
    return out


@functools.lru_cache(maxsize=None)
def reference_trees() -> dict:
    """{(name, variant): (algorithm, root_mask bool[B, A], SearchOutput on the host)}: the
    searches of `_searches` on `reference_positions()` with their `reference_root_mask`,
    REFERENCE_SIMS simulations and key 7, in one compiled program (once per process)."""
    env, states = reference_positions()
    searches = _searches()
    masks = [reference_root_mask(env, algorithm, states) for _, _, algorithm, _ in searches]

    def run(states, key, masks):
        outs = []
        for (_, variant, algorithm, evaluator), mask in zip(searches, masks):
            with pytest.MonkeyPatch.context() as patch:  # while tracing this search only
                if variant == "unmasked":
                    patch.setattr(selection, "puct_selection", _unmasked_selection)
                outs.append(algorithm.search(env, evaluator, None, states, key,
                                             REFERENCE_SIMS, root_mask=mask))
        return outs

    args = (states, jax.random.key(7), [jnp.asarray(m) for m in masks])
    # XLA's newer loop emitters for this program, unlike the rest of the suite (conftest.py):
    # with them the test that builds it took 15 s instead of 20 s.
    compiled = jax.jit(run).lower(*args).compile(
        compiler_options={"xla_cpu_use_fusion_emitters": True})
    outs = jax.device_get(compiled(*args))
    return {(name, variant): (algorithm, mask, out)
            for (name, variant, algorithm, _), mask, out in zip(searches, masks, outs)}
