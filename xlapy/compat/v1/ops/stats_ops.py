"""tf.math.reduce_variance / reduce_std / reduce_euclidean_norm, tf.math.bincount and
tf.math.confusion_matrix, built from graph ops (so they compile where their shapes are
static, and differentiate where TF's do). bincount's length and confusion_matrix's size
come from the data unless given (minlength == maxlength, num_classes): then they run in
the executor."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.math_ops import (add, cast, maximum, minimum, reduce_max, reduce_mean,
                                          reduce_sum, sqrt, square, subtract)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The mean squared deviation from the mean (population variance)."""
    x = tensor(input_tensor)
    with get_default_graph().name_scope(name or "reduce_variance"):
        mean = reduce_mean(x, axis, keepdims=True)
        return reduce_mean(square(subtract(x, mean)), axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    with get_default_graph().name_scope(name or "reduce_std"):
        return sqrt(reduce_variance(input_tensor, axis, keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    x = tensor(input_tensor)
    with get_default_graph().name_scope(name or "reduce_euclidean_norm"):
        return sqrt(reduce_sum(square(x), axis, keepdims=keepdims))


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32,
             name=None):
    """Counts (or weight sums) of each value 0..n-1 of the non-negative int32 `arr`, n the
    largest value + 1 (at least minlength, at most maxlength; values >= maxlength are
    dropped)."""
    from xlapy.compat.v1.ops.array_ops import ones_like, reshape
    from xlapy.compat.v1.ops.gather_ops import unsorted_segment_sum
    from xlapy.compat.v1.ops.index_ops import where
    from xlapy.compat.v1.ops.math_ops import less
    a = tensor(arr)
    if a.dtype != dtypes.int32:
        raise InvalidArgumentError(f"bincount: arr must be int32, got {a.dtype.name}")
    with get_default_graph().name_scope(name or "bincount"):
        flat = reshape(a, [-1])
        if minlength is not None and maxlength is not None and \
                int(minlength) == int(maxlength):
            n = tensor(np.asarray(int(minlength), np.int32))
        else:
            from xlapy.compat.v1.ops.array_ops import concat
            n = add(reduce_max(concat([flat, tensor(np.array([-1], np.int32))], 0)), 1)
            if minlength is not None:
                n = maximum(n, tensor(np.int32(minlength)))
            if maxlength is not None:
                n = minimum(n, tensor(np.int32(maxlength)))
        out_dtype = dtypes.as_dtype(dtype) if weights is None else tensor(weights).dtype
        vals = cast(ones_like(flat), out_dtype) if weights is None else \
            reshape(tensor(weights), [-1])
        if maxlength is not None:  # values past maxlength are dropped: send them to -1
            flat = where(less(flat, n), flat, -1 * ones_like(flat))
        return unsorted_segment_sum(vals, flat, n)


def confusion_matrix(labels, predictions, num_classes=None, weights=None,
                     dtype=dtypes.int32, name=None):
    """[n, n] counts (or weight sums) of (label, prediction) pairs, n = num_classes or the
    largest label or prediction + 1."""
    from xlapy.compat.v1.ops.array_ops import ones_like, stack
    from xlapy.compat.v1.ops.gather_ops import scatter_nd
    with get_default_graph().name_scope(name or "confusion_matrix"):
        lab = cast(tensor(labels), dtypes.int64)
        pred = cast(tensor(predictions), dtypes.int64)
        if num_classes is None:
            n = add(maximum(reduce_max(lab), reduce_max(pred)), 1)
        else:
            n = tensor(np.asarray(int(num_classes), np.int64))
        idx = stack([lab, pred], axis=1)
        dt = dtypes.as_dtype(dtype)
        vals = cast(ones_like(lab), dt) if weights is None else cast(tensor(weights), dt)
        return scatter_nd(idx, vals, cast(stack([n, n]), dtypes.int64))

