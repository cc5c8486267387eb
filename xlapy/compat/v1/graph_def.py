"""Graph.as_graph_def(): the graph as TF's GraphDef protobuf (proto/graph_pb.py), and the
conversions between xlapy's attribute values and AttrValue / TensorProto / shapes / dtypes.

Attribute values map to AttrValue as TF's do: bool b, int i, float f (float32), str/bytes
s, DType type, TensorShape shape, ndarray tensor, tuples of one kind list, a Function func
(its FunctionDef, named in library.function). TF's type attributes that xlapy infers from
the inputs (T, Tshape, Tidx, ...) are added for the ops TF defines them on, so graphs
read by TF tools carry them; importing drops them again. Values TF has no AttrValue for
(None, slices in StridedSlice's slice_spec, nested tuples) are written as s with a
"xlapy-literal:" prefix and a Python literal (read back with ast.literal_eval); a Python
object (a py_func's callable) is written as placeholder "xlapy-python-object" and cannot
be imported. An Operation (a control-flow gradient's forward op) is written as s
"xlapy-op:" + its name, which import_graph_def resolves among the nodes it has created.

Functions (While and If bodies, their gradients') are written to library.function with
their bodies: input_arg "in<i>" and output_arg "out<j>" with their dtypes, node_def the ops
that compute the outputs from the inputs (inputs written "node:k" as in the GraphDef, a
function input as its arg's name), ret out<j> -> its tensor, and attrs
"_xlapy_input_shapes", "_xlapy_graph" (the body's graph name) and "_xlapy_none_outputs"
(outputs without a value). Two function objects with one name (a loop body and its
gradient function share a graph) get distinct names (name, name_1, ...). This is xlapy's
own form of a function library (TF's FunctionDefs name op outputs by argument name): it
reads back into xlapy (importer.py), not into TensorFlow.
"""

from __future__ import annotations

import ast

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Operation
from xlapy.compat.v1.proto.graph_pb import (AttrValue, DataType, FunctionDef,
                                            FunctionDefLibrary, GraphDef, NameAttrList,
                                            NodeDef, TensorProto, TensorShapeProto,
                                            VersionDef)
from xlapy.compat.v1.tensor_shape import TensorShape

__all__ = ["AttrValue", "FunctionDef", "FunctionDefLibrary", "GraphDef", "NameAttrList",
           "NodeDef", "TensorProto", "TensorShapeProto", "VersionDef", "attr_value",
           "python_value", "graph_def", "make_tensor_proto", "make_ndarray"]

PRODUCER = 27
LITERAL = b"xlapy-literal:"
PY_OBJECT = "xlapy-python-object"
OP_REF = b"xlapy-op:"

_DT = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE", "int8": "DT_INT8",
       "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64", "uint8": "DT_UINT8",
       "uint16": "DT_UINT16", "bool": "DT_BOOL", "string": "DT_STRING",
       "bfloat16": "DT_BFLOAT16"}
_FROM_DT = {DataType.values[v]: k for k, v in _DT.items()}


def dtype_enum(d) -> int:
    return DataType.values[_DT[dtypes.as_dtype(d).name]]


def dtype_of(enum: int) -> dtypes.DType:
    enum = enum - 100 if enum > 100 else enum  # a reference type: its base type
    name = _FROM_DT.get(enum)
    if name is None:
        raise InvalidArgumentError(f"DataType {DataType.names.get(enum, enum)} is not "
                                   "supported by xlapy")
    return dtypes.as_dtype(name)


def shape_proto(shape) -> TensorShapeProto:
    shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    if shape.ndims is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d is None else int(d))
                                 for d in shape.dims])


def tensor_shape(proto) -> TensorShape:
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else int(d.size) for d in proto.dim])


def make_tensor_proto(value, dtype=None, shape=None) -> TensorProto:
    """tf.make_tensor_proto: numeric tensors as tensor_content (little-endian bytes), scalars
    in the typed value field, strings in string_val."""
    from xlapy.compat.v1.framework import as_numpy_value
    arr = as_numpy_value(value, dtype)
    if shape is not None:
        arr = np.broadcast_to(arr, tuple(shape)) if arr.size == 1 else arr.reshape(shape)
    dt = dtypes.as_dtype(arr.dtype) if arr.dtype != object else dtypes.string
    p = TensorProto(dtype=dtype_enum(dt), tensor_shape=shape_proto(list(arr.shape)))
    flat = arr.reshape(-1)
    if dt == dtypes.string:
        p.string_val.extend(bytes(b) for b in flat)
    elif arr.size == 1 and dt.name in ("float32", "float64", "int32", "int64", "bool",
                                      "float16", "bfloat16"):
        v = flat[0]  # float16 and bfloat16: their bits in half_val, as TF stores them
        {"float32": p.float_val, "float64": p.double_val, "int32": p.int_val,
         "int64": p.int64_val, "bool": p.bool_val}.get(dt.name, p.half_val).append(
            int(flat[:1].view(np.uint16)[0]) if dt.size == 2 and dt.is_floating
            else v.item())
    else:
        p.tensor_content = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"),
                                                            copy=False).tobytes()
    return p


def make_ndarray(p) -> np.ndarray:
    """tf.make_ndarray: the value of a TensorProto (the last value repeated when fewer
    values than elements are given, as TF does)."""
    dt = dtype_of(p.dtype)
    shape = [int(d.size) for d in p.tensor_shape.dim]
    n = int(np.prod(shape)) if shape else 1
    if dt == dtypes.string:
        vals = list(p.string_val)
        out = np.empty(n, dtype=object)
        for i in range(n):
            out[i] = vals[min(i, len(vals) - 1)] if vals else b""
        return out.reshape(shape)
    if p.tensor_content:
        return np.frombuffer(p.tensor_content, dtype=dt.np.newbyteorder("<")).astype(
            dt.np).reshape(shape).copy()
    if dt in (dtypes.float16, dtypes.bfloat16):
        vals = np.asarray(list(p.half_val), np.uint16).view(dt.np)
    else:
        field = {"float32": "float_val", "float64": "double_val", "int64": "int64_val",
                 "bool": "bool_val"}.get(dt.name, "int_val")
        vals = np.asarray(list(getattr(p, field)), dtype=dt.np)
    if vals.size == 0:
        return np.zeros(shape, dt.np)
    if vals.size < n:
        vals = np.concatenate([vals, np.full(n - vals.size, vals[-1], dt.np)])
    return vals[:n].astype(dt.np).reshape(shape)


# ---- attribute values ----------------------------------------------------------------------

def _literal(v):
    """v as a Python literal string, or None when it has none."""
    def conv(x):
        if x is None or isinstance(x, (bool, str, bytes)):
            return x
        if isinstance(x, (int, np.integer)):
            return int(x)
        if isinstance(x, (float, np.floating)):
            return float(x)
        if isinstance(x, slice):
            return ("__slice__", conv(x.start), conv(x.stop), conv(x.step))
        if x is Ellipsis:
            return ("__ellipsis__",)
        if isinstance(x, dtypes.DType):
            return ("__dtype__", x.name)
        if isinstance(x, TensorShape):
            return ("__shape__", None if x.ndims is None else tuple(x.dims))
        if isinstance(x, (tuple, list)):
            items = [conv(i) for i in x]
            return tuple(items) if isinstance(x, tuple) else items
        raise TypeError(type(x).__name__)
    try:
        return repr(conv(v))
    except TypeError:
        return None


def _from_literal(text: str):
    def conv(x):
        if isinstance(x, tuple) and x and isinstance(x[0], str) and x[0].startswith("__"):
            tag = x[0]
            if tag == "__slice__":
                return slice(*(conv(i) for i in x[1:]))
            if tag == "__ellipsis__":
                return Ellipsis
            if tag == "__dtype__":
                return dtypes.as_dtype(x[1])
            if tag == "__shape__":
                return TensorShape(None if x[1] is None else list(x[1]))
        if isinstance(x, (tuple, list)):
            items = [conv(i) for i in x]
            return tuple(items) if isinstance(x, tuple) else items
        return x
    return conv(ast.literal_eval(text))


def attr_value(v, functions: dict | None = None) -> AttrValue:
    """The AttrValue of an xlapy attribute value; functions collects the Function objects
    named by func attributes ({name: Function})."""
    if isinstance(v, AttrValue):
        return v
    if isinstance(v, (bool, np.bool_)):
        return AttrValue(b=bool(v))
    if isinstance(v, (int, np.integer)):
        return AttrValue(i=int(v))
    if isinstance(v, (float, np.floating)):
        return AttrValue(f=float(v))
    if isinstance(v, str):
        return AttrValue(s=v.encode())
    if isinstance(v, bytes):
        return AttrValue(s=v)
    if isinstance(v, dtypes.DType):
        return AttrValue(type=dtype_enum(v))
    if isinstance(v, TensorShape):
        return AttrValue(shape=shape_proto(v))
    if isinstance(v, np.ndarray):
        return AttrValue(tensor=make_tensor_proto(v))
    if hasattr(v, "graph") and hasattr(v, "outputs") and callable(getattr(v, "ops", None)):
        # a Function (ops/functional.py): While / If bodies
        return AttrValue(func=NameAttrList(name=function_name(v, functions)))
    if isinstance(v, Operation):
        return AttrValue(s=OP_REF + v.name.encode())
    if isinstance(v, (tuple, list)):
        lv = AttrValue.ListValue()
        items = list(v)
        kinds = [(bool, np.bool_), (int, np.integer), (float, np.floating), (str, bytes),
                 dtypes.DType, TensorShape]
        fields = ["b", "i", "f", "s", "type", "shape"]
        for kind, name in zip(kinds, fields):
            if items and all(isinstance(x, kind) and not (name == "i" and isinstance(
                    x, (bool, np.bool_))) for x in items):
                conv = {"b": bool, "i": int, "f": float,
                        "s": lambda x: x.encode() if isinstance(x, str) else x,
                        "type": dtype_enum, "shape": shape_proto}[name]
                getattr(lv, name).extend(conv(x) for x in items)
                return AttrValue(list=lv)
        if not items:
            return AttrValue(list=lv)
    lit = _literal(v)
    if lit is not None:
        return AttrValue(s=LITERAL + lit.encode())
    return AttrValue(placeholder=f"{PY_OBJECT}:{type(v).__name__}")


def function_name(fn, functions: dict | None) -> str:
    """The library name of Function `fn`, registered in `functions` ({name: Function}) on
    first use: its graph's name, with _1, _2 ... when another function has that name."""
    if functions is None:
        return fn.name
    for name, f in functions.items():
        if f is fn:
            return name
    name, k = fn.name, 1
    while name in functions:
        name, k = f"{fn.name}_{k}", k + 1
    functions[name] = fn
    return name


def function_def(name: str, fn, functions: dict) -> FunctionDef:
    """The FunctionDef of Function `fn` (the module docstring); functions its body calls
    are registered in `functions`."""
    fd = FunctionDef()
    fd.signature.name = name
    arg_of = {}
    for i, t in enumerate(fn.inputs):
        fd.signature.input_arg.add(name=f"in{i}", type=dtype_enum(t.dtype))
        arg_of[t.name] = f"in{i}"
        if t.value_index == 0:
            arg_of[t.op.name] = f"in{i}"
    fd.attr["_xlapy_input_shapes"].CopyFrom(AttrValue(list=AttrValue.ListValue(
        shape=[shape_proto(t.shape) for t in fn.inputs])))
    fd.attr["_xlapy_graph"].CopyFrom(AttrValue(s=fn.name.encode()))
    for op in fn.ops():
        n = node_def(op, functions)
        rewired = [arg_of.get(i, i) for i in n.input]
        del n.input[:]
        n.input.extend(rewired)
        fd.node_def.append(n)
    none = []
    for j, t in enumerate(fn.outputs):
        if t is None:
            none.append(j)
            fd.signature.output_arg.add(name=f"out{j}")
            continue
        fd.signature.output_arg.add(name=f"out{j}", type=dtype_enum(t.dtype))
        fd.ret[f"out{j}"] = arg_of.get(t.name, t.name)
    if none:
        fd.attr["_xlapy_none_outputs"].CopyFrom(AttrValue(list=AttrValue.ListValue(i=none)))
    return fd


class PythonObjectAttr(Exception):
    """An attribute written as a Python object (it cannot be read back)."""


def python_value(a: AttrValue):
    """The xlapy attribute value of an AttrValue (func attrs give the function's name)."""
    kind = a.WhichOneof("value")
    if kind is None:
        return None
    if kind == "s":
        s = a.s
        if s.startswith(LITERAL):
            return _from_literal(s[len(LITERAL):].decode())
        try:
            return s.decode("utf-8")
        except UnicodeDecodeError:
            return s
    if kind in ("i", "f", "b"):
        return getattr(a, kind)
    if kind == "type":
        return dtype_of(a.type)
    if kind == "shape":
        return tensor_shape(a.shape)
    if kind == "tensor":
        return make_ndarray(a.tensor)
    if kind == "func":
        return a.func.name
    if kind == "placeholder":
        if a.placeholder.startswith(PY_OBJECT):
            raise PythonObjectAttr(a.placeholder[len(PY_OBJECT) + 1:])
        return a.placeholder
    lv = a.list
    for name in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
        vals = list(getattr(lv, name))
        if vals:
            if name == "s":
                return tuple(v.decode("utf-8", "surrogateescape") for v in vals)
            if name == "type":
                return tuple(dtype_of(v) for v in vals)
            if name == "shape":
                return tuple(tensor_shape(v) for v in vals)
            if name == "tensor":
                return tuple(make_ndarray(v) for v in vals)
            if name == "func":
                return tuple(v.name for v in vals)
            return tuple(vals)
    return ()


# TF's type attributes that xlapy infers from the inputs: (attr, input index) per op type
_T0 = ("Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum",
       "Minimum", "Pow", "SquaredDifference", "MatMul", "BatchMatMul", "BatchMatMulV2",
       "Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Sigmoid", "Tanh", "Softmax",
       "LogSoftmax", "Softplus", "BiasAdd", "BiasAddGrad", "Conv2D", "DepthwiseConv2dNative",
       "MaxPool", "AvgPool", "Identity", "Neg", "Square", "Sqrt", "Rsqrt", "Exp", "Log",
       "Abs", "Sign", "Floor", "Ceil", "Round", "Reciprocal", "Sum", "Mean", "Max", "Min",
       "Prod", "Reshape", "Squeeze", "ExpandDims", "Transpose", "Tile", "Pad", "ArgMax",
       "ArgMin", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
       "Shape", "Size", "Rank", "StopGradient", "ZerosLike", "OnesLike", "FusedBatchNorm",
       "FusedBatchNormV3", "ReluGrad", "SoftmaxCrossEntropyWithLogits",
       "SparseSoftmaxCrossEntropyWithLogits", "Snapshot", "L2Loss", "Fill", "Slice",
       "StridedSlice", "Cumsum", "TopKV2", "Select", "Pack", "ConcatV2", "GatherV2",
       "Assign", "AssignAdd", "AssignSub", "ApplyGradientDescent", "ApplyMomentum",
       "ApplyAdam", "ApplyAdagrad", "ApplyRMSProp")
_EXTRA = {"Reshape": (("Tshape", 1),), "Sum": (("Tidx", 1),), "Mean": (("Tidx", 1),),
          "Max": (("Tidx", 1),), "Min": (("Tidx", 1),), "Prod": (("Tidx", 1),),
          "ArgMax": (("Tidx", 1),), "ArgMin": (("Tidx", 1),), "ExpandDims": (("Tdim", 1),),
          "Transpose": (("Tperm", 1),), "Tile": (("Tmultiples", 1),),
          "Pad": (("Tpaddings", 1),),
          "GatherV2": (("Tparams", 0), ("Tindices", 1), ("Taxis", 2)),
          "Fill": (("index_type", 0),), "Slice": (("Index", 1),),
          "StridedSlice": (("Index", 1),), "Select": (("T", 1),), "Pack": (("N", None),),
          "ConcatV2": (("N", None), ("Tidx", -1)), "SparseSoftmaxCrossEntropyWithLogits":
          (("Tlabels", 1),)}
TF_ONLY_ATTRS = frozenset({"T", "Tshape", "Tidx", "Tdim", "Tperm", "Tmultiples", "Tpaddings",
                           "Tparams", "Tindices", "Taxis", "index_type", "Index", "N",
                           "Tlabels", "_output_shapes", "_class", "use_cudnn_on_gpu"})


def _tf_type_attrs(op) -> dict:
    out = {}
    ins = op.inputs
    if op.type in _T0 and ins and op.type not in ("Fill", "Select"):
        out["T"] = ins[0].dtype
    for name, i in _EXTRA.get(op.type, ()):
        if name == "N":
            out["N"] = len(ins) - (1 if op.type == "ConcatV2" else 0)
        elif i is not None and -len(ins) <= i < len(ins):
            out[name] = ins[i].dtype
    if op.type == "Fill" and len(ins) == 2:
        out["T"] = ins[1].dtype
    return {k: v for k, v in out.items() if k not in op._attrs}


def node_def(op, functions: dict | None = None, add_shapes: bool = False) -> NodeDef:
    inputs = [t.op.name if t.value_index == 0 else t.name for t in op.inputs]
    inputs += ["^" + c.name for c in op.control_inputs]
    n = NodeDef(name=op.name, op=op.type, input=inputs, device=op.device)
    for k, v in op._attrs.items():
        n.attr[k].CopyFrom(attr_value(v, functions))
    for k, v in _tf_type_attrs(op).items():
        n.attr[k].CopyFrom(attr_value(v))
    if add_shapes and op.outputs:
        n.attr["_output_shapes"].list.shape.extend(shape_proto(t.shape) for t in op.outputs)
    return n


def graph_def(graph, add_shapes: bool = False) -> GraphDef:
    functions: dict = {}
    gd = GraphDef(versions=VersionDef(producer=PRODUCER))
    for op in graph.get_operations():
        gd.node.append(node_def(op, functions, add_shapes))
    for name, attrs in getattr(graph, "_functions", {}).items():  # Defun functions
        f = gd.library.function.add()
        f.signature.name = name
        for k, v in attrs.items():
            f.attr[k].CopyFrom(attr_value(v))
    written = {f.signature.name for f in gd.library.function}
    pending = [n for n in functions if n not in written]
    while pending:  # (a body's own control flow registers more functions)
        name = pending.pop(0)
        if name not in written:
            written.add(name)
            gd.library.function.append(function_def(name, functions[name], functions))
        pending.extend(n for n in functions if n not in written and n not in pending)
    return gd
