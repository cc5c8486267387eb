"""tf.bitwise (bitwise_and / or / xor, invert, left_shift, right_shift) and tf.quantization's
fake_quant_with_min_max_args / _vars (with gradients), and the tf.manip alias of roll.

The bitwise ops take integer tensors of one dtype (broadcasting); right_shift is arithmetic
for signed types, as TF's. Fake quantization follows TF's kernel: the range [min, max] is
nudged so that zero is exactly representable (scale (max - min) / (qmax - qmin), qmin 1 when
narrow_range else 0, qmax 2^num_bits - 1), inputs are clamped to the nudged range and
rounded to its grid (floor(x / scale + 0.5)). The input's gradient passes where the input
lies within the nudged range; min's and max's collect the rest (below and above).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import binary_args, broadcasting, make, tensor
from xlapy.compat.v1.tensor_shape import TensorShape


def _int_binary(op):
    if not op.inputs[0].dtype.is_integer:
        raise InvalidTypeError(f"{op.type}: inputs must be integers, got "
                               f"{op.inputs[0].dtype.name}")
    return broadcasting()(op)


def _int_unary(op):
    x = op.inputs[0]
    if not x.dtype.is_integer:
        raise InvalidTypeError(f"{op.type}: input must be an integer, got {x.dtype.name}")
    return [(x.dtype, x.shape)]


register_op("BitwiseAnd", infer=_int_binary)(lambda m, x, y: m.bitwise_and(x, y))
register_op("BitwiseOr", infer=_int_binary)(lambda m, x, y: m.bitwise_or(x, y))
register_op("BitwiseXor", infer=_int_binary)(lambda m, x, y: m.bitwise_xor(x, y))
register_op("Invert", infer=_int_unary)(lambda m, x: m.bitwise_not(x))


def _shift(left):
    def kernel(m, x, y):
        bits = np.dtype(x.dtype).itemsize * 8
        dt = np.dtype(x.dtype)
        # TF leaves shifts outside [0, bits) undefined: here they give 0 (or the sign) as
        # XLA's shifts do, the same in the executor
        ok = m.logical_and(m.greater_equal(y, np.asarray(0, dt)),
                           m.less(y, np.asarray(bits, dt)))
        safe = m.where(ok, y, np.asarray(0, dt))
        if left:
            return m.where(ok, m.left_shift(x, safe), np.asarray(0, dt))
        full = m.right_shift(x, np.asarray(bits - 1, dt))  # the sign fill
        return m.where(ok, m.right_shift(x, safe), full)
    return kernel


register_op("LeftShift", infer=_int_binary)(_shift(True))
register_op("RightShift", infer=_int_binary)(_shift(False))
not_differentiable("BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert", "LeftShift",
                   "RightShift")


def _binary(op_type, name):
    def f(x, y, name=None):
        a, b = binary_args(x, y, op_type)
        return make(op_type, [a, b], name=name or op_type)
    f.__name__ = name
    return f


bitwise_and = _binary("BitwiseAnd", "bitwise_and")
bitwise_or = _binary("BitwiseOr", "bitwise_or")
bitwise_xor = _binary("BitwiseXor", "bitwise_xor")
left_shift = _binary("LeftShift", "left_shift")
right_shift = _binary("RightShift", "right_shift")


def invert(x, name=None):
    return make("Invert", [tensor(x)], name=name or "Invert")


# ---- fake quantization ---------------------------------------------------------------------

def _nudge(m, lo, hi, num_bits, narrow_range):
    qmin = 1.0 if narrow_range else 0.0
    qmax = float((1 << num_bits) - 1)
    f = np.float32
    scale = (hi - lo) / f(qmax - qmin)
    zp_from_min = f(qmin) - lo / scale
    zp = m.where(zp_from_min < f(qmin), f(qmin),
                 m.where(zp_from_min > f(qmax), f(qmax), m.floor(zp_from_min + f(0.5))))
    return (f(qmin) - zp) * scale, (f(qmax) - zp) * scale, scale


def _fake_quant(m, x, lo, hi, num_bits, narrow_range):
    nmin, nmax, scale = _nudge(m, lo, hi, num_bits, narrow_range)
    c = m.minimum(m.maximum(x, nmin), nmax)
    return m.floor((c - nmin) / scale + np.float32(0.5)) * scale + nmin


def _fq_checks(num_bits):
    if not 2 <= num_bits <= 16:
        raise InvalidArgumentError(f"num_bits must be between 2 and 16, inclusive, got "
                                   f"{num_bits}")


@register_op("FakeQuantWithMinMaxArgs", infer=lambda op: [(dtypes.float32,
                                                           op.inputs[0].shape)],
             attrs=("min", "max", "num_bits", "narrow_range"))
def _fq_args(m, x, min=-6.0, max=6.0, num_bits=8, narrow_range=False):
    return _fake_quant(m, x, np.float32(min), np.float32(max), num_bits, narrow_range)


@register_op("FakeQuantWithMinMaxArgsGradient",
             infer=lambda op: [(dtypes.float32, op.inputs[1].shape)],
             attrs=("min", "max", "num_bits", "narrow_range"))
def _fq_args_grad(m, g, x, min=-6.0, max=6.0, num_bits=8, narrow_range=False):
    nmin, nmax, _ = _nudge(m, np.float32(min), np.float32(max), num_bits, narrow_range)
    inside = m.logical_and(x >= nmin, x <= nmax)
    return m.where(inside, g, np.float32(0))


@register_gradient("FakeQuantWithMinMaxArgs")
def _fq_args_grad_fn(op, g):
    attrs = {k: op.get_attr(k) for k in ("min", "max", "num_bits", "narrow_range")}
    return [make("FakeQuantWithMinMaxArgsGradient", [g, op.inputs[0]], attrs)]


@register_op("FakeQuantWithMinMaxVars", infer=lambda op: [(dtypes.float32,
                                                           op.inputs[0].shape)],
             attrs=("num_bits", "narrow_range"))
def _fq_vars(m, x, lo, hi, num_bits=8, narrow_range=False):
    return _fake_quant(m, x, lo, hi, num_bits, narrow_range)


@register_op("FakeQuantWithMinMaxVarsGradient",
             infer=lambda op: [(dtypes.float32, op.inputs[1].shape),
                               (dtypes.float32, TensorShape([])),
                               (dtypes.float32, TensorShape([]))],
             attrs=("num_bits", "narrow_range"))
def _fq_vars_grad(m, g, x, lo, hi, num_bits=8, narrow_range=False):
    nmin, nmax, _ = _nudge(m, lo, hi, num_bits, narrow_range)
    zero = np.float32(0)
    below, above = x < nmin, x > nmax
    inside = m.logical_not(m.logical_or(below, above))
    return (m.where(inside, g, zero), m.sum(m.where(below, g, zero)),
            m.sum(m.where(above, g, zero)))


@register_gradient("FakeQuantWithMinMaxVars")
def _fq_vars_grad_fn(op, g):
    attrs = {k: op.get_attr(k) for k in ("num_bits", "narrow_range")}
    return list(make("FakeQuantWithMinMaxVarsGradient", [g, *op.inputs], attrs))


not_differentiable("FakeQuantWithMinMaxArgsGradient", "FakeQuantWithMinMaxVarsGradient")


def fake_quant_with_min_max_args(inputs, min=-6, max=6, num_bits=8, narrow_range=False,
                                 name=None):
    _fq_checks(num_bits)
    if not min < max:
        raise InvalidArgumentError(f"min has to be smaller than max, was: {min} >= {max}")
    x = tensor(inputs)
    if x.dtype != dtypes.float32:
        raise InvalidTypeError(f"fake_quant: inputs must be float32, got {x.dtype.name}")
    return make("FakeQuantWithMinMaxArgs", [x], {"min": float(min), "max": float(max),
                                                 "num_bits": int(num_bits),
                                                 "narrow_range": bool(narrow_range)},
                name=name or "FakeQuantWithMinMaxArgs")


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8, narrow_range=False,
                                 name=None):
    _fq_checks(num_bits)
    x = tensor(inputs)
    lo, hi = tensor(min, dtype=dtypes.float32), tensor(max, dtype=dtypes.float32)
    return make("FakeQuantWithMinMaxVars", [x, lo, hi], {"num_bits": int(num_bits),
                                                         "narrow_range": bool(narrow_range)},
                name=name or "FakeQuantWithMinMaxVars")
