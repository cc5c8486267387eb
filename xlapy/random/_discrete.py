"""Discrete samplers: bernoulli, randint, permutation, choice, categorical, as JAX computes
them (jax._src.random), so that for the same key they give JAX's values:

  bernoulli    uniform(key, shape, dtype(p)) < p ('high' mode: u2 * 2^-nmant < p - u1)
  randint      the key is split in two; two words per sample reduced modulo the span,
               combined as (hi mod span) * (2^(n/2) mod span)^2 + lo mod span, mod span
  permutation  ceil(3 log(n) / log(2^32 - 1)) rounds of a stable sort by fresh random words
  choice       indices from randint, a permutation's prefix, the cumulative distribution
               (with p) or the top k of gumbel + log p (without replacement)
  categorical  argmax over the category axis of gumbel + logits (top k without replacement)
"""

from __future__ import annotations

import math

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax as L
from xlapy.frontend.core import Tracer, concrete_or_error
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import sorting
from xlapy.random import _threefry
from xlapy.random._common import (RandomError, canonical_shape, check_shape, float_param,
                                  int_dtype, jitted, x64_enabled)
from xlapy.random._continuous import _gumbel, _log, unit_floats
from xlapy.random._keys import key_arg


def _arr(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def _dtype_of(x) -> np.dtype:
    return B.aval_of(_arr(x)).dtype


def _int_param(x):
    """An integer parameter as JAX sees it: a Python int in the default int type (an error
    if it does not fit), 64-bit arrays narrowed without x64; traced values unchanged."""
    if isinstance(x, Tracer):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        dt = np.dtype(np.int64 if x64_enabled() else np.int32)
        if not np.iinfo(dt).min <= x <= np.iinfo(dt).max:
            raise RandomError(f"{x} does not fit in {dt}")
        return np.asarray(x, dt)
    arr = np.asarray(x)
    if arr.dtype.itemsize == 8 and arr.dtype.kind in "iu" and not x64_enabled():
        arr = arr.astype(f"{arr.dtype.kind}4")
    return arr


# ---- bernoulli -----------------------------------------------------------------------------

def _bernoulli(key, p, shape, mode):
    dtype = _dtype_of(p)
    p = xnp.broadcast_to(p, shape)
    if mode == "high":
        both = unit_floats(key, (2,) + tuple(shape), dtype)
        u1, u2 = both[0], both[1]
        u2 = L.mul(u2, float(2.0 ** -_nmant(dtype)))
        return L.lt(u2, L.sub(p, u1))
    return L.lt(unit_floats(key, shape, dtype), p)


def _nmant(dtype) -> int:
    import ml_dtypes
    return ml_dtypes.finfo(dtype).nmant


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """True with probability p (p's float dtype sets the uniform's precision)."""
    data, _ = key_arg("bernoulli", key)
    if mode not in ("low", "high"):
        raise RandomError(f"bernoulli: mode must be 'high' or 'low', got {mode!r}")
    if isinstance(p, bool) or (not isinstance(p, Tracer) and np.asarray(p).dtype.kind in "biu"):
        raise RandomError(f"bernoulli: the probability p must have a float dtype, got "
                          f"{np.asarray(p).dtype}")
    p = float_param(p)
    dt = _dtype_of(p)
    if dt.kind != "f" and dt != np.dtype("bfloat16"):
        raise RandomError(f"bernoulli: the probability p must have a float dtype, got {dt}")
    shape = np.shape(p) if shape is None else canonical_shape(shape, "bernoulli")
    check_shape("bernoulli", shape, np.shape(p))
    return jitted(_bernoulli, "shape", "mode")(data, p, shape=tuple(shape), mode=mode)


# ---- randint -------------------------------------------------------------------------------

def _clip_convert(val, dtype):
    """val (an integer array) converted to dtype, clipped to its range instead of wrapping."""
    vdt = _dtype_of(val)
    lo = max(np.iinfo(dtype).min, np.iinfo(vdt).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(vdt).max)
    return B.convert(xnp.clip(val, np.asarray(lo, vdt), np.asarray(hi, vdt)), dtype)


def _randint(key, minval, maxval, shape, dtype):
    if _dtype_of(minval).kind not in "iu":
        minval = B.convert(minval, np.int64 if x64_enabled() else np.int32)
    if _dtype_of(maxval).kind not in "iu":
        maxval = B.convert(maxval, np.int64 if x64_enabled() else np.int32)
    out_of_range = xnp.greater(maxval, _clip_convert(np.asarray(np.iinfo(dtype).max, dtype),
                                                     _dtype_of(maxval)))
    minval = xnp.broadcast_to(_clip_convert(minval, dtype), shape)
    maxval = xnp.broadcast_to(_clip_convert(maxval, dtype), shape)
    out_of_range = xnp.broadcast_to(out_of_range, shape)
    nbits = np.iinfo(dtype).bits
    keys = _threefry.split(key, (2,))
    hi_bits = _threefry.random_bits(keys[0], nbits, shape)
    lo_bits = _threefry.random_bits(keys[1], nbits, shape)
    udt = np.dtype(f"uint{nbits}")
    span = B.convert(L.sub(maxval, minval), udt)
    one = B.full(tuple(shape), 1, udt)
    span = L.select(L.le(maxval, minval), one, span)
    span = L.select(L.bitwise_and(out_of_range, L.gt(maxval, minval)), L.add(span, one), span)
    multiplier = L.rem(B.full(tuple(shape), 2 ** (nbits // 2), udt), span)
    multiplier = L.rem(L.mul(multiplier, multiplier), span)
    offset = L.add(L.mul(L.rem(hi_bits, span), multiplier), L.rem(lo_bits, span))
    offset = L.rem(offset, span)
    return L.add(minval, B.convert(offset, dtype))


def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniformly in [minval, maxval)."""
    data, _ = key_arg("randint", key)
    dtype = int_dtype(int if dtype is None else dtype, "randint")
    shape = canonical_shape(shape, "randint")
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    info = np.iinfo(dtype)
    sample_dtype = dtype
    minval, maxval = _int_param(minval), _int_param(maxval)
    if info.bits < 32:
        sample_dtype = np.dtype(np.int32)
        minval = xnp.clip(xnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
        maxval = xnp.clip(xnp.asarray(maxval).astype(np.int32), int(info.min),
                          int(info.max) + 1)
    out = jitted(_randint, "shape", "dtype")(data, minval, maxval, shape=shape,
                                             dtype=sample_dtype)
    return xnp.asarray(out).astype(dtype) if sample_dtype != dtype else out


# ---- permutation, choice --------------------------------------------------------------------

def _shuffle(key, x, axis):
    n = math.prod(B.aval_of(x).shape)
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys = _threefry.split(key, (2,))
        key, subkey = keys[0], keys[1]
        sort_keys = _threefry.random_bits(subkey, 32, B.aval_of(x).shape)
        x = sorting.sort([sort_keys, x], dimension=axis, is_stable=True, num_keys=1)[1]
    return x


def _permute(key, x, axis, independent):
    if independent or B.aval_of(x).ndim == 1:
        return _shuffle(key, x, axis)
    n = B.aval_of(x).shape[axis]
    ind = _shuffle(key, xnp.arange(n, dtype=int_dtype(None, "permutation")), 0)
    return xnp.take(x, ind, axis=axis)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of range(x) (an integer x) or of x along `axis`."""
    data, _ = key_arg("permutation", key)
    if isinstance(x, (int, np.integer)) or (np.ndim(x) == 0 and not isinstance(x, Tracer)):
        r = int(concrete_or_error(x, "the size of a permutation"))
        return jitted(_permute, "axis", "independent")(
            data, np.arange(r, dtype=int_dtype(None, "permutation")), axis=0,
            independent=False)
    if isinstance(x, Tracer) and x.ndim == 0:
        raise x._concrete_error("argument x of xlapy.random.permutation()")
    x = _arr(x)
    nd = B.aval_of(x).ndim
    if not -nd <= axis < nd:
        raise RandomError(f"permutation: axis {axis} is out of bounds for {nd} dimensions")
    return jitted(_permute, "axis", "independent")(data, x, axis=axis % nd,
                                                   independent=bool(independent))


def _choice_p(key, p, shape, replace, n_draws, mode):
    p = xnp.asarray(p)
    if replace:
        cum = xnp.cumsum(p)
        r = xnp.multiply(cum[-1], L.sub(1.0, unit_floats(key, shape, _dtype_of(cum))))
        # side='left' insertion points of r in the nondecreasing cum
        less = xnp.less(xnp.expand_dims(cum, tuple(range(len(shape)))),
                        xnp.expand_dims(r, -1))
        return xnp.sum(less, axis=-1, dtype=np.int64 if x64_enabled() else np.int32)
    g = L.add(_gumbel(key, B.aval_of(p).shape, _dtype_of(p), mode), _log_p(p))
    return top_k_indices(g, n_draws)


def _log_p(p):
    return _log(p)


def top_k_indices(x, k):
    """Indices of the k largest values along the last axis (ties: lower index first)."""
    n = B.aval_of(x).shape[-1]
    idx = xnp.broadcast_to(xnp.arange(n, dtype=np.int32), B.aval_of(x).shape)
    out = sorting.sort([L.neg(x), idx], dimension=B.aval_of(x).ndim - 1, is_stable=True,
                       num_keys=1)[1]
    return out[..., :k]


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random samples from a (an integer n: range(n)), with or without replacement,
    uniformly or with probabilities p."""
    data, _ = key_arg("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise RandomError(f"choice: shape must be a sequence, got {shape!r}")
    shape = canonical_shape(shape, "choice")
    arr = _arr(a) if not isinstance(a, (int, np.integer)) else np.asarray(a)
    if B.aval_of(arr).ndim == 0:
        n_inputs = int(concrete_or_error(a, "the population size of choice"))
    else:
        nd = B.aval_of(arr).ndim
        if not -nd <= axis < nd:
            raise RandomError(f"choice: axis {axis} is out of bounds for {nd} dimensions")
        axis = axis % nd
        n_inputs = B.aval_of(arr).shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return xnp.zeros(shape, dtype=_dtype_of(arr))
    if n_inputs <= 0:
        raise RandomError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise RandomError(f"choice: cannot take a larger sample (size {n_draws}) than the "
                          f"population (size {n_inputs}) when replace=False")
    scalar = B.aval_of(arr).ndim == 0
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
        else:
            perm = permutation(key, n_inputs)
            ind = perm[:n_draws]
    else:
        p = float_param(p)
        if B.aval_of(p).shape != (n_inputs,):
            raise RandomError(f"choice: p must be None or a 1D vector with the same size as "
                              f"a.shape[axis]; p has shape {B.aval_of(p).shape} and "
                              f"a.shape[axis] is {n_inputs}")
        ind = jitted(_choice_p, "shape", "replace", "n_draws", "mode")(
            data, p, shape=shape, replace=bool(replace), n_draws=n_draws,
            mode="low" if mode is None else mode)
    if scalar:
        return xnp.reshape(ind, shape)
    out_shape = B.aval_of(arr).shape[:axis] + tuple(shape) + B.aval_of(arr).shape[axis + 1:]
    return xnp.reshape(xnp.take(arr, xnp.ravel(ind), axis=axis), out_shape)


# ---- categorical ---------------------------------------------------------------------------

def _categorical(key, logits, shape, batch_shape, axis, replace, mode):
    ndim = B.aval_of(logits).ndim
    dtype = _dtype_of(logits)
    prefix = tuple(shape[:len(shape) - len(batch_shape)])
    if replace:
        ax = axis - ndim if axis >= 0 else axis
        lshape = list(shape[len(shape) - len(batch_shape):])
        lshape.insert(ax % ndim, B.aval_of(logits).shape[ax])
        g = _gumbel(key, prefix + tuple(lshape), dtype, mode)
        expanded = xnp.reshape(logits, (1,) * len(prefix) + B.aval_of(logits).shape)
        return xnp.argmax(xnp.add(g, expanded), axis=ax).astype(int_dtype(None, "categorical"))
    logits = xnp.add(logits, _gumbel(key, B.aval_of(logits).shape, dtype, mode))
    k = math.prod(prefix)
    idx = top_k_indices(xnp.moveaxis(logits, axis, -1), k)        # batch_shape + (k,)
    idx = xnp.moveaxis(idx, -1, 0)
    return xnp.reshape(idx, shape).astype(int_dtype(None, "categorical"))


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn with probabilities softmax(logits) along `axis`."""
    data, _ = key_arg("categorical", key)
    logits = float_param(logits)
    lshape = B.aval_of(logits).shape
    nd = len(lshape)
    if not -nd <= axis < nd:
        raise RandomError(f"categorical: axis {axis} is out of bounds for {nd} dimensions")
    axis = axis % nd
    batch_shape = tuple(np.delete(np.array(lshape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape, "categorical")
        check_shape("categorical", shape, batch_shape)
    if not replace:
        k = math.prod(shape[:len(shape) - len(batch_shape)])
        if k > lshape[axis]:
            raise RandomError(f"categorical: number of samples without replacement ({k}) "
                              f"cannot exceed the number of categories ({lshape[axis]})")
    out = jitted(_categorical, "shape", "batch_shape", "axis", "replace", "mode")(
        data, logits, shape=tuple(shape), batch_shape=batch_shape, axis=axis,
        replace=bool(replace), mode="low" if mode is None else mode)
    return out
