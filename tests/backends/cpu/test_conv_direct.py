"""Convolutions computed without a patch matrix (emitters/conv_direct.py, the plan:
direct_plan): input features innermost, one to four vectors of output features; against
the interpreter on one to three threads: groups of pixels with windows inside the lhs and
at its edges (padding, negative padding), a last partial group, strides, kernel dilation
and reversal (the input gradient's form), 1-d to 3-d, other dim orders and layouts, f64;
inf / NaN in the lhs and an all negative-zero lhs; a bias + relu epilogue against JAX."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.emitters.conv_direct import direct_plan
from xlapy.backends.cpu.passes.conv_plan import conv_plan
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.interpreter import evaluate
from xlapy.hlo import parse


def _vl(t="f32"):
    return gk.lanes(t, vector_bits())


def _cases(t="f32"):
    """(lhs type text, rhs type text, out type text, window, dim labels) of each case."""
    v = _vl(t)

    def s(dims, layout=None):
        text = f"{t}[{','.join(map(str, dims))}]"
        return text + ("{" + ",".join(map(str, layout)) + "}" if layout else "")
    return [
        # NHWC 3x3 SAME: inside and edge groups; 2*9*9 = 162 pixels, a partial last group
        (s((2, 9, 9, 8)), s((3, 3, 8, v)), s((2, 9, 9, v)), "size=3x3 pad=1_1x1_1",
         "b01f_01io->b01f"),
        # the input gradient's form: the kernel reversed, "01oi", two vectors of features
        (s((2, 7, 6, 5)), s((3, 3, 2 * v, 5)), s((2, 7, 6, 2 * v)),
         "size=3x3 pad=1_1x1_1 rhs_reversal=1x1", "b01f_01oi->b01f"),
        # stride 2, kernel dilation 2, negative padding, three vectors
        (s((3, 11, 10, 4)), s((3, 2, 4, 3 * v)), s((3, 4, 5, 3 * v)),
         "size=3x2 stride=2x2 pad=1_-1x0_1 rhs_dilate=2x2", "b01f_01io->b01f"),
        # 1-d, four vectors, a 5-wide window
        (s((3, 13, 6)), s((5, 6, 4 * v)), s((3, 13, 4 * v)), "size=5 pad=2_2",
         "b0f_0io->b0f"),
        # 3-d
        (s((2, 4, 5, 3, 3)), s((2, 3, 2, 3, v)), s((2, 4, 5, 3, v)),
         "size=2x3x2 pad=0_1x1_1x1_0", "b012f_012io->b012f"),
        # other orders of the batch and spatial dims, and a layout keeping features minor
        (s((6, 2, 7, 16), (3, 0, 1, 2)), s((3, 3, 16, v)), s((6, 7, 2, v)),
         "size=3x3 pad=1_1x1_1", "0b1f_01io->01bf"),
    ]


def _module(lhs, rhs, out, window, labels):
    return (f"HloModule direct\nENTRY e {{\n  x = {lhs} parameter(0)\n  w = {rhs} "
            f"parameter(1)\n  ROOT c = {out} convolution(x, w), window={{{window}}}, "
            f"dim_labels={labels}\n}}")


def _args(mod, rng, t):
    dt = np.float64 if t == "f64" else np.float32
    return [rng.standard_normal(p.shape.dims).astype(dt) for p in mod.entry.parameters]


def _check(text, args, threads, rtol):
    mod = parse(text)
    want = np.asarray(evaluate(mod, *args))
    for n in threads:
        exe = get_platform("cpu").compiler.compile(parse(text), num_threads=n)
        got = np.asarray(flatten(exe.run(*args))[0])
        assert np.array_equal(np.isnan(got), np.isnan(want)), n
        zero = want == 0
        assert np.array_equal(np.signbit(got[zero]), np.signbit(want[zero])), n
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=f"{n} threads")


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("k", range(6))
def test_against_the_interpreter(t, k):
    text = _module(*_cases(t)[k])
    conv = parse(text).entry.root
    assert direct_plan(conv, conv_plan(conv)) is not None
    rng = np.random.default_rng(k)
    _check(text, _args(parse(text), rng, t), (1, 2, 3), 1e-4 if t == "f32" else 1e-11)


@pytest.mark.parametrize("k", [0, 2, 3])
def test_nonfinite_and_negative_zero_lhs(k):
    """inf / NaN in the lhs reach the outputs whose windows hold them, padding adds
    nothing next to them; an all -0.0 lhs gives the interpreter's zeros, signs included
    (every product -0 or +0, the sums from +0)."""
    text = _module(*_cases()[k])
    rng = np.random.default_rng(10 + k)
    x, w = _args(parse(text), rng, "f32")
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, 3, replace=False)] = [np.inf, -np.inf, np.nan]
    flat[0], flat[-1] = np.inf, np.nan   # at the edges: read by edge groups only
    _check(text, [x, w], (1, 2), 1e-4)
    _check(text, [np.full_like(x, -0.0), w], (1, 2), 0.0)


def test_bias_relu_epilogue_against_jax():
    """conv + bias + relu compiled as one kernel (the gemm epilogue fusion: results of at
    least MIN_ELEMENTS), the epilogue run on each group's finished rows, against JAX."""
    import jax

    import xlapy as xp
    import xlapy.numpy as xnp
    v = _vl()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 32, 33, 8)).astype(np.float32)   # at least MIN_ELEMENTS
    w = rng.standard_normal((3, 3, 8, 2 * v)).astype(np.float32)
    bias = rng.standard_normal(2 * v).astype(np.float32)

    def f(lax, np_):
        def g(x, w, bias):
            y = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            return np_.maximum(y + bias, 0.0)
        return g
    compiled = xp.jit(f(xp.lax, xnp)).lower(x, w, bias).compile()
    assert "kind=kOutput" in compiled.as_text()
    got = np.asarray(compiled(x, w, bias))
    want = np.asarray(jax.jit(f(jax.lax, jax.numpy))(x, w, bias))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_what_stays_with_the_gemm_path():
    """Output features not a whole number of vectors, or more than GV of them, features not
    innermost in the lhs, lhs dilation: the patch matrix and the gemm (direct_plan None)."""
    v = _vl()
    for lhs, rhs, out, window, labels in [
            ("f32[2,9,9,8]", f"f32[3,3,8,{v + 1}]", f"f32[2,9,9,{v + 1}]", "size=3x3",
             "b01f_01io->b01f"),
            ("f32[2,9,9,8]", f"f32[3,3,8,{5 * v}]", f"f32[2,9,9,{5 * v}]", "size=3x3",
             "b01f_01io->b01f"),
            ("f32[2,8,9,9]", f"f32[3,3,8,{v}]", f"f32[2,9,9,{v}]", "size=3x3 pad=1_1x1_1",
             "bf01_01io->b01f"),
            ("f32[2,5,5,8]", f"f32[3,3,8,{v}]", f"f32[2,9,9,{v}]",
             "size=3x3 pad=1_1x1_1 lhs_dilate=2x2", "b01f_01io->b01f")]:
        conv = parse(_module(lhs, rhs, out, window, labels)).entry.root
        assert direct_plan(conv, conv_plan(conv)) is None, (lhs, rhs, out, labels)
