"""nets/conv.py: the "SAME" convolution with forward-conv gradients equals lax's, values and
both gradients, and everything it does not cover goes to lax unchanged."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from gomoku_jax.nets import conv

DN = ("NHWC", "HWIO", "NHWC")


def lax_conv(x, k):
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=DN,
                                        precision="highest")


SHAPES = [(3, 7, 7, 5, 4, 3, 3), (2, 6, 9, 3, 6, 1, 1), (1, 5, 5, 2, 2, 5, 3)]


@functools.lru_cache(maxsize=None)
def _compared() -> dict:
    """shape -> ((ours, lax's) value, [(ours, lax's) gradient for x and for the kernel]) on
    random inputs: every shape in one compiled program."""

    def ours(x, k):
        return conv.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=DN,
                                         precision="highest")

    def one(shape):
        b, h, w, cin, cout, kh, kw = shape
        kx, kk, kc = jax.random.split(jax.random.key(sum(shape)), 3)
        x = jax.random.normal(kx, (b, h, w, cin))
        k = jax.random.normal(kk, (kh, kw, cin, cout))
        cotangent = jax.random.normal(kc, (b, h, w, cout))
        y, vjp = jax.vjp(ours, x, k)
        y_ref, vjp_ref = jax.vjp(lax_conv, x, k)
        return (y, y_ref), list(zip(vjp(cotangent), vjp_ref(cotangent)))

    return jax.device_get(jax.jit(lambda: {str(shape): one(shape) for shape in SHAPES})())


@pytest.mark.parametrize("shape", SHAPES)
def test_value_and_both_gradients_equal_lax(shape):
    (y, y_ref), gradients = _compared()[str(shape)]
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-5)
    for g, g_ref in gradients:
        np.testing.assert_allclose(g, g_ref, rtol=1e-4, atol=1e-4)


def test_inside_a_scan_as_nnx_conv():
    layer = nnx.Conv(3, 4, (3, 3), padding="SAME", use_bias=False, rngs=nnx.Rngs(0),
                     conv_general_dilated=conv.conv_general_dilated)
    ref = nnx.Conv(3, 4, (3, 3), padding="SAME", use_bias=False, rngs=nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (2, 5, 5, 3))

    def descend(module):
        graph, params = nnx.split(module)

        def step(p, _):
            grad = jax.grad(lambda p: jnp.sum(nnx.merge(graph, p)(x) ** 2))(p)
            return jax.tree.map(lambda a, g: a - 1e-3 * g, p, grad), None

        return jax.jit(lambda p: jax.lax.scan(step, p, None, length=3)[0])(params)

    for a, b in zip(jax.tree.leaves(descend(layer)), jax.tree.leaves(descend(ref))):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs", [dict(window_strides=(2, 2)), dict(padding="VALID"),
                                    dict(rhs_dilation=(2, 2)), dict(kernel_shape=(2, 2))])
def test_other_cases_are_lax_unchanged(kwargs, monkeypatch):
    calls = []
    monkeypatch.setattr(conv, "same_conv", lambda *a: calls.append(a))
    kernel_shape = kwargs.pop("kernel_shape", (3, 3))
    args = dict(window_strides=(1, 1), padding="SAME") | kwargs
    x = jnp.ones((1, 6, 6, 2))
    k = jnp.ones((*kernel_shape, 2, 3))
    y = conv.conv_general_dilated(x, k, args.pop("window_strides"), args.pop("padding"),
                                  dimension_numbers=DN, **args)
    ref = jax.lax.conv_general_dilated(x, k, kwargs.get("window_strides", (1, 1)),
                                       kwargs.get("padding", "SAME"), dimension_numbers=DN,
                                       rhs_dilation=kwargs.get("rhs_dilation"))
    assert not calls
    np.testing.assert_array_equal(y, ref)
