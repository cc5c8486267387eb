"""Indexing and selection ops: slice, pad, t[...] (StridedSlice), tile, one_hot, where.

Split from array_ops.py (which re-exports these functions); the same conventions apply:
shapes, begins and sizes are const_inputs under XLA.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, ints, make, tensor
from xlapy.compat.v1.ops.array_ops import (_shape_of, broadcast_gradient_args, reshape, shape,
                                           stack, zeros_like)
from xlapy.compat.v1.tensor_shape import TensorShape, broadcast_shape, unknown_shape


def _slice_infer(op):
    x, b, s = op.inputs
    bv, sv = constant_value(b), constant_value(s)
    rank = x.shape.ndims
    if bv is None or sv is None or rank is None:
        n = s.shape.dims[0] if s.shape.ndims == 1 else rank
        return [(x.dtype, unknown_shape(n))]
    out = []
    for i, (bb, ss) in enumerate(zip(ints(bv), ints(sv))):
        d = x.shape.dims[i]
        out.append((None if d is None else d - bb) if ss == -1 else ss)
    return [(x.dtype, TensorShape(out))]


def _slice_lower(m, x, begin, size_):
    """A traced begin (TF's Slice needs only the size at compile time) is a dynamic slice,
    its start clamped so the slice fits, as XLA's."""
    from xlapy.frontend.core import Tracer
    if not isinstance(begin, Tracer):
        return _slice(m, x, begin, size_)
    sizes = ints(size_)
    if any(s < 0 for s in sizes):
        from xlapy.errors import LoweringError
        raise LoweringError("Slice with a begin computed at run time needs explicit sizes "
                            "(no -1) to compile")
    import xlapy.lax as lax
    return lax.dynamic_slice(x, m.astype(begin, np.int32), sizes)


@register_op("Slice", infer=_slice_infer, const_inputs=(2,), lowering=_slice_lower)
def _slice(m, x, begin, size_):
    idx = tuple(slice(b, None if s == -1 else b + s) for b, s in zip(ints(begin), ints(size_)))
    return x[idx]


@register_op("Pad", infer=lambda op: [(op.inputs[0].dtype, _pad_shape(op))], const_inputs=(1,))
def _pad(m, x, paddings):
    p = np.reshape(np.asarray(paddings), (-1, 2))
    return m.pad(x, [(int(a), int(b)) for a, b in p])


def _pad_shape(op):
    x, p = op.inputs[0], op.inputs[1]
    pv = constant_value(p)
    if pv is None or x.shape.dims is None:
        return unknown_shape(x.shape.ndims)
    return TensorShape([None if d is None else d + int(a) + int(b)
                        for d, (a, b) in zip(x.shape.dims, np.reshape(pv, (-1, 2)))])


@register_gradient("Slice")
def _slice_grad(op, g):
    x, begin, _ = op.inputs
    sx = _shape_of(x)
    from xlapy.compat.v1.ops.math_ops import subtract
    after = subtract(subtract(sx, begin), _shape_of(op.outputs[0]))
    paddings = stack([begin, after], axis=1)
    return [make("Pad", [g, paddings]), None, None]


@register_gradient("Pad")
def _pad_grad(op, g):
    x, p = op.inputs[0], op.inputs[1]
    begin = reshape(slice_(p, tensor(np.asarray([0, 0], np.int32)),
                           tensor(np.asarray([-1, 1], np.int32))), [-1])
    return [slice_(g, begin, _shape_of(x)), None]


def slice_(x, begin, size_, name=None):
    x = tensor(x)
    b = begin if isinstance(begin, Tensor) else tensor(np.asarray(begin, np.int32))
    s = size_ if isinstance(size_, Tensor) else tensor(np.asarray(size_, np.int32))
    return make("Slice", [x, b, s], name=name)


def pad(x, paddings, mode="CONSTANT", name=None, constant_values=0):
    if mode.upper() != "CONSTANT" or constant_values != 0:
        raise InvalidArgumentError("only zero padding (mode='CONSTANT') is supported")
    p = paddings if isinstance(paddings, Tensor) else tensor(np.asarray(paddings, np.int32))
    return make("Pad", [tensor(x), p], name=name)


# t[1:3, 0], t[..., None]: basic indexing with Python ints, slices, None and Ellipsis.
def _strided_infer(op):
    x = op.inputs[0]
    spec = op.get_attr("slice_spec")
    if x.shape.dims is None:
        return [(x.dtype, unknown_shape())]
    dims = list(x.shape.dims)
    out, i = [], 0
    n_consuming = sum(1 for s in spec if s is not None and s is not Ellipsis)
    for s in spec:
        if s is None:
            out.append(1)
        elif s is Ellipsis:
            k = len(dims) - n_consuming
            out.extend(dims[i:i + k])
            i += k
        elif isinstance(s, int):
            if i >= len(dims):
                raise InvalidArgumentError(f"Index out of range using input dim {i}; input "
                                           f"has only {len(dims)} dims")
            d = dims[i]
            if d is not None and not -d <= s < d:
                raise InvalidArgumentError(f"slice index {s} of dimension {i} out of bounds "
                                           f"(size {d})")
            i += 1
        else:
            d = dims[i]
            out.append(None if d is None else len(range(*slice(*s).indices(d))))
            i += 1
    out.extend(dims[i:])
    return [(x.dtype, TensorShape(out))]


def _decode_spec(spec):
    return tuple(slice(*s) if isinstance(s, tuple) else s for s in spec)


@register_op("StridedSlice", infer=_strided_infer, attrs=("slice_spec",))
def _strided_slice(m, x, slice_spec=()):
    return x[_decode_spec(slice_spec)]


def strided_slice(x, key, name=None):
    """t[key]: Python ints, slices, None and Ellipsis become one StridedSlice; a scalar
    integer tensor index becomes a gather along its axis, and tensor slice bounds (step 1)
    a Slice (their values are compile-time constants under XLA, as TF's)."""
    x = tensor(x)
    if not isinstance(key, tuple):
        key = (key,)
    spec, dynamic = [], []
    for k in key:
        if isinstance(k, Tensor) or hasattr(k, "_to_tensor"):
            k = tensor(k)
            if k.shape.ndims not in (None, 0) or not k.dtype.is_integer:
                raise InvalidTypeError(f"a tensor index must be an integer scalar, got "
                                       f"{k.dtype.name} of shape {k.shape}; use tf.gather or "
                                       "tf.boolean_mask")
            dynamic.append((len(spec), "index", k))
            spec.append((None, None, None))
        elif isinstance(k, slice):
            bounds = []
            tens = False
            for v in (k.start, k.stop, k.step):
                if isinstance(v, Tensor) or hasattr(v, "_to_tensor"):
                    tens = True
                    bounds.append(tensor(v))
                elif v is not None and not isinstance(v, (int, np.integer)):
                    raise InvalidTypeError(f"slice bounds must be ints or integer tensors, got "
                                           f"{v!r}")
                else:
                    bounds.append(None if v is None else int(v))
            if tens:
                if bounds[2] not in (None, 1):
                    raise InvalidArgumentError("a slice with tensor bounds must have step 1")
                dynamic.append((len(spec), "slice", bounds))
                spec.append((None, None, None))
            else:
                spec.append(tuple(bounds))
        elif k is None or k is Ellipsis:
            spec.append(k)
        elif isinstance(k, (int, np.integer)):
            spec.append(int(k))
        else:
            raise InvalidTypeError(f"unsupported index {k!r} for Tensor {x.name}")
    out = make("StridedSlice", [x], {"slice_spec": tuple(spec)}, name=name or "strided_slice") \
        if not dynamic or any(s != (None, None, None) for s in spec) else x
    if not dynamic:
        return out
    axes = _output_axes(spec, x.shape.ndims)
    for pos, kind, v in reversed(dynamic):
        ax = axes[pos]
        if kind == "index":
            from xlapy.compat.v1.ops.gather_ops import gather
            out = gather(out, v, axis=ax)
        else:
            out = _dynamic_slice_axis(out, ax, v[0], v[1])
    return out


def _output_axes(spec, rank):
    """The output axis each spec entry's result lands on (for full-slice entries)."""
    n_consuming = sum(1 for s in spec if s is not None and s is not Ellipsis)
    axes, out = {}, 0
    for i, s in enumerate(spec):
        if s is None:
            out += 1
        elif s is Ellipsis:
            if rank is None:
                raise InvalidArgumentError("indexing with ... and a tensor needs the rank")
            out += rank - n_consuming
        elif isinstance(s, int):
            continue
        else:
            axes[i] = out
            out += 1
    return axes


def _dynamic_slice_axis(x, axis, start, stop):
    from xlapy.compat.v1.ops.array_ops import stack
    from xlapy.compat.v1.ops.math_ops import cast, subtract
    from xlapy.compat.v1 import dtypes
    r = x.shape.ndims
    if r is None:
        raise InvalidArgumentError("slicing with tensor bounds needs the rank of the tensor")

    def i32(v):
        v = tensor(v) if not isinstance(v, Tensor) else v
        return cast(v, dtypes.int32) if v.dtype != dtypes.int32 else v
    b = i32(0 if start is None else start)
    size = subtract(i32(stop), b) if stop is not None else \
        tensor(np.asarray(-1, np.int32))
    zeros_ = [tensor(np.asarray(0, np.int32))] * r
    ones_ = [tensor(np.asarray(-1, np.int32))] * r
    begin = stack(zeros_[:axis] + [b] + zeros_[axis + 1:])
    sizes = stack(ones_[:axis] + [size] + ones_[axis + 1:])
    return make("Slice", [x, begin, sizes])


@register_gradient("StridedSlice")
def _strided_slice_grad(op, g):
    x = op.inputs[0]
    s = tensor(np.asarray(x.shape.as_list(), np.int32)) if x.shape.is_fully_defined() \
        else _shape_of(x)
    return [make("StridedSliceGrad", [g, s], {"slice_spec": op.get_attr("slice_spec")})]


def _ssg_infer(op):
    from xlapy.compat.v1.ops._common import partial_shape_value
    return [(op.inputs[0].dtype, partial_shape_value(op.inputs[1]))]


@register_op("StridedSliceGrad", attrs=("slice_spec",), infer=_ssg_infer, const_inputs=(1,),
             lowering=lambda m, g, shape, slice_spec=(): m.at(m.zeros(ints(shape), g.dtype))[
                 _decode_spec(slice_spec)].set(g))
def _strided_slice_grad_kernel(m, g, shape, slice_spec=()):
    out = np.zeros(ints(shape), g.dtype)
    out[_decode_spec(slice_spec)] = g
    return out


@register_gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, g):
    """StridedSliceGrad is linear in its gradient input: its gradient is the same slice of
    the incoming one (second derivatives through x[i], as TF's)."""
    return [make("StridedSlice", [g], {"slice_spec": op.get_attr("slice_spec")}), None]


# ---- tile, one_hot, where --------------------------------------------------------------------

def _tile_infer(op):
    x, mt = op.inputs
    mv = constant_value(mt)
    if mv is None or x.shape.dims is None:
        return [(x.dtype, unknown_shape(x.shape.ndims))]
    return [(x.dtype, TensorShape([None if d is None else d * k
                                   for d, k in zip(x.shape.dims, ints(mv))]))]


@register_op("Tile", infer=_tile_infer, const_inputs=(1,))
def _tile(m, x, multiples):
    ks, ds = ints(multiples), tuple(x.shape)
    inter = tuple(v for d in ds for v in (1, d))
    big = tuple(v for k, d in zip(ks, ds) for v in (k, d))
    return m.reshape(m.broadcast_to(m.reshape(x, inter), big),
                     tuple(k * d for k, d in zip(ks, ds)))


@register_gradient("Tile")
def _tile_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import reduce_sum
    x, mt = op.inputs
    split = reshape(stack([mt, shape(x)], axis=1), [-1])
    n = x.shape.ndims
    if n is None:
        raise InvalidArgumentError(f"gradient of {op.name} needs the rank of {x.name}")
    return [reduce_sum(reshape(g, split), list(range(0, 2 * n, 2))), None]


def tile(x, multiples, name=None):
    mt = multiples if isinstance(multiples, Tensor) else tensor(np.asarray(multiples, np.int32))
    return make("Tile", [tensor(x), mt], name=name)


def _one_hot_infer(op):
    idx, depth, on, off = op.inputs
    d = constant_value(depth)
    if idx.shape.dims is None:
        return [(on.dtype, unknown_shape())]
    dims = list(idx.shape.dims)
    axis = op.get_attr("axis")
    dims.insert(len(dims) if axis == -1 else axis, None if d is None else int(d))
    return [(on.dtype, TensorShape(dims))]


@register_op("OneHot", infer=_one_hot_infer, attrs=("axis",), const_inputs=(1,))
def _one_hot(m, indices, depth, on, off, axis=-1):
    hot = m.equal(m.expand_dims(indices, -1), m.astype(m.arange(int(depth)), indices.dtype))
    out = m.where(hot, on, off)   # (not hot * (on - off) + off: bools, infinities)
    if axis != -1:
        out = m.moveaxis(out, -1, axis)
    return out


not_differentiable("OneHot")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    dtype = dtypes.as_dtype(dtype) if dtype is not None else (
        tensor(on_value).dtype if on_value is not None else dtypes.float32)
    on = tensor(1 if on_value is None else on_value, dtype=dtype)
    off = tensor(0 if off_value is None else off_value, dtype=dtype)
    return make("OneHot", [tensor(indices), tensor(np.asarray(depth, np.int32)), on, off],
                {"axis": -1 if axis is None else int(axis)}, name=name)


def _select_infer(op):
    c, x, y = op.inputs
    if c.dtype != dtypes.bool:
        raise InvalidTypeError(f"the condition of where/select must be bool, got {c.dtype.name}")
    if x.dtype != y.dtype:
        raise InvalidTypeError(f"where/select branches have different dtypes {x.dtype.name} "
                               f"and {y.dtype.name}")
    return [(x.dtype, broadcast_shape(broadcast_shape(c.shape, x.shape), y.shape))]


@register_op("SelectV2", infer=_select_infer)
def _select(m, c, x, y):
    return m.where(c, x, y)


@register_gradient("SelectV2")
def _select_grad(op, g):
    c, x, y = op.inputs
    z = zeros_like(g)
    out = op.outputs[0]
    return [None, sum_to_shape(make("SelectV2", [c, g, z]), x, out),
            sum_to_shape(make("SelectV2", [c, z, g]), y, out)]


def sum_to_shape(g, x, out):
    """Reduce g (shaped like `out`) to x's shape."""
    if x.shape.is_fully_defined() and out.shape.is_fully_defined() and x.shape == out.shape:
        return g
    sx = shape(x)
    rx, _ = broadcast_gradient_args(sx, shape(out))
    return reshape(make("Sum", [g, rx], {"keep_dims": False}), sx)


def where(condition, x=None, y=None, name=None):
    """where(c, x, y) selects; where(c) gives the coordinates of the true elements
    ([n, rank] int64, a run-time shape: executor only)."""
    if x is None and y is None:
        from xlapy.compat.v1.ops.gather_ops import where_indices
        return where_indices(condition, name=name)
    if x is None or y is None:
        raise InvalidArgumentError("x and y must both be non-None or both be None.")
    c = tensor(condition)
    from xlapy.compat.v1.ops._common import binary_args
    x, y = binary_args(x, y, "SelectV2")
    return make("SelectV2", [c, x, y], name=name)


select = where



def strided_slice_op(input_, begin, end, strides=None, begin_mask=0, end_mask=0,
                     ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, var=None,
                     name=None):
    """tf.strided_slice(input_, begin, end, strides, masks): TF's signature, as the slice
    key input_[b0:e0:s0, ...] (begin, end and strides must be known when the graph is
    built)."""
    vals = []
    for what, v in (("begin", begin), ("end", end), ("strides", strides)):
        if v is not None and (isinstance(v, Tensor) or hasattr(v, "_to_tensor")):
            c = constant_value(tensor(v))
            if c is None:
                raise InvalidArgumentError(f"strided_slice: {what} must be known when the "
                                           "graph is built (use input_[b:e] with tensor "
                                           "bounds)")
            v = c
        vals.append(None if v is None else [int(a) for a in np.reshape(v, [-1])])
    b, e, s = vals
    s = s if s is not None else [1] * len(b)
    if not len(b) == len(e) == len(s):
        raise InvalidArgumentError("strided_slice: begin, end and strides must have the same "
                                   "length")
    key = []
    for i, (bi, ei, si) in enumerate(zip(b, e, s)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(bi)
        else:
            key.append(slice(None if begin_mask & bit else bi, None if end_mask & bit else ei,
                             si))
    return strided_slice(input_, tuple(key), name=name)
