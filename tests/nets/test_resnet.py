"""The policy-value ResNet (`gomoku_jax.nets.resnet`): shapes, a hand-counted parameter
total, inference vs training BatchNorm, bfloat16 compute, config validation."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gomoku_jax.nets.resnet import NET_PRESETS, NetConfig, PolicyValueModel

PLANES = 5


def closed_form_params(cfg: NetConfig, n: int, cin: int) -> int:
    """The architecture's trained parameters, counted by hand.

    stem: conv 3×3 (cin → c, no bias) + BN (scale, bias)
    block: 2 × [conv 3×3 (c → c, no bias) + BN]
    each head: conv 1×1 (c → h, no bias) + BN
    policy dense: h·n² → n² with bias; value: h·n² → v with bias, v → 1 with bias.
    """
    c, h, v, cells = cfg.channels, cfg.head_channels, cfg.value_hidden, n * n
    stem = 9 * cin * c + 2 * c
    blocks = cfg.blocks * 2 * (9 * c * c + 2 * c)
    head_convs = 2 * (c * h + 2 * h)
    policy = h * cells * cells + cells
    value = h * cells * v + v + v + 1
    return stem + blocks + head_convs + policy + value


def closed_form_flops(cfg: NetConfig, n: int, cin: int) -> int:
    c, h, v, cells = cfg.channels, cfg.head_channels, cfg.value_hidden, n * n
    macs = 9 * cells * cin * c + cfg.blocks * 2 * 9 * cells * c * c  # 3×3 convs
    macs += 2 * cells * c * h  # the two 1×1 head convs
    macs += h * cells * cells + h * cells * v + v  # dense layers
    return 2 * macs


def random_obs(n: int, batch: int, seed: int) -> jax.Array:
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.integers(0, 2, size=(batch, n, n, PLANES)).astype(np.float32))


SHAPE_CASES = [(preset, n) for preset in ("tiny", "small") for n in (7, 9)]
BFLOAT16 = dataclasses.replace(NET_PRESETS["tiny"], dtype="bfloat16")


def model_of(config: NetConfig, n: int) -> PolicyValueModel:
    return PolicyValueModel(config, (n, n, PLANES), n * n)


@functools.lru_cache(maxsize=None)
def built() -> dict:
    """Every network the tests below initialise, in one compiled program (each init draws
    every parameter: seconds of compiling apiece), with what they apply it to:
    preset + n ("tiny7"...) -> (variables of key 1, logits and value of 3 random positions);
    "bfloat16" -> (the tiny bfloat16 net's variables of key 0, its inference and training
    outputs and new statistics on 4 positions, the float32 net's inference with the same
    variables); "connect_four" -> (logits, value) of 3 fresh connect_four positions."""
    import gomoku_jax

    connect_four = gomoku_jax.make("pgx/connect_four")
    c4_model = PolicyValueModel.for_env(NET_PRESETS["tiny"], connect_four)

    def run(obs, bf16_obs):
        out = {}
        for preset, n in SHAPE_CASES:
            model = model_of(NET_PRESETS[preset], n)
            variables = model.init(jax.random.key(1))
            out[f"{preset}{n}"] = (variables, model.apply(variables, obs[n]))
        model = model_of(BFLOAT16, 7)
        variables = model.init(jax.random.key(0))
        out["bfloat16"] = (variables, model.apply(variables, bf16_obs),
                           model.apply_train(variables.params, variables.batch_stats,
                                             bf16_obs),
                           model_of(NET_PRESETS["tiny"], 7).apply(variables, bf16_obs))
        states = jax.vmap(connect_four.init)(jax.random.split(jax.random.key(1), 3))
        out["connect_four"] = c4_model.apply(c4_model.init(jax.random.key(0)),
                                             jax.vmap(connect_four.observe)(states))
        return out

    return jax.device_get(jax.jit(run)({n: random_obs(n, 3, n) for n in (7, 9)},
                                       random_obs(7, 4, 6)))


@pytest.fixture(scope="module")
def tiny7():
    """(model, variables, jitted apply, jitted apply_train) for the tiny net on 7×7."""
    model = model_of(NET_PRESETS["tiny"], 7)
    variables = jax.tree.map(jnp.asarray, built()["tiny7"][0])
    return model, variables, jax.jit(model.apply), jax.jit(model.apply_train)


@pytest.mark.parametrize("preset", ["tiny", "small"])
@pytest.mark.parametrize("n", [7, 9])
def test_shapes_dtypes_and_parameter_count(preset, n):
    cfg = NET_PRESETS[preset]
    model = model_of(cfg, n)
    variables, (logits, value) = built()[f"{preset}{n}"]
    assert logits.shape == (3, n * n) and logits.dtype == jnp.float32
    assert value.shape == (3,) and value.dtype == jnp.float32
    assert np.all(np.abs(np.asarray(value)) <= 1.0)
    assert model.num_params() == closed_form_params(cfg, n, PLANES)
    # num_params counts the same leaves init returns (BatchNorm statistics excluded)
    assert sum(x.size for x in jax.tree.leaves(variables.params)) == model.num_params()
    # running mean and variance per BN feature: stem + 2 per block + two heads
    stats = sum(x.size for x in jax.tree.leaves(variables.batch_stats))
    assert stats == 2 * (cfg.channels * (1 + 2 * cfg.blocks) + 2 * cfg.head_channels)
    assert all(x.dtype == jnp.float32 for x in jax.tree.leaves(variables))
    assert model.flops_per_position() == closed_form_flops(cfg, n, PLANES)


def test_parameter_count_with_feature_plane_and_custom_sizes():
    cfg = NetConfig(blocks=0, channels=3, head_channels=2, value_hidden=5)
    model = PolicyValueModel(cfg, (5, 5, 6), 5 * 5)
    assert model.num_params() == closed_form_params(cfg, 5, 6)
    # by hand, in full: 9·6·3 + 6 | 0 blocks | 2·(3·2 + 4) | 2·25·25 + 25 | 2·25·5 + 5 + 5 + 1
    assert model.num_params() == 168 + 20 + 1275 + 261


def test_apply_is_deterministic_and_per_position(tiny7):
    model, variables, apply, _ = tiny7
    obs = random_obs(7, 6, 2)
    logits, value = apply(variables, obs)
    logits2, value2 = apply(variables, obs)
    np.testing.assert_array_equal(logits, logits2)
    np.testing.assert_array_equal(value, value2)
    # Inference BatchNorm: one position's output does not depend on the rest of the batch.
    for i in range(obs.shape[0]):
        li, vi = apply(variables, obs[i:i + 1])
        np.testing.assert_allclose(li[0], logits[i], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(vi[0], value[i], rtol=1e-5, atol=1e-5)
    other = obs.at[1:].set(random_obs(7, 5, 3))
    l3, v3 = apply(variables, other)
    np.testing.assert_allclose(l3[0], logits[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v3[0], value[0], rtol=1e-5, atol=1e-5)


def test_apply_train_uses_batch_statistics(tiny7):
    model, variables, apply, apply_train = tiny7
    obs = random_obs(7, 6, 4)
    (logits, value), new_stats = apply_train(variables.params, variables.batch_stats, obs)
    assert logits.shape == (6, 49) and value.shape == (6,)
    assert np.all(np.abs(np.asarray(value)) <= 1.0)
    # Changing the other batch members changes position 0's training-mode output.
    other = obs.at[1:].set(random_obs(7, 5, 5))
    (l2, _), _ = apply_train(variables.params, variables.batch_stats, other)
    assert not np.allclose(l2[0], logits[0], atol=1e-4)
    # The running averages move (same tree structure, different values) ...
    assert jax.tree.structure(new_stats) == jax.tree.structure(variables.batch_stats)
    old_leaves, new_leaves = jax.tree.leaves(variables.batch_stats), jax.tree.leaves(new_stats)
    assert all(a.shape == b.shape and a.dtype == b.dtype for a, b in zip(old_leaves, new_leaves))
    assert all(not np.array_equal(a, b) for a, b in zip(old_leaves, new_leaves))
    # ... by the configured momentum: new = m · old + (1 - m) · batch statistic, so for the
    # stem BN (mean 0 before) new mean = (1 - m) · the batch mean of the stem conv's output.
    m = model.config.bn_momentum
    conv = variables.params["stem_conv"]["kernel"][...]
    stem = jax.lax.conv_general_dilated(obs, conv, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(new_stats["stem_bn"]["mean"][...],
                               (1 - m) * np.mean(np.asarray(stem), axis=(0, 1, 2)),
                               rtol=1e-4, atol=1e-6)
    # The inference output depends on the running averages (it reads them).
    from gomoku_jax.nets.resnet import NetVars

    l_new, _ = apply(NetVars(variables.params, new_stats), obs)
    l_old, _ = apply(variables, obs)
    assert not np.allclose(l_new, l_old, atol=1e-4)
    # apply_train did not modify its inputs
    np.testing.assert_array_equal(jax.tree.leaves(variables.batch_stats)[0], old_leaves[0])


def test_bfloat16_runs_and_returns_float32():
    variables, (logits, value), ((tl, tv), stats), (rl, rv) = built()["bfloat16"]
    assert all(x.dtype == jnp.float32 for x in jax.tree.leaves(variables))
    assert logits.dtype == jnp.float32 and value.dtype == jnp.float32
    assert np.all(np.isfinite(logits)) and np.all(np.abs(np.asarray(value)) <= 1.0)
    assert tl.dtype == jnp.float32 and tv.dtype == jnp.float32
    assert all(x.dtype == jnp.float32 for x in jax.tree.leaves(stats))
    # close to the float32 network with the same variables
    np.testing.assert_allclose(logits, rl, atol=0.1 * float(np.max(np.abs(rl))) + 0.05)


def test_abstract_vars_match_init(tiny7):
    model, variables, _, _ = tiny7
    abstract = model.abstract_vars()
    assert jax.tree.structure(abstract) == jax.tree.structure(variables)
    for a, x in zip(jax.tree.leaves(abstract), jax.tree.leaves(variables)):
        assert a.shape == x.shape and a.dtype == x.dtype
    assert hash(model) == hash(PolicyValueModel(NET_PRESETS["tiny"], (7, 7, PLANES), 7 * 7))


@pytest.mark.parametrize("kwargs, message", [
    (dict(blocks=-1), "net.blocks must be an int >= 0"),
    (dict(blocks=1.5), "net.blocks takes an int, got 1.5"),
    (dict(channels=0), "net.channels must be an int >= 1"),
    (dict(channels=True), "net.channels takes an int, got True"),
    (dict(head_channels=0), "net.head_channels must be an int >= 1"),
    (dict(value_hidden="eight"), "net.value_hidden takes an int, got 'eight'"),
    (dict(dtype="float16"), "net.dtype must be one of"),
    (dict(bn_momentum=1.0), r"net.bn_momentum must be in \[0, 1\)"),
    (dict(bn_momentum=-0.1), r"net.bn_momentum must be in \[0, 1\)"),
])
def test_net_config_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        NetConfig(**kwargs)


def test_presets_are_valid_and_ordered():
    sizes = [PolicyValueModel(NET_PRESETS[p], (9, 9, PLANES), 9 * 9).num_params()
             for p in ("tiny", "small", "medium", "seed")]
    assert sizes == sorted(sizes)
    assert NET_PRESETS["seed"] == NetConfig()
    assert (NetConfig().blocks, NetConfig().channels) == (10, 128)


def test_any_game_with_grid_observations():
    """The logits are the game's actions, not N² (connect_four: 6×7×2 planes, 7 columns)."""
    import gomoku_jax

    env = gomoku_jax.make("pgx/connect_four")
    model = PolicyValueModel.for_env(NET_PRESETS["tiny"], env)
    assert model.observation_shape == (6, 7, 2) and model.num_actions == 7
    logits, value = built()["connect_four"]
    assert logits.shape == (3, 7) and value.shape == (3,)
    with pytest.raises(ValueError, match=r"observations of shape \[H, W, C\]"):
        PolicyValueModel(NET_PRESETS["tiny"], (42,), 7)
