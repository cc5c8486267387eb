"""tf.TensorArray: a fixed-size list of same-shaped tensors, written and read by index, the
way TF 1.x loops collect per-step results (`ta = ta.write(t, out)` in a tf.while_loop body,
then `ta.stack()`).

xlapy keeps a TensorArray as one tensor of shape [size] + element_shape (its "flow"):
write is a tensor_scatter_nd_update of one row, read a gather, stack the tensor itself,
unstack a TensorArray over a given tensor. Every operation is an ordinary differentiable
op, so gradients flow through writes and reads, and a loop that carries a TensorArray
lowers to one HLO while loop whose state holds the whole array, as TF's XLA bridge
lowers it.

The element shape comes from `element_shape=`, from the first write or unstack; a
TensorArray that enters tf.while_loop unwritten learns it from the first write in the
loop body (the loop is traced before its initial value is made, as TF's XLA bridge
compiles the body once to learn TensorArray shapes). The size is fixed, as XLA requires:
`dynamic_size=True` without a size is refused with a clear error, and a write past the
end raises at run time as TensorFlow's does.
"""

from __future__ import annotations

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor
from xlapy.compat.v1.tensor_shape import TensorShape, as_shape


class _Spec:
    """What every version of one TensorArray shares: its type, size and element shape
    (learned from writes, also those traced inside a loop body)."""

    def __init__(self, dtype, size, element_shape, dynamic_size, name):
        self.dtype = dtype
        self.size = size
        self.element_shape = element_shape
        self.dynamic_size = dynamic_size
        self.name = name

    def merge(self, shape: TensorShape, what: str, index=None) -> None:
        if self.element_shape is None:
            self.element_shape = shape
            return
        if not self.element_shape.is_compatible_with(shape):
            at = "" if index is None else f" index {index}"
            raise InvalidArgumentError(
                f"Could not {what} TensorArray {self.name}{at} because the value shape is "
                f"{shape} which is incompatible with the TensorArray's inferred element "
                f"shape: {self.element_shape}")
        self.element_shape = self.element_shape.merge_with(shape)

    def size_tensor(self):
        return convert_to_tensor(self.size, dtype=dtypes.int32)


class TensorArray:
    """tf.TensorArray (TF 1.x signature)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None,
                 _spec=None, _buffer=None):
        if _spec is not None:
            self._spec, self._buffer = _spec, _buffer
            return
        dtype = dtypes.as_dtype(dtype)
        name = tensor_array_name or name or "TensorArray"
        if size is None:
            raise InvalidArgumentError(
                f"TensorArray {name}: xlapy's TensorArrays have a fixed size (as XLA needs): "
                f"give size= (dynamic_size=True grows nothing; with a size it is accepted "
                f"and writes must stay within it)")
        if isinstance(size, Tensor):
            from xlapy.compat.v1.ops._common import constant_value
            known = constant_value(size)
            size = int(known) if known is not None else size
        elif not isinstance(size, int):
            size = int(size)
        shape = None if element_shape is None else as_shape(element_shape)
        if shape is not None and shape.ndims is None:
            shape = None
        self._spec = _Spec(dtype, size, shape, bool(dynamic_size), name)
        self._buffer = None
        if flow is not None:
            self._buffer = convert_to_tensor(flow, dtype=dtype)

    # ---- properties ------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._spec.dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._spec.element_shape or TensorShape(None)

    @property
    def dynamic_size(self) -> bool:
        return self._spec.dynamic_size

    @property
    def flow(self) -> Tensor:
        """The tensor holding every element ([size] + element_shape)."""
        return self._materialized()

    handle = flow

    def _with(self, buffer) -> "TensorArray":
        return TensorArray(None, _spec=self._spec, _buffer=buffer)

    def _full_shape(self) -> TensorShape:
        n = self._spec.size if isinstance(self._spec.size, int) else None
        return TensorShape([n]).concatenate(self.element_shape)

    def _zeros(self, like=None):
        """A new all-zeros buffer: of the known element shape, else of `like`'s shape."""
        from xlapy.compat.v1.ops.array_ops import concat, shape, zeros
        es = self._spec.element_shape
        if es is not None and es.is_fully_defined() and isinstance(self._spec.size, int):
            return zeros([self._spec.size] + es.as_list(), dtype=self.dtype)
        if like is None:
            raise InvalidArgumentError(
                f"TensorArray {self._spec.name}: its element shape is not known "
                f"({self.element_shape}); give element_shape= or write an element first")
        dims = concat([[self._spec.size_tensor()], shape(like)], 0)
        return zeros(dims, dtype=self.dtype)

    def _materialized(self):
        if self._buffer is None:
            self._buffer = self._zeros()
        return self._buffer

    def _value(self, value, what):
        v = convert_to_tensor(value, dtype=self.dtype)
        if v.dtype != self.dtype:
            raise InvalidArgumentError(f"TensorArray {self._spec.name} has dtype "
                                       f"{self.dtype.name}, but {what} gives {v.dtype.name}")
        return v

    # ---- element access ----------------------------------------------------------------------
    def write(self, index, value, name=None) -> "TensorArray":
        from xlapy.compat.v1.ops.array_ops import expand_dims, reshape
        from xlapy.compat.v1.ops.array_extra_ops import tensor_scatter_nd_update
        v = self._value(value, "write")
        self._spec.merge(v.shape, "write to", index if isinstance(index, int) else None)
        buf = self._buffer if self._buffer is not None else self._zeros(like=v)
        idx = reshape(convert_to_tensor(index, dtype=dtypes.int32), [1, 1])
        out = tensor_scatter_nd_update(buf, idx, expand_dims(v, 0), name=name)
        out.set_shape(out.shape.merge_with(self._full_shape()) if out.shape.ndims is not None
                      else self._full_shape())
        return self._with(out)

    def read(self, index, name=None) -> Tensor:
        from xlapy.compat.v1.ops.gather_ops import gather
        if self._buffer is None and (self._spec.element_shape is None or
                                     not self._spec.element_shape.is_fully_defined()):
            raise InvalidArgumentError(f"Could not read from TensorArray {self._spec.name}: "
                                       "it has not yet been written to")
        out = gather(self._materialized(), convert_to_tensor(index, dtype=dtypes.int32),
                     name=name)
        if self._spec.element_shape is not None:
            out.set_shape(self._spec.element_shape)
        return out

    def gather(self, indices, element_shape=None, name=None) -> Tensor:
        from xlapy.compat.v1.ops.gather_ops import gather
        return gather(self._materialized(), convert_to_tensor(indices, dtype=dtypes.int32),
                      name=name)

    def scatter(self, indices, value, name=None) -> "TensorArray":
        from xlapy.compat.v1.ops.array_ops import expand_dims
        from xlapy.compat.v1.ops.array_extra_ops import tensor_scatter_nd_update
        v = self._value(value, "scatter")
        if v.shape.ndims is not None:
            self._spec.merge(TensorShape(v.shape.dims[1:]), "scatter into")
        if self._buffer is None:
            from xlapy.compat.v1.ops.gather_ops import gather
            buf = self._zeros(like=gather(v, 0))
        else:
            buf = self._buffer
        idx = expand_dims(convert_to_tensor(indices, dtype=dtypes.int32), 1)
        return self._with(tensor_scatter_nd_update(buf, idx, v, name=name))

    def stack(self, name=None) -> Tensor:
        from xlapy.compat.v1.ops.array_ops import identity
        out = identity(self._materialized(), name=name or "TensorArrayStack")
        if out.shape.ndims is None:
            out.set_shape(self._full_shape())
        return out

    def unstack(self, value, name=None) -> "TensorArray":
        v = self._value(value, "unstack")
        if v.shape.ndims == 0:
            raise InvalidArgumentError("TensorArray.unstack needs a value of rank 1 or more")
        if v.shape.ndims is not None:
            self._spec.merge(TensorShape(v.shape.dims[1:]), "unstack into")
            n = v.shape.dims[0]
            if isinstance(self._spec.size, int) and n is not None and n != self._spec.size:
                if not self._spec.dynamic_size:
                    raise InvalidArgumentError(
                        f"Could not unstack {n} elements into TensorArray "
                        f"{self._spec.name} of size {self._spec.size}")
                self._spec.size = n
        return self._with(v)

    def concat(self, name=None) -> Tensor:
        """The elements joined along their first dimension (all elements have one shape
        here, so this is a reshape)."""
        from xlapy.compat.v1.ops.array_ops import concat, reshape, shape
        buf = self._materialized()
        return reshape(buf, concat([[-1], shape(buf)[2:]], 0), name=name)

    def split(self, value, lengths, name=None) -> "TensorArray":
        """value cut into pieces of `lengths` along its first dimension (equal lengths:
        xlapy's TensorArray holds elements of one shape)."""
        from xlapy.compat.v1.ops._common import constant_value
        from xlapy.compat.v1.ops.array_ops import concat, reshape, shape
        known = constant_value(convert_to_tensor(lengths, dtype=dtypes.int64))
        if known is None or len(set(int(n) for n in known.ravel())) > 1:
            raise InvalidArgumentError(
                f"TensorArray {self._spec.name}.split: xlapy needs equal, known lengths "
                f"(its elements share one shape), got {lengths!r}")
        n, k = len(known.ravel()), int(known.ravel()[0]) if len(known.ravel()) else 0
        v = self._value(value, "split")
        pieces = reshape(v, concat([[n, k], shape(v)[1:]], 0), name=name)
        return self.unstack(pieces)

    def size(self, name=None) -> Tensor:
        from xlapy.compat.v1.ops.array_ops import identity
        return identity(self._spec.size_tensor(), name=name or "TensorArraySize")

    def identity(self) -> "TensorArray":
        return self

    def close(self, name=None):
        from xlapy.compat.v1.ops.array_ops import no_op
        return no_op(name=name)

    def mark_used(self) -> None:
        pass

    def __repr__(self) -> str:
        return (f"<tf.TensorArray {self._spec.name!r} dtype={self.dtype.name} "
                f"size={self._spec.size} element_shape={self.element_shape}>")


class _Deferred:
    """The initial value of a loop-carried TensorArray whose element shape the loop body
    tells (tf.while_loop makes it after tracing the body)."""

    def __init__(self, ta: TensorArray):
        self.ta = ta
        self.dtype = ta.dtype
        self.shape = TensorShape(None)
        self.name = ta._spec.name

    def resolve(self) -> Tensor:
        spec = self.ta._spec
        if spec.element_shape is None or not spec.element_shape.is_fully_defined():
            raise InvalidArgumentError(
                f"TensorArray {spec.name} enters tf.while_loop unwritten and the loop body "
                f"writes elements of shape {spec.element_shape or '<unknown>'}: xlapy needs "
                f"the element shape fully known to make the loop's array; give "
                f"element_shape= to the TensorArray")
        return self.ta._zeros()


def loop_carried(leaves: list) -> list:
    """tf.while_loop's flat loop variables with TensorArrays replaced by their tensors (or a
    _Deferred for one not yet written)."""
    out = []
    for v in leaves:
        if isinstance(v, TensorArray):
            out.append(v._buffer if v._buffer is not None else _Deferred(v))
        else:
            out.append(v)
    return out


def rewrap(template_leaves: list, tensors: list, known_shape: bool = False) -> list:
    """The loop variables again: a TensorArray of the same spec around each tensor standing
    for one."""
    out = []
    for t, v in zip(template_leaves, tensors):
        if isinstance(t, TensorArray):
            ta = t._with(v)
            if known_shape and v.shape.ndims is None:
                v.set_shape(ta._full_shape())
            out.append(ta)
        else:
            out.append(v)
    return out


__all__ = ["TensorArray"]
