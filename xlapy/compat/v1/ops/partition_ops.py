"""Partitions, segments and permutations: tf.dynamic_partition, dynamic_stitch,
unsorted_segment_max / min, unique_with_counts, invert_permutation.

DynamicPartition and UniqueWithCounts have data-dependent output shapes, and
DynamicStitch's output length is the largest index + 1: like Unique and Where(cond) (and
as TF's XLA bridge without bounded dynamic shapes), they have no XLA lowering and run in
the executor. UnsortedSegmentMax/Min and InvertPermutation compile (scatters). Gradients
are TF's (data_flow_grad.py, math_grad.py): partition and stitch route gradients back by
the same indices; the segment max/min gradient is split evenly between the tied maxima.
"""

from __future__ import annotations

import collections

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, make, make_op, tensor
from xlapy.compat.v1.ops.gather_ops import _check_int, _useg_infer
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape


# ---- dynamic_partition / dynamic_stitch ----------------------------------------------------

def _partition_infer(op):
    data, parts = op.inputs
    _check_int(parts, "partitions")
    n = op.get_attr("num_partitions")
    if data.shape.ndims is None or parts.shape.ndims is None:
        return [(data.dtype, unknown_shape())] * n
    k = parts.shape.ndims
    if not TensorShape(data.shape.dims[:k]).is_compatible_with(parts.shape):
        raise InvalidArgumentError(f"DynamicPartition '{op.name}': partitions shape "
                                   f"{parts.shape.tf_str()} must be a prefix of data's shape "
                                   f"{data.shape.tf_str()}")
    return [(data.dtype, TensorShape([None] + list(data.shape.dims[k:])))] * n


@register_op("DynamicPartition", infer=_partition_infer, attrs=("num_partitions",),
             lowering=None)
def _partition(m, data, parts, num_partitions):
    flat = parts.reshape(-1)
    bad = (flat < 0) | (flat >= num_partitions)
    if bad.any():
        i = int(np.argmax(bad))
        raise InvalidArgumentError(f"partitions[{i}] = {int(flat[i])} is not in [0, "
                                   f"{num_partitions})")
    rows = data.reshape((-1,) + data.shape[parts.ndim:])
    return tuple(rows[flat == p] for p in range(num_partitions))


def _stitch_infer(op):
    n = len(op.inputs) // 2
    idx, data = op.inputs[:n], op.inputs[n:]
    for t in idx:
        _check_int(t, "indices")
    dt = data[0].dtype
    if any(d.dtype != dt for d in data):
        raise InvalidTypeError("dynamic_stitch: all data tensors must have the same dtype")
    i0, d0 = idx[0].shape, data[0].shape
    if i0.ndims is None or d0.ndims is None:
        return [(dt, unknown_shape())]
    consts = [constant_value(t) for t in idx]
    length = None if any(c is None for c in consts) else \
        int(max((int(np.max(c)) for c in consts if np.size(c)), default=-1)) + 1
    return [(dt, TensorShape([length] + list(d0.dims[i0.ndims:])))]


@register_op("DynamicStitch", infer=_stitch_infer, lowering=None)
def _stitch(m, *args):
    n = len(args) // 2
    idx, data = args[:n], args[n:]
    inner = data[0].shape[idx[0].ndim:]
    for k, (i, d) in enumerate(zip(idx, data)):
        if d.shape[:i.ndim] != i.shape or d.shape[i.ndim:] != inner:
            raise InvalidArgumentError(f"dynamic_stitch: data[{k}].shape {list(d.shape)} must "
                                       f"be indices[{k}].shape {list(i.shape)} + "
                                       f"{list(inner)}")
    length = max((int(i.max()) for i in idx if i.size), default=-1) + 1
    out = np.zeros((length,) + inner, data[0].dtype)
    filled = np.zeros(length, bool)
    for i, d in zip(idx, data):  # later inputs win, as TF's merge order
        flat = i.reshape(-1)
        if flat.size and flat.min() < 0:
            raise InvalidArgumentError(f"dynamic_stitch: index {int(flat.min())} is negative")
        out[flat] = d.reshape((-1,) + inner)
        filled[flat] = True
    if not filled.all():
        raise InvalidArgumentError(f"dynamic_stitch: index {int(np.argmin(filled))} is missing "
                                   f"from the indices (0..{length - 1} must all be present)")
    return out


@register_gradient("DynamicPartition")
def _partition_grad(op, *grads):
    from xlapy.compat.v1.ops.array_ops import reshape, shape, size, zeros_like
    from xlapy.compat.v1.ops.manip_ops import range_
    data, parts = op.inputs
    n = op.get_attr("num_partitions")
    original = reshape(range_(size(parts)), shape(parts))
    part_idx = make_op("DynamicPartition", [original, parts], {"num_partitions": n}).outputs
    grads = [g if g is not None else zeros_like(o) for g, o in zip(grads, op.outputs)]
    stitched = make("DynamicStitch", list(part_idx) + grads)
    return [reshape(stitched, shape(data)), None]


@register_gradient("DynamicStitch")
def _stitch_grad(op, g):
    from xlapy.compat.v1.ops.gather_ops import gather
    n = len(op.inputs) // 2
    return [None] * n + [gather(g, i) for i in op.inputs[:n]]


def dynamic_partition(data, partitions, num_partitions, name=None):
    n = int(num_partitions)
    if n < 1:
        raise InvalidArgumentError(f"num_partitions must be at least 1, got {n}")
    op = make_op("DynamicPartition", [tensor(data), tensor(partitions)],
                 {"num_partitions": n}, name=name)
    return list(op.outputs)


def dynamic_stitch(indices, data, name=None):
    indices, data = [tensor(i) for i in indices], [tensor(d) for d in data]
    if len(indices) != len(data) or not indices:
        raise InvalidArgumentError(f"dynamic_stitch: {len(indices)} index tensors for "
                                   f"{len(data)} data tensors (need the same number, >= 1)")
    return make("DynamicStitch", indices + data, name=name)


# ---- unsorted_segment_max / min -----------------------------------------------------------

def _identity_of(dtype, kind):
    """What an empty segment holds: the lowest (highest) finite value, as TF's."""
    if np.dtype(dtype).kind == "f":
        info = np.finfo(dtype)
        return np.asarray(info.min if kind == "max" else info.max, dtype)
    info = np.iinfo(dtype)
    return np.asarray(info.min if kind == "max" else info.max, dtype)


def _useg_reduce(kind):
    def kernel(m, data, ids, n):
        n = int(n)
        k = ids.ndim
        rows = m.reshape(data, (-1,) + tuple(data.shape[k:]))
        flat = m.reshape(ids, (-1,))
        out = m.full((n,) + tuple(data.shape[k:]), _identity_of(data.dtype, kind))
        if m is np:
            if flat.size and flat.max() >= n:
                raise InvalidArgumentError(f"segment_ids[{int(np.argmax(flat >= n))}] = "
                                           f"{int(flat.max())} is out of range [0, {n})")
            keep = flat >= 0  # negative ids are dropped, as TF
            (np.maximum if kind == "max" else np.minimum).at(out, flat[keep], rows[keep])
            return out
        # negative ids are dropped: send them out of range, where XLA's scatter drops them
        flat = m.where(m.less(flat, np.zeros((), flat.dtype)), np.asarray(n, flat.dtype), flat)
        ref = m.at(out)[flat]
        return ref.max(rows) if kind == "max" else ref.min(rows)
    return kernel


register_op("UnsortedSegmentMax", infer=_useg_infer, const_inputs=(2,))(_useg_reduce("max"))
register_op("UnsortedSegmentMin", infer=_useg_infer, const_inputs=(2,))(_useg_reduce("min"))


def _useg_minmax_grad(op, g):
    """TF's: the gradient goes to the inputs equal to their segment's result, split evenly
    between ties."""
    from xlapy.compat.v1.ops.array_ops import zeros_like
    from xlapy.compat.v1.ops.gather_ops import gather, unsorted_segment_sum
    from xlapy.compat.v1.ops.index_ops import where
    from xlapy.compat.v1.ops.math_ops import cast, equal, greater_equal, logical_and, realdiv
    data, ids, n = op.inputs
    from xlapy.compat.v1.ops.math_ops import maximum
    safe = maximum(ids, tensor(np.zeros((), ids.dtype.np)))
    chosen = equal(data, gather(op.outputs[0], safe))
    valid = greater_equal(ids, tensor(np.zeros((), ids.dtype.np)))
    r, k = data.shape.ndims, ids.shape.ndims
    if r is None or k is None:
        raise InvalidArgumentError(f"the gradient of {op.name} needs the ranks of its inputs")
    from xlapy.compat.v1.ops.array_ops import expand_dims
    for _ in range(r - k):
        valid = expand_dims(valid, -1)
    chosen = logical_and(chosen, valid)
    count = unsorted_segment_sum(cast(chosen, g.dtype), ids, n)
    share = gather(realdiv(g, maximum(count, tensor(np.ones((), g.dtype.np)))), safe)
    return [where(chosen, share, zeros_like(share)), None, None]


register_gradient("UnsortedSegmentMax")(_useg_minmax_grad)
register_gradient("UnsortedSegmentMin")(_useg_minmax_grad)


def _num_segments(n):
    return n if hasattr(n, "op") else tensor(np.asarray(n, np.int32))


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The maximum of each segment; an empty segment gets the dtype's lowest value."""
    return make("UnsortedSegmentMax", [tensor(data), tensor(segment_ids),
                                       _num_segments(num_segments)], name=name)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    return make("UnsortedSegmentMin", [tensor(data), tensor(segment_ids),
                                       _num_segments(num_segments)], name=name)


# ---- unique_with_counts, invert_permutation -----------------------------------------------

@register_op("UniqueWithCounts", lowering=None, attrs=("out_idx",),
             infer=lambda op: [(op.inputs[0].dtype, TensorShape([None])),
                               (op.get_attr("out_idx"), op.inputs[0].shape),
                               (op.get_attr("out_idx"), TensorShape([None]))])
def _unique_with_counts(m, x, out_idx=dtypes.int32):
    if x.ndim != 1:
        raise InvalidArgumentError(f"unique_with_counts expects a 1D vector, got shape "
                                   f"{list(x.shape)}")
    _, first, inv, counts = np.unique(x, return_index=True, return_inverse=True,
                                      return_counts=True)
    order = np.argsort(first, kind="stable")  # values in order of first occurrence
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return x[first[order]], rank[inv.reshape(-1)].astype(out_idx.np), \
        counts[order].astype(out_idx.np)


not_differentiable("UniqueWithCounts")
_UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    op = make_op("UniqueWithCounts", [tensor(x)], {"out_idx": dtypes.as_dtype(out_idx)},
                 name=name)
    return _UniqueWithCounts(*op.outputs)


def _perm_infer(op):
    x = op.inputs[0]
    _check_int(x, "x")
    if x.shape.ndims not in (None, 1):
        raise InvalidArgumentError(f"invert_permutation expects a 1-D vector, got "
                                   f"{x.shape.tf_str()}")
    return [(x.dtype, x.shape)]


def _invert_lowering(m, x):
    n = x.shape[0]
    return m.at(m.zeros((n,), x.dtype))[x].set(np.arange(n, dtype=x.dtype))


@register_op("InvertPermutation", infer=_perm_infer, lowering=_invert_lowering)
def _invert(m, x):
    n = x.shape[0]
    if sorted(x.tolist()) != list(range(n)):
        raise InvalidArgumentError(f"invert_permutation: {x.tolist()[:20]} is not a "
                                   f"permutation of 0..{n - 1}")
    out = np.empty_like(x)
    out[x] = np.arange(n, dtype=x.dtype)
    return out


not_differentiable("InvertPermutation")


def invert_permutation(x, name=None):
    return make("InvertPermutation", [tensor(x)], name=name)
