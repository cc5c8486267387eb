"""clip_by_value, clip_by_norm, clip_by_global_norm, global_norm, norm, reduce_logsumexp,
as compositions of ops following TF 1.x's own formulas (so values and gradients at zero
norms and infinities are TF's)."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import _shape_of, ones_like, reshape, stop_gradient, zeros_like
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.manip_ops import is_finite
from xlapy.compat.v1.ops.math_ops import (abs as abs_, add, cast, exp, greater, log, maximum,
                                          minimum, multiply, reduce_max, reduce_sum, sqrt,
                                          subtract, truediv)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    t = tensor(t)
    with get_default_graph().name_scope(name or "clip_by_value"):
        t_min = minimum(t, tensor(clip_value_max, dtype=t.dtype)
                        if not isinstance(clip_value_max, Tensor) else clip_value_max)
        return maximum(t_min, tensor(clip_value_min, dtype=t.dtype)
                       if not isinstance(clip_value_min, Tensor) else clip_value_min)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    t = tensor(t)
    with get_default_graph().name_scope(name or "clip_by_norm"):
        cn = tensor(clip_norm, dtype=t.dtype) if not isinstance(clip_norm, Tensor) \
            else clip_norm
        l2sum = reduce_sum(multiply(t, t), axes, keepdims=True)
        pred = greater(l2sum, tensor(np.zeros((), t.dtype.np)))
        safe = where(pred, l2sum, ones_like(l2sum))
        l2norm = where(pred, sqrt(safe), l2sum)
        inter = multiply(t, cn)
        return truediv(inter, maximum(l2norm, cn))


def global_norm(t_list, name=None):
    from xlapy.compat.v1.ops.array_ops import stack
    from xlapy.compat.v1.ops.nn_ops import l2_loss
    ts = [tensor(t) for t in t_list if t is not None]
    if not ts:
        raise InvalidArgumentError("global_norm needs at least one tensor")
    with get_default_graph().name_scope(name or "global_norm"):
        half = reduce_sum(stack([l2_loss(t) for t in ts]))
        return sqrt(multiply(half, tensor(np.asarray(2.0, half.dtype.np))), name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise InvalidTypeError("t_list should be a sequence")
    t_list = list(t_list)
    with get_default_graph().name_scope(name or "clip_by_global_norm"):
        use_norm = global_norm(t_list) if use_norm is None else tensor(use_norm)
        dt = use_norm.dtype
        cn = tensor(clip_norm, dtype=dt) if not isinstance(clip_norm, Tensor) else clip_norm
        one = tensor(np.asarray(1.0, dt.np))
        scale_finite = multiply(cn, minimum(truediv(one, use_norm), truediv(one, cn)))
        scale = where(is_finite(use_norm), scale_finite,
                      tensor(np.asarray(np.nan, dt.np)))
        out = []
        for t in t_list:
            if t is None:
                out.append(None)
                continue
            t = tensor(t)
            s = scale if t.dtype == dt else cast(scale, t.dtype)
            out.append(multiply(t, s))
        return out, use_norm


def norm(tensor_, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):
    x = tensor(tensor_)
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    with get_default_graph().name_scope(name or "norm"):
        if ord in ("euclidean", "fro", 2, 2.0):
            if isinstance(axis, (list, tuple)) and len(axis) == 2 and ord == 2:
                raise InvalidArgumentError("the matrix 2-norm (largest singular value) is not "
                                           "supported")
            return sqrt(reduce_sum(multiply(x, x), axis, keepdims=keep))
        if ord in (1, 1.0):
            return reduce_sum(abs_(x), axis, keepdims=keep)
        if ord == np.inf:
            return reduce_max(abs_(x), axis, keepdims=keep)
        if isinstance(ord, (int, float)) and ord > 0:
            p = tensor(np.asarray(ord, x.dtype.np))
            from xlapy.compat.v1.ops.math_ops import pow as pow_
            return pow_(reduce_sum(pow_(abs_(x), p), axis, keepdims=keep),
                        truediv(tensor(np.asarray(1, x.dtype.np)), p))
        raise InvalidArgumentError(f"'ord' must be a supported vector norm, got {ord}")


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None,
                     reduction_indices=None, keep_dims=None):
    x = tensor(input_tensor)
    if axis is None:
        axis = reduction_indices
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    with get_default_graph().name_scope(name or "ReduceLogSumExp"):
        raw_max = reduce_max(x, axis, keepdims=True)
        my_max = stop_gradient(where(is_finite(raw_max), raw_max, zeros_like(raw_max)))
        result = log(reduce_sum(exp(subtract(x, my_max)), axis, keepdims=keep))
        if not keep:
            my_max = reshape(my_max, _shape_of(result))
        return add(result, my_max)
