"""The gradient suite: every differentiable primitive's VJP, three ways.

Each case is a function f(L, N, *args) written once against a lax-like module L and a
numpy-like module N, so the same code runs on xlapy (xlapy.lax, xlapy.numpy) and on JAX
(jax.lax, jax.numpy). The loss is sum(f(...) * c) with a fixed random cotangent c, so the
whole VJP is exercised, not just its sum. For every case:

  1. finite differences: xlapy's eager gradient on float64 inputs against central
     differences of xlapy's eager loss (relative tolerance ~1e-6); skipped for cases that
     sit on a kink on purpose (ties of max, abs at 0, pow at x <= 0) and for stop_gradient;
  2. JAX: xlapy's float32 gradient against jax.grad on the same inputs (rtol 1e-5),
     eagerly, as jit(grad(f)) on the cpu and interpreter backends, and as grad(jit(f)).

Kinks follow JAX: max/min ties split the cotangent evenly, abs'(0) = 1, relu-style selects
give 0. A few second-order cases (grad of grad) are checked against JAX at the end.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp


@dataclass
class Case:
    name: str
    fn: object                      # f(L, N, *args)
    inputs: list                    # one spec per argument: (shape, kind) or a NumPy array
    fd: bool = True                 # check against finite differences
    rtol: float = 1e-5

    def __str__(self):
        return self.name


def _make(spec, rng):
    if isinstance(spec, np.ndarray):
        return spec.astype(np.float64)
    shape, kind = spec
    if kind == "normal":
        return rng.standard_normal(shape)
    if kind == "pos":                       # away from 0: logs, roots, divisors
        return rng.uniform(0.5, 2.0, shape)
    if kind == "unit":                      # inside (-1, 1)
        return rng.uniform(-0.9, 0.9, shape)
    if kind == "ties":                      # small integers: many exact ties
        return rng.integers(-2, 3, shape).astype(np.float64)
    raise ValueError(kind)


def _arr(shape, values):
    return np.asarray(values, np.float64).reshape(shape)


C = Case
CASES = [
    # ---- elementwise unary (basic.py) ----
    C("neg", lambda L, N, x: L.neg(x), [((2, 3), "normal")]),
    C("abs", lambda L, N, x: L.abs(x), [((2, 3), "normal")]),
    C("abs_at_zero", lambda L, N, x: L.abs(x), [_arr((4,), [0, -1, 2, 0])], fd=False),
    C("sign_floor_ceil_round", lambda L, N, x: L.sign(x) * L.floor(x) + L.ceil(x) * x
      + L.round(x) * x, [((2, 3), "normal")], fd=False),
    C("exp", lambda L, N, x: L.exp(x), [((2, 3), "normal")]),
    C("expm1", lambda L, N, x: L.expm1(x), [((2, 3), "normal")]),
    C("log", lambda L, N, x: L.log(x), [((2, 3), "pos")]),
    C("log1p", lambda L, N, x: L.log1p(x), [((2, 3), "unit")]),
    C("logistic", lambda L, N, x: L.logistic(x), [((2, 3), "normal")]),
    C("tanh", lambda L, N, x: L.tanh(x), [((2, 3), "normal")]),
    C("sin_cos", lambda L, N, x: L.sin(x) * L.cos(x), [((2, 3), "normal")]),
    C("tan", lambda L, N, x: L.tan(x), [((2, 3), "unit")]),
    C("sqrt", lambda L, N, x: L.sqrt(x), [((2, 3), "pos")]),
    C("rsqrt", lambda L, N, x: L.rsqrt(x), [((2, 3), "pos")]),
    C("cbrt", lambda L, N, x: L.cbrt(x), [((2, 3), "pos")]),
    C("cbrt_negative", lambda L, N, x: L.cbrt(x), [_arr((3,), [-2.0, -0.7, 1.5])]),
    C("erf", lambda L, N, x: L.erf(x), [((2, 3), "normal")]),
    # ---- elementwise binary ----
    C("add_sub", lambda L, N, x, y: L.sub(L.add(x, y), L.mul(y, y)),
      [((2, 3), "normal"), ((2, 3), "normal")]),
    C("mul", lambda L, N, x, y: L.mul(x, y), [((2, 3), "normal"), ((2, 3), "normal")]),
    C("div", lambda L, N, x, y: L.div(x, y), [((2, 3), "normal"), ((2, 3), "pos")]),
    C("rem", lambda L, N, x, y: L.rem(x, y), [_arr((4,), [3.1, -3.1, 0.4, 5.2]),
                                              _arr((4,), [1.5, 1.5, -0.7, 2.0])]),
    C("pow", lambda L, N, x, y: L.pow(x, y), [((2, 3), "pos"), ((2, 3), "normal")]),
    C("pow_x_nonpositive", lambda L, N, x, y: L.pow(x, y),
      [_arr((5,), [-2.0, 0.0, -1.5, 0.0, -3.0]), _arr((5,), [3.0, 2.0, 2.0, 3.5, 1.0])],
      fd=False),
    C("max_min", lambda L, N, x, y: L.max(x, y) + 2 * L.min(x, y),
      [((3, 4), "normal"), ((3, 4), "normal")]),
    C("max_min_ties", lambda L, N, x, y: L.max(x, y) + 2 * L.min(x, y),
      [((3, 4), "ties"), ((3, 4), "ties")], fd=False),
    C("atan2", lambda L, N, x, y: L.atan2(x, y), [((2, 3), "normal"), ((2, 3), "normal")]),
    # ---- select, convert, broadcast ----
    C("select", lambda L, N, x, y: L.select(x > y, x * x, y * 3),
      [((3, 4), "normal"), ((3, 4), "normal")]),
    C("convert_f16_int32", lambda L, N, x: L.convert_element_type(
        L.convert_element_type(x, np.float16), x.dtype) * 0 + L.convert_element_type(
        L.convert_element_type(x, np.int32), x.dtype) + x * x, [((2, 3), "normal")]),
    C("broadcast_in_dim", lambda L, N, x: L.broadcast_in_dim(x, (2, 3, 4), (0, 2)),
      [((2, 4), "normal")]),
    C("broadcast_in_dim_ones", lambda L, N, x: L.broadcast_in_dim(x, (3, 4, 5), (0, 1, 2)),
      [((1, 4, 1), "normal")]),
    C("numpy_broadcasting", lambda L, N, x, y, z: N.tanh(x * y + z),
      [((3, 1), "normal"), ((4,), "normal"), ((), "normal")]),
    # ---- shapes.py ----
    C("reshape", lambda L, N, x: L.reshape(x, (3, 4)) * L.reshape(x, (3, 4)),
      [((2, 6), "normal")]),
    C("transpose", lambda L, N, x: L.transpose(x, (2, 0, 1)), [((2, 3, 4), "normal")]),
    C("reduce_sum", lambda L, N, x: L.reduce_sum(x * x, (0, 2)), [((2, 3, 4), "normal")]),
    C("reduce_max_min", lambda L, N, x: L.reduce_max(x, (1,)) + L.reduce_min(x, (0, 1)),
      [((3, 5), "normal")]),
    C("reduce_max_ties", lambda L, N, x: L.reduce_max(x, (1,)) * 3 + L.reduce_min(x, (1,)),
      [_arr((3, 4), [1, 3, 3, 0, 2, 2, 2, 2, -1, 5, 0, 5])], fd=False),
    C("reduce_prod", lambda L, N, x: L.reduce_prod(x, (1,)), [((3, 4), "normal")]),
    C("reduce_prod_zeros", lambda L, N, x: L.reduce_prod(x, (1,)),
      [_arr((3, 4), [0, 2, 3, 4, 0, 1, 0, 2, 1, 2, 3, 4])], fd=False),
    C("numpy_mean_var", lambda L, N, x: N.var(x, axis=0) + N.mean(x, axis=1, keepdims=True),
      [((3, 4), "normal")]),
    C("dot_general_matmul", lambda L, N, x, y: L.dot_general(x, y, (((1,), (0,)), ((), ()))),
      [((3, 4), "normal"), ((4, 5), "normal")]),
    C("dot_general_batch_odd_order", lambda L, N, x, y: L.dot_general(
        x, y, (((3, 0), (1, 3)), ((2,), (0,)))),
      [((2, 3, 4, 5), "normal"), ((4, 5, 3, 2), "normal")]),
    C("dot_general_outer", lambda L, N, x, y: L.dot_general(x, y, (((), ()), ((), ()))),
      [((3,), "normal"), ((2, 2), "normal")]),
    C("dot_general_two_batch", lambda L, N, x, y: L.dot_general(
        x, y, (((2,), (1,)), ((1, 0), (0, 2)))),
      [((2, 3, 4), "normal"), ((3, 4, 2, 5), "normal")]),
    C("slice_strided", lambda L, N, x: L.slice(x, (1, 0), (6, 7), (2, 3)),
      [((7, 8), "normal")]),
    C("slice_empty_stride", lambda L, N, x: L.slice(x, (1, 2), (4, 3), (2, 1)),
      [((5, 4), "normal")]),
    C("pad_negative_interior", lambda L, N, x: L.pad(x, 0.0, ((-1, 2, 1), (2, -2, 0))),
      [((4, 5), "normal")]),
    C("pad_value_grad", lambda L, N, x, v: L.pad(x, v, ((1, 1, 1), (0, 1, 2))),
      [((2, 3), "normal"), ((), "normal")]),
    C("concatenate", lambda L, N, x, y: L.concatenate([x, y * y, x], 1),
      [((2, 3), "normal"), ((2, 2), "normal")]),
    C("rev", lambda L, N, x: L.rev(x, (0, 2)) * x, [((2, 3, 2), "normal")]),
    C("numpy_indexing_basic", lambda L, N, x: x[1:, ::2] * x[:-1, 1::2],
      [((4, 6), "normal")]),
    # ---- conv.py, windowed.py (more in test_conv.py) ----
    C("conv_nhwc_strided_grouped", lambda L, N, x, w: L.conv_general_dilated(
        x, w, (2, 1), ((1, 0), (1, 1)), rhs_dilation=(1, 2),
        dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2),
      [((1, 4, 5, 2), "normal"), ((2, 2, 1, 4), "normal")]),
    C("reduce_window_sum_dilated", lambda L, N, x: L.reduce_window(
        x, 0.0, L.add, (2, 2), (1, 2), ((1, 0), (0, 1)), (1, 2), (2, 1)),
      [((4, 3), "normal")]),
    C("max_pool_same", lambda L, N, x: L.reduce_window(
        x, -np.inf, L.max, (1, 2, 2), (1, 2, 2), "SAME"), [((2, 3, 5), "normal")]),
    # ---- misc.py ----
    C("clamp", lambda L, N, x: L.clamp(-0.5, x, 0.7), [((3, 4), "normal")]),
    C("clamp_at_bounds", lambda L, N, x: L.clamp(-0.5, x, 0.5),
      [_arr((4,), [-0.5, 0.5, 0.0, 2.0])], fd=False),
    C("stop_gradient", lambda L, N, x: x * L.stop_gradient(x * x), [((2, 3), "normal")],
      fd=False),  # finite differences see through stop_gradient
]


# ---- the checks -----------------------------------------------------------------------------

def _loss(case, L, N, c):
    def loss(*args):
        out = case.fn(L, N, *args)
        return N.sum(out * c)
    return loss


def _inputs(case):
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))  # stable across runs
    args = [_make(s, rng) for s in case.inputs]
    out = np.asarray(case.fn(xlax, xnp, *args))
    c = rng.standard_normal(out.shape)
    return args, c


def _fd_grad(f, args, i, eps=1e-6):
    x = args[i]
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi = [a.copy() for a in args]
        lo = [a.copy() for a in args]
        hi[i][idx] += eps
        lo[i][idx] -= eps
        g[idx] = (float(f(*hi)) - float(f(*lo))) / (2 * eps)
    return g


def _close(got, want, rtol, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = max(1.0, float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)


@pytest.mark.usefixtures("x64")  # finite differences need float64
@pytest.mark.parametrize("case", [c for c in CASES if c.fd], ids=str)
def test_finite_differences(case):
    args, c = _inputs(case)
    loss = _loss(case, xlax, xnp, c)
    argnums = tuple(range(len(args)))
    grads = xp.grad(loss, argnums)(*args)
    for i, g in enumerate(grads):
        assert np.asarray(g).dtype == np.float64
        _close(g, _fd_grad(loss, args, i), 1e-6, f"{case.name}: d/d arg {i} vs finite "
                                                 "differences")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_against_jax(case):
    args, c = _inputs(case)
    args32 = [a.astype(np.float32) for a in args]
    c32 = c.astype(np.float32)
    argnums = tuple(range(len(args)))
    want = jax.grad(_loss(case, jax.lax, jnp, c32), argnums)(*args32)
    xloss = _loss(case, xlax, xnp, c32)
    variants = {
        "eager grad": xp.grad(xloss, argnums),
        "jit(grad) cpu": xp.jit(xp.grad(xloss, argnums), backend="cpu"),
        "jit(grad) interpreter": xp.jit(xp.grad(xloss, argnums), backend="interpreter"),
        "grad(jit)": xp.grad(xp.jit(xloss, backend="cpu"), argnums),
    }
    for how, fn in variants.items():
        got = fn(*args32)
        for i, (g, w) in enumerate(zip(got, want)):
            assert np.asarray(g).dtype == np.float32, f"{how}: {np.asarray(g).dtype}"
            _close(g, w, case.rtol, f"{case.name}: {how}, d/d arg {i} vs jax.grad")


# ---- second order ---------------------------------------------------------------------------

SECOND_ORDER = [
    ("tanh_cube", lambda L, N, x: L.tanh(x) * x * x * x),
    ("exp_sin", lambda L, N, x: L.exp(L.sin(x))),
    ("log_logistic", lambda L, N, x: L.log(L.logistic(x) + 1.0)),
    ("rational", lambda L, N, x: x / (1.0 + x * x)),
    ("sqrt_pow", lambda L, N, x: L.sqrt(x * x + 1.0) + L.pow(x * x + 2.0, 1.5)),
    ("max_select", lambda L, N, x: L.max(x * x, 0.5 * x) + L.select(x > 0.3, x * x * x, x)),
]


@pytest.mark.usefixtures("x64")  # finite differences need float64
@pytest.mark.parametrize("name,fn", SECOND_ORDER, ids=[n for n, _ in SECOND_ORDER])
def test_grad_of_grad(name, fn):
    xs = np.array([-1.3, -0.2, 0.4, 1.7], np.float32)
    want = [jax.grad(jax.grad(lambda x: fn(jax.lax, jnp, x)))(x) for x in xs]
    gg = xp.grad(xp.grad(lambda x: fn(xlax, xnp, x)))
    jit_gg = xp.jit(gg)
    for x, w in zip(xs, want):
        for how, got in (("eager", gg(x)), ("jit", jit_gg(x))):
            _close(got, w, 1e-5, f"{name}: second derivative at {x} ({how})")
    # and against a finite difference of xlapy's own first derivative, in float64
    g64 = xp.grad(lambda x: fn(xlax, xnp, x))
    gg64 = xp.grad(xp.grad(lambda x: fn(xlax, xnp, x)))
    for x in xs.astype(np.float64):
        fd = (float(g64(x + 1e-6)) - float(g64(x - 1e-6))) / 2e-6
        _close(gg64(x), fd, 1e-6, f"{name}: second derivative at {x} vs finite differences")


def test_ties_split_like_jax():
    """Pin the tie convention: JAX splits evenly among tied maxima (reduce and binary)."""
    x = np.array([1.0, 3.0, 3.0], np.float32)
    np.testing.assert_allclose(jax.grad(lambda x: jnp.max(x))(x), [0, 0.5, 0.5])
    np.testing.assert_allclose(xp.grad(lambda x: xnp.max(x))(x), [0, 0.5, 0.5])
    y = np.array([1.0, 0.0, 2.0], np.float32)
    np.testing.assert_allclose(xp.grad(lambda y: xnp.sum(xnp.maximum(y, 1.0)))(y),
                               [0.5, 0.0, 1.0])


def test_nondifferentiable_paths_carry_no_gradient():
    """Comparisons, argmax and integer casts on a differentiated value need no VJP."""
    def f(x):
        i = xnp.argmax(x)
        mask = (x > 0).astype(x.dtype)
        return xnp.sum(x * mask) + i.astype(x.dtype) * 0.0
    x = np.array([-1.0, 2.0, 0.5], np.float32)
    np.testing.assert_allclose(xp.grad(f)(x), [0, 1, 1])
    np.testing.assert_allclose(xp.jit(xp.grad(f))(x), [0, 1, 1])
