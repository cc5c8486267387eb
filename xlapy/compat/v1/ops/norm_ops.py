"""Batch normalization: tf.nn.batch_normalization (a composite, as in TF) and
tf.nn.fused_batch_norm (the FusedBatchNorm op and its gradient op).

FusedBatchNorm(x, scale, offset, mean, variance; epsilon, data_format, is_training):
  training   normalizes with the batch's mean and (biased) variance over every axis but
             the channel axis, and returns the batch mean and the Bessel-corrected variance
             (n / (n - 1)), which the moving averages of tf.layers.batch_normalization use;
  inference  normalizes with the given mean and variance and returns them.
Outputs 3 and 4 keep the batch mean and biased variance for the gradient
(FusedBatchNormGrad), as TF's reserve spaces do.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import make_op, tensor
from xlapy.compat.v1.ops.math_ops import add, multiply, rsqrt, subtract
from xlapy.compat.v1.tensor_shape import TensorShape

_ATTRS = ("epsilon", "data_format", "is_training")


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + epsilon) + offset, broadcasting."""
    with get_default_graph().name_scope(name or "batchnorm"):
        x = tensor(x)
        variance = tensor(variance, dtype=x.dtype)
        inv = rsqrt(add(variance, tensor(np.asarray(variance_epsilon, x.dtype.np))))
        if scale is not None:
            inv = multiply(inv, tensor(scale, dtype=x.dtype))
        shift = multiply(tensor(mean, dtype=x.dtype), inv)
        shift = subtract(tensor(offset, dtype=x.dtype), shift) if offset is not None else \
            subtract(tensor(np.zeros((), x.dtype.np)), shift)
        return add(multiply(x, inv), shift)


def _channel_axis(fmt, ndim):
    return 1 if fmt.startswith("NC") else ndim - 1


def _fbn_infer(op):
    x, scale, offset, mean, var = op.inputs
    fmt = op.get_attr("data_format")
    if not x.dtype.is_floating:
        raise InvalidTypeError(f"FusedBatchNorm needs floating-point x, got {x.dtype.name}")
    if x.shape.ndims not in (None, 4, 5):
        raise InvalidArgumentError(f"input must be 4-dimensional, got {x.shape} for "
                                   f"'{op.name}' (op: 'FusedBatchNorm')")
    c = None
    if x.shape.dims is not None:
        c = x.shape.dims[_channel_axis(fmt, x.shape.ndims)]
    checked = (scale, offset) if op.get_attr("is_training") else (scale, offset, mean, var)
    for t in checked:
        if t.shape.ndims not in (None, 1):
            raise InvalidArgumentError(f"scale, offset, mean and variance must be 1-D, got "
                                       f"{t.shape} for '{op.name}'")
        d = t.shape.dims[0] if t.shape.dims else None
        if c is not None and d is not None and d != c:
            raise InvalidArgumentError(f"scale, offset, mean and variance must have {c} "
                                       f"elements (the channels of x), got {d}")
        c = c if c is not None else d
    v = (scale.dtype, TensorShape([c]))
    return [(x.dtype, x.shape), v, v, v, v]


def _stats_axes(fmt, ndim):
    ca = _channel_axis(fmt, ndim)
    return tuple(a for a in range(ndim) if a != ca), ca


def _bshape(v, ca, ndim):
    s = [1] * ndim
    s[ca] = -1
    return s


@register_op("FusedBatchNorm", infer=_fbn_infer, attrs=_ATTRS)
def _fused_batch_norm(m, x, scale, offset, mean, variance, epsilon=1e-3, data_format="NHWC",
                      is_training=True):
    axes, ca = _stats_axes(data_format, x.ndim)
    shp = _bshape(None, ca, x.ndim)
    eps = np.asarray(epsilon, x.dtype)
    if is_training:
        n = int(np.prod([x.shape[a] for a in axes]))
        bm = m.mean(x, axis=axes)
        bv = m.mean(m.square(m.subtract(x, m.reshape(bm, shp))), axis=axes)
        corrected = m.multiply(bv, np.asarray(n / max(n - 1, 1), bv.dtype))
        use_m, use_v = bm, bv
    else:
        bm, bv, corrected = mean, variance, variance
        use_m, use_v = mean, variance
    inv = m.multiply(m.reciprocal(m.sqrt(m.add(use_v, eps))), scale)
    y = m.add(m.multiply(m.subtract(x, m.reshape(use_m, shp)), m.reshape(inv, shp)),
              m.reshape(offset, shp))
    return y, bm, corrected, use_m, use_v


@register_op("FusedBatchNormGrad", attrs=_ATTRS,
             infer=lambda op: [(op.inputs[1].dtype, op.inputs[1].shape)] +
             [(op.inputs[2].dtype, op.inputs[2].shape)] * 2)
def _fused_batch_norm_grad(m, g, x, scale, saved_mean, saved_var, epsilon=1e-3,
                           data_format="NHWC", is_training=True):
    axes, ca = _stats_axes(data_format, x.ndim)
    shp = _bshape(None, ca, x.ndim)
    inv = m.reciprocal(m.sqrt(m.add(saved_var, np.asarray(epsilon, x.dtype))))
    xhat = m.multiply(m.subtract(x, m.reshape(saved_mean, shp)), m.reshape(inv, shp))
    d_offset = m.sum(g, axis=axes)
    d_scale = m.sum(m.multiply(g, xhat), axis=axes)
    k = m.reshape(m.multiply(scale, inv), shp)
    if is_training:
        n = np.asarray(int(np.prod([x.shape[a] for a in axes])), x.dtype)
        mg = m.reshape(m.true_divide(d_offset, n), shp)
        mgx = m.reshape(m.true_divide(d_scale, n), shp)
        dx = m.multiply(k, m.subtract(m.subtract(g, mg), m.multiply(xhat, mgx)))
    else:
        dx = m.multiply(g, k)
    return dx, d_scale, d_offset


# FusedBatchNormGrad has no gradient here: a second derivative through it raises
# (LookupGradientError) rather than being silently zero


@register_gradient("FusedBatchNorm")
def _fbn_grad(op, g_y, *rest):
    x, scale = op.inputs[0], op.inputs[1]
    attrs = {k: op.get_attr(k) for k in _ATTRS}
    gop = make_op("FusedBatchNormGrad", [g_y, x, scale, op.outputs[3], op.outputs[4]], attrs)
    return [gop.outputs[0], gop.outputs[1], gop.outputs[2], None, None]


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None):
    """(y, batch_mean, batch_variance); mean and variance are required for inference."""
    x = tensor(x)
    if data_format not in ("NHWC", "NCHW", "NDHWC", "NCDHW"):
        raise InvalidArgumentError(f"data_format must be NHWC or NCHW, got {data_format!r}")
    scale = tensor(scale)
    offset = tensor(offset, dtype=scale.dtype)
    if not is_training and (mean is None or variance is None):
        raise InvalidArgumentError("Both 'mean' and 'variance' must be a 1D tensor when "
                                   "is_training is False.")
    empty = np.zeros([0], scale.dtype.np)
    mean = tensor(empty if mean is None else mean, dtype=scale.dtype)
    variance = tensor(empty if variance is None else variance, dtype=scale.dtype)
    # TF: epsilon below 1.001e-5 is raised to it (cuDNN's minimum)
    epsilon = max(float(epsilon), 1.001e-5)
    op = make_op("FusedBatchNorm", [x, scale, offset, mean, variance],
                 {"epsilon": epsilon, "data_format": data_format,
                  "is_training": bool(is_training)}, name=name or "FusedBatchNorm")
    return op.outputs[0], op.outputs[1], op.outputs[2]
