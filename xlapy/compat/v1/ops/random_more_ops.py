"""More random ops: tf.random_shuffle, tf.multinomial / tf.random.categorical,
tf.random_gamma. As the other random ops (random_ops.py) they draw on the host with a NumPy
generator seeded TF-style from the graph and op seeds; inside a compiled cluster their
values are drawn on the host and passed in.

RandomGamma has TF's gradient with respect to alpha (implicit reparameterization:
d sample / d alpha = -(dF/d alpha) / f at the sample, F and f the Gamma(alpha, 1) CDF and
density). Its RandomGammaGrad op runs in the executor (SciPy's regularized incomplete
gamma, differentiated in alpha by a central difference in float64: about 1e-7 relative
error); it has no XLA lowering.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, ints, make, partial_shape_value, tensor
from xlapy.compat.v1.ops.random_ops import _shape_tensor, get_seed
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape


def _seeds(seed):
    s1, s2 = get_seed(seed)
    return {"seed": s1, "seed2": s2}


@register_op("RandomShuffle", infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
             rng=True, lowering=None)
def _shuffle(m, rng, x):
    if x.ndim == 0:
        return x
    return x[rng.permutation(x.shape[0])]


def _multinomial_infer(op):
    logits, n = op.inputs
    if logits.shape.ndims not in (None, 2):
        raise InvalidArgumentError(f"logits should be a matrix, got shape "
                                   f"{logits.shape.tf_str()}")
    nv = constant_value(n)
    b = logits.shape.dims[0] if logits.shape.ndims == 2 else None
    return [(op.get_attr("output_dtype"), TensorShape([b, None if nv is None else int(nv)]))]


@register_op("Multinomial", infer=_multinomial_infer, attrs=("output_dtype",), rng=True,
             lowering=None)
def _multinomial(m, rng, logits, num_samples, output_dtype=dtypes.int64):
    n = int(num_samples)
    if n < 0:
        raise InvalidArgumentError(f"num_samples should be nonnegative, got {n}")
    lg = logits.astype(np.float64)
    lg = lg - lg.max(axis=1, keepdims=True)
    p = np.exp(lg)
    cdf = np.cumsum(p, axis=1)
    u = rng.random((logits.shape[0], n)) * cdf[:, -1:]
    out = np.stack([np.searchsorted(cdf[i], u[i], side="right")
                    for i in range(logits.shape[0])]) if logits.shape[0] else \
        np.zeros((0, n), np.int64)
    return np.minimum(out, logits.shape[1] - 1).astype(output_dtype.np)


def _gamma_infer(op):
    shp, alpha = op.inputs
    s = partial_shape_value(shp)
    if s.ndims is None or alpha.shape.ndims is None:
        return [(alpha.dtype, unknown_shape())]
    return [(alpha.dtype, s.concatenate(alpha.shape))]


@register_op("RandomGamma", infer=_gamma_infer, rng=True, lowering=None)
def _gamma(m, rng, shape, alpha):
    out_shape = ints(shape) + alpha.shape
    if np.any(alpha <= 0):
        raise InvalidArgumentError("random_gamma: alpha must be positive")
    return rng.standard_gamma(np.broadcast_to(alpha, out_shape)).astype(alpha.dtype)


not_differentiable("RandomShuffle", "Multinomial")


def _gamma_grad_infer(op):
    from xlapy.compat.v1.tensor_shape import broadcast_shape
    a, x = op.inputs
    return [(a.dtype, broadcast_shape(a.shape, x.shape, f" for '{op.name}'"))]


@register_op("RandomGammaGrad", infer=_gamma_grad_infer, lowering=None)
def _gamma_grad_kernel(m, alpha, sample):
    import scipy.special as sp
    a, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(sample, np.float64))
    h = 1e-6 * np.maximum(a, 1.0)
    h = np.minimum(h, a / 2)
    dcdf = (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)
    with np.errstate(divide="ignore", invalid="ignore"):
        logpdf = (a - 1) * np.log(x) - x - sp.gammaln(a)
        out = np.where(x > 0, -dcdf / np.exp(logpdf), 0.0)
    return np.where(np.isfinite(out), out, 0.0).astype(alpha.dtype)


not_differentiable("RandomGammaGrad")


@register_gradient("RandomGamma")
def _random_gamma_grad(op, g):
    from xlapy.compat.v1.ops.array_ops import reshape
    from xlapy.compat.v1.ops.math_ops import multiply, reduce_sum
    shape_t, alpha = op.inputs
    k = partial_shape_value(shape_t).ndims
    if k is None or alpha.shape.ndims is None:
        raise InvalidArgumentError(f"the gradient of {op.name} needs the number of sample "
                                   "dimensions and alpha's rank")
    a = reshape(alpha, [1] * k + [-1 if d is None else d for d in alpha.shape.dims]) \
        if k else alpha
    partial = make("RandomGammaGrad", [a, op.outputs[0]])
    prod = multiply(g, partial)
    return [None, reduce_sum(prod, list(range(k))) if k else prod]


def random_shuffle(value, seed=None, name=None):
    """Shuffles `value` along its first dimension."""
    return make("RandomShuffle", [tensor(value)], _seeds(seed), name=name)


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    logits = tensor(logits)
    n = num_samples if hasattr(num_samples, "op") else \
        tensor(np.asarray(num_samples, np.int32))
    attrs = {"output_dtype": dtypes.as_dtype(output_dtype or dtypes.int64), **_seeds(seed)}
    return make("Multinomial", [logits, n], attrs, name=name)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    return multinomial(logits, num_samples, seed=seed, name=name, output_dtype=dtype)


def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Samples of Gamma(alpha, beta) (beta the rate), shaped shape + broadcast(alpha, beta)."""
    from xlapy.compat.v1.framework import get_default_graph
    from xlapy.compat.v1.ops.math_ops import realdiv
    dtype = dtypes.as_dtype(dtype)
    alpha = tensor(alpha, dtype)
    with get_default_graph().name_scope(name or "random_gamma"):
        if beta is not None:
            from xlapy.compat.v1.ops.array_ops import ones_like
            from xlapy.compat.v1.ops.math_ops import multiply
            beta = tensor(beta, dtype)
            alpha = multiply(alpha, ones_like(beta))
        g = make("RandomGamma", [_shape_tensor(shape), alpha], _seeds(seed))
        return g if beta is None else realdiv(g, beta)
