"""tf.contrib.util: TensorProto conversion (make_tensor_proto, make_ndarray) and
constant_value (a tensor's value when the graph alone determines it, else None)."""

from __future__ import annotations

from xlapy.compat.v1.graph_def import make_ndarray, make_tensor_proto

__all__ = ["constant_value", "make_ndarray", "make_tensor_proto"]


def constant_value(tensor, partial=False):
    """The NumPy value of `tensor` if it can be computed without running the graph (a
    constant, the shape of a fully-defined tensor, ...), else None; a NumPy value or a
    Python number is returned as an array."""
    import numpy as np

    from xlapy.compat.v1.framework import Tensor
    from xlapy.compat.v1.ops._common import constant_value as _value
    if not isinstance(tensor, Tensor):
        return np.asarray(tensor)
    return _value(tensor)
