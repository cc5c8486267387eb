"""Segment reductions beyond segment_sum / unsorted_segment_sum / max / min:
tf.segment_mean / max / min / prod (sorted ids), tf.unsorted_segment_prod / mean / sqrt_n
and tf.sparse_segment_sum / mean / sqrt_n (with or without num_segments).

The sorted-id ops are TF's SegmentMean / SegmentMax / SegmentMin / SegmentProd: their
output has (last id + 1) rows, a run-time shape, so they run in the executor (as
SegmentSum). Empty segments hold 0 (1 for the product), as TF's. UnsortedSegmentProd
compiles (a multiplying scatter); empty segments hold 1. The means and the sparse segment
reductions are compositions of gathers, segment sums and divisions.

Gradients are TF 1.15's: SegmentMean spreads g / count; SegmentMax / Min (and their
unsorted versions) share g between the tied inputs equal to the result; UnsortedSegmentProd
gives prod / x, or, for a zero, the product of the others when it is its segment's only
zero (0 otherwise). SegmentProd has none (TF 1.15 registers none).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import make, tensor
from xlapy.compat.v1.ops.array_ops import (concat, expand_dims, ones_like, reshape, shape,
                                           zeros_like)
from xlapy.compat.v1.ops.gather_ops import (_check_int, _useg_infer, gather, segment_sum,
                                            unsorted_segment_sum)
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import (cast, equal, greater, greater_equal, maximum,
                                          multiply, realdiv, sqrt)
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape

# ---- sorted segment ids: SegmentMean / Max / Min / Prod ------------------------------------


def _segment_infer(op):
    data, ids = op.inputs
    _check_int(ids, "segment_ids")
    if ids.shape.ndims not in (None, 1):
        raise InvalidArgumentError(f"segment_ids should be a vector, got shape "
                                   f"{ids.shape} for '{op.name}' (op: '{op.type}')")
    if data.shape.dims is None:
        return [(data.dtype, unknown_shape())]
    if not data.shape.dims:
        raise InvalidArgumentError(f"Shape must be at least rank 1 but is rank 0 for "
                                   f"'{op.name}' (op: '{op.type}')")
    return [(data.dtype, TensorShape([None] + list(data.shape.dims[1:])))]


def _segment_kernel(kind):
    def kernel(m, data, ids):
        ids = np.asarray(ids)
        data = np.asarray(data)
        if ids.ndim != 1 or len(ids) != len(data):
            raise InvalidArgumentError("segment_ids should be the same size as dimension 0 "
                                       "of input.")
        if ids.size and (np.any(np.diff(ids) < 0) or ids[0] < 0):
            raise InvalidArgumentError("segment ids are not increasing")
        n = int(ids[-1]) + 1 if ids.size else 0
        shp = (n,) + data.shape[1:]
        count = np.bincount(ids, minlength=n)[(slice(None),) + (None,) * (data.ndim - 1)]
        if kind == "prod":
            out = np.ones(shp, data.dtype)
            np.multiply.at(out, ids, data)
            return out
        if kind == "mean":
            out = np.zeros(shp, data.dtype)
            np.add.at(out, ids, data)
            c = np.maximum(count, 1)
            if data.dtype.kind in "iu":
                return np.trunc(out / c).astype(data.dtype)  # C++'s integer division
            return (out / c).astype(data.dtype)
        lo = np.finfo(data.dtype).min if data.dtype.kind == "f" else np.iinfo(data.dtype).min
        hi = np.finfo(data.dtype).max if data.dtype.kind == "f" else np.iinfo(data.dtype).max
        out = np.full(shp, lo if kind == "max" else hi, data.dtype)
        (np.maximum if kind == "max" else np.minimum).at(out, ids, data)
        return np.where(count > 0, out, np.zeros((), data.dtype))  # empty segments: 0
    return kernel


for _t, _k in (("SegmentMean", "mean"), ("SegmentMax", "max"), ("SegmentMin", "min"),
               ("SegmentProd", "prod")):
    register_op(_t, infer=_segment_infer, lowering=None)(_segment_kernel(_k))


def _bcast_rows(v: Tensor, like: Tensor, op) -> Tensor:
    """v ([k]) reshaped to [k, 1, ..., 1] to broadcast against `like` (rank r)."""
    r = like.shape.ndims
    if r is None:
        raise InvalidArgumentError(f"the gradient of {op.name} needs the rank of its data")
    for _ in range(r - 1):
        v = expand_dims(v, -1)
    return v


@register_gradient("SegmentMean")
def _segment_mean_grad(op, g):
    data, ids = op.inputs
    ones = cast(ones_like(ids), g.dtype)
    count = maximum(segment_sum(ones, ids), tensor(np.ones((), g.dtype.np)))
    return [realdiv(gather(g, ids), _bcast_rows(gather(count, ids), data, op)), None]


def _minmax_grad(op, g):
    data, ids = op.inputs
    picked = equal(data, gather(op.outputs[0], ids))
    n_picked = segment_sum(cast(picked, g.dtype), ids)
    share = gather(realdiv(g, maximum(n_picked, tensor(np.ones((), g.dtype.np)))), ids)
    return [where(picked, share, zeros_like(share)), None]


register_gradient("SegmentMax")(_minmax_grad)
register_gradient("SegmentMin")(_minmax_grad)


def _sorted(op_type, default_name):
    def f(data, segment_ids, name=None):
        return make(op_type, [tensor(data), tensor(segment_ids)], name=name or default_name)
    f.__name__ = f.__qualname__ = default_name
    return f


segment_mean = _sorted("SegmentMean", "segment_mean")
segment_max = _sorted("SegmentMax", "segment_max")
segment_min = _sorted("SegmentMin", "segment_min")
segment_prod = _sorted("SegmentProd", "segment_prod")
segment_mean.__doc__ = "The mean of each segment (sorted ids); an empty segment holds 0."
segment_max.__doc__ = "The maximum of each segment (sorted ids); an empty segment holds 0."
segment_min.__doc__ = "The minimum of each segment (sorted ids); an empty segment holds 0."
segment_prod.__doc__ = "The product of each segment (sorted ids); an empty segment holds 1."


# ---- UnsortedSegmentProd ---------------------------------------------------------------------

@register_op("UnsortedSegmentProd", infer=_useg_infer, const_inputs=(2,))
def _useg_prod(m, data, ids, n):
    n = int(n)
    k = ids.ndim
    rows = m.reshape(data, (-1,) + tuple(data.shape[k:]))
    flat = m.reshape(ids, (-1,))
    out = m.ones((n,) + tuple(data.shape[k:]), data.dtype)
    if m is np:
        if flat.size and flat.max() >= n:
            raise InvalidArgumentError(f"segment_ids[{int(np.argmax(flat >= n))}] = "
                                       f"{int(flat.max())} is out of range [0, {n})")
        keep = flat >= 0  # negative ids are dropped, as TF's
        np.multiply.at(out, flat[keep], rows[keep])
        return out
    # negative ids go out of range, where XLA's scatter drops them
    flat = m.where(m.less(flat, np.zeros((), flat.dtype)), np.asarray(n, flat.dtype), flat)
    return m.at(out)[flat].multiply(rows)


@register_gradient("UnsortedSegmentProd")
def _useg_prod_grad(op, g):
    data, ids, n = op.inputs
    zero_id = tensor(np.zeros((), ids.dtype.np))
    safe = maximum(ids, zero_id)
    r, k = data.shape.ndims, ids.shape.ndims
    if r is None or k is None:
        raise InvalidArgumentError(f"the gradient of {op.name} needs the ranks of its inputs")
    valid = greater_equal(ids, zero_id)
    for _ in range(r - k):
        valid = expand_dims(valid, -1)
    is_zero = equal(data, zeros_like(data))
    n_zeros = unsorted_segment_sum(cast(is_zero, g.dtype), ids, n)
    # a segment with two or more zeros has a zero gradient everywhere
    g = where(greater(n_zeros, tensor(np.ones((), g.dtype.np))), zeros_like(g), g)
    nonzero = where(is_zero, ones_like(data), data)
    nonzero_prod = unsorted_segment_prod(nonzero, ids, n)
    partial = where(is_zero, gather(nonzero_prod, safe), realdiv(gather(op.outputs[0], safe),
                                                                 nonzero))
    out = multiply(gather(g, safe), partial)
    return [multiply(out, cast(valid, g.dtype)), None, None]


def _n(num_segments):
    return num_segments if isinstance(num_segments, Tensor) else \
        tensor(np.asarray(num_segments, np.int32))


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of each segment; an empty segment holds 1, negative ids are dropped."""
    return make("UnsortedSegmentProd", [tensor(data), tensor(segment_ids), _n(num_segments)],
                name=name)


def _counts(data: Tensor, ids: Tensor, n: Tensor) -> Tensor:
    """How many rows each segment has (at least 1), shaped to broadcast against the
    unsorted segment reduction of data."""
    r, k = data.shape.ndims, ids.shape.ndims
    if r is None or k is None:
        raise InvalidArgumentError("unsorted segment means need the ranks of data and "
                                   "segment_ids")
    c = unsorted_segment_sum(cast(ones_like(ids), data.dtype), ids, n)
    c = maximum(c, tensor(np.ones((), data.dtype.np)))
    for _ in range(r - k):
        c = expand_dims(c, -1)
    return c


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """sum / count of each segment (0 for an empty one)."""
    data, ids = tensor(data), tensor(segment_ids)
    with get_default_graph().name_scope(name or "UnsortedSegmentMean"):
        n = _n(num_segments)
        return realdiv(unsorted_segment_sum(data, ids, n), _counts(data, ids, n))


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """sum / sqrt(count) of each segment (0 for an empty one)."""
    data, ids = tensor(data), tensor(segment_ids)
    with get_default_graph().name_scope(name or "UnsortedSegmentSqrtN"):
        n = _n(num_segments)
        return realdiv(unsorted_segment_sum(data, ids, n), sqrt(_counts(data, ids, n)))


# ---- sparse segment reductions --------------------------------------------------------------

def _sparse_args(data, indices, segment_ids, what):
    data, indices, ids = tensor(data), tensor(indices), tensor(segment_ids)
    for t, nm in ((indices, "indices"), (ids, "segment_ids")):
        if not t.dtype.is_integer:
            raise InvalidTypeError(f"{what}: {nm} must be int32 or int64, got {t.dtype.name}")
        if t.shape.ndims not in (None, 1):
            raise InvalidArgumentError(f"{what}: {nm} should be a vector, got shape "
                                       f"{t.shape}")
    n_i, n_s = indices.shape.dims, ids.shape.dims
    if n_i and n_s and n_i[0] is not None and n_s[0] is not None and n_i[0] != n_s[0]:
        raise InvalidArgumentError(f"{what}: segment_ids and indices should have same size, "
                                   f"got {n_s[0]} and {n_i[0]}")
    return data, indices, ids


def _sparse_reduce(kind, data, indices, segment_ids, num_segments, name, default):
    data, indices, ids = _sparse_args(data, indices, segment_ids, default)
    with get_default_graph().name_scope(name or default):
        rows = gather(data, indices)
        if num_segments is None:
            if kind == "mean":
                return segment_mean(rows, ids)
            s = segment_sum(rows, ids)
            if kind == "sum":
                return s
            ones = cast(ones_like(ids), data.dtype)
            c = maximum(segment_sum(ones, ids), tensor(np.ones((), data.dtype.np)))
            return realdiv(s, _bcast_like(sqrt(c), data))
        n = _n(num_segments)
        s = unsorted_segment_sum(rows, ids, n)
        if kind == "sum":
            return s
        c = _counts(rows, ids, n)
        return realdiv(s, c if kind == "mean" else sqrt(c))


def _bcast_like(v, data):
    r = data.shape.ndims
    if r is None:
        return reshape(v, concat([shape(v), ones_like(shape(data))[1:]], 0))
    for _ in range(r - 1):
        v = expand_dims(v, -1)
    return v


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None):
    """The sums of the rows data[indices] over sorted segment_ids (num_segments rows if
    given, else the last id + 1)."""
    return _sparse_reduce("sum", data, indices, segment_ids, num_segments, name,
                          "SparseSegmentSum")


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None):
    return _sparse_reduce("mean", data, indices, segment_ids, num_segments, name,
                          "SparseSegmentMean")


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, num_segments=None):
    return _sparse_reduce("sqrt_n", data, indices, segment_ids, num_segments, name,
                          "SparseSegmentSqrtN")


def sparse_segment_sum_with_num_segments(data, indices, segment_ids, num_segments,
                                         name=None):
    return sparse_segment_sum(data, indices, segment_ids, name=name,
                              num_segments=num_segments)

