"""MuZero's networks (`gomoku_jax.nets.muzero`) and their action planes
(`nets.action_planes`): the encoding drawn cell by cell, shapes and dtypes of h, g and f,
latents min-max scaled per example, training mode's statistics, config validation."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from muzero_helpers import TINY, tiny_muzero

from gomoku_jax.nets.action_planes import ActionPlanes
from gomoku_jax.nets.muzero import (
    MUZERO_NET_PRESETS,
    MuZeroNetConfig,
    MuZeroNetwork,
    scale_latent,
)
from gomoku_jax.nets.resnet import NET_PRESETS

B = 3


def test_cell_planes_mark_the_actions_cell():
    planes = ActionPlanes.for_game((3, 4), 12)
    assert planes.kind == "cell" and planes.planes == 1
    out = np.asarray(planes.encode(jnp.array([0, 7, 11])))
    assert out.shape == (3, 3, 4, 1) and out.dtype == np.float32
    for b, (row, col) in enumerate([(0, 0), (1, 3), (2, 3)]):  # flat action row * W + col
        expected = np.zeros((3, 4))
        expected[row, col] = 1.0
        np.testing.assert_array_equal(out[b, :, :, 0], expected)


def test_a_pass_is_its_own_plane():
    planes = ActionPlanes.for_game((2, 2), 5, pass_action=4)
    assert planes.kind == "cell+pass" and planes.planes == 2
    out = np.asarray(planes.encode(jnp.array([3, 4])))
    assert out.shape == (2, 2, 2, 2)
    np.testing.assert_array_equal(out[0, :, :, 0], [[0, 0], [0, 1]])
    np.testing.assert_array_equal(out[0, :, :, 1], np.zeros((2, 2)))  # a placement
    np.testing.assert_array_equal(out[1, :, :, 0], np.zeros((2, 2)))  # the pass: no cell
    np.testing.assert_array_equal(out[1, :, :, 1], np.ones((2, 2)))


def test_other_action_spaces_are_one_hot_planes():
    """connect_four's 7 columns on a 6×7 board: plane a all ones for action a."""
    planes = ActionPlanes.for_game((6, 7), 7)
    assert planes.kind == "one_hot" and planes.planes == 7
    out = np.asarray(planes.encode(jnp.array([2, 6])))
    assert out.shape == (2, 6, 7, 7)
    np.testing.assert_array_equal(out[:, 0, 0], np.eye(7)[[2, 6]])
    assert (out == out[:, :1, :1]).all()  # constant over the board
    # A pass that is not the last action after the cells is no "cell+pass" game.
    assert ActionPlanes.for_game((2, 2), 5, pass_action=0).kind == "one_hot"


def test_action_planes_refuse_a_kind_that_does_not_fit():
    with pytest.raises(ValueError, match="need 9 actions"):
        ActionPlanes("cell", 3, 3, 10)
    with pytest.raises(ValueError, match="must be one of"):
        ActionPlanes("grid", 3, 3, 9)


def test_scale_latent_is_min_max_per_example():
    x = jnp.array([[[1.0, 3.0], [2.0, 5.0]], [[4.0, 4.0], [4.0, 4.0]]])
    out = np.asarray(scale_latent(x))
    np.testing.assert_allclose(out[0], [[0.0, 0.5], [0.25, 1.0]])
    np.testing.assert_array_equal(out[1], 0.0)  # a constant latent: all 0, no NaN


@functools.lru_cache(maxsize=None)
def built() -> dict:
    """The tiny networks (`muzero_helpers.TINY`) on 5×5 boards: Gomoku's ("gomoku": 25
    cells, 5 planes; the shared one) and a Faux-Go-shaped one ("pass": 25 cells and a
    pass, 26 actions, 3 planes), whose g reads a pass plane. Their variables and outputs on
    B random observations, in one compiled program: name -> (network, variables, {"h",
    "g", "f", "other action"} outputs, and Gomoku's "train"): "other action" is g's latent
    from h's by the actions rolled by one, "train" one h-g-f unroll in training mode with
    the statistics it updates."""
    _, gomoku, gomoku_vars = tiny_muzero()
    nets = {"gomoku": gomoku, "pass": MuZeroNetwork(TINY, (5, 5, 3), 26, pass_action=25)}
    actions = {"gomoku": jnp.array([0, 12, 24]), "pass": jnp.array([25, 3, 7])}
    obs = jax.random.bernoulli(jax.random.key(1), 0.4, (B, 5, 5, 5)).astype(jnp.float32)

    @jax.jit
    def run(obs, gomoku_vars):
        out = {}
        for name, net in nets.items():
            variables = gomoku_vars if name == "gomoku" else net._init(jax.random.key(0))
            o = obs[..., :net.observation_shape[-1]]
            latent = net.represent(variables, o)
            nxt, reward = net.dynamics(variables, latent, actions[name])
            other, _ = net.dynamics(variables, latent, jnp.roll(actions[name], 1))
            logits, value = net.predict(variables, nxt)
            out[name] = (variables, {"h": latent, "g": (nxt, reward), "f": (logits, value),
                                     "other action": other})

        def unroll(m):
            s = m.representation(obs, train=True)
            s, r = m.dynamics(s, actions["gomoku"], train=True)
            return m.prediction(s, train=True), r

        out["gomoku"][1]["train"] = gomoku.apply_train(gomoku_vars.params,
                                                       gomoku_vars.batch_stats, unroll)
        return out

    out = jax.device_get(run(obs, gomoku_vars))
    return {name: (nets[name], *out[name]) for name in nets}


@pytest.mark.parametrize("name", ["gomoku", "pass"])
def test_shapes_dtypes_and_ranges(name):
    net, variables, out = built()[name]
    latent = out["h"]
    nxt, reward = out["g"]
    logits, value = out["f"]
    assert net.latent_shape == (5, 5, 6)
    for x in (latent, nxt):
        assert x.shape == (B, 5, 5, 6) and x.dtype == np.float32
        # min-max scaled per example: min 0 and max 1 in every example
        np.testing.assert_allclose(x.reshape(B, -1).min(-1), 0.0, atol=1e-6)
        np.testing.assert_allclose(x.reshape(B, -1).max(-1), 1.0, atol=1e-6)
    assert reward.shape == (B,) and reward.dtype == np.float32
    assert logits.shape == (B, net.num_actions) and logits.dtype == np.float32
    assert value.shape == (B,) and value.dtype == np.float32
    assert (np.abs(reward) <= 1).all() and (np.abs(value) <= 1).all()
    assert np.isfinite(logits).all()
    changed = np.abs(out["other action"] - nxt).reshape(B, -1).max(-1)
    assert (changed > 1e-3).all()  # another action from the same latent: another latent
    # g's first conv reads the latent's 6 channels and the action's planes.
    kernel = variables.params["dynamics"]["trunk"]["conv"]["kernel"]
    assert kernel.shape == (3, 3, 6 + net.actions.planes, 8)


def test_training_mode_updates_the_statistics():
    net, variables, out = built()["gomoku"]
    ((logits, value), reward), stats = out["train"]
    assert logits.shape == (B, 25) and value.shape == (B,) and reward.shape == (B,)
    assert jax.tree.structure(stats) == jax.tree.structure(variables.batch_stats)
    moved = [not np.allclose(a, b) for a, b in zip(jax.tree.leaves(stats),
                                                   jax.tree.leaves(variables.batch_stats))]
    assert all(moved)  # h's, g's and f's BatchNorms all saw the batch


def test_configs_are_validated():
    with pytest.raises(ValueError, match="dtype"):
        MuZeroNetConfig(dtype="float16")
    with pytest.raises(ValueError, match="bn_momentum"):
        MuZeroNetConfig(bn_momentum=1.0)
    with pytest.raises(ValueError, match="blocks"):
        MuZeroNetConfig(blocks=-1)
    with pytest.raises(ValueError, match="latent_channels"):
        MuZeroNetConfig(latent_channels=0)
    with pytest.raises(ValueError, match=r"\[H, W, C\]"):
        MuZeroNetwork(TINY, (25, 5), 25)
    with pytest.raises(ValueError, match="pass_action"):
        MuZeroNetwork(TINY, (5, 5, 3), 26, pass_action=26)


def test_presets_are_sized_as_alphazeros():
    small = MUZERO_NET_PRESETS["small"]
    assert (small.blocks, small.channels) == (NET_PRESETS["small"].blocks,
                                              NET_PRESETS["small"].channels)
    assert small.latent == small.channels
    assert MUZERO_NET_PRESETS.make("small", latent_channels="16").latent == 16
    assert MuZeroNetConfig.from_net(NET_PRESETS["tiny"], reward_hidden=8) == \
        dataclasses.replace(MUZERO_NET_PRESETS["tiny"], reward_hidden=8)
