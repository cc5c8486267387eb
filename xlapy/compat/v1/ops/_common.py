"""Helpers shared by the op definitions: creating ops, shape rules, constant values."""

from __future__ import annotations

import functools

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor, get_default_graph
from xlapy.compat.v1.tensor_shape import TensorShape, broadcast_shape, unknown_shape

SCALAR = TensorShape([])


def make_op(op_type: str, inputs: list, attrs: dict | None = None, name: str | None = None):
    """Create an op in the default graph, or in the graph of its inputs when that is
    another graph (neither the default graph nor one enclosing it: inside a loop body, an
    input from the enclosing graph is captured)."""
    graph = get_default_graph()
    if inputs and inputs[0].graph is not graph and not (
            hasattr(graph, "is_enclosed_by") and graph.is_enclosed_by(inputs[0].graph)):
        graph = inputs[0].graph
    return graph.create_op(op_type, inputs, attrs, name=name)


def make(op_type: str, inputs: list, attrs: dict | None = None, name: str | None = None):
    """Create an op and return its only output (or the op, if it has none)."""
    op = make_op(op_type, inputs, attrs, name)
    if len(op.outputs) == 1:
        return op.outputs[0]
    return op if not op.outputs else tuple(op.outputs)


def tensor(x, dtype=None) -> Tensor:
    return convert_to_tensor(x, dtype=dtype)


def binary_args(x, y, op_type: str):
    """Convert (x, y) as TF does: the non-tensor operand takes the tensor's dtype."""
    if isinstance(x, Tensor) or hasattr(x, "_to_tensor"):
        x = tensor(x)
        y = tensor(y, dtype=x.dtype) if not (isinstance(y, Tensor) or hasattr(y, "_to_tensor")) \
            else tensor(y)
    elif isinstance(y, Tensor) or hasattr(y, "_to_tensor"):
        y = tensor(y)
        x = tensor(x, dtype=y.dtype)
    else:
        x = tensor(x)
        y = tensor(y, dtype=x.dtype)
    if x.dtype != y.dtype:
        raise InvalidTypeError(f"Input 'y' of '{op_type}' Op has type {y.dtype.name} that does "
                               f"not match type {x.dtype.name} of argument 'x'.")
    return x, y


def unary_fn(op_type: str, name: str | None = None, doc: str | None = None):
    """The user-facing function f(x, name=None) creating one `op_type` op on x (named
    `name`, by default the op type in lower case)."""
    def f(x, name=None):
        return make(op_type, [tensor(x)], name=name)
    f.__name__ = f.__qualname__ = name or op_type.lower()
    f.__doc__ = doc
    return f


def binary_fn(op_type: str, name: str | None = None, doc: str | None = None):
    """The user-facing function f(x, y, name=None) creating one `op_type` op on x and y,
    converted as binary_args does (named `name`, by default the op type in lower case)."""
    def f(x, y, name=None):
        x, y = binary_args(x, y, op_type)
        return make(op_type, [x, y], name=name)
    f.__name__ = f.__qualname__ = name or op_type.lower()
    f.__doc__ = doc
    return f


def constant_value(t: Tensor):
    """The value of `t` if it is known when the graph is built (a Const, the Shape of a
    fully-defined tensor, ...), else None."""
    op = t.op
    if op.type == "Const":
        return op.get_attr("value")
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.asarray(op.inputs[0].shape.as_list(), dtype=t.dtype.np)
    if op.type == "Size" and op.inputs[0].shape.is_fully_defined():
        return np.asarray(op.inputs[0].shape.num_elements(), dtype=t.dtype.np)
    if op.type == "Rank" and op.inputs[0].shape.ndims is not None:
        return np.asarray(op.inputs[0].shape.ndims, dtype=np.int32)
    if op.type in ("Cast", "Identity"):
        v = constant_value(op.inputs[0])
        return None if v is None else v.astype(t.dtype.np)
    if op.type == "Pack":
        vals = [constant_value(i) for i in op.inputs]
        if any(v is None for v in vals):
            return None
        return np.stack(vals, axis=op.get_attr("axis"))
    return None


def partial_shape_value(t: Tensor) -> TensorShape:
    """A 1-D int tensor used as a shape, as a partial shape: Const, Shape of a partially
    known tensor, or a Pack of scalars some of which are known."""
    v = constant_value(t)
    if v is not None:
        return TensorShape([None if d < 0 else int(d) for d in np.reshape(v, [-1])])
    if t.op.type == "Shape":
        return t.op.inputs[0].shape
    if t.op.type == "Pack":
        dims = []
        for i in t.op.inputs:
            c = constant_value(i)
            dims.append(None if c is None or int(c) < 0 else int(c))
        return TensorShape(dims)
    n = t.shape.dims[0] if t.shape.ndims == 1 else None
    return unknown_shape(n)


def axis_value(t: Tensor, rank, what: str):
    """Constant axes (normalized, sorted tuple) or None when unknown."""
    v = constant_value(t)
    if v is None:
        return None
    axes = [int(a) for a in np.reshape(v, [-1])]
    if rank is not None:
        for a in axes:
            if not -rank <= a < max(rank, 1):
                raise InvalidArgumentError(f"{what}: axis {a} is out of range for a tensor of "
                                           f"rank {rank}")
        axes = [a % rank if rank else 0 for a in axes]
    return tuple(sorted(set(axes)))


# ---- shape rules -------------------------------------------------------------------------

def same_as_input(i: int = 0):
    def infer(op):
        t = op.inputs[i]
        return [(t.dtype, t.shape)]
    return infer


def float_unary(op):
    t = op.inputs[0]
    if not t.dtype.is_floating:
        raise InvalidTypeError(f"Value passed to parameter 'x' of '{op.type}' Op has DataType "
                               f"{t.dtype.name} not in list of allowed values: float16, "
                               "float32, float64")
    return [(t.dtype, t.shape)]


def broadcasting(out_dtype=None):
    def infer(op):
        x, y = op.inputs
        if x.dtype != y.dtype:
            raise InvalidTypeError(f"Input 'y' of '{op.type}' Op has type {y.dtype.name} that "
                                   f"does not match type {x.dtype.name} of argument 'x'.")
        shape = broadcast_shape(x.shape, y.shape, f" for '{op.name}' (op: '{op.type}')")
        return [(out_dtype or x.dtype, shape)]
    return infer


def fixed(*specs):
    """Outputs of fixed dtype and shape: fixed((int32, [None]))."""
    def infer(op):
        return [(dtypes.as_dtype(d), TensorShape(s)) for d, s in specs]
    return infer


BF16 = dtypes.bfloat16.np


def accumulate_f32(kernel):
    """An executor kernel of products or sums (matmul, convolution, reduction) on bfloat16
    run as TF's CPU kernels do: with NumPy, bfloat16 operands are widened to float32, the
    kernel computes there and its result is rounded to bfloat16 once (NumPy's own bfloat16
    matmul answers float32, its sums round at every step). Under XLA (m is xlapy.numpy) the
    kernel runs as is: the lowering emits bf16 HLO, accumulated in f32 by the backend."""
    bf16 = np.dtype(BF16)   # (arrays of it share this dtype object: an identity test)

    @functools.wraps(kernel)
    def run(m, *args, **attrs):
        if m is np:   # (the common case, no bfloat16 operand, costs a loop of getattrs)
            for a in args:
                if getattr(a, "dtype", None) is bf16:
                    out = kernel(m, *[x.astype(np.float32) if getattr(x, "dtype", None)
                                      is bf16 else x for x in args], **attrs)
                    return out.astype(BF16) if out.dtype == np.float32 else out
        return kernel(m, *args, **attrs)
    return run


def ints(v) -> tuple:
    return tuple(int(a) for a in np.reshape(np.asarray(v), [-1]))


def snake_case(name: str) -> str:
    """TF's layer naming: BasicLSTMCell -> basic_lstm_cell, Conv2D -> conv2d."""
    import re
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
