"""Gathers and scatters: gather (axis), gather_nd, scatter_nd, segment sums, top_k,
in_top_k, sort/argsort, unique, where(cond), boolean_mask.

Index errors follow TensorFlow's CPU kernels in the executor (an out-of-range index raises
InvalidArgumentError naming it); compiled, indices are clamped (gather) or dropped
(scatters), as XLA does. Gradients are dense: TF's IndexedSlices become the
UnsortedSegmentSum TF itself densifies them with.

Unique, Where(cond) and therefore boolean_mask have data-dependent output shapes: like TF's
XLA bridge, they have no XLA lowering and run in the executor.
"""

from __future__ import annotations

import collections

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, ints, make, make_op, tensor
from xlapy.compat.v1.ops.math_ops import reduce_prod
from xlapy.compat.v1.ops.array_ops import (_shape_of, concat, expand_dims, reshape, shape,
                                           squeeze, transpose)
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape


def _check_int(t: Tensor, what: str):
    if t.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidTypeError(f"{what} must be int32 or int64, got {t.dtype.name}")


def _check_range(idx, n: int, what: str):
    idx = np.asarray(idx)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx[(idx < 0) | (idx >= n)].flat[0]
        pos = np.argwhere((idx < 0) | (idx >= n))[0]
        raise InvalidArgumentError(f"{what}[{','.join(map(str, pos))}] = {bad} is not in "
                                   f"[0, {n})")


# ---- gather ----------------------------------------------------------------------------------

def _gather_infer(op):
    p, idx, ax = op.inputs
    _check_int(idx, "indices of gather")
    a = constant_value(ax)
    if a is None or p.shape.dims is None or idx.shape.dims is None:
        return [(p.dtype, unknown_shape())]
    r = len(p.shape.dims)
    a = int(a)
    if not -r <= a < r:
        raise InvalidArgumentError(f"Expected axis in the range [{-r}, {r}), but got {a}")
    a %= r
    return [(p.dtype, TensorShape(p.shape.dims[:a] + idx.shape.dims + p.shape.dims[a + 1:]))]


def _gather_lower(m, params, indices, axis):
    return m.take(params, indices, axis=int(axis) % len(params.shape), mode="clip")


@register_op("GatherV2", infer=_gather_infer, const_inputs=(2,), lowering=_gather_lower)
def _gather(m, params, indices, axis):
    a = int(axis) % params.ndim
    _check_range(indices, params.shape[a], "indices")
    return np.take(params, indices, axis=a)


def _as_int32(t):
    from xlapy.compat.v1.ops.math_ops import cast
    return cast(t, dtypes.int32) if t.dtype != dtypes.int32 else t


def _shape_cat(*parts):
    """Shape pieces (Python lists or int32 tensors) joined: a list when all are static."""
    if all(isinstance(p, list) for p in parts):
        return [d for p in parts for d in p]
    return concat([p if isinstance(p, Tensor) else tensor(np.asarray(p, np.int32))
                   for p in parts], 0)


@register_gradient("GatherV2")
def _gather_grad(op, g):
    p, idx, ax = op.inputs
    a = constant_value(ax)
    if a is None or p.shape.ndims is None:
        raise InvalidArgumentError(f"the gradient of {op.name} needs a constant axis and the "
                                   "rank of params")
    r = p.shape.ndims
    a = int(a) % r
    static = p.shape.is_fully_defined()
    ps = p.shape.as_list() if static else shape(p)
    n = ps[a]
    flat_idx = reshape(_as_int32(idx), [-1])
    if a == 0:
        rows = reshape(g, _shape_cat([-1], ps[1:]))
        return [unsorted_segment_sum(rows, flat_idx, n), None, None]
    n_idx = idx.shape.ndims
    if n_idx is None:
        raise InvalidArgumentError(f"the gradient of {op.name} needs the rank of indices")
    # move the gathered axis to the front, scatter rows, move it back
    gr = r - 1 + n_idx
    perm = list(range(a, a + n_idx)) + list(range(a)) + list(range(a + n_idx, gr))
    rows = reshape(transpose(g, perm), _shape_cat([-1], ps[:a], ps[a + 1:]))
    summed = unsorted_segment_sum(rows, flat_idx, n)
    back = list(range(1, a + 1)) + [0] + list(range(a + 1, r))
    return [transpose(summed, back), None, None]


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    if batch_dims:
        raise InvalidArgumentError("gather with batch_dims != 0 is not supported")
    params = tensor(params)
    indices = tensor(indices)
    ax = tensor(np.asarray(0 if axis is None else axis, np.int32)) \
        if not isinstance(axis, Tensor) else axis
    return make("GatherV2", [params, indices, ax], name=name or "GatherV2")


# ---- gather_nd / scatter_nd ------------------------------------------------------------------

def _nd_infer(op):
    p, idx = op.inputs
    _check_int(idx, "indices of gather_nd")
    if p.shape.dims is None or idx.shape.dims is None or idx.shape.dims[-1] is None:
        return [(p.dtype, unknown_shape())]
    k = idx.shape.dims[-1]
    if k > len(p.shape.dims):
        raise InvalidArgumentError(f"index innermost dimension length must be <= params rank; "
                                   f"saw: {k} vs. {len(p.shape.dims)}")
    return [(p.dtype, TensorShape(idx.shape.dims[:-1] + p.shape.dims[k:]))]


def _nd_index(m, indices):
    k = indices.shape[-1]
    return tuple(indices[..., j] for j in range(k))


@register_op("GatherNd", infer=_nd_infer,
             lowering=lambda m, p, idx: m.at(p)[_nd_index(m, idx)].get(mode="clip"))
def _gather_nd(m, params, indices):
    k = indices.shape[-1]
    for j in range(k):
        _check_range(indices[..., j], params.shape[j], "indices")
    return params[_nd_index(m, indices)]


@register_gradient("GatherNd")
def _gather_nd_grad(op, g):
    p, idx = op.inputs
    return [scatter_nd(idx, g, _shape_of(p)), None]


def gather_nd(params, indices, name=None, batch_dims=0):
    if batch_dims:
        raise InvalidArgumentError("gather_nd with batch_dims != 0 is not supported")
    return make("GatherNd", [tensor(params), tensor(indices)], name=name)


def _scatter_nd_infer(op):
    idx, upd, s = op.inputs
    _check_int(idx, "indices of scatter_nd")
    from xlapy.compat.v1.ops._common import partial_shape_value
    return [(upd.dtype, partial_shape_value(s))]


def _scatter_nd_lower(m, indices, updates, shape_):
    out = m.zeros(ints(shape_), updates.dtype)
    return m.at(out)[_nd_index(m, indices)].add(updates)


@register_op("ScatterNd", infer=_scatter_nd_infer, const_inputs=(2,),
             lowering=_scatter_nd_lower)
def _scatter_nd(m, indices, updates, shape_):
    s = ints(shape_)
    for j in range(indices.shape[-1]):
        _check_range(indices[..., j], s[j], "indices")
    out = np.zeros(s, updates.dtype)
    np.add.at(out, _nd_index(m, indices), updates)
    return out


@register_gradient("ScatterNd")
def _scatter_nd_grad(op, g):
    idx = op.inputs[0]
    return [None, gather_nd(g, idx), None]


def scatter_nd(indices, updates, shape, name=None):
    s = shape if isinstance(shape, Tensor) else tensor(shape, dtype=dtypes.int32) \
        if not isinstance(shape, (list, tuple)) or not any(isinstance(d, Tensor) for d in shape) \
        else tensor(shape)
    return make("ScatterNd", [tensor(indices), tensor(updates), s], name=name)


# ---- segment sums -----------------------------------------------------------------------------

def _useg_infer(op):
    data, ids, n = op.inputs
    _check_int(ids, "segment_ids")
    nv = constant_value(n)
    if data.shape.dims is None or ids.shape.dims is None:
        return [(data.dtype, unknown_shape())]
    k = len(ids.shape.dims)
    n = None if nv is None else int(nv)
    return [(data.dtype, TensorShape([n] + list(data.shape.dims[k:])))]


def _useg_lower(m, data, ids, n):
    n = int(n)
    k = len(ids.shape)
    rows = m.reshape(data, (-1,) + tuple(data.shape[k:]))
    flat = m.reshape(ids, (-1,))
    # negative ids are dropped (TF); XLA's scatter drops out-of-range rows
    flat = m.where(m.less(flat, np.zeros((), flat.dtype)), np.asarray(n, flat.dtype), flat)
    out = m.zeros((n,) + tuple(data.shape[k:]), data.dtype)
    return m.at(out)[flat].add(rows)


@register_op("UnsortedSegmentSum", infer=_useg_infer, const_inputs=(2,), lowering=_useg_lower)
def _useg(m, data, ids, n):
    n = int(n)
    ids = np.asarray(ids)
    if ids.size and ids.max() >= n:
        raise InvalidArgumentError(f"segment_ids[{int(np.argmax(ids.reshape(-1) >= n))}] = "
                                   f"{int(ids.max())} is out of range [0, {n})")
    k = ids.ndim
    rows = data.reshape((-1,) + data.shape[k:])
    flat = ids.reshape(-1)
    keep = flat >= 0
    out = np.zeros((n,) + data.shape[k:], data.dtype)
    np.add.at(out, flat[keep], rows[keep])
    return out


@register_gradient("UnsortedSegmentSum")
def _useg_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import cast, greater_equal, maximum, multiply
    data, ids, _ = op.inputs
    safe = maximum(ids, tensor(np.zeros((), ids.dtype.np)))
    picked = gather(g, safe)
    keep = greater_equal(ids, tensor(np.zeros((), ids.dtype.np)))
    r = data.shape.ndims
    k = ids.shape.ndims
    if r is None or k is None:
        raise InvalidArgumentError(f"the gradient of {op.name} needs the ranks of its inputs")
    for _ in range(r - k):
        keep = expand_dims(keep, -1)
    return [multiply(picked, cast(keep, g.dtype)), None, None]


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    n = num_segments if isinstance(num_segments, Tensor) else \
        tensor(np.asarray(num_segments, np.int32))
    return make("UnsortedSegmentSum", [tensor(data), tensor(segment_ids), n], name=name)


@register_op("SegmentSum", lowering=None,
             infer=lambda op: [(op.inputs[0].dtype, TensorShape([None]).concatenate(
                 op.inputs[0].shape[1:]) if op.inputs[0].shape.dims else unknown_shape())])
def _segment_sum(m, data, ids):
    ids = np.asarray(ids)
    if ids.ndim != 1 or len(ids) != len(data):
        raise InvalidArgumentError("segment_ids should be the same size as dimension 0 of "
                                   "input")
    if ids.size and np.any(np.diff(ids) < 0):
        raise InvalidArgumentError("segment ids are not increasing")
    n = int(ids[-1]) + 1 if ids.size else 0
    out = np.zeros((n,) + data.shape[1:], data.dtype)
    np.add.at(out, ids, data)
    return out


@register_gradient("SegmentSum")
def _segment_sum_grad(op, g):
    return [gather(g, op.inputs[1]), None]


def segment_sum(data, segment_ids, name=None):
    """Sorted segment ids; the output has max(id) + 1 rows (a run-time shape: executor)."""
    return make("SegmentSum", [tensor(data), tensor(segment_ids)], name=name)


# ---- top_k, in_top_k, sort ------------------------------------------------------------------

def _topk_infer(op):
    x, k = op.inputs
    kv = constant_value(k)
    dims = None if x.shape.dims is None else list(x.shape.dims)
    if dims is not None:
        if not dims:
            raise InvalidArgumentError("input must be at least 1-dimensional for top_k")
        if kv is not None and dims[-1] is not None and int(kv) > dims[-1]:
            raise InvalidArgumentError(f"input must have at least k={int(kv)} columns, has "
                                       f"{dims[-1]}")
        dims[-1] = None if kv is None else int(kv)
    s = TensorShape(dims)
    return [(x.dtype, s), (dtypes.int32, s)]


def _desc_key(m, x):
    """A key whose ascending stable order is x's descending order (ties: lower index
    first), without overflow for integers."""
    if np.dtype(x.dtype).kind == "f":
        return m.negative(x)
    return m.bitwise_not(x)


def _topk(m, x, k, sorted=True):
    k = int(k)
    order = m.argsort(_desc_key(m, x), axis=-1, stable=True)[..., :k]
    order = m.astype(order, np.int32)
    return m.take_along_axis(x, order, axis=-1), order


@register_op("TopKV2", infer=_topk_infer, const_inputs=(1,), attrs=("sorted",))
def _topk_kernel(m, x, k, sorted=True):
    if int(k) < 0:
        raise InvalidArgumentError(f"Need k >= 0, got {int(k)}")
    if int(k) > x.shape[-1]:
        raise InvalidArgumentError(f"input must have at least k columns. Had {x.shape[-1]}, "
                                   f"needed {int(k)}")
    return _topk(m, x, k)


@register_gradient("TopKV2")
def _topk_grad(op, g_values, g_idx=None):
    from xlapy.compat.v1.ops.index_ops import one_hot
    from xlapy.compat.v1.ops.math_ops import multiply, reduce_sum
    x = op.inputs[0]
    if g_values is None:
        return [None, None]
    n = x.shape.dims[-1] if x.shape.dims else None
    depth = n if n is not None else shape(x)[-1]
    hot = one_hot(op.outputs[1], depth, dtype=g_values.dtype)   # [..., k, n]
    return [reduce_sum(multiply(hot, expand_dims(g_values, -1)), -2), None]


def top_k(input, k=1, sorted=True, name=None):
    kt = k if isinstance(k, Tensor) else tensor(np.asarray(k, np.int32))
    op = make_op("TopKV2", [tensor(input), kt], {"sorted": bool(sorted)}, name=name or "TopKV2")
    return _TopKResult(op.outputs[0], op.outputs[1])


_TopKResult = collections.namedtuple("TopKV2", ["values", "indices"])


def _in_top_k_infer(op):
    p, t, _ = op.inputs
    if not p.dtype.is_floating:
        raise InvalidTypeError(f"predictions must be float32, got {p.dtype.name}")
    _check_int(t, "targets")
    return [(dtypes.bool, TensorShape([p.shape.dims[0] if p.shape.dims else None]))]


@register_op("InTopKV2", infer=_in_top_k_infer)
def _in_top_k(m, predictions, targets, k):
    n = predictions.shape[-1]
    t = m.astype(targets, np.int64)
    valid = m.logical_and(m.greater_equal(t, np.zeros((), np.int64)),
                          m.less(t, np.asarray(n, np.int64)))
    safe = m.clip(t, 0, n - 1)
    tv = m.take_along_axis(predictions, m.expand_dims(safe, -1), axis=-1)
    above = m.sum(m.astype(m.greater(predictions, tv), np.int64), axis=-1)
    ok = m.logical_and(m.less(above, m.astype(k, np.int64)), m.isfinite(tv[..., 0]))
    return m.logical_and(ok, valid)


not_differentiable("InTopKV2")


def in_top_k(predictions, targets, k, name=None):
    targets = tensor(targets)
    kt = k if isinstance(k, Tensor) else tensor(np.asarray(k, targets.dtype.np))
    if kt.dtype != targets.dtype:
        from xlapy.compat.v1.ops.math_ops import cast
        kt = cast(kt, targets.dtype)
    return make("InTopKV2", [tensor(predictions), targets, kt], name=name)


def _sort_along(values, axis, direction, want_indices, name):
    from xlapy.compat.v1.ops.math_ops import cast, negative
    x = tensor(values)
    r = x.shape.ndims
    if r is None:
        raise InvalidArgumentError("sort needs the rank of its input")
    if direction not in ("ASCENDING", "DESCENDING"):
        raise InvalidArgumentError(f"Unknown direction {direction!r}: ASCENDING or "
                                   "DESCENDING")
    axis = int(axis) % r
    perm = list(range(r))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    xt = transpose(x, perm) if axis != r - 1 else x
    n = xt.shape.dims[-1] if xt.shape.dims[-1] is not None else shape(xt)[-1]
    key = xt
    if direction == "ASCENDING":
        key = negative(cast(xt, dtypes.int64) if x.dtype.is_integer else xt)
    vals, idx = top_k(key, n)
    out = idx if want_indices else (negative(vals) if direction == "ASCENDING" else vals)
    if direction == "ASCENDING" and not want_indices and x.dtype.is_integer:
        out = cast(out, x.dtype)
    return transpose(out, perm, name=name) if axis != r - 1 else out


def sort(values, axis=-1, direction="ASCENDING", name=None):
    return _sort_along(values, axis, direction, False, name)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    return _sort_along(values, axis, direction, True, name)


# ---- unique, where(cond), boolean_mask -------------------------------------------------------

@register_op("Unique", lowering=None, attrs=("out_idx",),
             infer=lambda op: [(op.inputs[0].dtype, TensorShape([None])),
                               (op.get_attr("out_idx"), op.inputs[0].shape)])
def _unique(m, x, out_idx=dtypes.int32):
    if x.ndim != 1:
        raise InvalidArgumentError(f"unique expects a 1D vector, got shape {list(x.shape)}")
    _, first, inv = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")     # values in order of first occurrence
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return x[np.sort(first)], rank[inv].astype(out_idx.np)


not_differentiable("Unique")


def unique(x, out_idx=dtypes.int32, name=None):
    op = make_op("Unique", [tensor(x)], {"out_idx": dtypes.as_dtype(out_idx)}, name=name)
    return _UniqueResult(op.outputs[0], op.outputs[1])


_UniqueResult = collections.namedtuple("Unique", ["y", "idx"])


@register_op("Where", lowering=None,
             infer=lambda op: [(dtypes.int64, TensorShape([None, op.inputs[0].shape.ndims]))])
def _where(m, cond):
    return np.argwhere(np.asarray(cond).astype(bool)).astype(np.int64)


not_differentiable("Where")


def where_indices(condition, name=None):
    c = tensor(condition)
    if c.dtype != dtypes.bool:
        from xlapy.compat.v1.ops.math_ops import not_equal
        c = not_equal(c, tensor(np.zeros((), c.dtype.np)))
    return make("Where", [c], name=name or "Where")


def boolean_mask(tensor_, mask, name="boolean_mask", axis=None):
    x = tensor(tensor_)
    mask = tensor(mask)
    if mask.dtype != dtypes.bool:
        raise InvalidTypeError(f"mask must be bool, got {mask.dtype.name}")
    km = mask.shape.ndims
    if km is None:
        raise InvalidArgumentError("Number of mask dimensions must be specified, even if some "
                                   "dimensions are None.  E.g. shape=[None] is ok, but "
                                   "shape=None is not.")
    if km == 0:
        raise InvalidArgumentError("mask cannot be scalar.")
    a = 0 if axis is None else int(axis)
    if x.shape.ndims is not None:
        x.shape[a:a + km].assert_is_compatible_with(mask.shape)
    xs = shape(x)
    # the masked dims' size computed, not -1: a reshape cannot infer a -1 beside a zero
    # dim (x of shape [1, 0] masked over its first dim)
    rows = reduce_prod(xs[a:a + km], keepdims=True)
    flat = reshape(x, concat([xs[:a], rows, xs[a + km:]], 0))
    idx = squeeze(where_indices(reshape(mask, [-1])), [1])
    out = gather(flat, idx, axis=a, name=name)
    if x.shape.ndims is not None:
        out.set_shape(TensorShape(list(x.shape.dims[:a]) + [None] + list(x.shape.dims[a + km:])))
    return out
