"""Run-time checks: tf.Assert, tf.check_numerics / verify_tensor_all_finite /
add_check_numerics_ops, and the tf.assert_* family (tf.debugging).

Assert and CheckNumerics run in the executor (they raise InvalidArgumentError with TF's
message when the check fails); clusters form around them. An assert_* whose condition is
known when the graph is built is decided then, as TF's: a failing one raises at once, a
passing one is a no-op.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, make, make_op, tensor


def _fmt(v, summarize):
    a = np.asarray(v)
    if a.dtype == object or a.dtype.kind in "SU":
        flat = [x.decode() if isinstance(x, bytes) else str(x) for x in a.reshape(-1)]
        return " ".join(flat[:summarize] + (["..."] if len(flat) > summarize else []))
    flat = a.reshape(-1)
    body = " ".join(str(x) for x in flat[:summarize])
    return f"[{body}{'...' if flat.size > summarize else ''}]"


@register_op("Assert", infer=lambda op: [], attrs=("summarize",), lowering=None,
             stateful=True)
def _assert(m, cond, *data, summarize=3):
    if not bool(np.all(cond)):
        parts = " ".join(_fmt(d, summarize) for d in data)
        raise InvalidArgumentError(f"assertion failed: {parts}")
    return ()


def _check_infer(op):
    x = op.inputs[0]
    if not x.dtype.is_floating:
        raise InvalidTypeError(f"check_numerics: {x.name} has dtype {x.dtype.name}; it must "
                               "be floating point")
    return [(x.dtype, x.shape)]


@register_op("CheckNumerics", infer=_check_infer, attrs=("message",), lowering=None)
def _check_numerics(m, x, message=""):
    if np.isnan(x).any():
        raise InvalidArgumentError(f"{message} : Tensor had NaN values")
    if np.isinf(x).any():
        raise InvalidArgumentError(f"{message} : Tensor had Inf values")
    return x


@register_gradient("CheckNumerics")
def _check_numerics_grad(op, g):
    return [check_numerics(g, "Not a number (NaN) or infinity (Inf) values detected in "
                              "gradient. " + op.get_attr("message"))]


# ---- user-facing ---------------------------------------------------------------------------

def Assert(condition, data, summarize=None, name=None):
    """An op failing with InvalidArgumentError("assertion failed: <data>") when condition
    (a bool scalar, or all of a bool tensor) is False."""
    c = tensor(condition)
    if c.dtype != dtypes.bool:
        raise InvalidTypeError(f"Assert: condition must be a bool tensor, got {c.dtype.name}")
    ins = [d if isinstance(d, Tensor) else tensor(d) for d in data]
    return make_op("Assert", [c] + ins, {"summarize": int(summarize or 3)},
                   name=name or "Assert")


def check_numerics(tensor_, message, name=None):
    return make("CheckNumerics", [tensor(tensor_)], {"message": str(message)},
                name=name or "CheckNumerics")


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    return check_numerics(t if t is not None else x, msg if msg is not None else message,
                          name=name or "VerifyFinite")


def add_check_numerics_ops():
    """A group of check_numerics ops on every floating-point tensor of the graph."""
    from xlapy.compat.v1.ops.array_ops import group
    g = get_default_graph()
    checks = []
    for op in list(g.get_operations()):
        for t in op.outputs:
            if t.dtype.is_floating and op.type not in ("CheckNumerics", "VariableV2"):
                with g.control_dependencies(checks[-1:]):
                    checks.append(check_numerics(t, f"{op.name}:{t.value_index}").op)
    return group(*checks, name="CheckNumerics")


def _static_all(t):
    v = constant_value(t)
    return None if v is None else bool(np.all(v))


def _binary_assert(fn, what):
    def assert_fn(x, y, data=None, summarize=None, message=None, name=None):
        from xlapy.compat.v1.ops.math_ops import reduce_all
        x = tensor(x)
        y = tensor(y, dtype=x.dtype)
        g = get_default_graph()
        with g.name_scope(name or f"assert_{fn.__name__}"):
            cond = fn(x, y)
            xv, yv = constant_value(x), constant_value(y)
            if xv is not None and yv is not None:
                ok = bool(np.all(_NP[fn.__name__](xv, yv)))
                if not ok:
                    raise InvalidArgumentError(f"{message or ''}\nCondition x {what} y did "
                                               f"not hold element-wise: x = {xv}, y = {yv}")
                from xlapy.compat.v1.ops.array_ops import no_op
                return no_op()
            if data is None:
                data = [message or "", f"Condition x {what} y did not hold element-wise:",
                        f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
            return Assert(reduce_all(cond), data, summarize)
    return assert_fn


def _unary_assert(cmp_name, what, zero_cmp):
    def assert_fn(x, data=None, summarize=None, message=None, name=None):
        x = tensor(x)
        f = _binary_assert(zero_cmp, what)
        return f(x, tensor(np.zeros((), x.dtype.np)), data, summarize, message,
                 name or cmp_name)
    assert_fn.__name__ = cmp_name
    return assert_fn


def _ops():
    from xlapy.compat.v1.ops import math_ops as mo
    return mo


def _equal(x, y):
    return _ops().equal(x, y)


def _not_equal(x, y):
    return _ops().not_equal(x, y)


def _less(x, y):
    return _ops().less(x, y)


def _less_equal(x, y):
    return _ops().less_equal(x, y)


def _greater(x, y):
    return _ops().greater(x, y)


def _greater_equal(x, y):
    return _ops().greater_equal(x, y)


_NP = {"_equal": np.equal, "_not_equal": np.not_equal, "_less": np.less,
       "_less_equal": np.less_equal, "_greater": np.greater,
       "_greater_equal": np.greater_equal}

assert_equal = _binary_assert(_equal, "==")
assert_none_equal = _binary_assert(_not_equal, "!=")
assert_less = _binary_assert(_less, "<")
assert_less_equal = _binary_assert(_less_equal, "<=")
assert_greater = _binary_assert(_greater, ">")
assert_greater_equal = _binary_assert(_greater_equal, ">=")
assert_positive = _unary_assert("assert_positive", ">", _greater)
assert_negative = _unary_assert("assert_negative", "<", _less)
assert_non_negative = _unary_assert("assert_non_negative", ">=", _greater_equal)
assert_non_positive = _unary_assert("assert_non_positive", "<=", _less_equal)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Static when x's rank is known (raises at once if wrong, else a no-op)."""
    from xlapy.compat.v1.ops.array_ops import no_op, rank as rank_of
    x = tensor(x)
    r = int(rank)
    if x.shape.ndims is not None:
        if x.shape.ndims != r:
            raise InvalidArgumentError(f"{message or ''}Tensor {x.name} must have rank {r}. "
                                       f"Received rank {x.shape.ndims}, shape "
                                       f"{x.shape.tf_str()}")
        return no_op(name=name)
    return assert_equal(rank_of(x), r, data, summarize,
                        message or f"Tensor {x.name} must have rank {r}", name)


def assert_type(tensor_, tf_type, message=None, name=None):
    from xlapy.compat.v1.ops.array_ops import no_op
    t = tensor(tensor_)
    if t.dtype != dtypes.as_dtype(tf_type):
        raise InvalidTypeError(f"{message or ''}{t.name} must be of type "
                               f"{dtypes.as_dtype(tf_type).name}, got {t.dtype.name}")
    return no_op(name=name)


def assert_integer(x, message=None, name=None):
    from xlapy.compat.v1.ops.array_ops import no_op
    t = tensor(x)
    if not t.dtype.is_integer:
        raise InvalidTypeError(f"{message or ''}Expected {t.name} to be of integer dtype, "
                               f"got {t.dtype.name}")
    return no_op(name=name)


def is_non_decreasing(x, name=None):
    from xlapy.compat.v1.ops.array_ops import reshape
    from xlapy.compat.v1.ops.math_ops import less_equal, reduce_all
    v = reshape(tensor(x), [-1])
    return reduce_all(less_equal(v[:-1], v[1:]), name=name)


def is_strictly_increasing(x, name=None):
    from xlapy.compat.v1.ops.array_ops import reshape
    from xlapy.compat.v1.ops.math_ops import less, reduce_all
    v = reshape(tensor(x), [-1])
    return reduce_all(less(v[:-1], v[1:]), name=name)


def assert_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """tf.debugging.assert_all_finite: verify_tensor_all_finite's name in tf.debugging."""
    return verify_tensor_all_finite(t, msg, name, x, message)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """Static when x's rank is known (raises at once if lower, else a no-op)."""
    from xlapy.compat.v1.ops.array_ops import no_op, rank as rank_of
    x = tensor(x)
    r = int(rank)
    if x.shape.ndims is not None:
        if x.shape.ndims < r:
            raise InvalidArgumentError(f"{message or ''}Tensor {x.name} must have rank at "
                                       f"least {r}. Received rank {x.shape.ndims}, shape "
                                       f"{x.shape.tf_str()}")
        return no_op(name=name)
    return assert_greater_equal(rank_of(x), r, data, summarize,
                                message or f"Tensor {x.name} must have rank at least {r}",
                                name or "assert_rank_at_least")


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """x's rank is one of `ranks`: static when known, else a run-time Assert."""
    from xlapy.compat.v1.ops.array_ops import no_op, rank as rank_of
    from xlapy.compat.v1.ops.math_ops import equal, reduce_any
    x = tensor(x)
    allowed = tuple(int(r) for r in ranks)
    if x.shape.ndims is not None:
        if x.shape.ndims not in allowed:
            raise InvalidArgumentError(f"{message or ''}Tensor {x.name} must have rank in "
                                       f"{allowed}. Received rank {x.shape.ndims}, shape "
                                       f"{x.shape.tf_str()}")
        return no_op(name=name)
    with get_default_graph().name_scope(name or "assert_rank_in"):
        r = rank_of(x)
        ok = reduce_any(equal(r, tensor(np.array(allowed, np.int32))))
        if data is None:
            data = [message or "", f"Tensor {x.name} must have rank in {allowed}; rank:", r]
        return Assert(ok, data, summarize)


def assert_scalar(tensor_, name=None, message=None):
    """The tensor itself when its static shape is a scalar; ValueError otherwise (also for
    an unknown rank, as TF)."""
    t = tensor(tensor_)
    if t.shape.ndims is None:
        raise InvalidArgumentError(f"{message or ''}Expected scalar shape for {t.name}, "
                                   "saw unknown shape.")
    if t.shape.ndims != 0:
        raise InvalidArgumentError(f"{message or ''}Expected scalar shape for {t.name}, saw "
                                   f"shape: {t.shape.tf_str()}.")
    return t


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                name=None):
    """|x - y| <= atol + rtol * |y| element-wise (default tolerances 10 eps of the dtype,
    as TF): static when both are constants, else a run-time Assert."""
    from xlapy.compat.v1.ops.math_ops import abs as abs_, add, less_equal, multiply, \
        reduce_all, subtract
    x = tensor(x)
    y = tensor(y, dtype=x.dtype)
    eps = float(np.finfo(x.dtype.np).eps) if x.dtype.is_floating else 0.0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    xv, yv = constant_value(x), constant_value(y)
    if xv is not None and yv is not None:
        if not bool(np.all(np.abs(xv - yv) <= atol + rtol * np.abs(yv))):
            raise InvalidArgumentError(f"{message or ''}\nx and y not equal to tolerance "
                                       f"rtol = {rtol}, atol = {atol}: x = {xv}, y = {yv}")
        from xlapy.compat.v1.ops.array_ops import no_op
        return no_op(name=name)
    with get_default_graph().name_scope(name or "assert_near"):
        tol = add(tensor(np.asarray(atol, x.dtype.np)),
                  multiply(tensor(np.asarray(rtol, x.dtype.np)), abs_(y)))
        ok = reduce_all(less_equal(abs_(subtract(x, y)), tol))
        if data is None:
            data = [message or "", f"x and y not equal to tolerance rtol = {rtol}, atol = "
                    f"{atol}", f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        return Assert(ok, data, summarize)


def assert_proper_iterable(values):
    """TypeError unless `values` is an iterable other than a Tensor, an ndarray or a
    string."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)) or not hasattr(values, "__iter__"):
        raise InvalidTypeError(f"Expected argument 'values' to be a \"proper\" iterable. "
                               f"Found: {type(values)}")


def assert_same_float_dtype(tensors=None, dtype=None):
    """The floating dtype shared by `tensors` (and `dtype`, when given); float32 when there
    is none. ValueError when they differ or one is not floating."""
    found = dtypes.as_dtype(dtype) if dtype is not None else None
    for t in tensors or ():
        d = t.dtype if hasattr(t, "dtype") else None
        if d is None:
            continue
        d = dtypes.as_dtype(d)
        if found is None:
            found = d
        elif d != found:
            raise InvalidArgumentError(f"{getattr(t, 'name', t)}, type={d.name}: expected "
                                       f"type {found.name}.")
    if found is None:
        return dtypes.float32
    if not found.is_floating:
        raise InvalidArgumentError(f"Expected floating point type, got {found.name}.")
    return found


def is_numeric_tensor(tensor_):
    """Whether tensor_ is a Tensor of a numeric dtype (not bool or string)."""
    return isinstance(tensor_, Tensor) and (tensor_.dtype.is_floating or
                                            tensor_.dtype.is_integer or
                                            tensor_.dtype.is_complex)
