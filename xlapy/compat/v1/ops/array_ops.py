"""Array ops: constants, placeholders, identity, cast, shapes, reshape, transpose, expand/
squeeze, broadcast_to, fill, concat, stack/unstack, and the helper ops TF's gradients use
(Shape, BroadcastGradientArgs, ReducedShape, ConcatOffset). Slicing, padding, tiling,
one_hot and where are in index_ops.py (re-exported here).

Ops whose inputs are shapes or axes list them as const_inputs: under XLA those values are
compile-time constants (part of the compiled cluster's cache key), as in TF's tf2xla.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, constant_op, get_default_graph
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import (SCALAR, constant_value, fixed, ints, make,
                                         make_op, partial_shape_value, same_as_input, tensor)
from xlapy.compat.v1.tensor_shape import TensorShape, as_shape, broadcast_shape, unknown_shape

# ---- sources -------------------------------------------------------------------------------


@register_op("Const", attrs=("value",),
             infer=lambda op: [(op.get_attr("dtype"), TensorShape(op.get_attr("value").shape))])
def _const(m, value):
    return value  # a NumPy array, also when compiled: it is folded into the program


@register_op("Placeholder", lowering=None,
             infer=lambda op: [(op.get_attr("dtype"), op.get_attr("shape"))])
def _placeholder(m):
    raise AssertionError("placeholders are fed by the session, never run")


@register_op("NoOp", infer=lambda op: [])
def _no_op(m):
    return ()


def placeholder(dtype, shape=None, name=None):
    return make("Placeholder", [], {"dtype": dtypes.as_dtype(dtype),
                                    "shape": TensorShape(shape)}, name=name or "Placeholder")


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    return constant_op(value, dtype, shape, name)


def no_op(name=None):
    return make_op("NoOp", [], name=name or "NoOp")


def group(*inputs, name=None):
    """A NoOp that runs after all `inputs` (ops or tensors, possibly in lists)."""
    deps = []
    for i in inputs:
        deps.extend(i if isinstance(i, (list, tuple)) else [i])
    graph = get_default_graph()
    with graph.control_dependencies(deps):
        return no_op(name=name or "group_deps")


def tuple_(tensors, name=None, control_inputs=None):
    with get_default_graph().name_scope(name or "tuple"):
        gate = group(*[t for t in tensors if t is not None], *(control_inputs or []))
        out = []
        for t in tensors:
            if t is None:
                out.append(None)
                continue
            with get_default_graph().control_dependencies([gate]):
                out.append(identity(t))
        return out


# ---- identity and friends ------------------------------------------------------------------

register_op("Identity", infer=same_as_input(0))(lambda m, x: x)
register_op("StopGradient", infer=same_as_input(0))(lambda m, x: x)
register_op("ZerosLike", infer=same_as_input(0))(lambda m, x: m.zeros_like(x))
register_op("OnesLike", infer=same_as_input(0))(lambda m, x: m.ones_like(x))
not_differentiable("StopGradient", "ZerosLike", "OnesLike")


@register_gradient("Identity")
def _identity_grad(op, g):
    return [g]


def identity(x, name=None):
    return make("Identity", [tensor(x)], name=name)


def stop_gradient(x, name=None):
    return make("StopGradient", [tensor(x)], name=name)


def zeros_like(x, dtype=None, name=None):
    x = tensor(x)
    if dtype is not None and dtypes.as_dtype(dtype) != x.dtype:
        from xlapy.compat.v1.ops.math_ops import cast
        x = cast(x, dtype)
    return make("ZerosLike", [x], name=name)


def ones_like(x, dtype=None, name=None):
    x = tensor(x)
    if dtype is not None and dtypes.as_dtype(dtype) != x.dtype:
        from xlapy.compat.v1.ops.math_ops import cast
        x = cast(x, dtype)
    return make("OnesLike", [x], name=name)


# ---- cast ----------------------------------------------------------------------------------

@register_op("Cast", attrs=("DstT",),
             infer=lambda op: [(op.get_attr("DstT"), op.inputs[0].shape)])
def _cast(m, x, DstT):
    return m.astype(x, DstT.np)


@register_gradient("Cast")
def _cast_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import cast
    src = op.inputs[0].dtype
    if src.is_floating and g.dtype.is_floating:
        return [cast(g, src)]
    return [None]


# ---- shapes ---------------------------------------------------------------------------------

def _shape_infer(op):
    x = op.inputs[0]
    return [(op.get_attr("out_type"), TensorShape([x.shape.ndims]))]


@register_op("Shape", infer=_shape_infer, attrs=("out_type",))
def _shape(m, x, out_type=dtypes.int32):
    return np.asarray(x.shape, dtype=out_type.np)  # static even when traced: XLA shapes are


@register_op("Size", infer=lambda op: [(op.get_attr("out_type"), SCALAR)], attrs=("out_type",))
def _size(m, x, out_type=dtypes.int32):
    return np.asarray(int(np.prod(x.shape, dtype=np.int64)), dtype=out_type.np)


@register_op("Rank", infer=fixed((dtypes.int32, [])))
def _rank(m, x):
    return np.asarray(len(x.shape), dtype=np.int32)


not_differentiable("Shape", "Size", "Rank")


def shape(x, name=None, out_type=dtypes.int32):
    return make("Shape", [tensor(x)], {"out_type": dtypes.as_dtype(out_type)}, name=name)


def size(x, name=None, out_type=dtypes.int32):
    return make("Size", [tensor(x)], {"out_type": dtypes.as_dtype(out_type)}, name=name)


def rank(x, name=None):
    return make("Rank", [tensor(x)], name=name)


@register_op("BroadcastGradientArgs",
             infer=fixed((dtypes.int32, [None]), (dtypes.int32, [None])))
def _broadcast_gradient_args(m, sx, sy):
    """The axes to sum a broadcast result over to get back shape sx (output 0) and sy."""
    sx, sy = ints(sx), ints(sy)
    n = max(len(sx), len(sy))
    px, py = (1,) * (n - len(sx)) + sx, (1,) * (n - len(sy)) + sy
    rx = [i for i in range(n) if px[i] == 1 and py[i] != 1 or i < n - len(sx)]
    ry = [i for i in range(n) if py[i] == 1 and px[i] != 1 or i < n - len(sy)]
    return np.asarray(rx, np.int32), np.asarray(ry, np.int32)


def broadcast_gradient_args(sx, sy):
    op = make_op("BroadcastGradientArgs", [sx, sy])
    return op.outputs[0], op.outputs[1]


@register_op("ReducedShape", infer=lambda op: [(dtypes.int32, op.inputs[0].shape)])
def _reduced_shape(m, input_shape, axes):
    """input_shape with the reduced axes set to 1 (TF's math_ops.reduced_shape)."""
    s = list(ints(input_shape))
    for a in ints(axes):
        s[a % len(s)] = 1
    return np.asarray(s, np.int32)


def reduced_shape(input_shape, axes):
    return make("ReducedShape", [input_shape, axes])


not_differentiable("BroadcastGradientArgs", "ReducedShape")


# ---- reshape, transpose, expand/squeeze, broadcast_to ---------------------------------------

def _reshape_infer(op):
    x, s = op.inputs
    target = partial_shape_value(s)
    if target.dims is None:
        return [(x.dtype, target)]
    dims = list(target.dims)
    v = constant_value(s)
    if v is not None and -1 in [int(d) for d in np.reshape(v, [-1])]:
        n = x.shape.num_elements()
        rest = 1
        for d in dims:
            rest *= d if d is not None else 1
        i = [int(d) for d in np.reshape(v, [-1])].index(-1)
        dims[i] = n // rest if (n is not None and rest) else None
        if n is not None and rest and n % rest:
            raise InvalidArgumentError(f"Cannot reshape a tensor with {n} elements to shape "
                                       f"{[int(d) for d in np.reshape(v, [-1])]}")
    elif x.shape.is_fully_defined() and TensorShape(dims).is_fully_defined():
        if x.shape.num_elements() != TensorShape(dims).num_elements():
            raise InvalidArgumentError(f"Cannot reshape a tensor with "
                                       f"{x.shape.num_elements()} elements to shape {dims} "
                                       f"({TensorShape(dims).num_elements()} elements) for "
                                       f"'{op.name}' (op: 'Reshape')")
    return [(x.dtype, TensorShape(dims))]


@register_op("Reshape", infer=_reshape_infer, const_inputs=(1,))
def _reshape(m, x, s):
    return m.reshape(x, ints(s))


@register_gradient("Reshape")
def _reshape_grad(op, g):
    return [reshape(g, _shape_of(op.inputs[0])), None]


def _shape_of(x: Tensor) -> Tensor:
    """x's shape as a tensor: a constant when statically known."""
    if x.shape.is_fully_defined():
        return tensor(np.asarray(x.shape.as_list(), np.int32))
    return shape(x)


def reshape(x, shape_, name=None):
    x = tensor(x)
    s = shape_ if isinstance(shape_, Tensor) else tensor(
        shape_ if not isinstance(shape_, (list, tuple)) or not any(
            isinstance(d, Tensor) for d in shape_) else shape_, dtype=dtypes.int32)
    return make("Reshape", [x, s], name=name)


def _transpose_infer(op):
    x, p = op.inputs
    perm = constant_value(p)
    if perm is None or x.shape.ndims is None:
        return [(x.dtype, unknown_shape(x.shape.ndims))]
    perm = ints(perm)
    if sorted(perm) != list(range(x.shape.ndims)):
        raise InvalidArgumentError(f"transpose: perm {list(perm)} is not a permutation of the "
                                   f"axes of {x.name} (rank {x.shape.ndims})")
    return [(x.dtype, TensorShape([x.shape.dims[i] for i in perm]))]


@register_op("Transpose", infer=_transpose_infer, const_inputs=(1,))
def _transpose(m, x, perm):
    return m.transpose(x, ints(perm))


@register_gradient("Transpose")
def _transpose_grad(op, g):
    perm = constant_value(op.inputs[1])
    if perm is None:
        raise InvalidArgumentError(f"gradient of {op.name}: the permutation must be constant")
    return [transpose(g, list(np.argsort(ints(perm)))), None]


def transpose(a, perm=None, name="transpose", conjugate=False):
    a = tensor(a)
    if perm is None:
        if a.shape.ndims is None:
            raise InvalidArgumentError(f"transpose({a.name}) without perm needs a known rank")
        perm = list(range(a.shape.ndims))[::-1]
    p = perm if isinstance(perm, Tensor) else tensor(np.asarray(perm, np.int32))
    return make("Transpose", [a, p], name=name)


def _expand_infer(op):
    x, a = op.inputs
    v = constant_value(a)
    if v is None or x.shape.ndims is None:
        return [(x.dtype, unknown_shape(None if x.shape.ndims is None else x.shape.ndims + 1))]
    dims = list(x.shape.dims)
    axis = int(v)
    if axis < 0:
        axis += len(dims) + 1
    dims.insert(axis, 1)
    return [(x.dtype, TensorShape(dims))]


@register_op("ExpandDims", infer=_expand_infer, const_inputs=(1,))
def _expand_dims(m, x, axis):
    return m.expand_dims(x, int(axis))


def _squeeze_infer(op):
    x = op.inputs[0]
    axes = op.get_attr("squeeze_dims")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    dims = x.shape.dims
    n = len(dims)
    axes = [a % n for a in axes]
    for a in axes:
        if dims[a] not in (1, None):
            raise InvalidArgumentError(f"Can not squeeze dim[{a}], expected a dimension of 1, "
                                       f"got {dims[a]} for '{op.name}' (op: 'Squeeze')")
    if not axes:
        if any(d is None for d in dims):
            return [(x.dtype, unknown_shape())]
        return [(x.dtype, TensorShape([d for d in dims if d != 1]))]
    return [(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in axes]))]


@register_op("Squeeze", infer=_squeeze_infer, attrs=("squeeze_dims",))
def _squeeze(m, x, squeeze_dims=()):
    return m.squeeze(x, axis=tuple(squeeze_dims) if squeeze_dims else None)


def _reshape_back_grad(op, g):
    return [reshape(g, _shape_of(op.inputs[0]))] + [None] * (len(op.inputs) - 1)


register_gradient("ExpandDims")(_reshape_back_grad)
register_gradient("Squeeze")(_reshape_back_grad)


def expand_dims(x, axis=None, name=None, dim=None):
    axis = dim if axis is None else axis
    return make("ExpandDims", [tensor(x), tensor(np.asarray(axis, np.int32))], name=name)


def squeeze(x, axis=None, name=None, squeeze_dims=None):
    axis = squeeze_dims if axis is None else axis
    axes = [] if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    return make("Squeeze", [tensor(x)], {"squeeze_dims": tuple(int(a) for a in axes)}, name=name)


def _broadcast_to_infer(op):
    x, s = op.inputs
    target = partial_shape_value(s)
    if target.dims is not None and x.shape.dims is not None:
        broadcast_shape(x.shape, target, f" for '{op.name}' (op: 'BroadcastTo')")
    return [(x.dtype, target)]


@register_op("BroadcastTo", infer=_broadcast_to_infer, const_inputs=(1,))
def _broadcast_to(m, x, s):
    return m.broadcast_to(x, ints(s))


@register_gradient("BroadcastTo")
def _broadcast_to_grad(op, g):
    x = op.inputs[0]
    sx = shape(x)
    rx, _ = broadcast_gradient_args(sx, shape(op.outputs[0]))
    return [reshape(make("Sum", [g, rx], {"keep_dims": False}), sx), None]


def broadcast_to(x, shape_, name=None):
    s = shape_ if isinstance(shape_, Tensor) else tensor(np.asarray(shape_, np.int32))
    return make("BroadcastTo", [tensor(x), s], name=name)


# ---- fill, zeros, ones ---------------------------------------------------------------------

@register_op("Fill", infer=lambda op: [(op.inputs[1].dtype, partial_shape_value(op.inputs[0]))],
             const_inputs=(0,))
def _fill(m, dims, value):
    return m.broadcast_to(value, ints(dims)) if m is not np else np.full(ints(dims), value)


@register_gradient("Fill")
def _fill_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import reduce_sum
    return [None, reduce_sum(g)]


def fill(dims, value, name=None):
    value = tensor(value)
    parts = dims if isinstance(dims, (list, tuple)) else []
    # a list holding an int64 tensor packs as int64 (the shape input takes either)
    wide = any(isinstance(x, Tensor) and x.dtype == dtypes.int64 for x in parts)
    d = dims if isinstance(dims, Tensor) else tensor(
        dims, dtype=dtypes.int64 if wide else dtypes.int32) if any(
        isinstance(x, Tensor) for x in parts) else tensor(np.asarray(dims, np.int32))
    return make("Fill", [d, value], name=name)


def _filled(value, shape_, dtype, name):
    dtype = dtypes.as_dtype(dtype)
    if isinstance(shape_, Tensor) or (isinstance(shape_, (list, tuple)) and any(
            isinstance(d, Tensor) for d in shape_)):
        return fill(shape_, np.asarray(value, dtype.np), name=name)
    return constant_op(np.full([int(d) for d in as_shape(shape_).as_list()], value, dtype.np),
                       name=name)


def zeros(shape_, dtype=dtypes.float32, name=None):
    return _filled(0, shape_, dtype, name or "zeros")


def ones(shape_, dtype=dtypes.float32, name=None):
    return _filled(1, shape_, dtype, name or "ones")


# ---- concat, stack, unstack, slice -----------------------------------------------------------

def _concat_infer(op):
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    dt = values[0].dtype
    for v in values:
        if v.dtype != dt:
            raise InvalidTypeError(f"ConcatV2 inputs must have the same dtype, got {dt.name} "
                                   f"and {v.dtype.name}")
    a = constant_value(axis_t)
    ranks = {v.shape.ndims for v in values} - {None}
    if len(ranks) > 1:
        raise InvalidArgumentError(f"Shape must be rank {min(ranks)} but is rank {max(ranks)} "
                                   f"for '{op.name}' (op: 'ConcatV2')")
    if a is None or not ranks:
        return [(dt, unknown_shape(ranks.pop() if ranks else None))]
    r = ranks.pop()
    axis = int(a) % r
    out = [None] * r
    total = 0
    for v in values:
        if v.shape.dims is None:
            total = None
            continue
        for i, d in enumerate(v.shape.dims):
            if i == axis:
                total = None if (total is None or d is None) else total + d
            elif out[i] is None:
                out[i] = d
            elif d is not None and d != out[i]:
                raise InvalidArgumentError(f"Dimension {i} in both shapes must be equal, but "
                                           f"are {out[i]} and {d} for '{op.name}' "
                                           "(op: 'ConcatV2')")
    out[axis] = total
    return [(dt, TensorShape(out))]


@register_op("ConcatV2", infer=_concat_infer, const_inputs=(-1,))
def _concat(m, *args):
    return m.concatenate(list(args[:-1]), axis=int(args[-1]))


@register_op("ConcatOffset",
             infer=lambda op: [(dtypes.int32, op.inputs[1].shape)] * (len(op.inputs) - 1))
def _concat_offset(m, axis, *shapes):
    """The start of each input of a concat along `axis` (for the gradient's slices)."""
    a = int(axis) % len(ints(shapes[0]))
    out, off = [], 0
    for s in shapes:
        o = np.zeros(len(ints(s)), np.int32)
        o[a] = off
        off += ints(s)[a]
        out.append(o)
    return tuple(out)


not_differentiable("ConcatOffset")


@register_gradient("ConcatV2")
def _concat_grad(op, g):
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    shapes = [_shape_of(v) for v in values]
    offs = make_op("ConcatOffset", [axis_t] + shapes).outputs
    return [slice_(g, o, s) for o, s in zip(offs, shapes)] + [None]


def concat(values, axis, name="concat"):
    values = [tensor(v) for v in values]
    if len(values) == 1:
        return identity(values[0], name=name)
    a = axis if isinstance(axis, Tensor) else tensor(np.asarray(axis, np.int32))
    return make("ConcatV2", values + [a], name=name)


def _pack_infer(op):
    axis = op.get_attr("axis")
    shape_ = TensorShape(None)
    for v in op.inputs:
        if v.dtype != op.inputs[0].dtype:
            raise InvalidTypeError("Pack inputs must have the same dtype")
        shape_ = shape_.merge_with(v.shape)
    if shape_.dims is None:
        return [(op.inputs[0].dtype, unknown_shape())]
    dims = list(shape_.dims)
    dims.insert(axis % (len(dims) + 1), len(op.inputs))
    return [(op.inputs[0].dtype, TensorShape(dims))]


@register_op("Pack", infer=_pack_infer, attrs=("axis",))
def _pack(m, *xs, axis=0):
    return m.stack(list(xs), axis=axis)


@register_gradient("Pack")
def _pack_grad(op, g):
    return list(unstack(g, num=len(op.inputs), axis=op.get_attr("axis")))


def stack(values, axis=0, name="stack"):
    values = [tensor(v) for v in values]
    return make("Pack", values, {"axis": int(axis)}, name=name)


def _unpack_infer(op):
    x = op.inputs[0]
    num, axis = op.get_attr("num"), op.get_attr("axis")
    if x.shape.dims is None:
        return [(x.dtype, unknown_shape())] * num
    dims = list(x.shape.dims)
    del dims[axis % len(dims)]
    return [(x.dtype, TensorShape(dims))] * num


@register_op("Unpack", infer=_unpack_infer, attrs=("num", "axis"))
def _unpack(m, x, num=0, axis=0):
    axis = axis % len(x.shape)
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(num))


@register_gradient("Unpack")
def _unpack_grad(op, *grads):
    grads = [g if g is not None else zeros_like(o) for g, o in zip(grads, op.outputs)]
    return [stack(grads, axis=op.get_attr("axis"))]


def unstack(value, num=None, axis=0, name="unstack"):
    value = tensor(value)
    if num is None:
        dims = value.shape.dims
        if dims is None or dims[axis] is None:
            raise InvalidArgumentError(f"Cannot infer num from shape {value.shape}")
        num = dims[axis]
    op = make_op("Unpack", [value], {"num": int(num), "axis": int(axis)}, name=name)
    return list(op.outputs)


# indexing and selection ops live in index_ops.py; re-exported here (tf.slice, tf.where, ...)
from xlapy.compat.v1.ops.index_ops import (  # noqa: E402,F401
    one_hot, pad, select, slice_, strided_slice, sum_to_shape, tile, where)
