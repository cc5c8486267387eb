"""binomial and multinomial, by the algorithms JAX uses (those of TensorFlow's kernel):

  binomial     with q = min(p, 1 - p): for n q <= 10 the inversion method (count geometric
               waiting times ceil(log u / log(1 - q)) until their sum passes n); otherwise
               Hormann's transformed rejection with squeeze (BTRS, "The generation of
               binomial random variates", 1993), with Stirling-series tails for the log
               factorials. For p >= 0.5 the sample is n minus a Binomial(n, 1 - p) draw.
               n is floored; a NaN or negative n, or a NaN or negative q, gives NaN; an
               infinite n gives inf. Samples are floats (dtype).
  multinomial  a scan over the categories: each draws Binomial(remaining n,
               p_i / sum_{j >= i} p_j) with its own key (the key split per category).

Both loops run over all elements at once, each element frozen once it is done. Not
differentiable (integer-valued samples; JAX's are not either).
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax as L
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.random import _threefry
from xlapy.random._common import (RandomError, broadcast_shapes, canonical_shape,
                                  check_shape, float_dtype, float_param, jitted)
from xlapy.random._continuous import _log, _log1p, unit_floats
from xlapy.random._keys import key_arg

# log k! minus Stirling's approximation of it, for k = 0..9, where the asymptotic series
# 1/12(k+1) - 1/360(k+1)^3 + 1/1260(k+1)^5 is not yet accurate. (JAX evaluates the series
# at min(k, 9); here it is evaluated at k, its asymptotic value.)
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _arr(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def _dtype(x) -> np.dtype:
    return B.aval_of(x).dtype


def _stirling_tail(k):
    dtype = _dtype(k)
    small = L.le(k, 9.0)
    kc = L.clamp(np.asarray(0.0, dtype), k, np.asarray(9.0, dtype))
    k1 = L.add(L.max(k, 0.0), 1.0)
    k1sq = L.mul(k1, k1)
    series = L.div(L.sub(1.0 / 12, L.div(L.sub(1.0 / 360, L.div(1.0 / 1260, k1sq)), k1sq)),
                   k1)
    table = np.asarray(_STIRLING_TAIL, dtype)
    exact = xnp.take(table, B.convert(L.floor(kc), np.int32))
    return L.select(small, exact, series)


def _inversion(key, n, q, shape, max_iters):
    """Binomial(n, q) for small n q: the number of geometric(q) waiting times whose sum
    stays <= n."""
    dtype = _dtype(q)
    log_1mq = _log1p(L.neg(q))

    def go_on(c):
        i, _, total, _ = c
        return L.bitwise_and(xnp.any(L.le(total, n)), L.lt(i, max_iters))

    def step(c):
        i, count, total, k = c
        keys = _threefry.split(k, (2,))
        count = L.select(L.le(total, n), L.add(count, 1.0), count)
        u = unit_floats(keys[0], shape, dtype)
        total = L.add(total, L.ceil(L.div(_log(u), log_1mq)))
        return L.add(i, 1), count, total, keys[1]

    zeros = xnp.zeros(shape, dtype)
    return L.sub(L.while_loop(go_on, step, (np.int32(0), zeros, zeros, key))[1], 1.0)


def _btrs(key, n, q, shape, max_iters):
    """Binomial(n, q) for n q > 10 by transformed rejection (BTRS)."""
    dtype = _dtype(q)
    sd = L.sqrt(L.mul(L.mul(n, q), L.sub(1.0, q)))
    b = L.add(L.mul(sd, 2.53), 1.15)
    a = L.add(L.add(L.mul(b, 0.0248), -0.0873), L.mul(q, 0.01))
    c = L.add(L.mul(n, q), 0.5)
    v_r = L.sub(0.92, L.div(4.2, b))
    r = L.div(q, L.sub(1.0, q))
    alpha = L.mul(L.add(L.div(5.1, b), 2.83), sd)
    m = L.floor(L.mul(L.add(n, 1.0), q))
    # the terms of the log-density bound that do not depend on the proposal k
    fixed = L.add(L.mul(L.add(m, 0.5), _log(L.div(L.add(m, 1.0),
                                                  L.mul(r, L.add(L.sub(n, m), 1.0))))),
                  L.add(_stirling_tail(m), _stirling_tail(L.sub(n, m))))

    def go_on(carry):
        i, _, done, _ = carry
        return L.bitwise_and(xnp.any(L.bitwise_not(done)), L.lt(i, max_iters))

    def step(carry):
        i, out, done, k = carry
        keys = _threefry.split(k, (3,))
        u = L.sub(unit_floats(keys[1], shape, dtype), 0.5)
        v = unit_floats(keys[2], shape, dtype)
        us = L.sub(0.5, L.abs(u))
        quick = L.bitwise_and(L.ge(us, 0.07), L.le(v, v_r))
        kk = L.floor(L.add(L.mul(L.add(L.div(L.mul(a, 2.0), us), b), u), c))
        outside = L.bitwise_or(L.lt(kk, 0.0), L.gt(kk, n))
        log_v = _log(L.div(L.mul(v, alpha), L.add(L.div(a, L.mul(us, us)), b)))
        nk1 = L.add(L.sub(n, kk), 1.0)
        bound = L.add(fixed, L.add(
            L.mul(L.add(n, 1.0), _log(L.div(L.add(L.sub(n, m), 1.0), nk1))),
            L.mul(L.add(kk, 0.5), _log(L.div(L.mul(r, nk1), L.add(kk, 1.0))))))
        bound = L.sub(bound, L.add(_stirling_tail(kk), _stirling_tail(L.sub(n, kk))))
        accept = L.bitwise_or(quick, L.bitwise_and(L.bitwise_not(outside),
                                                   L.le(log_v, bound)))
        return L.add(i, 1), L.select(accept, kk, out), L.bitwise_or(done, accept), keys[0]

    init = (np.int32(0), xnp.full(shape, -1.0, dtype), xnp.zeros(shape, bool), key)
    return L.while_loop(go_on, step, init)[1]


def _binomial(key, n, p, shape, dtype):
    work = _dtype(p)
    n = xnp.broadcast_to(B.convert(n, work), shape)
    p = xnp.broadcast_to(p, shape)
    low = L.lt(p, 0.5)
    q = L.select(low, p, L.sub(1.0, p))
    bad_n = L.bitwise_or(L.ne(n, n), L.lt(n, 0.0))
    inf_n = L.eq(L.abs(n), np.inf)
    bad_q = L.bitwise_or(L.ne(q, q), L.lt(q, 0.0))
    q = L.select(bad_q, xnp.full_like(q, 0.01), q)
    small = L.bitwise_or(bad_n, L.le(L.mul(n, q), 10.0))
    n = L.floor(n)
    max_iters = np.int32(np.iinfo(np.int32).max)
    inv = _inversion(key, L.select(small, n, xnp.zeros_like(n)), q, shape, max_iters)
    rej = _btrs(key, L.select(small, xnp.full_like(n, 1e4), n),
                L.select(small, xnp.full_like(q, 0.5), q), shape, max_iters)
    out = B.convert(L.select(small, inv, rej), dtype)
    invalid = L.bitwise_or(bad_q, bad_n)
    out = L.select(invalid, xnp.full_like(out, np.nan), out)
    out = L.select(L.bitwise_and(inf_n, L.bitwise_not(invalid)), xnp.full_like(out, np.inf),
                   out)
    keep = L.bitwise_or(L.bitwise_or(low, bad_n), L.bitwise_or(L.ne(q, q), inf_n))
    return L.select(keep, out, L.sub(B.convert(n, dtype), out))


def _inexact(x, fn):
    """x as a float array: integers (and Python scalars) in the default float type."""
    x = float_param(x)
    dt = _dtype(x)
    if dt.kind != "f" and dt != np.dtype("bfloat16"):
        raise RandomError(f"{fn}: p must be a real number or array, got dtype {dt}")
    return x


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats of `dtype` (n may be a float: it is floored)."""
    data, _ = key_arg("binomial", key)
    dtype = float_dtype(float if dtype is None else dtype, "binomial")
    n, p = _arr(n), _inexact(p, "binomial")
    if shape is None:
        shape = broadcast_shapes(np.shape(n), np.shape(p), fn="binomial")
    else:
        shape = canonical_shape(shape, "binomial")
        check_shape("binomial", shape, np.shape(n), np.shape(p))
    return jitted(_binomial, "shape", "dtype")(data, n, p, shape=tuple(shape), dtype=dtype)


def _multinomial(key, n, p, shape, dtype):
    work = _dtype(p)
    n = xnp.broadcast_to(B.convert(n, work), shape[:-1])
    p = xnp.moveaxis(xnp.broadcast_to(p, shape), -1, 0)
    rest = xnp.flip(xnp.cumsum(xnp.flip(p, 0), axis=0), 0)
    ratios = L.div(p, xnp.where(L.eq(rest, 0.0), xnp.ones_like(rest), rest))
    keys = _threefry.split(key, (shape[-1],))

    def draw(remaining, xs):
        ratio, k = xs
        count = _binomial(k, remaining, xnp.clip(ratio, 0.0, 1.0), shape[:-1], work)
        return L.sub(remaining, count), count

    counts = L.scan(draw, n, (ratios, keys))[1]
    return B.convert(xnp.moveaxis(counts, 0, -1), dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts (floats of `dtype`), outcomes along p's last axis; `shape`
    is the full result shape (its last entry the number of outcomes). `unroll` is
    accepted for JAX compatibility (the category scan is not unrolled)."""
    data, _ = key_arg("multinomial", key)
    dtype = float_dtype(float if dtype is None else dtype, "multinomial")
    n, p = _arr(n), _inexact(p, "multinomial")
    if B.aval_of(p).ndim == 0:
        raise RandomError("multinomial: p must have at least one dimension (the outcomes)")
    if shape is None:
        shape = tuple(B.aval_of(p).shape)
    else:
        shape = canonical_shape(shape, "multinomial")
        if not shape:
            raise RandomError("multinomial: shape must include the outcome axis")
        check_shape("multinomial", shape, B.aval_of(p).shape)
    check_shape("multinomial", shape[:-1], np.shape(n))
    if not (isinstance(unroll, bool) or isinstance(unroll, (int, np.integer)) and unroll >= 1):
        raise RandomError(f"multinomial: unroll must be a positive int or a bool, got "
                          f"{unroll!r}")
    return jitted(_multinomial, "shape", "dtype")(data, n, p, shape=tuple(shape),
                                                  dtype=dtype)
