"""tf.saved_model.utils: TensorInfo protos of tensors, and back."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.graph_def import dtype_enum, shape_proto
from xlapy.compat.v1.proto.meta_graph_pb import TensorInfo

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor) -> TensorInfo:
    if hasattr(tensor, "_to_tensor"):
        tensor = tensor._to_tensor()
    if not isinstance(tensor, Tensor):
        raise InvalidArgumentError(f"build_tensor_info takes a Tensor, got {tensor!r}")
    return TensorInfo(name=tensor.name, dtype=dtype_enum(tensor.dtype),
                      tensor_shape=shape_proto(tensor.shape))


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None) -> Tensor:
    graph = graph if graph is not None else get_default_graph()
    if tensor_info.WhichOneof("encoding") != "name":
        raise InvalidArgumentError("only TensorInfos of dense tensors (by name) are supported")
    name = tensor_info.name
    if import_scope:
        name = f"{import_scope}/{name}"
    return graph.get_tensor_by_name(name)
