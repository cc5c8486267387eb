"""gamma and the samplers built on it (loggamma, beta, dirichlet, chisquare, f, t,
generalized_normal), following JAX's algorithm:

  Marsaglia and Tsang's rejection method ("A simple method for generating gamma
  variables", 2000) for alpha >= 1, boosted by u^(1/alpha) for alpha < 1. Every element
  has its own key (the sampler's key split into one per element); a proposal draws
  x ~ normal until v = (1 + c x)^3 > 0, and is accepted unless u >= 1 - 0.0331 x^4 and
  log u >= x^2/2 + d (1 - v + log v). JAX runs that loop per element under vmap; here the
  loop runs over all elements at once, each element's state frozen once it is accepted,
  which consumes each element's random stream exactly as the per-element loop does.

The accept/reject decisions and the sample go through log, sqrt and (for alpha < 1) pow;
f32 log is XLA's (_xla_math), the others are xlapy's, so samples are JAX's up to the last
bits (and, rarely, a decision near the acceptance boundary can differ). Not differentiable
with respect to alpha (JAX's implicit reparameterization gradient is not implemented).
"""

from __future__ import annotations

import math

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax as L
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.random import _threefry, _xla_math as XM
from xlapy.random._common import canonical_shape, check_shape, float_dtype, jitted
from xlapy.random._continuous import (_log, _log1p, normal_from_floats, normal_real,
                                      unit_floats, unit_floats_batched)
from xlapy.random._keys import key_arg


def _arr(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def _gamma_batched(keys, alpha, log_space: bool):
    """One gamma(alpha[i]) sample per key keys[i] (keys: (n, 2), alpha: (n,))."""
    dtype = B.aval_of(alpha).dtype
    third = float(np.array(1 / 3, dtype))
    boost = L.ge(alpha, 1.0)
    a = L.select(boost, alpha, L.add(alpha, 1.0))
    d = L.sub(a, third)
    c = L.div(XM.const(d, third), L.sqrt(d))
    k2 = _threefry.split_batched(keys, 2)
    key, subkey = k2[:, 0], k2[:, 1]

    def active(X, V, U):
        squeeze = L.ge(U, L.sub(1.0, L.mul(L.mul(X, X), 0.0331)))
        tail = L.ge(_log(U), L.add(L.mul(X, 0.5), L.mul(d, L.add(L.sub(1.0, V), _log(V)))))
        return L.bitwise_and(squeeze, tail)

    def proposal(k):
        def go_on(s):
            return xnp.any(L.le(s[2], 0.0))

        def step(s):
            kk, x, v = s
            again = L.le(v, 0.0)
            ks = _threefry.split_batched(kk, 2)
            x_new = normal_from_floats(unit_floats_batched(ks[:, 1], dtype))
            v_new = L.add(L.mul(x_new, c), 1.0)
            return (xnp.where(again[:, None], ks[:, 0], kk), L.select(again, x_new, x),
                    L.select(again, v_new, v))

        zero = XM.const(alpha, 0.0)
        return L.while_loop(go_on, step, (k, zero, XM.const(alpha, -1.0)))

    def outer_go_on(s):
        return xnp.any(active(*s[1:]))

    def outer_step(s):
        kk, X, V, U = s
        act = active(X, V, U)
        ks = _threefry.split_batched(kk, 3)
        _, x, v = proposal(ks[:, 1])
        new = (ks[:, 0], L.mul(x, x), L.mul(L.mul(v, v), v), unit_floats_batched(ks[:, 2], dtype))
        return (xnp.where(act[:, None], new[0], kk),) + tuple(
            L.select(act, n, o) for n, o in zip(new[1:], (X, V, U)))

    init = (key, XM.const(alpha, 0.0), XM.const(alpha, 1.0), XM.const(alpha, 2.0))
    _, _, V, _ = L.while_loop(outer_go_on, outer_step, init)
    u = unit_floats_batched(subkey, dtype)
    if log_space:
        log_samples = _log1p(L.neg(u))                      # -exponential(subkey)
        log_boost = L.select(L.bitwise_or(boost, L.eq(log_samples, 0.0)), XM.const(u, 0.0),
                             L.mul(log_samples, L.div(XM.const(alpha, 1.0), alpha)))
        return L.add(L.add(_log(d), _log(V)), log_boost)
    boosted = L.pow(L.sub(1.0, u), L.div(XM.const(alpha, 1.0), alpha))
    return L.mul(L.mul(d, V), L.select(boost, XM.const(u, 1.0), boosted))


def gamma_impl(key, a, shape, dtype, log_space=False):
    a = xnp.broadcast_to(B.convert(_arr(a), dtype), shape)
    n = math.prod(shape)
    if n == 0:
        return xnp.zeros(shape, dtype)
    keys = _threefry.split(key, (n,))
    return xnp.reshape(_gamma_batched(keys, xnp.reshape(a, (n,)), log_space), shape)


def _shape_of(name, shape, *params):
    if shape is None:
        return tuple(np.broadcast_shapes(*(np.shape(p) for p in params)))
    shape = canonical_shape(shape, name)
    check_shape(name, shape, *(np.shape(p) for p in params))
    return shape


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) floats."""
    data, _ = key_arg("gamma", key)
    dtype = float_dtype(dtype, "gamma")
    return jitted(gamma_impl, "shape", "dtype", "log_space")(
        data, a, shape=_shape_of("gamma", shape, a), dtype=dtype, log_space=False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) floats, computed in log space (accurate for small a)."""
    data, _ = key_arg("loggamma", key)
    dtype = float_dtype(dtype, "loggamma")
    return jitted(gamma_impl, "shape", "dtype", "log_space")(
        data, a, shape=_shape_of("loggamma", shape, a), dtype=dtype, log_space=True)


def _beta(key, a, b, shape, dtype):
    a = xnp.broadcast_to(B.convert(_arr(a), dtype), shape)
    b = xnp.broadcast_to(B.convert(_arr(b), dtype), shape)
    ka, kb = (x for x in _threefry.split(key, (2,)))
    la = gamma_impl(ka, a, shape, dtype, True)
    lb = gamma_impl(kb, b, shape, dtype, True)
    m = L.max(la, lb)
    ga, gb = L.exp(L.sub(la, m)), L.exp(L.sub(lb, m))
    return L.div(ga, L.add(ga, gb))


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats (from two log-gammas)."""
    data, _ = key_arg("beta", key)
    dtype = float_dtype(dtype, "beta")
    return jitted(_beta, "shape", "dtype")(data, a, b, shape=_shape_of("beta", shape, a, b),
                                           dtype=dtype)


def _dirichlet(key, alpha, shape, dtype):
    alpha = B.convert(_arr(alpha), dtype)
    full = tuple(shape) + B.aval_of(alpha).shape[-1:]
    lg = gamma_impl(key, alpha, full, dtype, True)
    m = xnp.max(lg, axis=-1, keepdims=True)
    e = xnp.exp(lg - m)
    return e / xnp.sum(e, axis=-1, keepdims=True)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors along the last axis (softmax of log-gammas)."""
    data, _ = key_arg("dirichlet", key)
    dtype = float_dtype(dtype, "dirichlet")
    if np.ndim(alpha) < 1:
        from xlapy.random._common import RandomError
        raise RandomError(f"dirichlet requires alpha.ndim >= 1, got {np.ndim(alpha)}")
    batch = np.shape(alpha)[:-1]
    shape = batch if shape is None else canonical_shape(shape, "dirichlet")
    check_shape("dirichlet", shape, batch)
    return jitted(_dirichlet, "shape", "dtype")(data, alpha, shape=tuple(shape), dtype=dtype)


def _chisquare_impl(key, df, shape, dtype):
    half = L.div(xnp.broadcast_to(B.convert(_arr(df), dtype), shape), 2.0)
    return L.mul(L.exp(gamma_impl(key, half, shape, dtype, True)), 2.0)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(df) floats: 2 * Gamma(df / 2)."""
    data, _ = key_arg("chisquare", key)
    dtype = float_dtype(dtype, "chisquare")
    return jitted(_chisquare_impl, "shape", "dtype")(
        data, df, shape=_shape_of("chisquare", shape, df), dtype=dtype)


def _f(key, dfnum, dfden, shape, dtype):
    kd, kn = (x for x in _threefry.split(key, (2,)))
    dfnum = xnp.broadcast_to(B.convert(_arr(dfnum), dtype), shape)
    dfden = xnp.broadcast_to(B.convert(_arr(dfden), dtype), shape)
    num = L.div(_chisquare_impl(kn, dfnum, shape, dtype), dfnum)
    den = L.div(_chisquare_impl(kd, dfden, shape, dtype), dfden)
    return L.div(num, den)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) floats."""
    data, _ = key_arg("f", key)
    dtype = float_dtype(dtype, "f")
    return jitted(_f, "shape", "dtype")(data, dfnum, dfden,
                                        shape=_shape_of("f", shape, dfnum, dfden), dtype=dtype)


def _t(key, df, shape, dtype):
    kn, kg = (x for x in _threefry.split(key, (2,)))
    n = normal_real(kn, shape, dtype)
    half = L.div(xnp.broadcast_to(B.convert(_arr(df), dtype), shape), 2.0)
    g = gamma_impl(kg, half, shape, dtype, False)
    return L.mul(n, L.sqrt(L.div(half, g)))


def t(key, df, shape=None, dtype=None):
    """Student's t(df) floats: normal * sqrt(df/2 / Gamma(df/2))."""
    data, _ = key_arg("t", key)
    dtype = float_dtype(dtype, "t")
    return jitted(_t, "shape", "dtype")(data, df, shape=_shape_of("t", shape, df), dtype=dtype)


def _generalized_normal(key, p, shape, dtype):
    kg, kr = (x for x in _threefry.split(key, (2,)))
    p = B.convert(_arr(p), dtype)
    inv = L.div(XM.const(p, 1.0), p)
    g = gamma_impl(kg, inv, shape, dtype, False)
    bern = L.lt(unit_floats(kr, shape, float_dtype(None, "generalized_normal")), 0.5)
    r = L.sub(L.mul(B.convert(bern, dtype), 2.0), 1.0)
    return L.mul(r, L.pow(g, xnp.broadcast_to(inv, shape)))


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal floats with shape parameter p (p=2: normal / sqrt(2))."""
    data, _ = key_arg("generalized_normal", key)
    dtype = float_dtype(dtype, "generalized_normal")
    shape = canonical_shape(shape, "generalized_normal")
    return jitted(_generalized_normal, "shape", "dtype")(data, p, shape=shape, dtype=dtype)
