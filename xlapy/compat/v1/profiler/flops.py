"""FLOP counts per op type: the op types and formulas TF 1.15's profiler counts
(ops.RegisterStatistics(type, "flops") in TF's math_ops, nn_ops and the profiler's flops
registry). Ops of any other type (Relu, Exp, Tanh, BatchMatMul, ...) count no FLOPs, as in
TF 1.15.

    float_ops(op) -> int    the op's FLOPs from its static shapes
                 -> None    no rule for the op type
    raises IncompleteShape  a shape the rule needs is not fully known, or the rule needs
                            NHWC and the op is NCHW (TF skips the op and notes it)

Elementwise unary ops count per input element, binary ops per output element (so a
broadcast counts the broadcast result), reductions per input element minus one per output
(Mean adds back one division per output).
"""

from __future__ import annotations

import math


class IncompleteShape(ValueError):
    """A shape the FLOP rule needs is not fully known (or the layout is not NHWC)."""


_RULES: dict = {}


def _rule(*op_types):
    def deco(fn):
        for t in op_types:
            _RULES[t] = fn
        return fn
    return deco


def has_rule(op_type: str) -> bool:
    return op_type in _RULES


def float_ops(op):
    rule = _RULES.get(op.type)
    if rule is None:
        return None
    return int(rule(op))


def _dims(t) -> list:
    s = t.shape
    if not s.is_fully_defined():
        raise IncompleteShape(f"{t.name} has shape {s}")
    return list(s.dims)


def _count(t) -> int:
    return math.prod(_dims(t))


def _nhwc(op) -> None:
    fmt = op.attr.get("data_format", "NHWC")
    if isinstance(fmt, bytes):
        fmt = fmt.decode()
    if fmt != "NHWC":
        raise IncompleteShape(f"{op.name}: FLOPs are counted for the NHWC layout only, "
                              f"not {fmt}")


# ---- elementwise ---------------------------------------------------------------------------

@_rule("Reciprocal", "Square", "Log", "Neg", "AssignSub", "AssignAdd")
def _unary(op):
    return _count(op.inputs[0])


@_rule("Rsqrt")
def _rsqrt(op):  # a square root and a division
    return 2 * _count(op.inputs[0])


@_rule("Softmax")
def _softmax(op):  # subtract the max, exp, sum, divide: about five per element
    return 5 * _count(op.inputs[0])


@_rule("L2Loss")
def _l2_loss(op):  # square, sum and halve: 3n - 1
    return 3 * _count(op.inputs[0]) - 1


@_rule("Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow", "GreaterEqual", "Greater",
       "LessEqual", "Less", "Equal", "NotEqual")
def _binary(op):
    return _count(op.outputs[0])


@_rule("SquaredDifference")
def _squared_difference(op):
    return 2 * _count(op.outputs[0])


@_rule("RsqrtGrad")
def _rsqrt_grad(op):
    return 4 * _count(op.outputs[0])


@_rule("AddN")
def _add_n(op):
    if not op.inputs:
        return 0
    return _count(op.inputs[0]) * (len(op.inputs) - 1)


# ---- reductions ----------------------------------------------------------------------------

@_rule("Sum", "ArgMax", "ArgMin", "BiasAddGrad")
def _reduce(op):
    return _count(op.inputs[0]) - _count(op.outputs[0])


@_rule("Mean")
def _mean(op):  # n - out adds, then one division per output
    _dims(op.outputs[0])
    return _count(op.inputs[0])


# ---- matrix products and convolutions ------------------------------------------------------

@_rule("MatMul")
def _matmul(op):
    a = _dims(op.inputs[0])
    k = a[0] if op.attr.get("transpose_a", False) else a[1]
    return 2 * k * _count(op.outputs[0])


@_rule("Conv2D")
def _conv2d(op):
    _dims(op.inputs[0])
    kh, kw, cin = _dims(op.inputs[1])[:3]
    return 2 * _count(op.outputs[0]) * kh * kw * cin


@_rule("DepthwiseConv2dNative", "Dilation2D")
def _depthwise(op):
    _dims(op.inputs[0])
    kh, kw = _dims(op.inputs[1])[:2]
    return 2 * _count(op.outputs[0]) * kh * kw


@_rule("BiasAdd")
def _bias_add(op):
    return _count(op.inputs[0])


@_rule("Conv2DBackpropInput")
def _conv_input_grad(op):
    # out: the input gradient [N, H, W, Cin]; the filter [kh, kw, Cin, Cout]
    _nhwc(op)
    out = _dims(op.outputs[0])
    kernel = _count(op.inputs[1])
    s = op.attr["strides"]
    return (2 * math.prod(out) * kernel) // (out[-1] * s[1] * s[2])


@_rule("Conv2DBackpropFilter")
def _conv_filter_grad(op):
    _nhwc(op)
    image = _dims(op.inputs[0])
    kernel = _count(op.outputs[0])
    s = op.attr["strides"]
    return (2 * math.prod(image) * kernel) // (image[-1] * s[1] * s[2])


# ---- pooling -------------------------------------------------------------------------------

@_rule("MaxPool", "AvgPool")
def _pool(op):
    _nhwc(op)
    return math.prod(op.attr["ksize"]) * _count(op.outputs[0])


@_rule("AvgPoolGrad")
def _avg_pool_grad(op):  # a multiply and an add per window element of each gradient
    _nhwc(op)
    return 2 * math.prod(op.attr["ksize"]) * _count(op.inputs[1])


@_rule("MaxPoolGrad")
def _max_pool_grad(op):  # the max of each window again, then one add per output
    _nhwc(op)
    n = _count(op.inputs[1])
    return math.prod(op.attr["ksize"]) * n + n
