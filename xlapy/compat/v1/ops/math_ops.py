"""Math ops: elementwise arithmetic and functions, comparisons, matmul, reductions, argmax.

Each kernel is written once against the array module `m` (numpy in the executor,
xlapy.numpy when a cluster is compiled). Gradient functions build TF-style gradient ops;
for broadcasting binary ops the reduction back to the input's shape is decided statically
when the partial shapes allow it (`x(?,10) + b(10)` needs Sum over axis 0 for b only),
else with TF's dynamic Shape / BroadcastGradientArgs / Sum / Reshape ops.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import (accumulate_f32, axis_value, binary_args, binary_fn,
                                         broadcasting, float_unary, ints, make, same_as_input,
                                         tensor, unary_fn)
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape

# ---- elementwise binary ---------------------------------------------------------------------


def _binary(op_type, fn, out_dtype=None):
    register_op(op_type, infer=broadcasting(out_dtype))(fn)


_binary("Add", lambda m, x, y: m.add(x, y))
_binary("Sub", lambda m, x, y: m.subtract(x, y))
_binary("Mul", lambda m, x, y: m.multiply(x, y))
_binary("RealDiv", lambda m, x, y: m.true_divide(x, y))
_binary("FloorDiv", lambda m, x, y: m.floor_divide(x, y))
_binary("FloorMod", lambda m, x, y: m.remainder(x, y))
_binary("Maximum", lambda m, x, y: m.maximum(x, y))
_binary("Minimum", lambda m, x, y: m.minimum(x, y))
_binary("Pow", lambda m, x, y: m.power(x, y))
_binary("SquaredDifference", lambda m, x, y: m.square(m.subtract(x, y)))
_binary("Equal", lambda m, x, y: m.equal(x, y), dtypes.bool)
_binary("NotEqual", lambda m, x, y: m.not_equal(x, y), dtypes.bool)
_binary("Less", lambda m, x, y: m.less(x, y), dtypes.bool)
_binary("LessEqual", lambda m, x, y: m.less_equal(x, y), dtypes.bool)
_binary("Greater", lambda m, x, y: m.greater(x, y), dtypes.bool)
_binary("GreaterEqual", lambda m, x, y: m.greater_equal(x, y), dtypes.bool)
_binary("LogicalAnd", lambda m, x, y: m.logical_and(x, y))
_binary("LogicalOr", lambda m, x, y: m.logical_or(x, y))
not_differentiable("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                   "LogicalAnd", "LogicalOr", "FloorDiv", "FloorMod")


def _one(x):
    return np.ones((), dtype=x.dtype)


# ---- elementwise unary ----------------------------------------------------------------------

def _unary(op_type, fn, floating=True):
    register_op(op_type, infer=float_unary if floating else same_as_input(0))(fn)


_unary("Neg", lambda m, x: m.negative(x), floating=False)
_unary("Abs", lambda m, x: m.abs(x), floating=False)
_unary("Sign", lambda m, x: m.sign(x), floating=False)
_unary("Square", lambda m, x: m.multiply(x, x), floating=False)
_unary("LogicalNot", lambda m, x: m.logical_not(x), floating=False)
_unary("Exp", lambda m, x: m.exp(x))
_unary("Log", lambda m, x: m.log(x))
_unary("Log1p", lambda m, x: m.log1p(x))
_unary("Sqrt", lambda m, x: m.sqrt(x))
_unary("Rsqrt", lambda m, x: m.true_divide(_one(x), m.sqrt(x)))
_unary("Reciprocal", lambda m, x: m.true_divide(_one(x), x))
_unary("Floor", lambda m, x: m.floor(x))
_unary("Ceil", lambda m, x: m.ceil(x))
_unary("Sin", lambda m, x: m.sin(x))
_unary("Cos", lambda m, x: m.cos(x))
not_differentiable("Floor", "Ceil", "LogicalNot")  # (Sign: a zero gradient, below)


@register_op("AddN", infer=lambda op: [(op.inputs[0].dtype, _merge_all(op.inputs))])
def _add_n(m, *xs):
    out = xs[0]
    for x in xs[1:]:
        out = m.add(out, x)
    return out


def _merge_all(ts):
    shape = TensorShape(None)
    for t in ts:
        if t.dtype != ts[0].dtype:
            raise InvalidTypeError(f"AddN inputs must have the same dtype, got "
                                   f"{ts[0].dtype.name} and {t.dtype.name}")
        shape = shape.merge_with(t.shape)
    return shape


# ---- matmul --------------------------------------------------------------------------------

def _matmul_infer(op):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if a.dtype != b.dtype:
        raise InvalidTypeError(f"Input 'b' of 'MatMul' Op has type {b.dtype.name} that does "
                               f"not match type {a.dtype.name} of argument 'a'.")
    sa, sb = a.shape.with_rank(2) if a.shape.ndims in (None, 2) else None, \
        b.shape.with_rank(2) if b.shape.ndims in (None, 2) else None
    if sa is None or sb is None:
        raise InvalidArgumentError(f"Shape must be rank 2 but is rank "
                                   f"{(a if sa is None else b).shape.ndims} for '{op.name}' "
                                   f"(op: 'MatMul') with input shapes: {a.shape.tf_str()}, "
                                   f"{b.shape.tf_str()}.")
    m_, ka = (sa.dims[1], sa.dims[0]) if ta else (sa.dims[0], sa.dims[1])
    kb, n_ = (sb.dims[1], sb.dims[0]) if tb else (sb.dims[0], sb.dims[1])
    if ka is not None and kb is not None and ka != kb:
        raise InvalidArgumentError(f"Dimensions must be equal, but are {ka} and {kb} for "
                                   f"'{op.name}' (op: 'MatMul') with input shapes: "
                                   f"{a.shape.tf_str()}, {b.shape.tf_str()}.")
    return [(a.dtype, TensorShape([m_, n_]))]


def _matmul_lowering(m, a, b, transpose_a=False, transpose_b=False):
    # one dot_general with the contracting dimensions chosen: no transpose is materialized
    return m.tensordot(a, b, axes=([0 if transpose_a else 1], [1 if transpose_b else 0]))


@register_op("MatMul", infer=_matmul_infer, attrs=("transpose_a", "transpose_b"),
             lowering=_matmul_lowering)
@accumulate_f32
def _matmul(m, a, b, transpose_a=False, transpose_b=False):
    if transpose_a:
        a = m.transpose(a)
    if transpose_b:
        b = m.transpose(b)
    return m.matmul(a, b)


@register_gradient("MatMul")
def _matmul_grad(op, g):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not ta and not tb:
        return [matmul(g, b, transpose_b=True), matmul(a, g, transpose_a=True)]
    if not ta and tb:
        return [matmul(g, b), matmul(g, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, g, transpose_b=True), matmul(a, g)]
    return [matmul(b, g, transpose_a=True, transpose_b=True),
            matmul(g, a, transpose_a=True, transpose_b=True)]


# ---- reductions ------------------------------------------------------------------------------

def _reduce_infer(op):
    x, axis = op.inputs
    keep = op.get_attr("keep_dims")
    rank = x.shape.ndims
    axes = axis_value(axis, rank, f"'{op.name}' (op: '{op.type}')")
    if axes is None or rank is None:
        return [(x.dtype, unknown_shape(rank if keep else None))]
    dims = x.shape.dims
    out = [1 if i in axes else d for i, d in enumerate(dims)] if keep else \
        [d for i, d in enumerate(dims) if i not in axes]
    return [(x.dtype, TensorShape(out))]


def _reducer(op_type, fn):
    register_op(op_type, infer=_reduce_infer, attrs=("keep_dims",),
                const_inputs=(1,))(accumulate_f32(fn))


_reducer("Sum", lambda m, x, axis, keep_dims=False:
         m.sum(x, axis=ints(axis), keepdims=keep_dims, dtype=x.dtype))
_reducer("Prod", lambda m, x, axis, keep_dims=False:
         m.prod(x, axis=ints(axis), keepdims=keep_dims, dtype=x.dtype))
_reducer("Max", lambda m, x, axis, keep_dims=False: m.max(x, axis=ints(axis), keepdims=keep_dims))
_reducer("Min", lambda m, x, axis, keep_dims=False: m.min(x, axis=ints(axis), keepdims=keep_dims))
_reducer("All", lambda m, x, axis, keep_dims=False: m.all(x, axis=ints(axis), keepdims=keep_dims))
_reducer("Any", lambda m, x, axis, keep_dims=False: m.any(x, axis=ints(axis), keepdims=keep_dims))


@register_op("Mean", infer=_reduce_infer, attrs=("keep_dims",), const_inputs=(1,))
@accumulate_f32
def _mean(m, x, axis, keep_dims=False):
    if x.dtype.kind == "f":
        return m.mean(x, axis=ints(axis), keepdims=keep_dims)
    s = m.sum(x, axis=ints(axis), keepdims=keep_dims, dtype=x.dtype)
    n = 1
    for a in ints(axis):
        n *= x.shape[a]
    return m.floor_divide(s, np.asarray(max(n, 1), x.dtype))


not_differentiable("All", "Any")  # (Prod: its gradient below)


def _arg_infer(op):
    x, axis = op.inputs
    rank = x.shape.ndims
    axes = axis_value(axis, rank, f"'{op.name}' (op: '{op.type}')")
    out_t = op.get_attr("output_type")
    if axes is None or rank is None:
        return [(out_t, unknown_shape(None if rank is None else rank - 1))]
    return [(out_t, TensorShape([d for i, d in enumerate(x.shape.dims) if i != axes[0]]))]


@register_op("ArgMax", infer=_arg_infer, attrs=("output_type",), const_inputs=(1,))
def _argmax(m, x, axis, output_type=dtypes.int64):
    return m.astype(m.argmax(x, axis=int(axis)), output_type.np)


@register_op("ArgMin", infer=_arg_infer, attrs=("output_type",), const_inputs=(1,))
def _argmin(m, x, axis, output_type=dtypes.int64):
    return m.astype(m.argmin(x, axis=int(axis)), output_type.np)


not_differentiable("ArgMax", "ArgMin")


# ---- user-facing functions ------------------------------------------------------------------

add = binary_fn("Add")
subtract = sub = binary_fn("Sub")
multiply = mul = binary_fn("Mul")
realdiv = binary_fn("RealDiv")
floordiv = floor_div = binary_fn("FloorDiv")
floormod = mod = binary_fn("FloorMod")
maximum = binary_fn("Maximum")
minimum = binary_fn("Minimum")
pow = binary_fn("Pow")
squared_difference = binary_fn("SquaredDifference")
equal = binary_fn("Equal")
not_equal = binary_fn("NotEqual")
less = binary_fn("Less")
less_equal = binary_fn("LessEqual")
greater = binary_fn("Greater")
greater_equal = binary_fn("GreaterEqual")
logical_and = binary_fn("LogicalAnd")
logical_or = binary_fn("LogicalOr")


def truediv(x, y, name=None):
    """x / y; integer operands are converted to floating point first (TF 1.x rule)."""
    x, y = binary_args(x, y, "RealDiv")
    if x.dtype.is_integer:
        target = dtypes.float32 if x.dtype.size <= 2 else dtypes.float64
        x, y = cast(x, target), cast(y, target)
    return make("RealDiv", [x, y], name=name)


divide = div = truediv


negative = neg = unary_fn("Neg")
def abs(x, name=None):
    """|x|; of a complex tensor, its magnitude in the real dtype (ComplexAbs), as TF's."""
    x = tensor(x)
    if x.dtype.is_complex:
        return make("ComplexAbs", [x], name=name or "ComplexAbs")
    return make("Abs", [x], name=name)
sign = unary_fn("Sign")
square = unary_fn("Square")
exp = unary_fn("Exp")
log = unary_fn("Log")
log1p = unary_fn("Log1p")
sqrt = unary_fn("Sqrt")
rsqrt = unary_fn("Rsqrt")
reciprocal = unary_fn("Reciprocal")
floor = unary_fn("Floor")
ceil = unary_fn("Ceil")
sin = unary_fn("Sin")
cos = unary_fn("Cos")
logical_not = unary_fn("LogicalNot")


def add_n(inputs, name=None):
    inputs = [tensor(i) for i in inputs]
    if len(inputs) == 1:
        return inputs[0]
    return make("AddN", inputs, name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    a, b = binary_args(a, b, "MatMul")
    if adjoint_a or adjoint_b:  # the adjoint of a complex matrix: conjugated, then transposed
        from xlapy.compat.v1.ops.spectral_ops import conj  # (complex adjoints only)
        a = conj(a) if adjoint_a else a
        b = conj(b) if adjoint_b else b
    if (a.shape.ndims or 2) > 2 or (b.shape.ndims or 2) > 2:  # batched: BatchMatMulV2
        from xlapy.compat.v1.ops.batch_matmul_ops import batch_matmul
        return batch_matmul(a, b, transpose_a or adjoint_a, transpose_b or adjoint_b, name)
    return make("MatMul", [a, b], {"transpose_a": bool(transpose_a or adjoint_a),
                                   "transpose_b": bool(transpose_b or adjoint_b)}, name=name)


def cast(x, dtype, name=None):
    x = tensor(x)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    return make("Cast", [x], {"DstT": dtype, "SrcT": x.dtype}, name=name or "Cast")


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


def _reduction_axes(x: Tensor, axis):
    if axis is None:
        if x.shape.ndims is None:
            return None
        axis = list(range(x.shape.ndims))
    if isinstance(axis, Tensor):
        return axis
    return tensor(np.asarray(axis, dtype=np.int32))


def _reduce(op_type):
    def f(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
          keep_dims=None):
        x = tensor(input_tensor)
        if axis is None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else (keep_dims or False))
        axes = _reduction_axes(x, axis)
        if axes is None:  # unknown rank, all axes: flatten first
            if keep:
                raise InvalidArgumentError(f"reduce with keepdims needs the rank of {x.name}")
            from xlapy.compat.v1.ops.array_ops import reshape
            x, axes = reshape(x, [-1]), tensor(np.asarray([0], np.int32))
        return make(op_type, [x, axes], {"keep_dims": keep}, name=name)
    f.__name__ = "reduce_" + op_type.lower()
    return f


reduce_sum = _reduce("Sum")
reduce_mean = _reduce("Mean")
reduce_max = _reduce("Max")
reduce_min = _reduce("Min")
reduce_prod = _reduce("Prod")
reduce_all = _reduce("All")
reduce_any = _reduce("Any")


def _argfn(op_type):
    def f(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):
        x = tensor(input)
        if axis is None:
            axis = dimension if dimension is not None else 0
        axis = axis if isinstance(axis, Tensor) else tensor(np.asarray(axis, np.int32))
        return make(op_type, [x, axis], {"output_type": dtypes.as_dtype(output_type)},
                    name=name)
    f.__name__ = op_type.lower()
    return f


argmax = _argfn("ArgMax")
argmin = _argfn("ArgMin")


def scalar_mul(scalar, x, name=None):
    return multiply(tensor(scalar, dtype=tensor(x).dtype), x, name=name)


# ---- gradients ---------------------------------------------------------------------------------

_ABSENT = object()


def sum_to(grad: Tensor, x: Tensor, other: Tensor) -> Tensor:
    """Reduce `grad` (shaped like broadcast(x, other)) back to x's shape."""
    xs, ys = x.shape.dims, other.shape.dims
    if xs is not None and ys is not None:
        n = max(len(xs), len(ys))
        drop = list(range(n - len(xs)))
        keep = []
        static = True
        for i, d in enumerate(xs):
            j = i + n - len(xs)
            k = j - (n - len(ys))
            e = ys[k] if k >= 0 else _ABSENT
            if d == 1:
                if not (e is _ABSENT or e == 1):
                    keep.append(j)  # summing a size-1 axis with keepdims is harmless
            elif d is None and not (e is _ABSENT or e == 1):
                static = False  # x's dim may be 1 at run time: decide dynamically
                break
        if static:
            g = grad
            if keep:
                g = reduce_sum(g, keep, keepdims=True)
            if drop:
                g = reduce_sum(g, drop)
            return g
    from xlapy.compat.v1.ops.array_ops import broadcast_gradient_args, reshape, shape
    sx, sy = shape(x), shape(other)
    rx, _ = broadcast_gradient_args(sx, sy)
    return reshape(make("Sum", [grad, rx], {"keep_dims": False}), sx)


@register_gradient("Add")
def _add_grad(op, g):
    x, y = op.inputs
    return [sum_to(g, x, y), sum_to(g, y, x)]


@register_gradient("Sub")
def _sub_grad(op, g):
    x, y = op.inputs
    return [sum_to(g, x, y), negative(sum_to(g, y, x))]


@register_gradient("Mul")
def _mul_grad(op, g):
    x, y = op.inputs
    return [sum_to(multiply(g, y), x, y), sum_to(multiply(x, g), y, x)]


@register_gradient("RealDiv")
def _div_grad(op, g):
    x, y = op.inputs
    return [sum_to(realdiv(g, y), x, y),
            sum_to(multiply(g, realdiv(realdiv(negative(x), y), y)), y, x)]


def _mask(cond, like):
    return cast(cond, like.dtype)


@register_gradient("Maximum")
def _max_grad(op, g):
    x, y = op.inputs
    mx = _mask(greater_equal(x, y), g)
    return [sum_to(multiply(g, mx), x, y), sum_to(multiply(g, subtract(1.0, mx)), y, x)]


@register_gradient("Minimum")
def _min_grad(op, g):
    x, y = op.inputs
    mx = _mask(less_equal(x, y), g)
    return [sum_to(multiply(g, mx), x, y), sum_to(multiply(g, subtract(1.0, mx)), y, x)]


@register_gradient("Pow")
def _pow_grad(op, g):
    x, y = op.inputs
    z = op.outputs[0]
    gx = multiply(g, multiply(y, pow(x, subtract(y, 1.0))))
    pos = _mask(greater(x, 0.0), x)
    safe_log = log(add(multiply(x, pos), subtract(1.0, pos)))  # log(x) where x > 0, else 0
    gy = multiply(g, multiply(z, safe_log))
    return [sum_to(gx, x, y), sum_to(gy, y, x)]


@register_gradient("SquaredDifference")
def _sqdiff_grad(op, g):
    x, y = op.inputs
    d = multiply(multiply(g, 2.0), subtract(x, y))
    return [sum_to(d, x, y), negative(sum_to(d, y, x))]


@register_gradient("AddN")
def _add_n_grad(op, g):
    return [g] * len(op.inputs)


@register_gradient("Neg")
def _neg_grad(op, g):
    return [negative(g)]


@register_gradient("Abs")
def _abs_grad(op, g):
    return [multiply(g, sign(op.inputs[0]))]


@register_gradient("Square")
def _square_grad(op, g):
    return [multiply(g, multiply(op.inputs[0], 2.0))]


@register_gradient("Exp")
def _exp_grad(op, g):
    return [multiply(g, op.outputs[0])]


@register_gradient("Log")
def _log_grad(op, g):
    return [multiply(g, reciprocal(op.inputs[0]))]


@register_gradient("Log1p")
def _log1p_grad(op, g):
    return [multiply(g, reciprocal(add(op.inputs[0], 1.0)))]


@register_gradient("Sqrt")
def _sqrt_grad(op, g):
    return [realdiv(multiply(g, 0.5), op.outputs[0])]


@register_gradient("Rsqrt")
def _rsqrt_grad(op, g):
    y = op.outputs[0]
    return [multiply(g, multiply(multiply(y, multiply(y, y)), -0.5))]


@register_gradient("Reciprocal")
def _reciprocal_grad(op, g):
    y = op.outputs[0]
    return [negative(multiply(g, multiply(y, y)))]


@register_gradient("Sin")
def _sin_grad(op, g):
    return [multiply(g, cos(op.inputs[0]))]


@register_gradient("Cos")
def _cos_grad(op, g):
    return [negative(multiply(g, sin(op.inputs[0])))]


def _kept_shape_and_input_shape(x: Tensor, axes: tuple | None, axis_t: Tensor):
    """(shape of the reduction with keepdims, shape of x) as tensors (constants if known)."""
    from xlapy.compat.v1.ops.array_ops import reduced_shape, shape
    dims = x.shape.dims
    sx = tensor(np.asarray(dims, np.int32)) if x.shape.is_fully_defined() else None
    if axes is not None and dims is not None and all(
            d is not None for i, d in enumerate(dims) if i not in axes):
        kept = tensor(np.asarray([1 if i in axes else d for i, d in enumerate(dims)], np.int32))
        return kept, (sx if sx is not None else shape(x))
    sx = sx if sx is not None else shape(x)
    return reduced_shape(sx, axis_t), sx


def _sum_grad_impl(op, g):
    from xlapy.compat.v1.ops.array_ops import broadcast_to, reshape
    x, axis_t = op.inputs
    axes = axis_value(axis_t, x.shape.ndims, op.name)
    kept, sx = _kept_shape_and_input_shape(x, axes, axis_t)
    if not op.get_attr("keep_dims"):
        g = reshape(g, kept)
    return broadcast_to(g, sx)


@register_gradient("Sum")
def _sum_grad(op, g):
    return [_sum_grad_impl(op, g), None]


@register_gradient("Prod")
def _prod_grad(op, g):
    """d prod / d x_i = the product of the other elements of x_i's reduction, from exclusive
    cumulative products from both ends (as TF: no division, so zeros are handled): the
    reduced axes moved last and flattened into one."""
    from xlapy.compat.v1.ops.array_ops import reshape, transpose
    from xlapy.compat.v1.ops.manip_ops import cumprod  # (Prod's gradient only)
    x, axis_t = op.inputs
    rank = x.shape.ndims
    axes = axis_value(axis_t, rank, op.name)
    if rank is None or axes is None or not x.shape.is_fully_defined():
        raise InvalidArgumentError(f"the gradient of '{op.name}' (op: 'Prod') needs the input's "
                                   "shape and the reduction axes known at graph construction")
    dims = x.shape.dims
    red = sorted(set(a % rank for a in axes)) if rank else []
    kept = [i for i in range(rank) if i not in red]
    perm = kept + red
    n_kept = int(np.prod([dims[i] for i in kept])) if kept else 1
    n_red = int(np.prod([dims[i] for i in red])) if red else 1
    xt = reshape(transpose(x, perm), [n_kept, n_red])
    others = multiply(cumprod(xt, axis=1, exclusive=True),
                      cumprod(xt, axis=1, exclusive=True, reverse=True))
    back = transpose(reshape(others, [dims[i] for i in perm]),
                     [perm.index(i) for i in range(rank)])
    return [multiply(_sum_grad_impl(op, g), back), None]


@register_gradient("Sign")
def _sign_grad(op, g):
    from xlapy.compat.v1.ops.array_ops import zeros_like  # (a zero gradient, as TF's)
    return [zeros_like(op.inputs[0])]


@register_gradient("Mean")
def _mean_grad(op, g):
    from xlapy.compat.v1.ops.array_ops import size
    x, y = op.inputs[0], op.outputs[0]
    gs = _sum_grad_impl(op, g)
    nx, ny = x.shape.num_elements(), y.shape.num_elements()
    if nx is not None and ny is not None:
        count = tensor(max(nx // max(ny, 1), 1), dtype=g.dtype)
    elif ny == 1:
        count = cast(size(x), g.dtype)
    else:
        count = cast(maximum(floordiv(size(x), maximum(size(y), 1)), 1), g.dtype)
    return [realdiv(gs, count), None]


def _minmax_grad(op, g):
    from xlapy.compat.v1.ops.array_ops import broadcast_to, reshape
    x, axis_t = op.inputs
    y = op.outputs[0]
    axes = axis_value(axis_t, x.shape.ndims, op.name)
    kept, sx = _kept_shape_and_input_shape(x, axes, axis_t)
    if not op.get_attr("keep_dims"):
        y, g = reshape(y, kept), reshape(g, kept)
    ind = cast(equal(broadcast_to(y, sx), x), g.dtype)
    num = make("Sum", [ind, axis_t], {"keep_dims": True})
    return [multiply(realdiv(ind, num), broadcast_to(g, sx)), None]


register_gradient("Max")(_minmax_grad)
register_gradient("Min")(_minmax_grad)


# ---- operator overloads on Tensor ------------------------------------------------------------

def _install_operators():
    def rev(fn):
        return lambda self, other: fn(other, self)

    table = {"add": add, "sub": subtract, "mul": multiply, "truediv": truediv,
             "floordiv": floordiv, "mod": floormod, "pow": pow, "matmul": matmul}
    for name, fn in table.items():
        setattr(Tensor, f"__{name}__", (lambda f: lambda self, other: f(self, other))(fn))
        setattr(Tensor, f"__r{name}__", rev(fn))
    for name, fn in {"lt": less, "le": less_equal, "gt": greater, "ge": greater_equal}.items():
        setattr(Tensor, f"__{name}__", (lambda f: lambda self, other: f(self, other))(fn))
    Tensor.__and__ = lambda self, other: logical_and(self, other)
    Tensor.__rand__ = lambda self, other: logical_and(other, self)
    Tensor.__or__ = lambda self, other: logical_or(self, other)
    Tensor.__ror__ = lambda self, other: logical_or(other, self)
    Tensor.__invert__ = lambda self: logical_not(self)
    Tensor.__neg__ = lambda self: negative(self)
    Tensor.__abs__ = lambda self: abs(self)

    def getitem(self, key):
        from xlapy.compat.v1.ops.array_ops import strided_slice
        return strided_slice(self, key)
    Tensor.__getitem__ = getitem


_install_operators()
