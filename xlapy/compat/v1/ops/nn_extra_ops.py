"""More tf.nn: depth_to_space / space_to_depth (NHWC and NCHW), weighted_moments,
sufficient_statistics, normalize_moments, log_poisson_loss, max_pool1d / avg_pool1d.

All are compositions of graph ops with gradients and lowerings (reshapes and transposes for
the space/depth rearrangements, as TF's definitions: DepthToSpace moves blocks of
block_size^2 channels, in row-major block order, to block_size x block_size pixels).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor


def _nhwc(x, data_format, what):
    from xlapy.compat.v1.ops.array_ops import transpose
    if data_format not in ("NHWC", "NCHW"):
        raise InvalidArgumentError(f"{what}: data_format must be NHWC or NCHW, got "
                                   f"{data_format}")
    if x.shape.ndims not in (None, 4):
        raise InvalidArgumentError(f"{what}: input must be 4-D, got {x.shape.tf_str()}")
    return transpose(x, [0, 2, 3, 1]) if data_format == "NCHW" else x


def _back(y, data_format):
    from xlapy.compat.v1.ops.array_ops import transpose
    return transpose(y, [0, 3, 1, 2]) if data_format == "NCHW" else y


def _hwc(x, what):
    dims = x.shape.dims
    if dims is None or any(d is None for d in dims[1:]):
        raise InvalidArgumentError(f"{what} needs the height, width and depth to be known "
                                   f"when the graph is built, got {x.shape.tf_str()}")
    return dims[1:]


def depth_to_space(input, block_size, name=None, data_format="NHWC"):
    """output[n, h*b + i, w*b + j, c] = input[n, h, w, (i*b + j)*depth/b^2 + c]."""
    from xlapy.compat.v1.ops.array_ops import reshape, transpose
    b = int(block_size)
    if b < 2:
        raise InvalidArgumentError(f"depth_to_space: block_size must be > 1, got {b}")
    x = _nhwc(tensor(input), data_format, "depth_to_space")
    h, w, c = _hwc(x, "depth_to_space")
    if c % (b * b):
        raise InvalidArgumentError(f"depth_to_space: the depth {c} must be divisible by "
                                   f"block_size^2 = {b * b}")
    with get_default_graph().name_scope(name or "DepthToSpace"):
        y = transpose(reshape(x, [-1, h, w, b, b, c // (b * b)]), [0, 1, 3, 2, 4, 5])
        return _back(reshape(y, [-1, h * b, w * b, c // (b * b)]), data_format)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):
    """The inverse of depth_to_space."""
    from xlapy.compat.v1.ops.array_ops import reshape, transpose
    b = int(block_size)
    if b < 2:
        raise InvalidArgumentError(f"space_to_depth: block_size must be > 1, got {b}")
    x = _nhwc(tensor(input), data_format, "space_to_depth")
    h, w, c = _hwc(x, "space_to_depth")
    for d, what in ((h, "height"), (w, "width")):
        if d % b:
            raise InvalidArgumentError(f"space_to_depth: the {what} {d} must be divisible "
                                       f"by block_size {b}")
    with get_default_graph().name_scope(name or "SpaceToDepth"):
        y = transpose(reshape(x, [-1, h // b, b, w // b, b, c]), [0, 1, 3, 2, 4, 5])
        return _back(reshape(y, [-1, h // b, w // b, b * b * c]), data_format)


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, sum of x - shift, sum of (x - shift)^2, shift) over axes."""
    from xlapy.compat.v1.ops.array_ops import shape
    from xlapy.compat.v1.ops.math_ops import cast, reduce_prod, reduce_sum, square, subtract
    from xlapy.compat.v1.ops.gather_ops import gather
    x = tensor(x)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with get_default_graph().name_scope(name or "sufficient_statistics"):
        dims = x.shape.dims
        if dims is not None and all(dims[a] is not None for a in axes):
            count = tensor(np.asarray(np.prod([dims[a] for a in axes]), x.dtype.np))
        else:
            count = cast(reduce_prod(gather(shape(x), list(axes))), x.dtype)
        m = subtract(x, shift) if shift is not None else x
        return (count, reduce_sum(m, axes, keepdims=keep),
                reduce_sum(square(m), axes, keepdims=keep), shift)


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient statistics."""
    from xlapy.compat.v1.ops.math_ops import add, multiply, realdiv, square, subtract
    with get_default_graph().name_scope(name or "normalize"):
        div = realdiv(tensor(np.ones((), tensor(counts).dtype.np)), counts)
        shifted_mean = multiply(mean_ss, div)
        mean = add(shifted_mean, shift) if shift is not None else shifted_mean
        variance = subtract(multiply(variance_ss, div), square(shifted_mean))
        return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """The frequency-weighted mean and variance of x over axes."""
    from xlapy.compat.v1.ops.math_ops import multiply, reduce_sum, square, subtract
    from xlapy.compat.v1.ops.special_math_ops import div_no_nan
    from xlapy.compat.v1.ops.array_ops import ones_like, squeeze
    x = tensor(x)
    w = tensor(frequency_weights, dtype=x.dtype)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with get_default_graph().name_scope(name or "weighted_moments"):
        total = reduce_sum(multiply(w, ones_like(x)), axes, keepdims=True)
        mean = div_no_nan(reduce_sum(multiply(w, x), axes, keepdims=True), total)
        var = div_no_nan(reduce_sum(multiply(w, square(subtract(x, mean))), axes,
                                    keepdims=True), total)
        if not keep:
            mean, var = squeeze(mean, list(axes)), squeeze(var, list(axes))
        return mean, var


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - targets * log_input (+ Stirling's term where targets > 1)."""
    from xlapy.compat.v1.ops.array_ops import zeros_like
    from xlapy.compat.v1.ops.index_ops import where
    from xlapy.compat.v1.ops.math_ops import (add, exp, greater, less_equal, log,
                                              logical_and, multiply, subtract)
    t = tensor(targets)
    li = tensor(log_input, dtype=t.dtype)
    with get_default_graph().name_scope(name or "log_poisson_loss"):
        result = subtract(exp(li), multiply(li, t))
        if not compute_full_loss:
            return result
        one = tensor(np.ones((), t.dtype.np))
        safe = where(greater(t, one), t, one)
        stirling = add(subtract(multiply(safe, log(safe)), safe),
                       multiply(tensor(np.asarray(0.5, t.dtype.np)),
                                log(multiply(tensor(np.asarray(2 * np.pi, t.dtype.np)),
                                             safe))))
        zeros = zeros_like(t)
        small = logical_and(greater(t, zeros), less_equal(t, one))
        return add(result, where(small, zeros, where(greater(t, one), stirling, zeros)))


def _pool1d(op_name, fn, input, ksize, strides, padding, data_format, name):
    from xlapy.compat.v1.ops.array_ops import expand_dims, squeeze
    if data_format not in ("NWC", "NCW"):
        raise InvalidArgumentError(f"{op_name}: data_format must be NWC or NCW")
    x = tensor(input)
    axis = 1 if data_format == "NWC" else 2
    k = ksize if isinstance(ksize, int) else int(np.reshape(ksize, [-1])[axis if len(
        np.reshape(ksize, [-1])) == 3 else 0])
    s = strides if isinstance(strides, int) else int(np.reshape(strides, [-1])[axis if len(
        np.reshape(strides, [-1])) == 3 else 0])
    fmt = "NHWC" if data_format == "NWC" else "NCHW"
    x4 = expand_dims(x, axis)
    win = [1, 1, k, 1] if fmt == "NHWC" else [1, 1, 1, k]
    st = [1, 1, s, 1] if fmt == "NHWC" else [1, 1, 1, s]
    return squeeze(fn(x4, win, st, padding, data_format=fmt, name=name or op_name), [axis])


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    from xlapy.compat.v1.ops.pool_ops import max_pool
    return _pool1d("MaxPool1d", max_pool, input, ksize, strides, padding, data_format, name)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    from xlapy.compat.v1.ops.pool_ops import avg_pool
    return _pool1d("AvgPool1D", avg_pool, input, ksize, strides, padding, data_format, name)
