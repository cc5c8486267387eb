"""Graph.as_graph_def(): the graph as a GraphDef-shaped Python object.

TF returned a GraphDef protobuf; scripts and tests read its fields: `node` (name, op, input,
device, attr), `library.function` (the Defun functions, with their attributes such as
_XlaCompile and _XlaScope) and `versions`. These classes have those fields, with attribute
values as AttrValue objects (`.b`, `.i`, `.f`, `.s` (bytes), `.type`, `.shape`). For a
TensorBoard GraphDef protobuf, FileWriter.add_graph builds one (summary/graph_def.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.tensor_shape import TensorShape


@dataclass
class AttrValue:
    b: bool = False
    i: int = 0
    f: float = 0.0
    s: bytes = b""
    type: object = None
    shape: object = None
    value: object = None  # anything else, as the Python value

    @classmethod
    def of(cls, v) -> "AttrValue":
        if isinstance(v, AttrValue):
            return v
        if isinstance(v, bool):
            return cls(b=v)
        if isinstance(v, int):
            return cls(i=v)
        if isinstance(v, float):
            return cls(f=v)
        if isinstance(v, str):
            return cls(s=v.encode())
        if isinstance(v, bytes):
            return cls(s=v)
        if isinstance(v, dtypes.DType):
            return cls(type=v)
        if isinstance(v, TensorShape):
            return cls(shape=v)
        return cls(value=v)


@dataclass
class NodeDef:
    name: str
    op: str
    input: list
    device: str
    attr: dict


@dataclass
class OpDefSignature:
    name: str


@dataclass
class FunctionDef:
    signature: OpDefSignature
    attr: dict = field(default_factory=dict)


@dataclass
class FunctionDefLibrary:
    function: list = field(default_factory=list)


@dataclass
class VersionDef:
    producer: int = 27
    min_consumer: int = 0


@dataclass
class GraphDef:
    node: list = field(default_factory=list)
    library: FunctionDefLibrary = field(default_factory=FunctionDefLibrary)
    versions: VersionDef = field(default_factory=VersionDef)


def graph_def(graph, add_shapes: bool = False) -> GraphDef:
    nodes = []
    for op in graph.get_operations():
        inputs = [t.op.name if t.value_index == 0 else t.name for t in op.inputs]
        inputs += ["^" + c.name for c in op.control_inputs]
        attr = {k: AttrValue.of(v) for k, v in op._attrs.items()}
        if add_shapes and op.outputs:
            attr["_output_shapes"] = AttrValue(value=[t.shape for t in op.outputs])
        nodes.append(NodeDef(op.name, op.type, inputs, op.device, attr))
    funcs = [FunctionDef(OpDefSignature(name), {k: AttrValue.of(v) for k, v in attrs.items()})
             for name, attrs in getattr(graph, "_functions", {}).items()]
    return GraphDef(nodes, FunctionDefLibrary(funcs))
