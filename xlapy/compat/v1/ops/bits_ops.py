"""tf.bitcast, tf.searchsorted, tf.histogram_fixed_width, tf.shape_n.

Bitcast reinterprets the bytes (little-endian, as the machines xlapy runs on): between
types of one width the shape is kept; to a narrower type a last dimension of
(input width / output width) is added, to a wider one that last dimension is removed.
Compiled, a width change is written as shifts and masks of unsigned integers around
same-width bitcasts (XLA's bitcast-convert changes no widths here).

searchsorted compares every value with every sorted entry of its row (a count of
entries <, or <=, the value: the 'left' or 'right' insertion point), which is exact and
the same program with NumPy and XLA. histogram_fixed_width bins as TF: values below the
range go to the first bin, values at or above its end to the last.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, tensor
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bitcast_infer(op):
    x = op.inputs[0]
    to = op.get_attr("type")
    a, b = x.dtype.size, to.size
    if x.dtype == dtypes.bool or to == dtypes.bool or x.dtype == dtypes.string \
            or to == dtypes.string:
        raise InvalidTypeError(f"bitcast: cannot bitcast {x.dtype.name} to {to.name}")
    if x.shape.ndims is None:
        return [(to, unknown_shape())]
    dims = list(x.shape.dims)
    if a > b:
        dims.append(a // b)
    elif a < b:
        if not dims or (dims[-1] is not None and dims[-1] != b // a):
            raise InvalidArgumentError(f"Cannot bitcast from {x.dtype.name} to {to.name}: "
                                       f"the last dimension of {x.shape.tf_str()} must be "
                                       f"{b // a}")
        dims = dims[:-1]
    return [(to, TensorShape(dims))]


def _bitcast_lowering(m, x, type):
    import xlapy.lax as lax
    to = np.dtype(type.np)
    a, b = x.dtype.itemsize, to.itemsize
    if a == b:
        return lax.bitcast_convert_type(x, to)
    u = lax.bitcast_convert_type(x, _UINT[a])
    if a > b:  # split each element into a // b narrower ones, lowest bytes first
        mask = np.asarray((1 << (8 * b)) - 1, _UINT[a])
        parts = [m.bitwise_and(m.right_shift(u, np.asarray(8 * b * i, _UINT[a])), mask)
                 for i in range(a // b)]
        narrow = m.stack([p.astype(_UINT[b]) for p in parts], axis=-1)
        return lax.bitcast_convert_type(narrow, to)
    wide = u.astype(_UINT[b])
    acc = wide[..., 0]
    for i in range(1, b // a):
        acc = m.bitwise_or(acc, m.left_shift(wide[..., i], np.asarray(8 * a * i, _UINT[b])))
    return lax.bitcast_convert_type(acc, to)


@register_op("Bitcast", infer=_bitcast_infer, attrs=("type",), lowering=_bitcast_lowering)
def _bitcast(m, x, type):
    to = np.dtype(type.np)
    x = np.ascontiguousarray(x)
    a, b = x.dtype.itemsize, to.itemsize
    if a < b:
        return x.view(to).reshape(x.shape[:-1])
    return x.view(to).reshape(x.shape + ((a // b,) if a > b else ()))


def bitcast(input, type, name=None):
    return make("Bitcast", [tensor(input)], {"type": dtypes.as_dtype(type)}, name=name)


# ---- searchsorted ---------------------------------------------------------------------------

def _search_infer(op):
    seq, vals = op.inputs
    if seq.dtype != vals.dtype:
        raise InvalidTypeError(f"searchsorted: sorted_sequence is {seq.dtype.name} but values "
                               f"are {vals.dtype.name}")
    if seq.shape.ndims is not None and vals.shape.ndims is not None:
        if seq.shape.ndims != vals.shape.ndims or not TensorShape(
                seq.shape.dims[:-1]).is_compatible_with(TensorShape(vals.shape.dims[:-1])):
            raise InvalidArgumentError(f"searchsorted: sorted_sequence {seq.shape.tf_str()} "
                                       f"and values {vals.shape.tf_str()} must have the same "
                                       "leading dimensions")
    return [(op.get_attr("out_type"), vals.shape)]


@register_op("SearchSorted", infer=_search_infer, attrs=("side", "out_type"))
def _searchsorted(m, seq, vals, side="left", out_type=dtypes.int32):
    s = m.expand_dims(seq, -2)   # [..., 1, n]
    v = m.expand_dims(vals, -1)  # [..., k, 1]
    hit = m.less(s, v) if side == "left" else m.less_equal(s, v)
    return m.sum(hit.astype(out_type.np), axis=-1).astype(out_type.np)


not_differentiable("SearchSorted", "Bitcast")


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    if side not in ("left", "right"):
        raise InvalidArgumentError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    seq = tensor(sorted_sequence)
    vals = tensor(values, dtype=seq.dtype)
    if seq.shape.ndims == 0 or vals.shape.ndims == 0:
        raise InvalidArgumentError("searchsorted: sorted_sequence and values must be at least "
                                   "1-D")
    return make("SearchSorted", [seq, vals], {"side": side,
                                              "out_type": dtypes.as_dtype(out_type)}, name=name)


# ---- histogram_fixed_width ----------------------------------------------------------------

def _hist_infer(op):
    v, r, _ = op.inputs
    if r.shape.ndims is not None and r.shape.as_list() not in ([2], [None]):
        raise InvalidArgumentError(f"histogram_fixed_width: value_range must have shape [2], "
                                   f"got {r.shape.tf_str()}")
    from xlapy.compat.v1.ops._common import constant_value
    n = constant_value(op.inputs[2])
    return [(op.get_attr("dtype"), TensorShape([None if n is None else int(n)]))]


@register_op("HistogramFixedWidth", infer=_hist_infer, attrs=("dtype",), const_inputs=(2,))
def _hist(m, values, value_range, nbins, dtype=dtypes.int32):
    nbins = int(nbins)
    if m is np and nbins <= 0:
        raise InvalidArgumentError(f"histogram_fixed_width: nbins should be > 0, got {nbins}")
    lo, hi = value_range[0], value_range[1]
    if m is np and not lo < hi:
        raise InvalidArgumentError(f"histogram_fixed_width: value_range should satisfy "
                                   f"value_range[0] < value_range[1], but got "
                                   f"[{lo}, {hi}]")
    flat = m.reshape(values, (-1,))
    scaled = m.true_divide(m.subtract(flat, lo), m.subtract(hi, lo))
    idx = m.floor(m.multiply(scaled, np.asarray(nbins, scaled.dtype)))
    idx = m.clip(idx, 0, nbins - 1).astype(np.int32)
    if m is np:
        return np.bincount(idx, minlength=nbins).astype(dtype.np)
    return m.at(m.zeros((nbins,), dtype.np))[idx].add(np.ones((), dtype.np))


not_differentiable("HistogramFixedWidth")


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    v = tensor(values)
    r = tensor(value_range, dtype=v.dtype)
    n = nbins if hasattr(nbins, "op") else tensor(np.asarray(nbins, np.int32))
    return make("HistogramFixedWidth", [v, r, n], {"dtype": dtypes.as_dtype(dtype)},
                name=name)


def shape_n(input, out_type=dtypes.int32, name=None):
    """The shapes of a list of tensors."""
    from xlapy.compat.v1.framework import get_default_graph
    from xlapy.compat.v1.ops.array_ops import shape
    with get_default_graph().name_scope(name or "ShapeN"):
        return [shape(x, out_type=out_type) for x in input]
