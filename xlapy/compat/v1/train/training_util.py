"""The global step: an int64 scalar variable named global_step, in the GLOBAL_STEP
collection, that minimize(loss, global_step=...) increments after each update."""

from __future__ import annotations

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph
from xlapy.compat.v1.ops.array_ops import zeros
from xlapy.compat.v1.variables import Variable


def get_global_step(graph=None):
    """The global step variable of `graph` (default graph), or None."""
    g = graph or get_default_graph()
    steps = g.get_collection(GraphKeys.GLOBAL_STEP)
    if len(steps) > 1:
        raise InvalidArgumentError("Multiple tensors in global_step collection.")
    return steps[0] if steps else None


def create_global_step(graph=None):
    g = graph or get_default_graph()
    if get_global_step(g) is not None:
        raise InvalidArgumentError('"global_step" already exists.')
    with g.as_default(), g.name_scope(None):
        return Variable(lambda: zeros([], dtypes.int64), trainable=False, name="global_step",
                        collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    g = graph or get_default_graph()
    return get_global_step(g) or create_global_step(g)


def assert_global_step(global_step_tensor) -> None:
    dt = getattr(global_step_tensor, "dtype", None)
    shape = getattr(global_step_tensor, "shape", None)
    if dt is None or not dt.is_integer:
        raise InvalidArgumentError(f"Existing \"global_step\" does not have integer type: {dt}")
    if shape is None or shape.ndims != 0:
        raise InvalidArgumentError(f"Existing \"global_step\" is not scalar: {shape}")


def global_step(sess, global_step_tensor) -> int:
    """The global step's current value, as a Python int."""
    return int(sess.run(global_step_tensor))
