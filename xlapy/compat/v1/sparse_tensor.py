"""tf.SparseTensor: a composite of three tensors, as TF 1.x scripts use it.

A SparseTensor is (indices, values, dense_shape): int64 [N, rank] indices, values [N] and
an int64 [rank] dense_shape. It is not a Tensor (tf.convert_to_tensor refuses it, as TF
does): the sparse ops (ops/sparse_ops.py) take its three tensors as inputs. Session.run
fetches it as a SparseTensorValue (its three values) and feeds it (a sparse_placeholder,
or any SparseTensor) from a SparseTensorValue or an (indices, values, dense_shape) tuple,
which it splits into the feeds of the three tensors.
"""

from __future__ import annotations

import collections

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor, get_default_graph
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor: values[i] at indices[i] of a dense_shape-shaped tensor of zeros."""

    _is_sparse_tensor = True  # (framework and session recognize it without importing it)

    def __init__(self, indices, values, dense_shape):
        graph = get_default_graph()
        need_scope = not all(isinstance(v, Tensor) for v in (indices, values, dense_shape))
        if need_scope:
            with graph.name_scope("SparseTensor"):
                self._build(indices, values, dense_shape)
        else:
            self._build(indices, values, dense_shape)

    def _build(self, indices, values, dense_shape):
        indices = _as_int64(indices, "indices")
        values = _components(values, "values")
        dense_shape = _as_int64(dense_shape, "dense_shape")
        ishape = indices.shape.with_rank(2)
        vshape = values.shape.with_rank(1)
        sshape = dense_shape.shape.with_rank(1)
        if not TensorShape(ishape.dims[:1]).is_compatible_with(vshape):
            raise InvalidArgumentError(f"SparseTensor: indices of shape {ishape} and values "
                                       f"of shape {vshape} do not agree on the number of "
                                       "entries")
        if not TensorShape(ishape.dims[1:]).is_compatible_with(sshape):
            raise InvalidArgumentError(f"SparseTensor: indices of shape {ishape} and a "
                                       f"dense_shape of shape {sshape} do not agree on the "
                                       "rank")
        self._indices, self._values, self._dense_shape = indices, values, dense_shape

    @classmethod
    def from_value(cls, sparse_tensor_value):
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        v = sparse_tensor_value
        return cls(v.indices, v.values, v.dense_shape)

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)

    @property
    def shape(self) -> TensorShape:
        """The static dense shape: what is known of dense_shape's value."""
        from xlapy.compat.v1.ops._common import partial_shape_value
        s = partial_shape_value(self._dense_shape)
        rank = self._indices.shape.dims[1] if self._indices.shape.ndims == 2 else None
        if s.dims is None and rank is not None:
            return unknown_shape(rank)
        return s

    def get_shape(self) -> TensorShape:
        return self.shape

    def consumers(self) -> list:
        return [op for t in (self._indices, self._values, self._dense_shape)
                for op in t.consumers()]

    def eval(self, feed_dict=None, session=None):
        from xlapy.compat.v1.session import _session_for
        return _session_for(session, self.graph).run(self, feed_dict)

    def _components(self) -> tuple:
        return self._indices, self._values, self._dense_shape

    def __repr__(self):
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")

    __str__ = __repr__
    __hash__ = object.__hash__

    # sparse * dense, sparse / dense (TF's SparseDenseCwiseMul/Div): the dense side, or a
    # scalar, is broadcast to the dense shape and read at the entries; the result keeps the
    # entries (a zero times inf stays out of it, as in TF)
    def _cwise(self, other, op: str, reverse: bool = False):
        if isinstance(other, SparseTensor):
            raise InvalidTypeError(f"SparseTensor {op} SparseTensor is not defined (TF: use "
                                   "tf.sparse.add or densify one side)")
        if reverse:
            raise InvalidTypeError(f"a dense value {op} a SparseTensor is not defined (TF "
                                   "defines only SparseTensor * and / a dense tensor)")
        from xlapy.compat.v1.ops import array_ops, gather_ops, math_ops  # (import this one)
        with self.graph.name_scope(f"SparseDenseCwise{op.title()}"):
            dense = convert_to_tensor(other, dtype=self.dtype)
            full = array_ops.broadcast_to(dense, self._dense_shape)
            at = gather_ops.gather_nd(full, self._indices)
            if op == "div" and not (self.dtype.is_floating or self.dtype.is_complex):
                raise InvalidTypeError(f"SparseTensor / dense of {self.dtype.name} is not "
                                       "supported (TF's truncating integer division); cast "
                                       "to a float type")
            fn = {"mul": math_ops.multiply, "div": math_ops.truediv}[op]
            return SparseTensor(self._indices, fn(self._values, at), self._dense_shape)

    def __mul__(self, other):
        return self._cwise(other, "mul")

    def __truediv__(self, other):
        return self._cwise(other, "div")

    __div__ = __truediv__

    def __rmul__(self, other):
        return self._cwise(other, "mul", reverse=True)

    def __rtruediv__(self, other):
        return self._cwise(other, "div", reverse=True)


def _as_int64(v, name) -> Tensor:
    if isinstance(v, Tensor):
        if v.dtype != dtypes.int64:
            raise InvalidTypeError(f"Tensor conversion requested dtype int64 for Tensor with "
                                   f"dtype {v.dtype.name}: {v!r} (SparseTensor's {name} must "
                                   "be int64)")
        return v
    return convert_to_tensor(v, dtype=dtypes.int64, name=name)


def _components(v, name) -> Tensor:
    return v if isinstance(v, Tensor) else convert_to_tensor(v, name=name)


def is_sparse(x) -> bool:
    return isinstance(x, (SparseTensor, SparseTensorValue))


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise InvalidTypeError(f"Sparse dtype: requested = {dtypes.as_dtype(dtype).name}, "
                                   f"actual = {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def sparse_placeholder(dtype, shape=None, name=None) -> SparseTensor:
    """Three placeholders: name/indices (int64 [None, rank]), name/values (dtype [None])
    and name/shape (int64 [rank]); a fully known `shape` makes the dense shape a constant
    (which a feed still replaces), as TF's sparse_placeholder."""
    from xlapy.compat.v1.ops.array_ops import placeholder
    dtype = dtypes.as_dtype(dtype)
    rank = None
    dense_shape = None
    if shape is not None:
        if isinstance(shape, Tensor):
            rank = shape.shape.dims[0] if shape.shape.ndims == 1 else None
            dense_shape = shape
        else:
            dims = list(TensorShape(shape).dims)
            rank = len(dims)
            if all(d is not None for d in dims):
                dense_shape = convert_to_tensor(dims, dtype=dtypes.int64,
                                                name=None if name is None else name + "/shape")
    if dense_shape is None:
        dense_shape = placeholder(dtypes.int64, [rank],
                                  name=None if name is None else name + "/shape")
    values = placeholder(dtype, [None], name=None if name is None else name + "/values")
    indices = placeholder(dtypes.int64, [None, rank],
                          name=None if name is None else name + "/indices")
    return SparseTensor(indices, values, dense_shape)
