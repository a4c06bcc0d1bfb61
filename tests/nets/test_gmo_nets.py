"""GMO's networks (`nets/gmo.py`): shapes, parameter counts, and MC-dropout."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gomoku_jax.nets.gmo import MOVE_TYPES, PASS, PLACE, GMOConfig, GMOModel, MoveFeatures

OBS = (9, 9, 5)
ACTIONS = 82  # 9x9 plus a pass, as Faux Go


def expected_params(cfg: GMOConfig, obs_shape, actions: int) -> int:
    """The parameter count from the architecture in the module doc, layer by layer."""
    dense = lambda i, o: i * o + o  # noqa: E731
    d = cfg.part_dim
    state = dense(math.prod(obs_shape), 256) + dense(256, cfg.state_dim)
    move = (MOVE_TYPES * d + (actions + 1) * d + actions * d + dense(1, d)
            + dense(4 * d, cfg.move_dim))
    value = (dense(cfg.state_dim + cfg.move_dim, cfg.hidden_dim)
             + dense(cfg.hidden_dim, cfg.hidden_dim) + 2 * dense(cfg.hidden_dim, 1))
    return state + move + value


def test_the_seeds_sizes_and_parameter_count():
    cfg = GMOConfig()
    assert (cfg.state_dim, cfg.move_dim, cfg.hidden_dim, cfg.top_k, cfg.optim_steps) == (
        128, 128, 256, 5, 10)
    assert (cfg.lr, cfg.beta, cfg.gamma, cfg.exploration_temp, cfg.dropout_rate) == (
        0.1, 0.3, 0.1, 1.0, 0.1)
    assert (cfg.mc_samples, cfg.novelty_memory_size) == (10, 1000)
    model = GMOModel(cfg, OBS, ACTIONS)
    assert model.num_params() == expected_params(cfg, OBS, ACTIONS)
    small = GMOConfig(state_dim=16, move_dim=24, hidden_dim=32, part_dim=8)
    assert GMOModel(small, (5, 5, 5), 26).num_params() == expected_params(small, (5, 5, 5), 26)


@pytest.fixture(scope="module")
def small():
    """(model, params): the parameters drawn by one compiled init (eagerly, each layer's
    initialiser compiles on its own)."""
    cfg = GMOConfig(state_dim=16, move_dim=16, hidden_dim=32, part_dim=8, dropout_rate=0.5)
    model = GMOModel(cfg, OBS, ACTIONS)
    return model, jax.jit(model.init)(jax.random.key(0))


def features(n: int) -> MoveFeatures:
    actions = jnp.arange(n, dtype=jnp.int32)
    return MoveFeatures(kind=jnp.where(actions == ACTIONS - 1, PASS, PLACE),
                        source=jnp.full((n,), ACTIONS), target=actions,
                        count=jnp.full((n,), 0.25))


def test_shapes_of_the_encoders_and_the_value_net(small):
    model, params = small

    @jax.jit
    def run(params):
        s = model.encode_state(params, jnp.ones((3,) + OBS))
        m = model.encode_moves(params, features(ACTIONS))
        return s, m, model.value(params, s[:, None, :], m[None])  # broadcast to [3, A]

    s, m, (value, log_var) = run(params)
    assert s.shape == (3, 16) and m.shape == (ACTIONS, 16)
    assert value.shape == log_var.shape == (3, ACTIONS)
    assert value.dtype == jnp.float32 and bool(jnp.all(jnp.abs(value) < 1))


def test_mc_dropout_variance_is_zero_without_dropout_and_positive_with_it(small):
    model, params = small
    no_rate = dataclasses.replace(model, config=dataclasses.replace(model.config,
                                                                     dropout_rate=0.0))

    @jax.jit
    def run(params, keys):
        s = model.encode_state(params, jnp.ones(OBS))
        m = model.encode_moves(params, features(ACTIONS))
        return (jax.vmap(lambda k: model.value(params, s, m, k)[0])(keys),
                jax.vmap(lambda k: model.value(params, s, m, None)[0])(keys),
                jax.vmap(lambda k: no_rate.value(params, s, m, k)[0])(keys))

    sampled, off, zero = map(np.asarray, run(params, jax.random.split(jax.random.key(1), 10)))
    assert float(np.min(np.var(sampled, 0))) > 0
    np.testing.assert_array_equal(off, np.broadcast_to(off[0], off.shape))  # all equal
    assert float(np.max(np.var(off, 0))) < 1e-12
    np.testing.assert_array_equal(zero, off)


@pytest.mark.parametrize("field, value", [("top_k", 0), ("optim_steps", -1), ("lr", -0.1),
                                          ("dropout_rate", 1.0), ("mc_samples", 1.5),
                                          ("beta", float("nan"))])
def test_config_rejects_bad_values(field, value):
    with pytest.raises(ValueError, match=field):
        GMOConfig(**{field: value})
