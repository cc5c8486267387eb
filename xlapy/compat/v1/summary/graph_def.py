"""A Graph as TensorFlow's GraphDef protobuf (for TensorBoard's graph tab), and RunMetadata
as its protobuf bytes (for FileWriter.add_run_metadata).

Each node has its op type, inputs in TF's notation (`op`, `op:1`, `^control`), device, the
attributes TensorBoard shows (dtypes, shapes, scalars, strings) and `_output_shapes`.
Attributes that are Python objects (a py_func's function, a Const's large value) are left
out; a Const's value is kept when it has at most 16 elements.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.protowire import _varint
from xlapy.compat.v1.summary._tb import tb
from xlapy.compat.v1.tensor_shape import TensorShape

_DT = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE", "int8": "DT_INT8",
       "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64", "uint8": "DT_UINT8",
       "uint16": "DT_UINT16", "bool": "DT_BOOL", "string": "DT_STRING",
       "bfloat16": "DT_BFLOAT16"}


def _dtype_enum(d: dtypes.DType) -> int:
    return getattr(tb().types_pb2, _DT[d.name])


def _shape_proto(shape: TensorShape):
    t = tb().tensor_shape_pb2.TensorShapeProto
    if shape.ndims is None:
        return t(unknown_rank=True)
    return t(dim=[t.Dim(size=-1 if d is None else int(d)) for d in shape.dims])


def _tensor_proto(value: np.ndarray):
    t = tb()
    dt = dtypes.as_dtype(value.dtype)
    proto = t.tensor_pb2.TensorProto(dtype=_dtype_enum(dt),
                                     tensor_shape=_shape_proto(TensorShape(list(value.shape))))
    flat = value.reshape(-1)
    if dt == dtypes.string:
        proto.string_val.extend(bytes(b) for b in flat)
    elif dt.is_floating and dt.size > 2:  # float16 / bfloat16: bytes in tensor_content
        (proto.float_val if dt == dtypes.float32 else proto.double_val).extend(
            float(v) for v in flat)
    elif dt.is_bool:
        proto.bool_val.extend(bool(v) for v in flat)
    elif dt == dtypes.int64:
        proto.int64_val.extend(int(v) for v in flat)
    elif dt.is_integer:
        proto.int_val.extend(int(v) for v in flat)
    else:
        proto.tensor_content = value.tobytes()
    return proto


def _attr(value):
    """An AttrValue for a Python attribute value, or None to leave it out."""
    a = tb().attr_value_pb2.AttrValue
    if isinstance(value, dtypes.DType):
        return a(type=_dtype_enum(value))
    if isinstance(value, TensorShape):
        return a(shape=_shape_proto(value))
    if isinstance(value, bool):
        return a(b=value)
    if isinstance(value, (int, np.integer)):
        return a(i=int(value))
    if isinstance(value, (float, np.floating)):
        return a(f=float(value))
    if isinstance(value, str):
        return a(s=value.encode())
    if isinstance(value, bytes):
        return a(s=value)
    if isinstance(value, np.ndarray) and value.size <= 16:
        return a(tensor=_tensor_proto(value))
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, np.integer)) and
                                                not isinstance(v, bool) for v in value):
        return a(list=a.ListValue(i=[int(v) for v in value]))
    return None


def graph_def(graph):
    """The GraphDef protobuf of `graph`."""
    t = tb()
    nodes = []
    for op in graph.get_operations():
        inputs = [x.op.name if x.value_index == 0 else x.name for x in op.inputs]
        inputs += ["^" + c.name for c in op.control_inputs]
        node = t.node_def_pb2.NodeDef(name=op.name, op=op.type, input=inputs,
                                      device=op.device)
        for k, v in op._attrs.items():
            a = _attr(v)
            if a is not None:
                node.attr[k].CopyFrom(a)
        if op.outputs:
            shapes = t.attr_value_pb2.AttrValue.ListValue(
                shape=[_shape_proto(x.shape) for x in op.outputs])
            node.attr["_output_shapes"].CopyFrom(t.attr_value_pb2.AttrValue(list=shapes))
        nodes.append(node)
    return t.graph_pb2.GraphDef(node=nodes, versions=t.versions_pb2.VersionDef(producer=27))


# ---- RunMetadata -------------------------------------------------------------------------------
# tensorboardX ships no RunMetadata message; its few fields are encoded here in protobuf's
# wire format (field numbers of TF's config.proto and step_stats.proto):
#   RunMetadata.step_stats = 1; StepStats.dev_stats = 1; DeviceStepStats.device = 1,
#   node_stats = 2; NodeExecStats.node_name = 1, all_start_micros = 2, op_start_rel_micros = 3,
#   op_end_rel_micros = 4, all_end_rel_micros = 5, timeline_label = 8, scheduled_micros = 9,
#   thread_id = 10.

def _int_field(num: int, value: int) -> bytes:
    return _varint(num << 3) + _varint(int(value)) if value else b""


def _bytes_field(num: int, payload: bytes) -> bytes:
    return _varint((num << 3) | 2) + _varint(len(payload)) + payload


def _node_stats(n) -> bytes:
    return (_bytes_field(1, n.node_name.encode()) + _int_field(2, n.all_start_micros)
            + _int_field(3, n.op_start_rel_micros) + _int_field(4, n.op_end_rel_micros)
            + _int_field(5, n.all_end_rel_micros)
            + (_bytes_field(8, n.timeline_label.encode()) if n.timeline_label else b"")
            + _int_field(9, n.scheduled_micros) + _int_field(10, n.thread_id))


def run_metadata_bytes(run_metadata) -> bytes:
    """The serialized RunMetadata protobuf of xlapy's RunMetadata (its step stats)."""
    devs = b"".join(
        _bytes_field(1, _bytes_field(1, d.device.encode()) +
                     b"".join(_bytes_field(2, _node_stats(n)) for n in d.node_stats))
        for d in run_metadata.step_stats.dev_stats)
    return _bytes_field(1, devs)
