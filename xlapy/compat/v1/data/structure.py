"""The element structures of tf.data (nested tuples, namedtuples and dicts of
components), their leaves' specs, and the sources and arguments a pipeline reads from the
graph when its iterator starts."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.ops._common import constant_value
from xlapy.compat.v1.tensor_shape import TensorShape

# ---- element structures -------------------------------------------------------------------

def _flatten(s):
    if isinstance(s, dict):
        return [x for k in sorted(s) for x in _flatten(s[k])]
    if isinstance(s, tuple):
        return [x for v in s for x in _flatten(v)]
    return [s]


def _pack(structure, flat):
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, tuple):
            vals = [build(v) for v in s]
            return type(s)(*vals) if hasattr(s, "_fields") else tuple(vals)
        return next(it)
    return build(structure)


def _map_structure(fn, s):
    return _pack(s, [fn(x) for x in _flatten(s)])


class _Spec:
    """A leaf of an element structure: its dtype and (partial) shape."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape


class _Graph:
    """A source component computed by the graph (a placeholder fed when the iterator's
    initializer runs, a variable, ...): read when the iterator starts."""

    __slots__ = ("tensor", "key")

    def __init__(self, t):
        self.tensor, self.key = t, object()


def _to_array(x):
    if hasattr(x, "op"):  # a Tensor: its value if known now, else read at iterator start
        v = constant_value(x)
        if v is None:
            return _Graph(x)
        return np.asarray(v, dtype=x.dtype.np)
    if isinstance(x, np.ndarray):
        return x
    a = np.asarray(x)
    if a.dtype == np.float64 and not isinstance(x, np.generic):
        return a.astype(np.float32)  # Python floats become float32, as convert_to_tensor
    if a.dtype == np.int64 and not isinstance(x, np.generic):
        return a.astype(np.int32)
    if a.dtype.kind == "U":
        return a.astype(object)
    return a


def _count_arg(count, captures):
    """A count (int, constant tensor or a tensor read when the iterator starts) and the
    dataset's captures with it."""
    if count is None:
        return None, list(captures)
    if hasattr(count, "op"):
        v = constant_value(count)
        if v is None:
            g = _Graph(count)
            return g, list(captures) + [(g.key, count)]
        count = v
    return int(count), list(captures)


def _count_value(count, ctx):
    if isinstance(count, _Graph):
        return int(ctx.capture_values(count.key)[0])
    return count


def _source_values(flat, ctx) -> list:
    return [np.asarray(ctx.capture_values(a.key)[0]) if isinstance(a, _Graph) else a
            for a in flat]


def _source_captures(flat) -> list:
    return [(a.key, a.tensor) for a in flat if isinstance(a, _Graph)]


def _flatten_shapes(s, n):
    """padded_shapes' leaves: TensorShapes or lists of dims (a list of ints is one shape)."""
    if isinstance(s, dict):
        return [x for k in sorted(s) for x in _flatten_shapes(s[k], None)]
    if isinstance(s, tuple):
        return [x for v in s for x in _flatten_shapes(v, None)]
    if isinstance(s, TensorShape):
        return [None if s.ndims is None else list(s.dims)]
    if hasattr(s, "op"):
        v = constant_value(s)
        if v is None:
            raise InvalidArgumentError("padded_batch: padded_shapes must be known when the "
                                       "graph is built")
        return [[int(d) for d in np.reshape(v, [-1])]]
    return [list(s)]


def _common_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape both fit: equal dims kept, others unknown."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


def _flatten_datasets(s):
    if isinstance(s, dict):
        return [x for k in sorted(s) for x in _flatten_datasets(s[k])]
    if isinstance(s, tuple):
        return [x for v in s for x in _flatten_datasets(v)]
    from xlapy.compat.v1.data.dataset import Dataset
    if not isinstance(s, Dataset):
        raise InvalidArgumentError(f"zip: expected a (nested) tuple or dict of datasets, got "
                                   f"{type(s).__name__}")
    return [s]


def _function_of(structure, fn_, name):
    """(Function, keyed captures, key) of fn_ applied to an element's tensors."""
    from xlapy.compat.v1.data.sparse_elements import placeholders
    from xlapy.compat.v1.framework import get_default_graph
    from xlapy.compat.v1.ops.functional import FuncGraph, Function
    fg = FuncGraph(name, get_default_graph())
    leaves = _flatten(structure)
    with fg.as_default():
        phs, leaf_args = placeholders(fg, leaves)
        args = _pack(structure, leaf_args)
        out = fn_(*args) if isinstance(args, tuple) and not hasattr(args, "_fields") \
            else fn_(args)
        out = fg.capture(out) if hasattr(out, "graph") and out.graph is not fg \
            else _as_graph_tensor(out)
    key = object()
    fn = Function(fg, phs + [fg.captures[t] for t in fg.captured], [out])
    return fn, [(key, t) for t in fg.captured], key


def _as_graph_tensor(x):
    from xlapy.compat.v1.framework import convert_to_tensor
    return convert_to_tensor(x)


def _dtype(a: np.ndarray):
    return dtypes.string if a.dtype == object or a.dtype.kind in "SU" else dtypes.as_dtype(
        a.dtype)


# ---- datasets -------------------------------------------------------------------------------
