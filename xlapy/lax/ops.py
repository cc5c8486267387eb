"""Array operations of xlapy.lax, named and shaped like jax.lax.

These are the strict primitives (xlapy.frontend.primitives) with jax.lax's signatures:
elementwise operands must have equal shapes and dtypes (a Python scalar is "weak" and takes
the other operand's dtype and shape), nothing is promoted. On top of the primitives:
convolutions (conv_general_dilated, conv, conv_with_general_padding, conv_transpose) with
'SAME'/'VALID' padding resolved here, reduce_window / reduce with the add/max/min monoids,
dynamic slicing (wrapping xlapy.frontend.primitives.indexing), stop_gradient and clamp.
"""

from __future__ import annotations

import operator

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import Tracer
from xlapy.frontend.precision import RoundingMethod, canonicalize as _precision
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S
from xlapy.frontend.primitives.conv import (ConvDimensionNumbers, conv_dimension_numbers,
                                            conv_general_dilated as _conv_general_dilated,
                                            padtype_to_pads)
from xlapy.frontend.checkpoint import optimization_barrier as _barrier
from xlapy.frontend.primitives.misc import clamp as _clamp, stop_gradient
from xlapy.frontend.primitives.windowed import reduce_window as _reduce_window

_PY_SCALARS = (bool, int, float)


def _arr(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def _weak(*xs):
    """Python scalars take the dtype and shape of the first array operand."""
    ref = next((x for x in xs if not isinstance(x, _PY_SCALARS)), None)
    if ref is None:
        return [np.asarray(x) for x in xs]
    a = B.aval_of(ref)
    return [B.full(a.shape, x, a.dtype) if isinstance(x, _PY_SCALARS) else _arr(x) for x in xs]


def _unary(fn):
    def f(x):
        return fn(_arr(x))
    f.__name__ = getattr(fn, "__name__", "op")
    return f


def _binary(fn):
    def f(x, y):
        return fn(*_weak(x, y))
    return f


# ---- elementwise ------------------------------------------------------------------------------

neg, abs, sign, floor, ceil = map(_unary, (B.neg, B.abs_, B.sign, B.floor, B.ceil))
exp, expm1, log, log1p, logistic = map(_unary, (B.exp, B.expm1, B.log, B.log1p, B.logistic))
tanh, sin, cos, tan, sqrt, rsqrt = map(_unary, (B.tanh, B.sin, B.cos, B.tan, B.sqrt, B.rsqrt))
cbrt, erf, is_finite = map(_unary, (B.cbrt, B.erf, B.is_finite))
bitwise_not = _unary(B.not_)
add, sub, mul, div, rem, pow = map(_binary, (B.add, B.sub, B.mul, B.div, B.rem,
                                             B.pow_))
max, min, atan2 = map(_binary, (B.max_, B.min_, B.atan2))
bitwise_and, bitwise_or, bitwise_xor = map(_binary, (B.and_, B.or_, B.xor))
shift_left, shift_right_logical, shift_right_arithmetic = map(
    _binary, (B.shift_left, B.shift_right_logical, B.shift_right_arithmetic))
eq, ne, lt, le, gt, ge = map(_binary, (B.eq, B.ne, B.lt, B.le, B.gt, B.ge))


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """rounding_method: RoundingMethod.AWAY_FROM_ZERO (0, the default as in JAX) or
    TO_NEAREST_EVEN (1)."""
    try:
        method = RoundingMethod(rounding_method)
    except ValueError:
        raise XlapyError(f"round: rounding_method must be a lax.RoundingMethod "
                         f"(AWAY_FROM_ZERO or TO_NEAREST_EVEN), got {rounding_method!r}") from None
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return B.round_even(_arr(x))
    return B.round_afz(_arr(x))


def exp2(x):
    x = _arr(x)
    return B.exp(B.mul(x, B.full_like(x, np.log(2))))


def square(x):
    x = _arr(x)
    return B.mul(x, x)


def reciprocal(x):
    x = _arr(x)
    return B.div(B.full_like(x, 1), x)


def integer_pow(x, y: int):
    """x ** y for a static integer y, by repeated squaring (exact gradient at x = 0)."""
    x, y = _arr(x), int(y)
    if y == 0:
        return B.full_like(x, 1)
    base, acc, n = x, None, _abs_int(y)
    while n:
        if n & 1:
            acc = base if acc is None else B.mul(acc, base)
        n >>= 1
        if n:
            base = B.mul(base, base)
    return acc if y > 0 else B.div(B.full_like(acc, 1), acc)


def _abs_int(n: int) -> int:
    return -n if n < 0 else n


def select(pred, on_true, on_false):
    on_true, on_false = _weak(on_true, on_false)
    return B.select(_arr(pred), on_true, on_false)


def select_n(which, *cases):
    """cases[which]: `which` is bool (two cases) or an integer array."""
    which = _arr(which)
    if not cases:
        raise XlapyError("select_n needs at least one case")
    cases = _weak(*cases)
    if len(cases) == 1:
        return cases[0]
    if B.aval_of(which).dtype == np.bool_:
        if len(cases) != 2:
            raise XlapyError(f"select_n with a boolean selector needs 2 cases, got {len(cases)}")
        return B.select(which, cases[1], cases[0])
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = B.select(B.eq(which, B.full_like(which, i)), cases[i], out)
    return out


def clamp(min, x, max):
    """min(max(x, lo), hi); scalar bounds broadcast to x's shape."""
    x = _arr(x)
    a = B.aval_of(x)
    lo, hi = (B.broadcast_in_dim(B.convert(_arr(v), a.dtype), a.shape, ())
              if np.ndim(v) == 0 and a.shape != () else _weak(v, x)[0] for v in (min, max))
    return _clamp(lo, x, hi)


def convert_element_type(x, new_dtype):
    return B.convert(_arr(x), new_dtype)


# ---- shapes -----------------------------------------------------------------------------------

def broadcast(x, sizes):
    """Prepend the dimensions `sizes` (jax.lax.broadcast)."""
    x = _arr(x)
    nd = B.aval_of(x).ndim
    shape = tuple(sizes) + B.aval_of(x).shape
    return B.broadcast_in_dim(x, shape, tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    return B.broadcast_in_dim(_arr(x), shape, broadcast_dimensions)


def reshape(x, new_sizes, dimensions=None):
    x = _arr(x)
    if dimensions is not None:
        x = S.transpose(x, dimensions)
    return S.reshape(x, new_sizes)


def transpose(x, permutation):
    return S.transpose(_arr(x), permutation)


def squeeze(x, dimensions):
    x = _arr(x)
    shape = B.aval_of(x).shape
    dims = {int(d) % len(shape) for d in dimensions} if shape else set()
    for d in dims:
        if shape[d] != 1:
            raise XlapyError(f"squeeze: dimension {d} of shape {list(shape)} is not 1")
    return S.reshape(x, tuple(s for i, s in enumerate(shape) if i not in dims))


def expand_dims(x, dimensions):
    x = _arr(x)
    shape = list(B.aval_of(x).shape)
    n = len(shape) + len(dimensions)
    for d in sorted(int(d) % n for d in dimensions):
        shape.insert(d, 1)
    return S.reshape(x, shape)


def slice(x, start_indices, limit_indices, strides=None):
    return S.slice_(_arr(x), start_indices, limit_indices, strides)


def slice_in_dim(x, start_index, limit_index, stride=1, axis=0):
    x = _arr(x)
    shape = B.aval_of(x).shape
    axis = int(axis) % len(shape)
    n = shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = (start + n if start < 0 else start), (limit + n if limit < 0 else limit)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return S.slice_(x, starts, limits, strides)


def index_in_dim(x, index, axis=0, keepdims=True):
    x = _arr(x)
    n = B.aval_of(x).shape[int(axis)]
    index = int(index) + n if index < 0 else int(index)
    r = slice_in_dim(x, index, index + 1, 1, axis)
    return r if keepdims else squeeze(r, (axis,))


def pad(x, padding_value, padding_config):
    x, v = _arr(x), padding_value
    if isinstance(v, _PY_SCALARS):
        v = np.asarray(v, B.aval_of(x).dtype)
    return S.pad(x, _arr(v), padding_config)


def concatenate(operands, dimension):
    return S.concatenate([_arr(o) for o in operands], dimension)


def rev(x, dimensions):
    return S.rev(_arr(x), dimensions)


def iota(dtype, size):
    return S.iota(dtype, (int(size),), 0)


def broadcasted_iota(dtype, shape, dimension):
    return S.iota(dtype, shape, dimension)


_DEFAULT_DTYPES = {bool: np.bool_, int: np.int32, float: np.float32}  # JAX's, as the builder


def full(shape, fill_value, dtype=None):
    if dtype is None:
        dtype = _DEFAULT_DTYPES.get(type(fill_value)) or np.asarray(fill_value).dtype
    return B.full(tuple(int(d) for d in shape), fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None):
    a = B.aval_of(_arr(x))
    return B.full(a.shape if shape is None else tuple(shape), fill_value,
                  a.dtype if dtype is None else dtype)


def zeros_like_array(x):
    return full_like(x, 0)


# ---- contractions and reductions --------------------------------------------------------------

def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    return S.dot_general(_arr(lhs), _arr(rhs), dimension_numbers, preferred_element_type,
                         _precision(precision, "dot_general"))


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix product: lhs's last dimension with rhs's first."""
    lhs, rhs = _arr(lhs), _arr(rhs)
    nl = B.aval_of(lhs).ndim
    return S.dot_general(lhs, rhs, (((nl - 1,), (0,)), ((), ())), preferred_element_type,
                         _precision(precision, "dot"))


def _axes(axes):
    return tuple(int(a) for a in axes)


def reduce_sum(x, axes):
    return S.reduce_sum(_arr(x), _axes(axes))


def reduce_max(x, axes):
    return S.reduce_max(_arr(x), _axes(axes))


def reduce_min(x, axes):
    return S.reduce_min(_arr(x), _axes(axes))


def reduce_prod(x, axes):
    return S.reduce_prod(_arr(x), _axes(axes))


def reduce_and(x, axes):
    return S.reduce_and(_arr(x), _axes(axes))


def reduce_or(x, axes):
    return S.reduce_or(_arr(x), _axes(axes))


def argmax(x, axis, index_dtype):
    return S.argmax(_arr(x), axis, index_dtype)


def argmin(x, axis, index_dtype):
    return S.argmin(_arr(x), axis, index_dtype)


def _monoid(computation) -> str:
    import xlapy.numpy as xnp
    if isinstance(computation, str) and computation in ("sum", "max", "min"):
        return computation
    table = {"sum": (add, B.add, operator.add, xnp.add), "max": (max, B.max_, xnp.maximum),
             "min": (min, B.min_, xnp.minimum)}
    for kind, fns in table.items():
        if any(computation is f for f in fns):
            return kind
    name = getattr(computation, "__name__", None)
    raise XlapyError(f"reduce_window/reduce: computation {name or computation!r} is not "
                     "supported; use xlapy.lax.add, max or min (or 'sum'/'max'/'min')")


def _apply_init(kind, r, init_value, what):
    init = np.asarray(init_value)
    a = B.aval_of(r)
    identity = {"sum": 0, "max": -np.inf if a.dtype.kind == "f" else None,
                "min": np.inf if a.dtype.kind == "f" else None}[kind]
    if isinstance(init_value, Tracer):
        raise XlapyError(f"{what}: the init value must be a concrete constant")
    if kind == "sum":
        if init != 0:
            raise XlapyError(f"{what}: a sum needs init value 0, got {init_value}")
        return r
    if identity is not None and init == identity:
        return r
    # max/min with another init: the result is never below (above) it
    bound = B.full(a.shape, init.astype(a.dtype), a.dtype)
    return B.max_(r, bound) if kind == "max" else B.min_(r, bound)


def reduce(operands, init_values, computation, dimensions):
    """jax.lax.reduce for one operand with the add / max / min monoid."""
    if isinstance(operands, (list, tuple)):
        if len(operands) != 1:
            raise XlapyError("reduce: only one operand is supported (use argmax/argmin for "
                             "value-index reductions)")
        operands, init_values = operands[0], init_values[0]
    kind = _monoid(computation)
    fn = {"sum": S.reduce_sum, "max": S.reduce_max, "min": S.reduce_min}[kind]
    return _apply_init(kind, fn(_arr(operands), _axes(dimensions)), init_values, "reduce")


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """jax.lax.reduce_window with the add / max / min monoid; padding is 'SAME',
    'SAME_LOWER', 'VALID' or (low, high) pairs."""
    x = _arr(operand)
    a = B.aval_of(x)
    ones = (1,) * a.ndim
    strides = ones if window_strides is None else tuple(window_strides)
    wd = ones if window_dilation is None else tuple(window_dilation)
    if isinstance(padding, str):
        win = [1 + d * (w - 1) for w, d in zip(window_dimensions, wd)]
        padding = padtype_to_pads(a.shape, win, strides, padding)
    kind = _monoid(computation)
    r = _reduce_window(kind, x, window_dimensions, strides, padding, base_dilation, wd)
    return _apply_init(kind, r, init_value, "reduce_window")


# ---- convolutions -----------------------------------------------------------------------------

def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    return _conv_general_dilated(_arr(lhs), _arr(rhs), window_strides, padding, lhs_dilation,
                                 rhs_dilation, dimension_numbers, feature_group_count,
                                 batch_group_count, preferred_element_type,
                                 _precision(precision, "conv_general_dilated"))


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """NCHW input, OIHW kernel: conv_general_dilated with default dimension numbers."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + (k - s if k > s else 0)
        pad_a = k - 1
    else:
        raise XlapyError(f"conv_transpose: unknown padding {padding!r}")
    return pad_a, pad_len - pad_a


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """jax.lax.conv_transpose: a fractionally strided convolution (lhs dilated by strides).
    String padding is the forward convolution's; pairs are the transposed one's."""
    lhs, rhs = _arr(lhs), _arr(rhs)
    nd = B.aval_of(lhs).ndim
    if dimension_numbers is None:
        defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if nd not in defaults:
            raise XlapyError(f"conv_transpose: no default dimension numbers for rank {nd}")
        dimension_numbers = defaults[nd]
    dn = conv_dimension_numbers(B.aval_of(lhs).shape, B.aval_of(rhs).shape, dimension_numbers)
    ksp = [B.aval_of(rhs).shape[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * (nd - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if isinstance(padding, str):
        eff = [1 + r * (k - 1) for k, r in zip(ksp, rhs_dilation)]
        padding = [_conv_transpose_padding(k, s, padding.upper()) for k, s in zip(eff, strides)]
    if transpose_kernel:
        rhs = S.rev(rhs, dn.rhs_spec[2:])
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = S.transpose(rhs, perm)
    return _conv_general_dilated(lhs, rhs, (1,) * (nd - 2), padding, tuple(strides),
                                 rhs_dilation, dn, 1, 1, preferred_element_type,
                                 _precision(precision, "conv_transpose"))


# ---- dynamic slicing (the primitives live in xlapy.frontend.primitives.indexing) ---------------

def _indexing():
    try:
        from xlapy.frontend.primitives import indexing
    except ImportError as e:  # pragma: no cover - only while the module is being written
        raise XlapyError(f"dynamic slicing is not available: {e}") from None
    return indexing


def _starts(start_indices, shape):
    """One scalar start per dimension; negative starts count from the end (JAX's
    allow_negative_indices=True), then the primitive clamps them so the slice fits."""
    if isinstance(start_indices, (Tracer, np.ndarray)):
        a = B.aval_of(start_indices)
        starts = [start_indices] if a.ndim == 0 else [
            S.reshape(S.slice_(start_indices, (i,), (i + 1,)), ()) for i in range(a.shape[0])]
    else:
        starts = list(start_indices)
    if len(starts) != len(shape):
        raise XlapyError(f"dynamic slicing: {len(starts)} start indices for an operand of "
                         f"shape {list(shape)}")
    out = []
    for s, d in zip(starts, shape):
        if isinstance(s, Tracer):
            if s.dtype.kind == "i":
                s = B.select(B.lt(s, B.zeros_like(s)), B.add(s, B.full_like(s, d)), s)
            out.append(s)
        else:
            v = np.asarray(s)
            out.append(v + d if v.dtype.kind == "i" and v < 0 else v)
    return out


def dynamic_slice(operand, start_indices, slice_sizes):
    """operand[start:start+size] per dimension; starts are clamped so the slice fits."""
    operand = _arr(operand)
    return _indexing().dynamic_slice(operand, _starts(start_indices, B.aval_of(operand).shape),
                                     tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand, update, start_indices):
    """operand with `update` written at the (clamped) start indices."""
    operand = _arr(operand)
    return _indexing().dynamic_update_slice(operand, _arr(update),
                                            _starts(start_indices, B.aval_of(operand).shape))


def _zero_index(like):
    return np.zeros((), B.aval_of(like).dtype if isinstance(like, Tracer)
                    else np.asarray(like).dtype)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    operand = _arr(operand)
    shape = B.aval_of(operand).shape
    axis = int(axis) % len(shape)
    starts = [_zero_index(start_index)] * len(shape)
    starts[axis] = _arr(start_index)
    sizes = list(shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    r = dynamic_slice_in_dim(operand, index, 1, axis)
    return r if keepdims else squeeze(r, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    operand = _arr(operand)
    n = B.aval_of(operand).ndim
    axis = int(axis) % n
    starts = [_zero_index(start_index)] * n
    starts[axis] = _arr(start_index)
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis):
    update = _arr(update)
    n = B.aval_of(_arr(operand)).ndim
    if B.aval_of(update).ndim == n - 1:
        update = expand_dims(update, (int(axis) % n,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)


def optimization_barrier(operand):
    """operand (a pytree of arrays) unchanged; under jit, XLA may not move computations
    across the barrier nor merge them with computations on the original values (as
    jax.lax.optimization_barrier; checkpoint's recomputation reads through one)."""
    from xlapy.frontend import pytree
    leaves, tree = pytree.flatten(operand)
    vals = [x if isinstance(x, Tracer) else np.asarray(x) for x in leaves]
    return pytree.unflatten(tree, _barrier(vals))


__all__ = [
    # elementwise
    "neg", "abs", "sign", "floor", "ceil", "round", "exp", "exp2", "expm1", "log", "log1p",
    "logistic", "tanh", "sin", "cos", "tan", "sqrt", "rsqrt", "cbrt", "erf", "is_finite",
    "square", "reciprocal", "integer_pow", "add", "sub", "mul", "div", "rem", "pow", "max",
    "min", "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left",
    "shift_right_logical", "shift_right_arithmetic", "eq", "ne", "lt", "le", "gt", "ge",
    "select", "select_n", "clamp", "convert_element_type", "stop_gradient",
    "optimization_barrier",
    # shapes
    "broadcast", "broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "slice",
    "slice_in_dim", "index_in_dim", "pad", "concatenate", "rev", "iota", "broadcasted_iota",
    "full", "full_like", "zeros_like_array",
    # contractions, reductions, windows
    "dot_general", "dot", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod",
    "reduce_and", "reduce_or", "argmax", "argmin", "reduce", "reduce_window",
    # convolutions
    "ConvDimensionNumbers", "conv_dimension_numbers", "padtype_to_pads",
    "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
    # dynamic slicing
    "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim",
]
