"""Convolutions, windowed reductions and the rest of xlapy.lax.ops, against JAX.

conv_general_dilated: a table of configurations (layouts, strides, 'SAME'/'VALID'/explicit
and negative padding, lhs/rhs dilation, feature and batch groups, 1-3 spatial dims) is
checked forward and for both gradients against jax.lax / jax.grad: eagerly, and as ONE
jitted function holding every configuration per backend (one compile each). One small
configuration is checked against finite differences in float64.

reduce_window (sum/max/min, with padding, strides, base and window dilation) likewise;
max/min pooling gradients go through select_and_scatter_add (HLO select-and-scatter), whose
tie rule (the first maximum of each window gets the cotangent) matches JAX's; grad of grad
of max pooling checks select_and_scatter_add's own VJP. The remaining xlapy.lax.ops
wrappers (dynamic slicing, clamp, reduce, conv_transpose, ...) are compared with jax.lax.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp
from xlapy.errors import ShapeError, XlapyError

BACKENDS = ["cpu", "interpreter"]

# (lhs shape, rhs shape, strides, padding, kwargs)
CONVS = [
    ((2, 3, 7, 6), (4, 3, 3, 2), (1, 1), "VALID", {}),
    ((2, 3, 7, 6), (4, 3, 3, 2), (2, 1), "SAME", {}),
    ((1, 2, 6, 5), (3, 2, 2, 3), (2, 2), "SAME_LOWER", {}),
    ((2, 7, 6, 3), (3, 2, 3, 4), (2, 2), ((1, 2), (0, -1)),
     dict(dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((2, 7, 6, 4), (3, 2, 2, 6), (1, 2), ((1, 2), (2, 1)),
     dict(lhs_dilation=(2, 1), rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC"),
          feature_group_count=2)),
    ((4, 3, 7, 6), (6, 3, 3, 2), (1, 2), ((1, 0), (2, 1)),
     dict(rhs_dilation=(2, 1), batch_group_count=2)),
    ((2, 9, 4), (5, 4, 3), (3,), ((2, 2),),
     dict(lhs_dilation=(2,), dimension_numbers=("NWC", "WIO", "NWC"))),
    ((2, 4, 6, 5), (4, 1, 3, 3), (1, 1), "SAME", dict(feature_group_count=4)),
    ((3, 5, 2, 4), (2, 2, 2, 6), (1, 1), "VALID",
     dict(dimension_numbers=("HNCW", "HIWO", "CWNH"))),
    ((1, 2, 4, 3, 5), (2, 2, 2, 2, 3), (1, 2, 2), "SAME", {}),
]


def _conv_args(i, dtype=np.float32):
    ls, rs, _, _, _ = CONVS[i]
    rng = np.random.default_rng(i)
    return rng.standard_normal(ls).astype(dtype), rng.standard_normal(rs).astype(dtype)


def _conv(L, i, x, w):
    _, _, strides, padding, kw = CONVS[i]
    return L.conv_general_dilated(x, w, strides, padding, **kw)


def _cot(i):
    """A fixed random cotangent of the output's shape (the shape from xlapy's eager conv)."""
    x, w = _conv_args(i)
    shape = np.shape(_conv(xlax, i, x, w))
    return np.random.default_rng(100 + i).standard_normal(shape).astype(np.float32)


@functools.lru_cache(maxsize=None)
def _conv_refs():
    """JAX's (output, d/dlhs, d/drhs) for every configuration, from ONE jax.jit."""
    args = [_conv_args(i) for i in range(len(CONVS))]
    cots = [_cot(i) for i in range(len(CONVS))]

    def refs(args, cots):
        out = []
        for i, ((x, w), c) in enumerate(zip(args, cots)):
            def loss(x, w, i=i, c=c):
                return jnp.sum(_conv(jax.lax, i, x, w) * c)
            out.append((_conv(jax.lax, i, x, w),) + jax.grad(loss, (0, 1))(x, w))
        return out

    return [tuple(np.asarray(a) for a in r) for r in jax.jit(refs)(args, cots)]


def _close(got, want, what, rtol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)


def test_conv_forward_and_grads_eager():
    for i, (out, gx, gw) in enumerate(_conv_refs()):
        x, w = _conv_args(i)
        c = _cot(i)
        _close(_conv(xlax, i, x, w), out, f"conv {i} forward")
        # the lambda uses this iteration's values: it is called at once
        got = xp.grad(lambda x, w: xnp.sum(_conv(xlax, i, x, w) * c), (0, 1))(x, w)  # noqa: B023
        _close(got[0], gx, f"conv {i} d/dlhs", 1e-4)
        _close(got[1], gw, f"conv {i} d/drhs", 1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv_forward_and_grads_jit(backend):
    """Every configuration in one jitted function: outputs and both gradients."""
    args = [_conv_args(i) for i in range(len(CONVS))]
    cots = [_cot(i) for i in range(len(CONVS))]

    def all_convs(args):
        outs = [_conv(xlax, i, x, w) for i, (x, w) in enumerate(args)]
        loss = sum(xnp.sum(o * c) for o, c in zip(outs, cots))
        return loss, outs

    (_, outs), grads = xp.jit(xp.value_and_grad(all_convs, has_aux=True),
                              backend=backend)(args)
    for i, (o, (gx, gw), (r_out, r_gx, r_gw)) in enumerate(zip(outs, grads, _conv_refs())):
        _close(o, r_out, f"conv {i} forward ({backend})")
        _close(gx, r_gx, f"conv {i} d/dlhs ({backend})", 1e-4)
        _close(gw, r_gw, f"conv {i} d/drhs ({backend})", 1e-4)


@pytest.mark.usefixtures("x64")  # finite differences need float64
def test_conv_finite_differences():
    x, w = (a.astype(np.float64) for a in _conv_args(4))
    x, w = x[:1, :4, :3], w[:, :, :, :4]      # a small grouped, dilated, strided NHWC conv
    c = np.random.default_rng(7).standard_normal(np.shape(_conv(xlax, 4, x, w)))

    def loss(x, w):
        return xnp.sum(_conv(xlax, 4, x, w) * c)

    gx, gw = xp.grad(loss, (0, 1))(x, w)
    for g, arg in ((gx, 0), (gw, 1)):
        args = [x, w]
        fd = np.zeros_like(args[arg])
        for idx in np.ndindex(fd.shape):
            hi, lo = [a.copy() for a in args], [a.copy() for a in args]
            hi[arg][idx] += 1e-6
            lo[arg][idx] -= 1e-6
            fd[idx] = (loss(*hi) - loss(*lo)) / 2e-6
        _close(g, fd, f"conv d/darg{arg} vs finite differences", 1e-6)


def test_conv_dimension_numbers_and_errors():
    x = np.ones((1, 5, 5, 2), np.float32)
    w = np.ones((3, 3, 2, 4), np.float32)
    a = xlax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    b = xlax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers="b01f_01io->b01f")
    np.testing.assert_array_equal(a, b)
    dn = xlax.conv_dimension_numbers(x.shape, w.shape, ("NHWC", "HWIO", "NHWC"))
    assert dn == jax.lax.conv_dimension_numbers(x.shape, w.shape, ("NHWC", "HWIO", "NHWC"))
    text = xp.jit(lambda x, w: xlax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=dn)).lower(x, w).as_text()
    assert "dim_labels=b01f_01io->b01f" in text
    with pytest.raises(ShapeError, match=r"conv_general_dilated.*feature"):
        xlax.conv_general_dilated(x, np.ones((3, 3, 3, 4), np.float32), (1, 1), "SAME",
                                  dimension_numbers=("NHWC", "HWIO", "NHWC"))
    with pytest.raises(ShapeError, match="dimension_numbers"):
        xlax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO"))
    with pytest.raises(ShapeError, match="window_strides"):
        xlax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=dn)
    with pytest.raises(ShapeError, match="padding"):
        xlax.conv_general_dilated(x, w, (1, 1), "FULL", dimension_numbers=dn)
    with pytest.raises(ShapeError, match="string padding"):
        xlax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 2),
                                  dimension_numbers=dn)


def test_conv_transpose_and_wrappers():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    for kw in (dict(strides=(2, 2), padding="SAME"), dict(strides=(2, 1), padding="VALID"),
               dict(strides=(1, 2), padding=((1, 2), (0, 1)), rhs_dilation=(2, 1)),
               dict(strides=(2, 2), padding="SAME", transpose_kernel=True)):
        if kw.get("transpose_kernel"):
            w2 = rng.standard_normal((3, 2, 4, 3)).astype(np.float32)
        else:
            w2 = w
        _close(xlax.conv_transpose(x, w2, **kw), jax.lax.conv_transpose(x, w2, **kw),
               f"conv_transpose {kw}")
    xn = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    wn = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    _close(xlax.conv(xn, wn, (2, 1), "SAME"), jax.lax.conv(xn, wn, (2, 1), "SAME"), "conv")
    _close(xlax.conv_with_general_padding(xn, wn, (1, 2), ((1, 0), (2, 2)), (2, 1), (1, 2)),
           jax.lax.conv_with_general_padding(xn, wn, (1, 2), ((1, 0), (2, 2)), (2, 1), (1, 2)),
           "conv_with_general_padding")


# ---- reduce_window --------------------------------------------------------------------------

_JAX_MONOID = {"sum": (jax.lax.add, 0.0), "max": (jax.lax.max, -np.inf),
               "min": (jax.lax.min, np.inf)}
_XL_MONOID = {"sum": (xlax.add, 0.0), "max": (xlax.max, -np.inf), "min": (xlax.min, np.inf)}

# (shape, window, strides, padding, base_dilation, window_dilation)
WINDOWS = [
    ((2, 7, 6), (1, 3, 2), (1, 2, 2), ((0, 0), (1, 1), (0, 1)), None, None),
    ((2, 6, 6), (1, 3, 3), (1, 1, 1), "SAME", None, None),
    ((5, 6), (2, 3), (2, 1), ((1, -1), (2, 0)), (2, 1), None),
    ((5, 6), (2, 2), (1, 2), ((0, 0), (1, 1)), None, (2, 1)),
    ((9,), (3,), (3,), "VALID", None, None),
    ((1, 6, 5, 2), (1, 2, 2, 1), (1, 2, 2, 1), "SAME", None, None),
]


def _rw(L, monoid, kind, i, x):
    shape, win, strides, pad, bd, wd = WINDOWS[i]
    op, init = monoid[kind]
    return L.reduce_window(x, init, op, win, strides, pad, bd, wd)


def _rw_input(i, ties=False):
    x = np.random.default_rng(20 + i).standard_normal(WINDOWS[i][0]).astype(np.float32)
    return np.round(x * 2) if ties else x


def _jax_differentiable(kind, i):
    _, _, _, _, bd, wd = WINDOWS[i]
    # JAX cannot differentiate max/min pooling with base or window dilation
    return kind == "sum" or (bd is None and wd is None)


RW_ITEMS = [(k, i, t) for k in ("sum", "max", "min") for i in range(len(WINDOWS))
            for t in (False, True)]


def _rw_cot(k, i, t):
    shape = np.shape(_rw(xlax, _XL_MONOID, k, i, _rw_input(i, t)))
    return np.random.default_rng(i + 10 * t).standard_normal(shape).astype(np.float32)


@functools.lru_cache(maxsize=None)
def _rw_refs():
    """JAX's output and gradient (None where JAX cannot differentiate) for every
    (kind, window, ties) item, from ONE jax.jit."""
    xs = [_rw_input(i, t) for _, i, t in RW_ITEMS]
    cots = [_rw_cot(*item) for item in RW_ITEMS]

    def refs(xs, cots):
        out = []
        for (k, i, _t), x, c in zip(RW_ITEMS, xs, cots):
            def loss(x, k=k, i=i, c=c):
                return jnp.sum(_rw(jax.lax, _JAX_MONOID, k, i, x) * c)
            g = jax.grad(loss)(x) if _jax_differentiable(k, i) else None
            out.append((_rw(jax.lax, _JAX_MONOID, k, i, x), g))
        return out

    return {item: tuple(None if a is None else np.asarray(a) for a in r)
            for item, r in zip(RW_ITEMS, jax.jit(refs)(xs, cots))}


def test_reduce_window_against_jax():
    for (k, i, t), (want, want_g) in _rw_refs().items():
        x, c = _rw_input(i, t), _rw_cot(k, i, t)
        _close(_rw(xlax, _XL_MONOID, k, i, x), want, f"{k} window {i} (ties={t})")
        if want_g is not None:
            # the lambda uses this iteration's values: it is called at once
            g = xp.grad(lambda x: xnp.sum(_rw(xlax, _XL_MONOID, k, i, x) * c))(x)  # noqa: B023
            _close(g, want_g, f"{k} window {i} grad (ties={t})")


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduce_window_jit(backend):
    """Every window configuration and kind, forward and gradient, in one jitted function."""
    items = [it for it in RW_ITEMS if _jax_differentiable(it[0], it[1])]
    xs = [_rw_input(i, t) for _, i, t in items]
    cots = [_rw_cot(*it) for it in items]

    def f(xs):
        outs = [_rw(xlax, _XL_MONOID, k, i, x) for (k, i, _), x in zip(items, xs)]
        return sum(xnp.sum(o * c) for o, c in zip(outs, cots)), outs

    (_, outs), grads = xp.jit(xp.value_and_grad(f, has_aux=True), backend=backend)(xs)
    refs = _rw_refs()
    for it, o, g in zip(items, outs, grads):
        want, want_g = refs[it]
        _close(o, want, f"{it} ({backend})")
        _close(g, want_g, f"{it} grad ({backend})")


@pytest.mark.usefixtures("x64")  # finite differences need float64
def test_max_pool_with_base_dilation_vs_finite_differences():
    x = np.random.default_rng(5).standard_normal((5, 6))
    c = np.random.default_rng(6).standard_normal(np.shape(_rw(xlax, _XL_MONOID, "max", 2, x)))

    def loss(x):
        return xnp.sum(_rw(xlax, _XL_MONOID, "max", 2, x) * c)

    g = xp.grad(loss)(x)
    fd = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = 1e-6
        fd[idx] = (loss(x + e) - loss(x - e)) / 2e-6
    _close(g, fd, "max pool with base dilation vs finite differences", 1e-6)
    with pytest.raises(XlapyError, match="window dilation"):
        xp.grad(lambda x: xnp.sum(_rw(xlax, _XL_MONOID, "max", 3, x)))(x)


def test_max_pool_grad_of_grad():
    """select_and_scatter_add's own VJP (a select-and-gather), against JAX."""
    x = _rw_input(0, ties=True)
    d = np.random.default_rng(9).standard_normal(x.shape).astype(np.float32)

    def inner(L, N, monoid):
        def f(x):
            return N.sum(_rw(L, monoid, "max", 0, x) ** 2)
        return f

    jf = inner(jax.lax, jnp, _JAX_MONOID)
    want = jax.grad(lambda x: jnp.sum(jax.grad(jf)(x) * d))(x)
    xf = inner(xlax, xnp, _XL_MONOID)
    gg = xp.grad(lambda x: xnp.sum(xp.grad(xf)(x) * d))
    _close(gg(x), want, "grad of grad of max pooling (eager)")
    _close(xp.jit(gg, backend="cpu")(x), want, "grad of grad of max pooling (cpu)")


def test_select_and_scatter_lowering():
    f = xp.jit(xp.grad(lambda x: xnp.sum(_rw(xlax, _XL_MONOID, "max", 5, x))))
    text = f.lower(_rw_input(5)).as_text()
    assert "select-and-scatter(" in text and "reduce-window(" in text


def test_reduce_window_wrapper_errors():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(XlapyError, match="not supported"):
        xlax.reduce_window(x, 1.0, xlax.mul, (2, 2), (1, 1), "VALID")
    with pytest.raises(XlapyError, match="init value 0"):
        xlax.reduce_window(x, 1.0, xlax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(ShapeError, match="window_dimensions"):
        xlax.reduce_window(x, 0.0, xlax.add, (2,), (1,), "VALID")
    # a non-identity init for max is a floor, as in XLA
    np.testing.assert_array_equal(xlax.reduce_window(x, 3.0, xlax.max, (2, 2), (2, 2), "VALID"),
                                  np.full((2, 2), 3.0, np.float32))


# ---- the rest of xlapy.lax.ops ------------------------------------------------------------

LAX_CASES = [
    ("dynamic_slice_negative", lambda L, x: L.dynamic_slice(x, (1, -3), (2, 2))),
    ("dynamic_slice_clamped", lambda L, x: L.dynamic_slice(x, (3, 5), (2, 2))),
    ("dynamic_update_slice", lambda L, x: L.dynamic_update_slice(x, x[:2, :2] * 0 - 1, (3, 1))),
    ("dynamic_slice_in_dim", lambda L, x: L.dynamic_slice_in_dim(x, 2, 2, axis=1)),
    ("dynamic_index_in_dim", lambda L, x: L.dynamic_index_in_dim(x, -1, 0, False)),
    ("dynamic_update_slice_in_dim", lambda L, x: L.dynamic_update_slice_in_dim(
        x, x[:1] * 0, 2, axis=0)),
    ("clamp", lambda L, x: L.clamp(2.0, x, 7.0)),
    ("add_weak_scalar", lambda L, x: L.add(x, 1.0)),
    ("integer_pow", lambda L, x: L.integer_pow(x, 3) + L.integer_pow(x + 1, -2)),
    ("round", lambda L, x: L.round(x / 4) + L.round(x / 4, 1) * 10),
    ("select_n", lambda L, x: L.select_n(x > 5, x, -x)),
    ("reshape_dimensions", lambda L, x: L.reshape(x, (3, 8), (1, 0))),
    ("reduce_max", lambda L, x: L.reduce(x, -np.inf, L.max, (1,))),
    ("reduce_floor", lambda L, x: L.reduce(x, 10.0, L.max, (1,))),
    ("slice_in_dim", lambda L, x: L.slice_in_dim(x, 1, -1, 2, axis=1)),
    ("index_in_dim", lambda L, x: L.index_in_dim(x, -2, 1, keepdims=False)),
    ("broadcasted_iota", lambda L, x: L.broadcasted_iota(np.int32, (2, 3), 1)),
    ("squeeze_expand_dims", lambda L, x: L.squeeze(L.expand_dims(x, (0, 3)), (0,))),
    ("broadcast", lambda L, x: L.broadcast(x, (2,))),
    ("dot", lambda L, x: L.dot(x, x.T)),
    ("full_like", lambda L, x: L.full_like(x, 2, np.int32)),
    ("square_rsqrt", lambda L, x: L.square(x) + L.rsqrt(x + 1)),
]


def test_lax_ops_against_jax():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    fns = [fn for _, fn in LAX_CASES]
    jitted = xp.jit(lambda x: [fn(xlax, x) for fn in fns])(x)
    for (name, fn), j in zip(LAX_CASES, jitted):
        want = fn(jax.lax, x)
        got = fn(xlax, x)
        assert np.asarray(got).dtype == want.dtype, name
        _close(got, want, f"lax.{name} (eager)", 1e-6)
        _close(j, want, f"lax.{name} (jit)", 1e-6)


def test_dynamic_slice_traced_start_and_grad():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    f = xp.jit(lambda x, i: xlax.dynamic_slice(x, (i, 0), (1, 6)))
    np.testing.assert_array_equal(f(x, np.int32(-1)), x[3:4])
    np.testing.assert_array_equal(f(x, np.int32(9)), x[3:4])
    g = xp.grad(lambda x: xnp.sum(xlax.dynamic_slice(x, (1, 2), (2, 3)) ** 2))(x)
    want = jax.grad(lambda x: jnp.sum(jax.lax.dynamic_slice(x, (1, 2), (2, 3)) ** 2))(x)
    _close(g, want, "dynamic_slice grad")


def test_clamp_grad_matches_jax():
    """x gets the cotangent strictly inside (lo, hi); the bounds get it where they bind."""
    x = np.array([-1.0, -0.5, 0.0, 0.5, 2.0], np.float32)
    lo, hi = np.full_like(x, -0.5), np.array([0.5, 0.5, 0.5, 0.5, -2.0], np.float32)
    want = jax.grad(lambda l, x, h: jnp.sum(jax.lax.clamp(l, x, h)), (0, 1, 2))(lo, x, hi)
    got = xp.grad(lambda l, x, h: xnp.sum(xlax.clamp(l, x, h)), (0, 1, 2))(lo, x, hi)
    for k in range(3):
        _close(got[k], want[k], f"clamp grad of argument {k}")


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_convolution_eager_and_jit(dt):
    # the eager rule took complex for an integer type and dropped the imaginary parts
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 3, 9)) + 1j * rng.standard_normal((2, 3, 9))).astype(dt)
    w = (rng.standard_normal((4, 3, 3)) + 1j * rng.standard_normal((4, 3, 3))).astype(dt)
    xpad = np.pad(x.astype(np.complex128), ((0, 0), (0, 0), (1, 2)))
    want = np.stack([sum(xpad[:, :, 2 * t + 2 * k][:, None, :] * w[None, :, :, k]
                         for k in range(3)).sum(-1) for t in range(4)], -1)

    def f(x, w):
        return xlax.conv_general_dilated(x, w, (2,), [(1, 2)], rhs_dilation=(2,))
    with xp.enable_x64(dt == np.complex128):
        eager, jitted = np.asarray(f(x, w)), np.asarray(xp.jit(f)(x, w))
    if dt == np.complex64:
        np.testing.assert_allclose(np.asarray(jax.lax.conv_general_dilated(
            x, w, (2,), [(1, 2)], rhs_dilation=(2,))), want, rtol=1e-5, atol=1e-5)
    assert eager.dtype == jitted.dtype == dt
    tol = 1e-5 if dt == np.complex64 else 1e-12
    np.testing.assert_allclose(eager, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(jitted, want, rtol=tol, atol=tol)
