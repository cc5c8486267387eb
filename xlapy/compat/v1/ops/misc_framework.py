"""Framework classes of the TF 1.x top level: tf.IndexedSlices (and IndexedSlicesValue),
tf.DeviceSpec, and the enums tf.VariableAggregation and tf.VariableSynchronization."""

from __future__ import annotations

import collections
import enum

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor
from xlapy.compat.v1.ops._common import constant_value
from xlapy.compat.v1.ops.gather_ops import unsorted_segment_sum
from xlapy.compat.v1.ops.math_ops import negative
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape

__all__ = ["DeviceSpec", "IndexedSlices", "IndexedSlicesValue", "VariableAggregation",
           "VariableSynchronization"]


# ---- tf.IndexedSlices --------------------------------------------------------------------------

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])
IndexedSlicesValue.__doc__ = "The value of an IndexedSlices: NumPy values, indices and " \
    "dense_shape."


class IndexedSlices:
    """A sparse slice representation of a dense tensor: the rows `indices` of a tensor of
    shape `dense_shape` hold `values` (rows with the same index add up); the other rows
    are zero. tf.convert_to_tensor (and every op taking a tensor) gives the dense tensor,
    an UnsortedSegmentSum of the values. tf.gradients returns dense gradients here, so an
    IndexedSlices is what user code builds itself."""

    _is_indexed_slices = True  # (Session.run fetches an IndexedSlicesValue)

    def __init__(self, values, indices, dense_shape=None):
        self._values = convert_to_tensor(values)
        self._indices = convert_to_tensor(indices)
        if not self._indices.dtype.is_integer:
            raise InvalidTypeError(f"IndexedSlices: indices must be int32 or int64, got "
                                   f"{self._indices.dtype.name}")
        self._dense_shape = None if dense_shape is None else convert_to_tensor(dense_shape)
        if self._dense_shape is not None and not self._dense_shape.dtype.is_integer:
            raise InvalidTypeError(f"IndexedSlices: dense_shape must be int32 or int64, got "
                                   f"{self._dense_shape.dtype.name}")

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    name = property(lambda self: self._values.name)
    device = property(lambda self: self._values.device)
    op = property(lambda self: self._values.op)
    dtype = property(lambda self: self._values.dtype)
    graph = property(lambda self: self._values.graph)

    def get_shape(self) -> TensorShape:
        """The dense shape, as far as dense_shape is known when the graph is built."""
        if self._dense_shape is None:
            return unknown_shape()
        v = constant_value(self._dense_shape)
        if v is not None:
            return TensorShape([int(d) for d in np.reshape(v, [-1])])
        n = self._dense_shape.shape.dims[0] if self._dense_shape.shape.ndims == 1 else None
        return unknown_shape(n)

    shape = property(get_shape)

    def consumers(self) -> list:
        return self._values.consumers()

    def _to_tensor(self) -> Tensor:
        if self._dense_shape is None:
            raise InvalidArgumentError(f"Tensor conversion requested for IndexedSlices "
                                       f"without dense_shape: {self!s}")
        dense = unsorted_segment_sum(self._values, self._indices, self._dense_shape[0])
        dense.set_shape(self.get_shape())
        return dense

    def __neg__(self) -> "IndexedSlices":
        return IndexedSlices(negative(self._values), self._indices, self._dense_shape)

    def __str__(self):
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    __repr__ = __str__


# ---- tf.DeviceSpec ------------------------------------------------------------------------------

def _device_type(t):
    """TF spells the legacy device types in upper case (cpu -> CPU, gpu -> GPU)."""
    if t is None:
        return None
    return t.upper() if t.lower() in ("cpu", "gpu") else t


def _int_or_none(v, what: str):
    if v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"DeviceSpec: {what} must be an int, got {v!r}") from None


class DeviceSpec:
    """A (partial) device name: /job:<job>/replica:<r>/task:<t>/device:<type>:<index>.
    Unset fields are None; tf.device accepts to_string()'s result."""

    def __init__(self, job=None, replica=None, task=None, device_type=None,
                 device_index=None):
        self.job = job
        self.replica = replica
        self.task = task
        self.device_type = device_type
        self.device_index = device_index

    job = property(lambda self: self._job,
                   lambda self, v: setattr(self, "_job", None if v is None else str(v)))
    replica = property(lambda self: self._replica,
                       lambda self, v: setattr(self, "_replica", _int_or_none(v, "replica")))
    task = property(lambda self: self._task,
                    lambda self, v: setattr(self, "_task", _int_or_none(v, "task")))
    device_type = property(lambda self: self._device_type,
                           lambda self, v: setattr(self, "_device_type", _device_type(v)))
    device_index = property(lambda self: self._device_index,
                            lambda self, v: setattr(self, "_device_index",
                                                    _int_or_none(v, "device_index")))

    @staticmethod
    def _parse(spec) -> dict:
        fields: dict = {}
        for part in (spec or "").split("/"):
            if not part:
                continue
            y = part.split(":")
            key = y[0].lower()
            if len(y) == 2 and key in ("job", "replica", "task"):
                fields[key] = y[1] if key == "job" else _int_or_none(y[1], key)
            elif len(y) == 2 and key in ("cpu", "gpu"):  # the legacy form /cpu:0
                fields["device_type"] = y[0].upper()
                fields["device_index"] = None if y[1] == "*" else _int_or_none(
                    y[1], "device_index")
            elif key == "device" and len(y) in (2, 3):
                fields["device_type"] = _device_type(y[1])
                fields["device_index"] = None if len(y) == 2 or y[2] == "*" else \
                    _int_or_none(y[2], "device_index")
            else:
                raise InvalidArgumentError(f"Unknown attribute: '{part}' in '{spec}'")
        return fields

    @classmethod
    def from_string(cls, spec) -> "DeviceSpec":
        """The DeviceSpec of a device string ('/job:w/task:1/device:GPU:0', '/cpu:0')."""
        return cls(**cls._parse(spec))

    def parse_from_string(self, spec) -> "DeviceSpec":
        """Set this spec's fields from a device string (fields it names); returns self."""
        for k, v in self._parse(spec).items():
            setattr(self, k, v)
        return self

    def merge_from(self, dev) -> None:
        """Set the fields of this spec that `dev` (a DeviceSpec) sets."""
        for k in ("job", "replica", "task", "device_type", "device_index"):
            v = getattr(dev, k)
            if v is not None:
                setattr(self, k, v)

    def make_merged_spec(self, dev) -> "DeviceSpec":
        """A new spec: this one with the fields that `dev` sets replaced."""
        out = DeviceSpec(self.job, self.replica, self.task, self.device_type,
                         self.device_index)
        out.merge_from(dev)
        return out

    def replace(self, **kwargs) -> "DeviceSpec":
        """A new spec with the given fields replaced."""
        fields = {k: getattr(self, k) for k in ("job", "replica", "task", "device_type",
                                                "device_index")}
        unknown = set(kwargs) - set(fields)
        if unknown:
            raise InvalidTypeError(f"DeviceSpec.replace: unknown fields {sorted(unknown)}")
        fields.update(kwargs)
        return DeviceSpec(**fields)

    def to_string(self) -> str:
        s = ""
        if self.job is not None:
            s += f"/job:{self.job}"
        if self.replica is not None:
            s += f"/replica:{self.replica}"
        if self.task is not None:
            s += f"/task:{self.task}"
        if self.device_type is not None:
            idx = "*" if self.device_index is None else self.device_index
            s += f"/device:{self.device_type}:{idx}"
        return s

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return f"<DeviceSpec '{self.to_string()}'>"


# ---- enums ---------------------------------------------------------------------------------------

class VariableAggregation(enum.Enum):
    """How a distributed variable's updates from several replicas combine."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # the TF 1.x alias of ONLY_FIRST_REPLICA


class VariableSynchronization(enum.Enum):
    """When a distributed variable is synchronized."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3

