"""The training step (`gomoku_jax.train.learner`): the loss against a NumPy reference,
masking of illegal moves, the optimiser's schedules and clipping, and a loss that falls."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import compiled

import gomoku_jax
from gomoku_jax.nets.resnet import NET_PRESETS, PolicyValueModel
from gomoku_jax.train import optim as train_optim
from gomoku_jax.train.alphazero import learner
from gomoku_jax.train.alphazero.config import OptimSection
from gomoku_jax.train.alphazero.samples import Sample

N = 7
A = N * N


@dataclasses.dataclass(frozen=True)
class FixedOutputs:
    """A stand-in model whose 'network' returns given (logits, value): params = (logits,
    value), so the loss is a function of the outputs alone."""

    def apply_train(self, params, batch_stats, obs):
        return params, batch_stats


def np_log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def reference_losses(logits, v, legal, policy, value, weight, value_weight, coef):
    """LossParts by the formulas of the docstring, in float64 NumPy."""
    logits, v = logits.astype(np.float64), v.astype(np.float64)
    log_p = np_log_softmax(np.where(legal, logits, -np.inf))
    xent = np.array([-sum(p * lp for p, lp in zip(pol, lps) if p > 0)
                     for pol, lps in zip(policy, log_p)])
    ent = np.array([-sum(p * math.log(p) for p in pol if p > 0) for pol in policy])
    policy_loss = np.sum(weight * xent) / max(weight.sum(), 1e-6)
    vw = weight * value_weight
    value_loss = np.sum(vw * (v - value) ** 2) / max(vw.sum(), 1e-6)
    decided = vw * (value != 0)
    acc = np.sum(decided * (np.sign(v) == np.sign(value))) / max(decided.sum(), 1e-6)
    return (policy_loss + coef * value_loss, policy_loss, value_loss,
            np.sum(weight * ent) / max(weight.sum(), 1e-6), acc)


def random_targets(rng, b, legal):
    policy = rng.dirichlet(np.ones(A) * 0.3, size=b) * legal
    policy[np.arange(b), np.argmax(legal, axis=1)] += 1e-3  # at least one legal entry
    policy /= policy.sum(axis=1, keepdims=True)
    return policy.astype(np.float32)


_losses = jax.jit(learner.losses, static_argnums=0)


@pytest.mark.parametrize("seed", range(4))
def test_losses_match_numpy_reference_and_ignore_illegal_logits(seed):
    rng = np.random.default_rng(seed)
    b = 6
    legal = rng.random((b, A)) < 0.6
    legal[:, 0] = True
    logits = rng.normal(size=(b, A)).astype(np.float32) * 3
    v = np.tanh(rng.normal(size=b)).astype(np.float32)
    policy = random_targets(rng, b, legal)
    value = rng.choice([-1.0, 0.0, 1.0], size=b).astype(np.float32)
    weight = (rng.random(b) < 0.8).astype(np.float32)
    weight[0] = 1.0
    value_weight = (rng.random(b) < 0.7).astype(np.float32)
    value_weight[0] = 1.0
    coef = float(rng.uniform(0.5, 2.0))

    def run(logits):
        parts, _ = _losses(FixedOutputs(), (jnp.asarray(logits), jnp.asarray(v)),
                                  None, None, jnp.asarray(legal), jnp.asarray(policy),
                                  jnp.asarray(value), jnp.asarray(weight),
                                  jnp.asarray(value_weight), coef)
        return np.array([float(x) for x in parts])

    got = run(logits)
    ref = reference_losses(logits, v, legal, policy, value, weight, value_weight, coef)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    # Illegal moves' logits are masked out: changing them changes nothing.
    other = np.where(legal, logits, rng.normal(size=(b, A)).astype(np.float32) * 1e4)
    np.testing.assert_array_equal(run(other), got)
    # ... and get no gradient.
    grad = jax.jit(jax.grad(lambda lg: learner.losses(
        FixedOutputs(), (lg, jnp.asarray(v)), None, None, jnp.asarray(legal),
        jnp.asarray(policy), jnp.asarray(value), jnp.asarray(weight),
        jnp.asarray(value_weight), coef)[0].loss))(jnp.asarray(logits))
    assert np.all(np.asarray(grad)[~legal] == 0)
    # Samples with weight 0 do not count at all.
    dropped = weight == 0
    if dropped.any():
        noisy = logits.copy()
        noisy[dropped] = rng.normal(size=(dropped.sum(), A)) * 50
        np.testing.assert_allclose(run(noisy), got, rtol=1e-6)


def lr_trace(optim: OptimSection, total: int, grads=None) -> np.ndarray:
    """The size of each AdamW update under a constant gradient of 1 (Adam's normalised
    step is then exactly 1 per coordinate, so the update is the learning rate)."""
    opt = train_optim.make_optimizer(optim, total)
    params = {"w": jnp.zeros(3)}
    state = opt.init(params)
    out = []
    for i in range(total):
        g = {"w": jnp.ones(3) * (1.0 if grads is None else grads[i])}
        updates, state = opt.update(g, state, params)
        out.append(-float(updates["w"][0]))
    return np.array(out)


def test_constant_and_cosine_schedules():
    base = OptimSection(learning_rate=0.1, weight_decay=0.0)
    np.testing.assert_allclose(lr_trace(base, 5), 0.1, rtol=1e-4)  # Adam's eps: 1e-5 off
    cos = lr_trace(dataclasses.replace(base, schedule="cosine"), 8)
    expected = [0.1 * 0.5 * (1 + math.cos(math.pi * t / 8)) for t in range(8)]
    np.testing.assert_allclose(cos, expected, rtol=1e-4, atol=1e-7)


def test_warmup_cosine_schedule():
    cfg = OptimSection(learning_rate=0.1, weight_decay=0.0, schedule="warmup_cosine",
                       warmup_steps=3)
    got = lr_trace(cfg, 10)
    expected = [0.1 * t / 3 if t < 3 else 0.1 * 0.5 * (1 + math.cos(math.pi * (t - 3) / 7))
                for t in range(10)]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-7)
    # more warm-up than steps, or none: still builds and stays finite
    for warm in (0, 50):
        trace = lr_trace(dataclasses.replace(cfg, warmup_steps=warm), 4)
        assert np.all(np.isfinite(trace)) and np.all(trace >= 0) and trace.max() <= 0.1 + 1e-7
    train_optim.make_optimizer(cfg, 0)  # a run of 0 steps: no division by zero at build time


def test_gradient_clipping():
    base = OptimSection(learning_rate=0.1, weight_decay=0.0)
    clipped = dataclasses.replace(base, grad_clip=0.5)
    # a gradient of norm sqrt(3) · 100 is clipped to norm 0.5, like a gradient of sqrt(3):
    # Adam then sees the same sequence (both rescaled by the same factor each step).
    spiky = [1.0, 100.0, 1.0]
    np.testing.assert_allclose(lr_trace(clipped, 3, spiky), lr_trace(clipped, 3, [1, 1, 1]),
                               rtol=1e-5)
    assert not np.allclose(lr_trace(base, 3, spiky), lr_trace(base, 3, [1, 1, 1]), rtol=1e-3)


def test_weight_decay_is_decoupled():
    opt = train_optim.make_optimizer(OptimSection(learning_rate=0.1, weight_decay=0.5), 1)
    params = {"w": jnp.full(2, 2.0)}
    updates, _ = opt.update({"w": jnp.zeros(2)}, opt.init(params), params)
    np.testing.assert_allclose(updates["w"], -0.1 * 0.5 * 2.0, rtol=1e-5)


@pytest.fixture(scope="module")
def fixed_batch():
    """32 random 7×7 positions with one-hot policy targets on a legal cell and ±1 values."""
    env = gomoku_jax.make("gomoku", board_size=N, win_length=4, observation="canonical")
    rng = np.random.default_rng(0)
    b = 32
    actions = np.stack([rng.permutation(A) for _ in range(b)]).astype(np.int32)
    traj = compiled(env).play(jnp.asarray(actions[:, :12]))
    t = rng.integers(0, 12, size=b)
    states = jax.tree.map(lambda x: x[t, np.arange(b)], traj)
    legal = np.asarray(states.legal_action_mask)
    policy = np.zeros((b, A), np.float32)
    for i in range(b):
        policy[i, rng.choice(np.flatnonzero(legal[i]))] = 1.0
    ones = jnp.ones(b, jnp.float32)
    value = jnp.asarray(rng.choice([-1.0, 1.0], size=b), jnp.float32)
    return env, Sample(states, jnp.asarray(policy), value, ones, ones,
                       jnp.full(b, -1, jnp.int32))


def test_loss_falls_on_a_fixed_batch(fixed_batch):
    env, batch = fixed_batch
    model = PolicyValueModel.for_env(NET_PRESETS["tiny"], env)
    variables = model.init(jax.random.key(0))
    # A warm-up: a first full-size Adam step (lr >= 3e-3) drives the wide value head's tanh
    # into saturation, where its gradient is 0 and the value loss stays put.
    optim = OptimSection(learning_rate=1e-3, weight_decay=1e-4, schedule="warmup_cosine",
                         warmup_steps=5, grad_clip=5.0)
    optimizer = train_optim.make_optimizer(optim, 30)

    @jax.jit
    def train(params, stats):
        def body(carry, _):
            p, s, o = carry
            p, s, o, parts, norm = learner.sgd_step(env, model, optimizer, 1.0, p, s, o, batch)
            return (p, s, o), (parts.loss, parts.policy_loss, parts.value_loss, norm)

        return jax.lax.scan(body, (params, stats, optimizer.init(params)), None, length=30)

    (params, stats, _), (loss, policy_loss, value_loss, norm) = train(
        variables.params, variables.batch_stats)
    loss = np.asarray(loss)
    assert np.all(np.isfinite(loss)) and np.all(np.asarray(norm) > 0)
    assert loss[-1] < 0.5 * loss[0], loss
    assert np.asarray(policy_loss)[-1] < np.asarray(policy_loss)[0]
    assert np.asarray(value_loss)[-1] < 0.5 * np.asarray(value_loss)[0]
    # the running BatchNorm statistics were updated too
    assert not all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(stats),
                                                        jax.tree.leaves(variables.batch_stats)))
