"""Gradients of convolution layers (the model classes' forms) against JAX's: jax.grad and
xlapy.grad of the same loss, compiled on the cpu backend, for NHWC / HWIO and NCHW / OIHW
layers with strides, padding, dilation, feature groups and depthwise layers (channel
multipliers 1 and 2); these run the gemm convolution (conv.py), the depthwise kernels
(conv_depthwise.py: forward, input gradient, filter gradient) and the strided dots."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import xlapy as xp
from xlapy.backends.cpu.passes.conv_plan import depthwise_plan, filter_grad_plan
from xlapy.hlo import parse

_LAYERS = [
    # (lhs shape, rhs shape, strides, padding, rhs dilation, groups, dimension numbers)
    ((2, 9, 9, 6), (3, 3, 6, 8), (1, 1), "SAME", (1, 1), 1, ("NHWC", "HWIO", "NHWC")),
    ((2, 10, 9, 6), (3, 3, 6, 8), (2, 2), "SAME", (1, 1), 1, ("NHWC", "HWIO", "NHWC")),
    ((2, 6, 9, 9), (8, 6, 3, 3), (1, 2), "VALID", (2, 1), 1, ("NCHW", "OIHW", "NCHW")),
    ((2, 9, 9, 6), (3, 3, 2, 9), (1, 1), "SAME", (1, 1), 3, ("NHWC", "HWIO", "NHWC")),
    ((2, 11, 11, 20), (3, 3, 1, 20), (1, 1), "SAME", (1, 1), 20, ("NHWC", "HWIO", "NHWC")),
    ((2, 11, 10, 17), (3, 3, 1, 34), (2, 2), "SAME", (1, 1), 17, ("NHWC", "HWIO", "NHWC")),
    ((2, 12, 12, 16), (5, 5, 1, 16), (1, 1), "VALID", (2, 2), 16, ("NHWC", "HWIO", "NHWC")),
    ((3, 8, 8, 12), (1, 1, 12, 24), (1, 1), "VALID", (1, 1), 1, ("NHWC", "HWIO", "NHWC")),
]


def _loss(lax, numpy):
    def loss(x, w, strides, padding, rdil, groups, dn):
        y = lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=rdil,
                                     dimension_numbers=dn, feature_group_count=groups)
        return numpy.sum(numpy.tanh(y) * y)
    return loss


@pytest.mark.parametrize("k", range(len(_LAYERS)))
def test_conv_layer_gradients(k):
    ls, rs, strides, padding, rdil, groups, dn = _LAYERS[k]
    rng = np.random.default_rng(k)
    x = rng.standard_normal(ls).astype(np.float32)
    w = (rng.standard_normal(rs) * 0.3).astype(np.float32)
    static = (strides, padding, rdil, groups, dn)
    jl, xl = _loss(jax.lax, jax.numpy), _loss(xp.lax, xp.numpy)
    want = jax.jit(jax.grad(lambda a, b: jl(a, b, *static), argnums=(0, 1)))(x, w)
    got = xp.jit(xp.grad(lambda a, b: xl(a, b, *static), argnums=(0, 1)))(x, w)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-4, atol=2e-4)
    if groups == ls[-1] == rs[-1]:
        # depthwise, multiplier 1: the direct kernels take the layer and its gradients
        text = xp.jit(xp.grad(lambda a, b: xl(a, b, *static), argnums=(0, 1))).lower(
            x, w).as_text()
        convs = [i for i in parse(text).entry.instructions if i.opcode == "convolution"]
        assert sum(depthwise_plan(i) is not None for i in convs) == 2
        assert sum(filter_grad_plan(i) is not None for i in convs) == 1


@pytest.mark.parametrize("dn", [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW"),
                                ("NHWC", "HWIO", "NCHW")])
def test_conv_epilogue(dn):
    """bias, folded batch norm, relu6 and a residual add on each tile of the convolution's
    gemm (gemm_epilogue.py) where one gemm computes it, the same values as JAX's."""
    rng = np.random.default_rng(11)
    nhwc = dn[0] == "NHWC"
    x = rng.standard_normal((8, 16, 16, 24) if nhwc else (8, 24, 16, 16)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 24, 40) if nhwc else (40, 24, 3, 3)) * 0.2).astype(
        np.float32)
    r = rng.standard_normal((8, 16, 16, 40) if dn[2] == "NHWC" else (8, 40, 16, 16)).astype(
        np.float32)
    g, bias = rng.standard_normal(40).astype(np.float32), rng.standard_normal(40).astype(
        np.float32)
    axis = 3 if dn[2] == "NHWC" else 1
    shape = [1, 1, 1, 1]
    shape[axis] = 40

    def block(lax, numpy):
        def f(x, w, g, bias, r):
            y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
            y = y * numpy.reshape(g, shape) + numpy.reshape(bias, shape) + r
            return numpy.minimum(numpy.maximum(y, 0.0), 6.0)
        return f
    want = jax.jit(block(jax.lax, jax.numpy))(x, w, g, bias, r)
    fx = xp.jit(block(xp.lax, xp.numpy))
    got = fx(x, w, g, bias, r)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
    text = fx.lower(x, w, g, bias, r).compile().as_text()
    # one gemm computes an NHWC result: the epilogue fusion around it; NCHW is a gemm per
    # batch element, its consumers a kernel of their own
    assert ("kOutput" in text) == (dn[2] == "NHWC")
