"""tf.py_func: a Python function as an op. It has no XLA lowering, so it always runs in the
executor (auto-clustering leaves it out; strict mode and XLA devices reject it)."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.op_registry import register_op
from xlapy.compat.v1.ops._common import make_op, tensor
from xlapy.compat.v1.tensor_shape import unknown_shape


def _infer(op):
    return [(d, unknown_shape()) for d in op.get_attr("Tout")]


@register_op("PyFunc", infer=_infer, attrs=("func", "Tout"), lowering=None, stateful=True)
def _py_func(m, *args, func=None, Tout=()):
    out = func(*args)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != len(Tout):
        raise InvalidArgumentError(f"py_func {getattr(func, '__name__', func)} returned "
                                   f"{len(outs)} values, Tout lists {len(Tout)}")
    res = tuple(np.asarray(o, dtype=t.np) for o, t in zip(outs, Tout))
    return res if len(res) != 1 else res[0]


def py_func(func, inp, Tout, stateful=True, name=None):
    single = not isinstance(Tout, (list, tuple))
    touts = [dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]
    op = make_op("PyFunc", [tensor(i) for i in inp], {"func": func, "Tout": tuple(touts)},
                 name=name or "PyFunc")
    if single:
        return op.outputs[0]
    return list(op.outputs)
