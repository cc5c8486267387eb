"""Special functions and small math compositions of TF 1.15: tf.igamma / igammac (and
IgammaGradA, their derivative in a), tf.polygamma, tf.zeta, tf.math.bessel_i0e / i1e,
tf.math.nextafter, tf.lbeta, tf.math.polyval and tf.cross.

The elementwise kernels are scipy.special in the executor and xlapy.scipy.special /
xlapy.lax when compiled. IgammaGradA is the derivative of xlapy's regularized incomplete
gamma function in a, taken with xlapy's autodiff (eagerly in float64 in the executor,
traced into the cluster when compiled).

Gradients are TF's: Igamma d/dx = exp(-x + (a-1) log x - lgamma(a)), d/da IgammaGradA
(Igammac: their negatives); Polygamma d/dx polygamma(a+1, x), none in a; Zeta d/dq
-x zeta(x+1, q), none in x; BesselI0e i1e(x) - sign(x) i0e(x); BesselI1e
i0e(x) - i1e(x) (sign(x) + 1/x), 1/2 at 0. NextAfter has none. lbeta, polyval and cross
are compositions, differentiated through their parts.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import binary_args, broadcasting, float_unary, make, tensor
from xlapy.compat.v1.ops.array_ops import stack, unstack, zeros_like
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import (add, equal, exp, log, multiply, negative,
                                          reciprocal, reduce_sum, sign, subtract, sum_to)
from xlapy.compat.v1.ops.special_math_ops import lgamma


def _special(m):
    if m is np:
        import scipy.special  # the executor's kernels; SciPy is loaded only when they run
        return scipy.special
    import xlapy.scipy.special  # the XLA lowering's functions, loaded when one is traced
    return xlapy.scipy.special


def _float_binary(op):
    for t, nm in zip(op.inputs, ("a", "x")):
        if not t.dtype.is_floating:
            raise InvalidTypeError(f"Value passed to parameter '{nm}' of '{op.type}' Op has "
                                   f"DataType {t.dtype.name} not in list of allowed values: "
                                   "float32, float64")
    return broadcasting()(op)


def _c(v, like):
    return np.asarray(v, dtype=like.dtype)


# ---- incomplete gamma ------------------------------------------------------------------------

register_op("Igamma", infer=_float_binary)(lambda m, a, x: _special(m).gammainc(a, x))
register_op("Igammac", infer=_float_binary)(lambda m, a, x: _special(m).gammaincc(a, x))


@register_op("IgammaGradA", infer=_float_binary)
def _igamma_grad_a(m, a, x):
    """d/da of the regularized lower incomplete gamma function P(a, x), elementwise."""
    import xlapy.numpy as xnp  # autodiff of xlapy's gammainc, also in the executor
    import xlapy.scipy.special as xsp  # (idem)
    from xlapy.config import enable_x64  # (idem)
    from xlapy.frontend.autodiff import vjp  # (idem)
    shp = np.broadcast_shapes(tuple(a.shape), tuple(x.shape))
    dtype = np.asarray(a).dtype if m is np else a.dtype
    with enable_x64(True):
        ab, xb = xnp.broadcast_to(a, shp), xnp.broadcast_to(x, shp)
        _, back = vjp(lambda v: xsp.gammainc(v, xb), ab)
        (da,) = back(xnp.ones(shp, ab.dtype))
    return np.asarray(da, dtype=dtype) if m is np else da


def _igamma_partials(op):
    a, x = op.inputs
    partial_x = exp(subtract(multiply(subtract(a, tensor(np.ones((), a.dtype.np))), log(x)),
                             add(x, lgamma(a))))
    partial_a = make("IgammaGradA", [a, x])
    return a, x, partial_a, partial_x


@register_gradient("Igamma")
def _igamma_grad(op, g):
    a, x, pa, px = _igamma_partials(op)
    return [sum_to(multiply(g, pa), a, x), sum_to(multiply(g, px), x, a)]


@register_gradient("Igammac")
def _igammac_grad(op, g):
    a, x, pa, px = _igamma_partials(op)
    return [sum_to(negative(multiply(g, pa)), a, x), sum_to(negative(multiply(g, px)), x, a)]


def igamma(a, x, name=None):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = binary_args(a, x, "Igamma")
    return make("Igamma", [a, x], name=name)


def igammac(a, x, name=None):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = binary_args(a, x, "Igammac")
    return make("Igammac", [a, x], name=name)


# ---- polygamma, zeta -----------------------------------------------------------------------

@register_op("Polygamma", infer=_float_binary)
def _polygamma(m, a, x):
    """The a-th derivative of digamma at x: NaN unless a is a non-negative integer."""
    sp = _special(m)
    ok = m.logical_and(m.equal(m.floor(a), a), m.greater_equal(a, _c(0, a)))
    n = m.where(ok, a, _c(0, a))
    # psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x) for n >= 1; digamma(x) for n = 0
    sgn = m.where(m.equal(m.remainder(n, _c(2, n)), _c(0, n)), _c(-1, n), _c(1, n))
    high = m.multiply(m.multiply(sgn, m.exp(sp.gammaln(m.add(n, _c(1, n))))),
                      sp.zeta(m.add(n, _c(1, n)), x))
    val = m.where(m.equal(n, _c(0, n)), sp.digamma(x), high)
    return m.where(ok, val, _c(np.nan, val))


register_op("Zeta", infer=_float_binary)(lambda m, x, q: _special(m).zeta(x, q))


@register_gradient("Polygamma")
def _polygamma_grad(op, g):
    a, x = op.inputs
    d = polygamma(add(a, tensor(np.ones((), a.dtype.np))), x)
    return [None, sum_to(multiply(g, d), x, a)]


@register_gradient("Zeta")
def _zeta_grad(op, g):
    x, q = op.inputs
    d = negative(multiply(x, zeta(add(x, tensor(np.ones((), x.dtype.np))), q)))
    return [None, sum_to(multiply(g, d), q, x)]


def polygamma(a, x, name=None):
    """psi^(a)(x), the a-th derivative of digamma (a a non-negative integer)."""
    a, x = binary_args(a, x, "Polygamma")
    return make("Polygamma", [a, x], name=name)


def zeta(x, q, name=None):
    """The Hurwitz zeta function sum_n (n + q)^-x."""
    x, q = binary_args(x, q, "Zeta")
    return make("Zeta", [x, q], name=name)


# ---- exponentially scaled Bessel functions --------------------------------------------------

register_op("BesselI0e", infer=float_unary)(lambda m, x: _special(m).i0e(x))
register_op("BesselI1e", infer=float_unary)(lambda m, x: _special(m).i1e(x))


@register_gradient("BesselI0e")
def _bessel_i0e_grad(op, g):
    x = op.inputs[0]
    return [multiply(g, subtract(bessel_i1e(x), multiply(sign(x), op.outputs[0])))]


@register_gradient("BesselI1e")
def _bessel_i1e_grad(op, g):
    x = op.inputs[0]
    y = op.outputs[0]
    zero = equal(x, zeros_like(x))
    safe_x = where(zero, tensor(np.ones((), x.dtype.np)) + zeros_like(x), x)
    d = subtract(bessel_i0e(x), multiply(y, add(sign(x), reciprocal(safe_x))))
    half = tensor(np.full((), 0.5, x.dtype.np)) + zeros_like(x)
    return [multiply(g, where(zero, half, d))]


def bessel_i0e(x, name=None):
    """exp(-|x|) I0(x)."""
    return make("BesselI0e", [tensor(x)], name=name)


def bessel_i1e(x, name=None):
    """exp(-|x|) I1(x)."""
    return make("BesselI1e", [tensor(x)], name=name)


# ---- nextafter ------------------------------------------------------------------------------

def _nextafter_lower(m, x1, x2):
    import xlapy.lax  # XLA's NextAfter, reached when the op is traced
    return xlapy.lax.nextafter(x1, x2)


@register_op("NextAfter", infer=_float_binary, lowering=_nextafter_lower)
def _nextafter(m, x1, x2):
    return np.nextafter(x1, x2)


def nextafter(x1, x2, name=None):
    """The next representable value after x1 in the direction of x2, elementwise."""
    x1, x2 = binary_args(x1, x2, "NextAfter")
    return make("NextAfter", [x1, x2], name=name)


# ---- compositions: lbeta, polyval, cross ------------------------------------------------------

def lbeta(x, name=None):
    """log|Beta(x)| over the last dimension: sum(lgamma(x)) - lgamma(sum(x))."""
    x = tensor(x)
    with get_default_graph().name_scope(name or "lbeta"):
        return subtract(reduce_sum(lgamma(x), [-1]), lgamma(reduce_sum(x, [-1])))


def polyval(coeffs, x, name=None):
    """coeffs[0] * x^(n-1) + ... + coeffs[n-1] by Horner's rule (zeros_like(x) when coeffs
    is empty)."""
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    x = tensor(x)
    with get_default_graph().name_scope(name or "polyval"):
        if not coeffs:
            return zeros_like(x)
        p = tensor(coeffs[0], x.dtype)
        for c in coeffs[1:]:
            p = add(tensor(c, x.dtype), multiply(p, x))
        return p


def cross(a, b, name=None):
    """The cross product of the 3-vectors along the last dimension of a and b."""
    a, b = binary_args(a, b, "Cross")
    for t in (a, b):
        d = t.shape.dims
        if d is None:
            raise InvalidArgumentError("cross: the inputs need a known rank and last "
                                       "dimension 3")
        if not d or d[-1] != 3:
            raise InvalidArgumentError(f"Dimension must be 3 but is {d[-1] if d else None} "
                                       f"for 'Cross' with input shapes {a.shape}, {b.shape}")
    if a.shape.ndims != b.shape.ndims or not a.shape.is_compatible_with(b.shape):
        raise InvalidArgumentError(f"Shapes must be equal but are {a.shape} and {b.shape} "
                                   "for 'Cross'")
    with get_default_graph().name_scope(name or "Cross"):
        a1, a2, a3 = unstack(a, 3, axis=-1)
        b1, b2, b3 = unstack(b, 3, axis=-1)
        return stack([subtract(multiply(a2, b3), multiply(a3, b2)),
                      subtract(multiply(a3, b1), multiply(a1, b3)),
                      subtract(multiply(a1, b2), multiply(a2, b1))], axis=-1)
