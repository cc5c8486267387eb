"""More samplers in JAX's formulation: pareto, weibull_min, maxwell, double_sided_maxwell,
rayleigh, wald, geometric, triangular, poisson, multivariate_normal, ball.

Those built from uniform floats with log/log1p only (rayleigh, geometric in f32) give
JAX's bits; the others go through exp, pow or sqrt of sums and match to a few ulp.
multivariate_normal factors the covariance with xlapy.scipy._linalg's Cholesky
decomposition, not LAPACK's, so its samples agree with JAX's to rounding.
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax as L
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.random import _threefry
from xlapy.random._common import (RandomError, canonical_shape, check_shape, float_dtype,
                                  float_param, int_dtype, jitted)
from xlapy.random._continuous import (_exponential, _log, _log1p, normal_real, unit_floats)
from xlapy.random._gamma import _generalized_normal, _shape_of
from xlapy.random._keys import key_arg


def _arr(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def _param(x, dtype, shape):
    return xnp.broadcast_to(B.convert(_arr(x), dtype), shape)


def _pareto(key, b, shape, dtype):
    return L.exp(L.div(_exponential(key, shape, dtype), _param(b, dtype, shape)))


def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) floats: exp(exponential / b)."""
    data, _ = key_arg("pareto", key)
    dtype = float_dtype(dtype, "pareto")
    return jitted(_pareto, "shape", "dtype")(data, b, shape=_shape_of("pareto", shape, b),
                                             dtype=dtype)


def _weibull_min(key, scale, concentration, shape, dtype):
    u = unit_floats(key, shape, dtype)
    inv = L.div(1.0, _param(concentration, dtype, shape))
    return L.mul(L.pow(L.neg(_log1p(L.neg(u))), inv), _param(scale, dtype, shape))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats: (-log1p(-u)) ** (1/concentration) * scale."""
    data, _ = key_arg("weibull_min", key)
    dtype = float_dtype(dtype, "weibull_min")
    shape = canonical_shape(shape, "weibull_min")
    check_shape("weibull_min", shape, np.shape(scale), np.shape(concentration))
    return jitted(_weibull_min, "shape", "dtype")(data, scale, concentration, shape=shape,
                                                  dtype=dtype)


def _maxwell(key, shape, dtype):
    n = normal_real(key, tuple(shape) + (3,), dtype)
    return xnp.sqrt(xnp.sum(n * n, axis=-1))


def maxwell(key, shape=(), dtype=None):
    """Maxwell floats: the norm of three standard normals."""
    data, _ = key_arg("maxwell", key)
    dtype = float_dtype(dtype, "maxwell")
    return jitted(_maxwell, "shape", "dtype")(data, shape=canonical_shape(shape, "maxwell"),
                                              dtype=dtype)


def _double_sided_maxwell(key, loc, scale, shape, dtype):
    km, kr = (x for x in _threefry.split(key, (2,)))
    m = _maxwell(km, shape, dtype)
    bern = L.lt(unit_floats(kr, shape, float_dtype(None, "double_sided_maxwell")), 0.5)
    sign = L.sub(L.mul(B.convert(bern, dtype), 2.0), 1.0)
    return L.add(L.mul(L.mul(sign, m), _param(scale, dtype, shape)), _param(loc, dtype, shape))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell floats: a random sign times a Maxwell sample, scaled and
    shifted."""
    data, _ = key_arg("double_sided_maxwell", key)
    dtype = float_dtype(dtype, "double_sided_maxwell")
    params = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    shape = canonical_shape(shape, "double_sided_maxwell") or params
    shape = tuple(shape) + params  # (JAX's rule: the parameters' shape is appended)
    return jitted(_double_sided_maxwell, "shape", "dtype")(data, loc, scale, shape=shape,
                                                           dtype=dtype)


def _rayleigh(key, scale, shape, dtype):
    u = unit_floats(key, shape, dtype)
    return L.mul(_param(scale, dtype, shape), L.sqrt(L.mul(_log(u), -2.0)))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh(scale) floats: scale * sqrt(-2 log u)."""
    data, _ = key_arg("rayleigh", key)
    dtype = float_dtype(dtype, "rayleigh")
    return jitted(_rayleigh, "shape", "dtype")(data, scale,
                                               shape=_shape_of("rayleigh", shape, scale),
                                               dtype=dtype)


def _wald(key, mean, shape, dtype):
    k1, k2 = (x for x in _threefry.split(key, (2,)))
    mean = _param(mean, dtype, shape)
    v = normal_real(k1, shape, dtype)
    z = unit_floats(k2, shape, dtype)
    y = L.mul(v, v)
    y_sq = L.mul(y, y)
    mean_sq = L.mul(mean, mean)
    sqrt_term = L.sqrt(L.add(L.mul(L.mul(mean, 4.0), y), L.mul(mean_sq, y_sq)))
    x = L.sub(L.add(mean, L.div(L.mul(mean_sq, y), 2.0)), L.mul(L.div(mean, 2.0), sqrt_term))
    return L.select(L.le(z, L.div(mean, L.add(mean, x))), x, L.div(mean_sq, x))


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats with the given mean (and scale 1)."""
    data, _ = key_arg("wald", key)
    dtype = float_dtype(dtype, "wald")
    return jitted(_wald, "shape", "dtype")(data, mean, shape=_shape_of("wald", shape, mean),
                                           dtype=dtype)


def _geometric(key, p, shape, dtype):
    p = _arr(p)
    u = unit_floats(key, shape, B.aval_of(p).dtype)
    u = L.select(L.eq(u, 0.0), xnp.ones_like(u), u)
    log_1mp = xnp.broadcast_to(_log1p(L.neg(p)), shape)
    return B.convert(L.add(L.floor(L.div(_log(u), log_1mp)), 1.0), dtype)


def geometric(key, p, shape=None, dtype=None):
    """Geometric(p) integers: trials until the first success (>= 1)."""
    data, _ = key_arg("geometric", key)
    dtype = int_dtype(int if dtype is None else dtype, "geometric")
    p = float_param(p)
    return jitted(_geometric, "shape", "dtype")(data, p, shape=_shape_of("geometric", shape,
                                                                          p), dtype=dtype)


def _triangular(key, left, mode, right, shape, dtype):
    left, mode, right = (_param(v, dtype, shape) for v in (left, mode, right))
    width = L.sub(right, left)
    fc = L.div(L.sub(mode, left), width)
    u = unit_floats(key, shape, dtype)
    out1 = L.add(left, L.sqrt(L.mul(L.mul(u, width), L.sub(mode, left))))
    out2 = L.sub(right, L.sqrt(L.mul(L.mul(L.sub(1.0, u), width), L.sub(right, mode))))
    return L.select(L.lt(u, fc), out1, out2)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular(left, mode, right) floats (inverse CDF)."""
    data, _ = key_arg("triangular", key)
    dtype = float_dtype(dtype, "triangular")
    return jitted(_triangular, "shape", "dtype")(
        data, left, mode, right, shape=_shape_of("triangular", shape, left, mode, right),
        dtype=dtype)


# ---- poisson -----------------------------------------------------------------------------

def _poisson_knuth(key, lam, shape, dtype, max_iters):
    def go_on(c):
        i, _, _, log_prod = c
        return L.bitwise_and(xnp.any(L.gt(log_prod, L.neg(lam))), L.lt(i, max_iters))

    def step(c):
        i, k, rng, log_prod = c
        keys = _threefry.split(rng, (2,))
        k = L.select(L.gt(log_prod, L.neg(lam)), L.add(k, 1), k)
        u = unit_floats(keys[1], shape, np.dtype(np.float32))
        return L.add(i, 1), k, keys[0], L.add(log_prod, _log(u))

    init = (np.int32(0), xnp.zeros(shape, dtype), key, xnp.zeros(shape, np.float32))
    k = L.while_loop(go_on, step, init)[1]
    return L.sub(k, 1)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    from xlapy.scipy.special import gammaln
    log_lam = _log(lam)
    b = L.add(L.mul(L.sqrt(lam), 2.53), 0.931)
    a = L.add(L.mul(b, 0.02483), -0.059)
    inv_alpha = L.add(L.div(1.1328, L.sub(b, 3.4)), 1.1239)
    v_r = L.sub(0.9277, L.div(3.6224, L.sub(b, 2.0)))

    def go_on(c):
        i, _, accepted, _ = c
        return L.bitwise_and(xnp.any(L.bitwise_not(accepted)), L.lt(i, max_iters))

    def step(c):
        i, k_out, accepted, rng = c
        keys = _threefry.split(rng, (3,))
        u = L.sub(unit_floats(keys[1], shape, np.dtype(np.float32)), 0.5)
        v = unit_floats(keys[2], shape, np.dtype(np.float32))
        us = L.sub(0.5, L.abs(u))
        k = L.floor(L.add(L.add(L.mul(L.add(L.div(L.mul(a, 2.0), us), b), u), lam), 0.43))
        s = _log(L.div(L.mul(v, inv_alpha), L.add(L.div(a, L.mul(us, us)), b)))
        t = L.sub(L.add(L.neg(lam), L.mul(k, log_lam)), gammaln(L.add(k, 1.0)))
        accept1 = L.bitwise_and(L.ge(us, 0.07), L.le(v, v_r))
        reject = L.bitwise_or(L.lt(k, 0.0), L.bitwise_and(L.lt(us, 0.013), L.gt(v, us)))
        accept = L.bitwise_or(accept1, L.bitwise_and(L.bitwise_not(reject), L.le(s, t)))
        return (L.add(i, 1), L.select(accept, k, k_out), L.bitwise_or(accepted, accept),
                keys[0])

    init = (np.int32(0), xnp.full(shape, -1.0, np.float32), xnp.zeros(shape, bool), key)
    return L.while_loop(go_on, step, init)[1]


def _poisson(key, lam, shape, dtype):
    lam = xnp.broadcast_to(B.convert(_arr(lam), np.float32), shape)
    knuth = L.bitwise_or(L.ne(lam, lam), L.lt(lam, 10.0))
    lam_knuth = L.select(knuth, lam, xnp.zeros_like(lam))
    lam_rej = L.select(knuth, xnp.full_like(lam, 1e5), lam)
    max_iters = np.int32(np.iinfo(np.int32).max)
    result = L.select(knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                      B.convert(_poisson_rejection(key, lam_rej, shape, dtype, max_iters),
                                dtype))
    return L.select(L.eq(lam, 0.0), xnp.zeros_like(result), result)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) integers: Knuth's method for lam < 10, Hormann's transformed rejection
    (PTRS) above, as JAX."""
    data, _ = key_arg("poisson", key)
    dtype = int_dtype(int if dtype is None else dtype, "poisson")
    shape = np.shape(lam) if shape is None else canonical_shape(shape, "poisson")
    check_shape("poisson", shape, np.shape(lam))
    return jitted(_poisson, "shape", "dtype")(data, lam, shape=tuple(shape), dtype=dtype)


# ---- multivariate normal -------------------------------------------------------------------

def _multivariate_normal(key, mean, cov, shape, dtype, method):
    if method != "cholesky":
        raise RandomError(f"multivariate_normal: method {method!r} needs an eigen or "
                          "singular value decomposition, which xlapy lacks; use 'cholesky'")
    mean = B.convert(_arr(mean), dtype)
    cov = B.convert(_arr(cov), dtype)
    from xlapy.scipy._linalg import cholesky
    factor = cholesky(cov)
    z = normal_real(key, tuple(shape) + B.aval_of(mean).shape[-1:], dtype)
    return mean + xnp.einsum("...ij,...j->...i", factor, z)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normal vectors N(mean, cov) (mean: (..., n), cov: (..., n, n))."""
    data, _ = key_arg("multivariate_normal", key)
    if method not in ("svd", "eigh", "cholesky"):
        raise RandomError("multivariate_normal: method must be one of 'svd', 'eigh', "
                          "'cholesky'")
    mean, cov = _arr(mean), _arr(cov)
    if dtype is None:
        dt = np.result_type(B.aval_of(mean).dtype, B.aval_of(cov).dtype, np.float32)
        dtype = float_dtype(dt, "multivariate_normal")
    else:
        dtype = float_dtype(dtype, "multivariate_normal")
    if np.ndim(mean) < 1 or np.ndim(cov) < 2:
        raise RandomError("multivariate_normal requires mean.ndim >= 1 and cov.ndim >= 2, got "
                          f"{np.ndim(mean)} and {np.ndim(cov)}")
    n = np.shape(mean)[-1]
    if np.shape(cov)[-2:] != (n, n):
        raise RandomError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                          f"but got cov.shape == {np.shape(cov)}")
    batch = tuple(np.broadcast_shapes(np.shape(mean)[:-1], np.shape(cov)[:-2]))
    shape = batch if shape is None else canonical_shape(shape, "multivariate_normal")
    check_shape("multivariate_normal", shape, np.shape(mean)[:-1], np.shape(cov)[:-2])
    return jitted(_multivariate_normal, "shape", "dtype", "method")(
        data, mean, cov, shape=tuple(shape), dtype=dtype, method=method)


def _ball(key, p, d, shape, dtype):
    k1, k2 = (x for x in _threefry.split(key, (2,)))
    g = _generalized_normal(k1, p, tuple(shape) + (d,), dtype)
    e = _exponential(k2, shape, dtype)
    r = xnp.power(xnp.sum(xnp.abs(g) ** p, axis=-1) + e, 1.0 / p)
    return g / r[..., None]


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniformly distributed in the unit p-norm ball of dimension d."""
    data, _ = key_arg("ball", key)
    dtype = float_dtype(dtype, "ball")
    if int(d) != d or d < 0:
        raise RandomError(f"ball: d must be a non-negative integer, got {d}")
    return jitted(_ball, "shape", "dtype", "p", "d")(data, shape=canonical_shape(shape, "ball"),
                                                     dtype=dtype, p=float(p), d=int(d))


def _orthogonal(key, n, m, shape, dtype):
    from xlapy.scipy._linalg import qr
    z = normal_real(key, tuple(shape) + (max(n, m), min(n, m)), dtype)
    q, r = qr(z)
    d = xnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * xnp.expand_dims(xnp.sign(d), -2)
    return xnp.swapaxes(x, -1, -2) if n < m else x


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Matrices (shape + (n, m)) with orthonormal columns (or rows, when n < m), uniformly
    distributed: the Q of a QR decomposition of a normal matrix, signs fixed by R's
    diagonal. Q comes from xlapy's Householder QR, so values match JAX's to rounding."""
    data, _ = key_arg("orthogonal", key)
    dtype = float_dtype(dtype, "orthogonal")
    n = int(n)
    m = n if m is None else int(m)
    return jitted(_orthogonal, "n", "m", "shape", "dtype")(
        data, n=n, m=m, shape=canonical_shape(shape, "orthogonal"), dtype=dtype)
