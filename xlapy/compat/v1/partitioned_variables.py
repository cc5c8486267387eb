"""Partitioned variables: tf.get_variable(..., partitioner=p) and tf.variable_scope(...,
partitioner=p) split a variable along one axis into parts, each an ordinary Variable named
`<name>/part_<i>`, and return a PartitionedVariable that holds them.

    w = tf.get_variable("w", [10, 4], partitioner=tf.fixed_size_partitioner(3))
    list(w)           # Variables w/part_0 [4, 4], w/part_1 [3, 4], w/part_2 [3, 4]
    tf.matmul(x, w)   # converts to the concatenation of the parts

A partitioner is a function partitioner(shape, dtype) -> the number of parts per axis (a
list as long as the shape, at most one entry above 1). Along the partitioned axis the
first `dim % n` parts are one row larger, as TF lays them out. An initializer function is
called once per part with the part's shape and partition_info (the full shape and the
part's offset); a value initializer is sliced. tf.train.Saver and the optimizers see the
parts (the graph's global and trainable variables are the parts).
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.framework import GraphKeys, Tensor, get_default_graph
from xlapy.compat.v1.tensor_shape import TensorShape, as_shape
from xlapy.compat.v1.variables import (_get_variable, _vars_by_name, get_variable_scope,
                                       glorot_uniform_initializer, variable_scope)

__all__ = ["PartitionedVariable", "create_partitioned_variables", "fixed_size_partitioner",
           "min_max_variable_partitioner", "variable_axis_size_partitioner"]


class PartitionInfo:
    """What an initializer of one part learns of the whole: the full shape and the part's
    offset in it (TF's partition_info argument)."""

    def __init__(self, full_shape, var_offset):
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape):
        """The part's offset along its one sliced axis (0 when none is sliced)."""
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self.var_offset[axis]

    def single_slice_dim(self, shape):
        """The axis along which a part of `shape` is sliced from the full shape, or None."""
        shape = as_shape(shape).as_list()
        if len(shape) != len(self.full_shape):
            raise ValueError(f"Expected equal length, but received shape={shape} of length "
                             f"{len(shape)} while self.full_shape={self.full_shape} is of "
                             f"length {len(self.full_shape)}.")
        sliced = [i for i, (s, f) in enumerate(zip(shape, self.full_shape)) if s != f]
        if len(sliced) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape={shape} and "
                             f"self.full_shape={self.full_shape} since slice dim could be "
                             f"any of {sliced}")
        return sliced[0] if sliced else None


class PartitionedVariable:
    """A variable stored as parts (Variables) split along one axis. Iterating gives the
    parts; tf.convert_to_tensor (and every op taking a tensor) gives their concatenation."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)) or not variable_list:
            raise ValueError(f"variable_list must be a non-empty list of Variables, got "
                             f"{variable_list!r}")
        if not isinstance(partitions, (list, tuple)) or not all(
                isinstance(p, (int, np.integer)) and p >= 1 for p in partitions):
            raise ValueError(f"partitions must be a list of positive integers, got "
                             f"{partitions!r}")
        if int(np.prod(partitions)) != len(variable_list):
            raise ValueError(f"variable_list length {len(variable_list)} must match product "
                             f"of partitions {int(np.prod(partitions))}")
        self._dtype = dtypes.as_dtype(dtype)
        for v in variable_list:
            if v.dtype.base_dtype != self._dtype:
                raise ValueError(f"All variables' dtypes must match dtype {self._dtype.name}; "
                                 f"{v.name} has {v.dtype.name}")
        self._name = name
        self._shape = as_shape(shape)
        self._variable_list = list(variable_list)
        self._partitions = [int(p) for p in partitions]

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)
    graph = property(lambda self: self._variable_list[0].graph)

    def get_shape(self) -> TensorShape:
        return self._shape

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length for {len(axes)} > 1 partition axes")
        return len(self._variable_list)

    def _get_variable_list(self) -> list:
        return list(self._variable_list)

    def _get_partitions(self) -> list:
        return list(self._partitions)

    def _partition_axes(self) -> list:
        axes = [i for i, p in enumerate(self._partitions) if p > 1]
        return axes or [0]

    def as_tensor(self) -> Tensor:
        """The parts concatenated along the partitioned axis (made outside any control
        dependencies, as TF makes it)."""
        from xlapy.compat.v1.ops.array_ops import concat  # (array ops import variables)
        graph = self.graph
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot concatenate along more than one dimension: "
                                      f"{axes}. Multi-axis partition concat is not supported")
        with graph.control_dependencies(None), \
                graph.name_scope(self._name + "/ConcatPartitions/"):
            return concat([v.value() for v in self._variable_list], axes[0])

    _to_tensor = as_tensor
    _concat = as_tensor

    def _apply_assign_fn(self, assign_fn, value):
        from xlapy.compat.v1.ops.manip_ops import split  # (manip ops import variables)
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot do assign action along more than one "
                                      f"dimension: {axes}. Multi-axis partition assign action "
                                      "is not supported")
        if isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError(f"assign: {len(value)} values for "
                                 f"{len(self._variable_list)} partitions")
            parts = value
        else:
            sizes = [v.shape.as_list()[axes[0]] for v in self._variable_list]
            parts = split(value, sizes, axis=axes[0])
        return [assign_fn(v, p) for v, p in zip(self._variable_list, parts)]

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assign each part its slice of `value` (or the list of part values); returns the
        list of assignments (their ops when read_value=False)."""
        out = self._apply_assign_fn(
            lambda v, p: v.assign(p, use_locking=use_locking, name=name), value)
        return out if read_value else [t.op for t in out]

    def __repr__(self):
        return (f"<tf.PartitionedVariable '{self._name}' shape={self._shape} "
                f"dtype={self._dtype.name} partitions={self._partitions}>")


# ---- partitioners ------------------------------------------------------------------------------

def _element_bytes(dtype, bytes_per_string_element):
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype.base_dtype == dtypes.string else dtype.size


def _known_shape(shape) -> TensorShape:
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"shape is not fully defined: {shape}")
    return shape


def _check_axis(axis, shape):
    if not 0 <= axis < len(shape):
        raise ValueError(f"Can not partition variable along axis {axis} when shape is only "
                         f"{shape}")


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner cutting axis `axis` into num_shards parts (fewer when the axis is
    shorter)."""
    if not isinstance(num_shards, (int, np.integer)) or num_shards < 1:
        raise ValueError(f"num_shards must be a positive integer, got {num_shards!r}")

    def _partitioner(shape, dtype=None, **unused):
        shape = _known_shape(shape)
        _check_axis(axis, shape)
        parts = [1] * len(shape)
        parts[axis] = min(int(num_shards), shape.as_list()[axis])
        return parts
    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """A partitioner cutting axis `axis` into as few parts as keep each at most
    max_shard_bytes (at least one slice per part; at most max_shards parts)."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(f"Both max_shard_bytes and bytes_per_string_element must be "
                         f"positive. Currently, max_shard_bytes is {max_shard_bytes} and "
                         f"bytes_per_string_element is {bytes_per_string_element}")
    if max_shards is not None and max_shards < 1:
        raise ValueError(f"max_shards must be positive, got {max_shards}")

    def _partitioner(shape, dtype):
        shape = _known_shape(shape)
        _check_axis(axis, shape)
        dims = shape.as_list()
        parts = [1] * len(dims)
        if dims[axis] == 0:
            return parts
        slice_bytes = shape.num_elements() / dims[axis] * _element_bytes(
            dtype, bytes_per_string_element)
        per_shard = max(1, math.floor(max_shard_bytes / slice_bytes)) if slice_bytes else \
            dims[axis]
        n = int(math.ceil(dims[axis] / per_shard))
        if max_shards:
            n = min(int(max_shards), n)
        parts[axis] = n
        return parts
    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """A partitioner giving each part at least min_slice_size bytes, with at most
    max_partitions parts (and no more than the axis has rows)."""
    if max_partitions < 1:
        raise ValueError(f"max_partitions must be positive, got {max_partitions}")
    if min_slice_size < 1:
        raise ValueError(f"min_slice_size must be positive, got {min_slice_size}")

    def _partitioner(shape, dtype):
        shape = _known_shape(shape)
        _check_axis(axis, shape)
        total = shape.num_elements() * _element_bytes(dtype, bytes_per_string_element)
        parts = [1] * len(shape)
        parts[axis] = max(1, min(shape.as_list()[axis], int(max_partitions),
                                 int(math.ceil(total / min_slice_size))))
        return parts
    return _partitioner


# ---- get_variable with a partitioner -------------------------------------------------------------

def _partitioned_store(graph) -> dict:
    if not hasattr(graph, "_xlapy_partitioned"):
        graph._xlapy_partitioned = {}
    return graph._xlapy_partitioned


def _check_partitions(partitions, shape: TensorShape, full: str) -> list:
    dims = shape.as_list()
    if not isinstance(partitions, (list, tuple)) or not all(
            isinstance(p, (int, np.integer)) for p in partitions):
        raise ValueError(f"Partitioner for {full} returned {partitions!r}, not a list of "
                         "integers")
    partitions = [int(p) for p in partitions]
    if len(partitions) != len(dims):
        raise ValueError(f"Partitioner returned a partition list that does not match the "
                         f"Variable's rank: {partitions} vs. {shape}")
    if any(p < 1 for p in partitions):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {partitions}")
    if sum(p > 1 for p in partitions) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, "
                         f"partitioning: {partitions}")
    for p, d in zip(partitions, dims):
        if p > d:
            raise ValueError(f"Cannot create {p} slices for size {d}. shape: {shape}, "
                             f"slicing: {partitions}")
    return partitions


def _accepts_partition_info(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "partition_info" or p.kind is p.VAR_KEYWORD for p in params)


def _part_initializer(init, full_shape, offset, part_shape, dtype):
    """The initializer of one part: `init` called with partition_info, or its slice when
    `init` is a value."""
    if isinstance(init, type):
        init = init()
    info = PartitionInfo(full_shape, offset)
    if callable(init):
        if _accepts_partition_info(init):
            return lambda s, d: init(s, d, partition_info=info)
        return init
    index = tuple(slice(o, o + n) for o, n in zip(offset, part_shape))
    if isinstance(init, Tensor) or hasattr(init, "_to_tensor"):
        from xlapy.compat.v1.ops.array_ops import slice_  # (array ops import variables)
        return lambda s, d: slice_(init, offset, part_shape)
    value = np.asarray(init)
    if list(value.shape) != list(full_shape):
        raise ValueError(f"The initializer's value has shape {list(value.shape)}; the "
                         f"partitioned variable's shape is {list(full_shape)}")
    return value[index]


def get_partitioned(name, shape, dtype, initializer, regularizer, trainable, collections,
                    partitioner):
    """tf.get_variable's partitioned case (None: an ordinary variable is wanted). Called in
    the graph variables live in."""
    graph = get_default_graph()
    scope = get_variable_scope()
    if name is None:
        full = scope.name
    else:
        full = f"{scope.name}/{name}" if scope.name else name
    store = _partitioned_store(graph)
    if partitioner is None:
        if full in store:
            raise ValueError(f"No partitioner was provided, but a partitioned version of the "
                             f"variable was found: {full}. Perhaps a variable of the same "
                             "name was already created with partitioning?")
        return None
    if not callable(partitioner):
        raise TypeError(f"partitioner must be callable, got {partitioner!r}")
    dtype = dtypes.as_dtype(dtype or dtypes.float32)
    if shape is None and initializer is not None and not callable(initializer):
        shape = initializer.shape if isinstance(initializer, Tensor) else \
            np.shape(initializer)
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable ({full}) must be fully "
                         f"defined, but instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    partitions = _check_partitions(partitioner(shape=shape, dtype=dtype), shape, full)
    if full in store:
        if not scope.reuse:
            raise ValueError(f"Partitioned variable with name {full} already exists. Did you "
                             "mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        found = store[full]
        if not shape.is_compatible_with(found.get_shape()):
            raise ValueError(f"Trying to reuse partitioned variable {full}, but specified "
                             f"shape {shape} and found shape {found.get_shape()}.")
        if partitions != found._get_partitions():
            raise ValueError(f"Trying to reuse partitioned variable {full}. Set partitions "
                             f"{partitions} and found partitions {found._get_partitions()}.")
        return found
    if scope.reuse is True:
        raise ValueError(f"PartitionedVariable {full} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=None in VarScope?")
    if full in _vars_by_name(graph):
        raise ValueError(f"A partitioner was provided, but an unpartitioned version of the "
                         f"variable was found: {full}. Perhaps a variable of the same name "
                         "was already created without partitioning?")
    init = initializer if initializer is not None else (
        scope.initializer or glorot_uniform_initializer())
    dims = shape.as_list()
    axis = next((i for i, p in enumerate(partitions) if p > 1), 0)
    n = partitions[axis]
    base, extra = divmod(dims[axis], n)
    parts, start = [], 0
    for i in range(n):
        size = base + (1 if i < extra else 0)
        part_shape = list(dims)
        part_shape[axis] = size
        offset = [0] * len(dims)
        offset[axis] = start
        start += size
        part_name = f"part_{i}" if name is None else f"{name}/part_{i}"
        v = _get_variable(part_name, part_shape, dtype,
                          _part_initializer(init, dims, offset, part_shape, dtype),
                          trainable, collections)
        v._save_slice_info = (full, list(dims), offset, part_shape)
        if regularizer is not None:
            with graph.name_scope(f"{part_name}/Regularizer"):
                loss = regularizer(v)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        parts.append(v)
    pv = PartitionedVariable(full, shape, dtype, parts, partitions)
    store[full] = pv
    return pv


def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32,
                                 trainable=True, collections=None, name=None, reuse=None):
    """Deprecated (use get_variable with a partitioner): the parts of a variable of
    `shape` sliced as `slicing` (parts per axis), named <name or PartitionedVariable>/
    part_<i>."""
    shape, slicing = list(as_shape(shape).as_list()), list(slicing)
    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the "
                         f"length: shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    from xlapy.compat.v1.ops.functional import in_root_graph  # (functional imports variables)
    with in_root_graph(), variable_scope(name, default_name="PartitionedVariable",
                                         reuse=reuse):
        pv = get_partitioned(None, shape, dtype, initializer, None, trainable, collections,
                             lambda **unused: slicing)
    return list(pv)
