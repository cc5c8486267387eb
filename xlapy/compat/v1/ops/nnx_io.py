"""CountUpTo, the op under tf.train.limit_epochs: an int variable counting up to a limit,
returning its value before each increment and raising OutOfRangeError at the limit. It
runs in the executor (it reads and writes the session's variable store)."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    InvalidTypeError, OutOfRangeError)
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.tensor_shape import TensorShape


# ---- CountUpTo -------------------------------------------------------------------------------

def _count_infer(op):
    ref = op.inputs[0]
    if ref.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidTypeError(f"CountUpTo needs an int32 or int64 variable, got "
                               f"{ref.dtype.name}")
    if ref.op.type != "VariableV2":
        raise InvalidArgumentError("CountUpTo's input must be a variable (its reference)")
    if ref.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"CountUpTo needs a scalar variable, got "
                                   f"{ref.shape.tf_str()}")
    return [(ref.dtype, TensorShape([]))]


@register_op("CountUpTo", infer=_count_infer, attrs=("limit",), lowering=None,
             stateful=True)
def _count_up_to(m, ref, limit=0):
    """The value before the increment (the executor runs the op with extra["executor"],
    which also stores the incremented value)."""
    if int(ref) >= limit:
        raise OutOfRangeError(f"Reached limit of {limit}")
    return np.asarray(ref)


def _count_executor(session, op):
    name, limit = op.inputs[0].op.name, op.get_attr("limit")

    def run(value):
        store = session._vars
        if name not in store:
            raise FailedPreconditionError(f"Attempting to use uninitialized value {name}",
                                          op=op)
        old = np.asarray(store[name])
        if int(old) >= limit:
            raise OutOfRangeError(f"Reached limit of {limit}\n\t [[{op.name}]]", op=op)
        store[name] = np.asarray(old + 1, old.dtype)
        return [old.copy()]
    return run


get_op_def("CountUpTo").extra["executor"] = _count_executor
not_differentiable("CountUpTo")


def count_up_to(ref, limit, name=None):
    """Increments the int variable `ref` until it reaches `limit`; returns its value before
    the increment, or raises OutOfRangeError once the limit is reached."""
    var = ref._ref() if hasattr(ref, "_ref") else ref
    return make("CountUpTo", [var], {"limit": int(limit)}, name=name or "CountUpTo")
