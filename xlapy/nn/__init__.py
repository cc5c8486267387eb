"""xlapy.nn: neural-network activation functions and helpers, like jax.nn.

Each function takes arrays (NumPy or traced) and follows jax.nn's definitions, including
the gradient at kinks: relu'(0) = 0, relu6' is 0 at 0 and 6, hard_tanh' likewise.
softmax, log_softmax and logsumexp subtract stop_gradient(max) for stability, so their
gradients are the exact analytic ones. Integer inputs of float functions become floats
(with NumPy's promotion, as xlapy.numpy does). one_hot defaults to float32, as JAX does.
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S
from xlapy.frontend.primitives.misc import stop_gradient
from xlapy.numpy._core import cast, dtype_of, float_dtype_for, normalize_axes, shape


def _float(x):
    return cast(xnp.asarray(x), float_dtype_for(dtype_of(x)))


def _zero(x):
    return B.zeros_like(x)


# ---- activations ----------------------------------------------------------------------------

def relu(x):
    """max(x, 0) with gradient 0 at 0 (as jax.nn.relu)."""
    x = xnp.asarray(x)
    return B.select(B.gt(x, _zero(x)), x, _zero(x))


def relu6(x):
    """min(max(x, 0), 6) with gradient 1 on (0, 6) and 0 elsewhere."""
    x = xnp.asarray(x)
    six = B.full_like(x, 6)
    return B.select(B.gt(x, _zero(x)), B.select(B.lt(x, six), x, six), _zero(x))


def leaky_relu(x, negative_slope=1e-2):
    x = xnp.asarray(x)
    return xnp.where(B.ge(x, _zero(x)), x, xnp.multiply(x, negative_slope))


def hard_tanh(x):
    x = xnp.asarray(x)
    one = B.full_like(x, 1)
    return B.select(B.gt(x, one), one, B.select(B.lt(x, B.neg(one)), B.neg(one), x))


def sigmoid(x):
    return B.logistic(_float(x))


def silu(x):
    x = _float(x)
    return B.mul(x, B.logistic(x))


swish = silu


def hard_sigmoid(x):
    return xnp.divide(relu6(xnp.add(_float(x), 3.0)), 6.0)


def hard_silu(x):
    x = _float(x)
    return B.mul(x, hard_sigmoid(x))


hard_swish = hard_silu


def softplus(x):
    """log(1 + e^x): x + log1p(e^-x) for x > 0, log1p(e^x) otherwise (each branch sees
    only inputs that are safe for it, so no inf * 0 enters the gradient; softplus'(0) =
    1/2 exactly)."""
    x = _float(x)
    pos = B.gt(x, _zero(x))
    xp_, xn = B.select(pos, x, _zero(x)), B.select(pos, _zero(x), x)
    return B.select(pos, B.add(xp_, B.log1p(B.exp(B.neg(xp_)))), B.log1p(B.exp(xn)))


def log_sigmoid(x):
    x = _float(x)
    return B.neg(softplus(B.neg(x)))


def elu(x, alpha=1.0):
    x = _float(x)
    pos = B.gt(x, _zero(x))
    safe = B.select(pos, _zero(x), x)
    return B.select(pos, x, xnp.multiply(B.expm1(safe), alpha))


def selu(x):
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return xnp.multiply(elu(x, alpha), scale)


def celu(x, alpha=1.0):
    x = _float(x)
    return xnp.add(B.max_(x, _zero(x)),
                   xnp.multiply(B.expm1(xnp.divide(B.min_(x, _zero(x)), alpha)), alpha))


def gelu(x, approximate: bool = True):
    """x * Phi(x); approximate=True uses JAX's tanh form, False the exact erf form."""
    x = _float(x)
    if approximate:
        c = float(np.sqrt(2 / np.pi))
        inner = xnp.multiply(xnp.add(x, xnp.multiply(B.mul(B.mul(x, x), x), 0.044715)), c)
        return B.mul(x, xnp.multiply(xnp.add(B.tanh(inner), 1.0), 0.5))
    return B.mul(xnp.multiply(x, 0.5), xnp.add(B.erf(xnp.multiply(x, float(np.sqrt(0.5)))), 1.0))


def glu(x, axis=-1):
    """a * sigmoid(b) where (a, b) are the two halves of x along axis."""
    a, b = xnp.split(xnp.asarray(x), 2, axis=axis)
    return B.mul(a, sigmoid(b))


# ---- normalizations ---------------------------------------------------------------------------

def _max_keep(x, axes):
    """The max over axes, broadcast back to x's shape, with no gradient."""
    s = shape(x)
    m = stop_gradient(S.reduce_max(x, axes))
    return B.broadcast_in_dim(m, s, [i for i in range(len(s)) if i not in axes])


def _sum_keep(x, axes):
    s = shape(x)
    return B.broadcast_in_dim(S.reduce_sum(x, axes), s, [i for i in range(len(s))
                                                         if i not in axes])


def softmax(x, axis=-1):
    """exp(x - max) / sum(exp(x - max)) along axis (an int or a tuple of ints)."""
    x = _float(x)
    axes = normalize_axes(axis, len(shape(x)))
    e = B.exp(B.sub(x, _max_keep(x, axes)))
    return B.div(e, _sum_keep(e, axes))


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along axis, computed as shifted - log(sum(exp(shifted)))."""
    x = _float(x)
    axes = normalize_axes(axis, len(shape(x)))
    shifted = B.sub(x, _max_keep(x, axes))
    return B.sub(shifted, B.log(_sum_keep(B.exp(shifted), axes)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over axis, stable for large |a| (b defaults to 1)."""
    if return_sign or where is not None:
        from xlapy.scipy.special import logsumexp as lse
        return lse(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign, where=where)
    a = _float(a)
    if b is not None:
        dt = xnp.result_type(a, b)
        a, b = xnp.broadcast_arrays(cast(a, dt), cast(xnp.asarray(b), dt))
    s = shape(a)
    axes = normalize_axes(axis, len(s))
    kept = [i for i in range(len(s)) if i not in axes]
    m = stop_gradient(S.reduce_max(a, axes))
    finite = B.lt(B.abs_(m), B.full_like(m, np.inf))
    m = B.select(finite, m, B.zeros_like(m))             # all -inf rows: log(0) = -inf
    e = B.exp(B.sub(a, B.broadcast_in_dim(m, s, kept)))
    if b is not None:
        e = B.mul(e, b)
    r = B.add(B.log(S.reduce_sum(e, axes)), m)
    if keepdims:
        r = S.reshape(r, tuple(1 if i in axes else d for i, d in enumerate(s)))
    return r


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    """(x - mean) / sqrt(variance + epsilon), statistics over axis unless given."""
    x = _float(x)
    if mean is None:
        mean = xnp.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = xnp.subtract(xnp.mean(xnp.square(x), axis=axis, keepdims=True),
                                xnp.square(mean))
    return xnp.multiply(xnp.subtract(x, mean), B.rsqrt(xnp.add(variance, epsilon)))


normalize = standardize


def one_hot(x, num_classes: int, dtype=np.float32, axis=-1):
    """x[..., None] == arange(num_classes) as `dtype` (the new axis at `axis`)."""
    x = xnp.asarray(x)
    s = shape(x)
    out_nd = len(s) + 1
    ax = int(axis) % out_nd
    out_shape = s[:ax] + (int(num_classes),) + s[ax:]
    lhs = B.broadcast_in_dim(x, out_shape, [i for i in range(out_nd) if i != ax])
    rhs = S.iota(dtype_of(x), out_shape, ax)
    return cast(B.eq(lhs, rhs), dtype)


from xlapy.nn._extras import (dot_product_attention, identity, log1mexp,  # noqa: E402
                              logmeanexp, mish, soft_sign, sparse_plus, sparse_sigmoid,
                              squareplus, tanh)


def __getattr__(name):
    if name == "initializers":
        import importlib
        return importlib.import_module("xlapy.nn.initializers")
    raise AttributeError(f"module 'xlapy.nn' has no attribute '{name}'")


__all__ = ["identity", "tanh", "mish", "soft_sign", "squareplus", "sparse_plus",
           "sparse_sigmoid", "log1mexp", "logmeanexp", "dot_product_attention",
           "relu", "relu6", "leaky_relu", "hard_tanh", "sigmoid", "silu", "swish",
           "hard_sigmoid", "hard_silu", "hard_swish", "softplus", "log_sigmoid", "elu", "selu",
           "celu", "gelu", "glu", "softmax", "log_softmax", "logsumexp", "standardize",
           "normalize", "one_hot"]
