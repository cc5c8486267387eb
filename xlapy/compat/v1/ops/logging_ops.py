"""tf.Print (an identity that writes its data to stderr when run) and tf.print (an op that
writes its inputs). Both have side effects on the host: no XLA lowering; clusters form
around them."""

from __future__ import annotations

import sys

import numpy as np

from xlapy.compat.v1.errors import InvalidTypeError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import make, make_op, same_as_input, tensor


def _fmt(v, summarize):
    a = np.asarray(v)
    flat = a.reshape(-1)
    n = summarize if summarize is not None and summarize >= 0 else flat.size
    items = " ".join(str(x) for x in flat[:n])
    return items + ("..." if flat.size > n else "")


@register_op("Print", infer=same_as_input(0), lowering=None, stateful=True,
             attrs=("message", "first_n", "summarize", "_count"))
def _print(m, x, *data, message="", first_n=-1, summarize=3, _count=None):
    if _count is not None:
        _count[0] += 1
        if 0 <= first_n < _count[0]:
            return x
    sys.stderr.write(message + "".join(f"[{_fmt(d, summarize)}]" for d in data) + "\n")
    return x


@register_gradient("Print")
def _print_grad(op, g):
    return [g] + [None] * (len(op.inputs) - 1)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):
    """tf.Print: an identity of input_ that writes message and data to stderr when run."""
    return make("Print", [tensor(input_)] + [tensor(d) for d in data],
                {"message": message or "", "first_n": -1 if first_n is None else int(first_n),
                 "summarize": 3 if summarize is None else int(summarize), "_count": [0]},
                name=name)


@register_op("PrintV2", infer=lambda op: [], lowering=None, stateful=True,
             attrs=("template", "stream", "summarize", "sep", "end"))
def _print_v2(m, *values, template=(), stream=None, summarize=3, sep=" ", end="\n"):
    parts = []
    vals = iter(values)
    for piece in template:
        parts.append(_fmt(next(vals), summarize) if piece is None else piece)
    (stream or sys.stderr).write(sep.join(parts) + end)
    return ()


def print_v2(*inputs, **kwargs):
    """tf.print: an op that writes its inputs (tensors formatted, other values as str) to
    output_stream (sys.stderr by default) when run."""
    stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    name = kwargs.pop("name", None)
    if kwargs:
        raise InvalidTypeError(f"print: unexpected arguments {sorted(kwargs)}")
    template, tensors = [], []
    for x in inputs:
        if isinstance(x, Tensor) or hasattr(x, "_to_tensor"):
            template.append(None)
            tensors.append(tensor(x))
        else:
            template.append(str(x))
    op = make_op("PrintV2", tensors, {"template": tuple(template), "stream": stream,
                                      "summarize": int(summarize), "sep": sep, "end": end},
                 name=name)
    return op
