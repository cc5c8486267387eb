"""TF's GraphDef and its parts, with TF's field numbers (graph.proto, node_def.proto,
attr_value.proto, tensor.proto, tensor_shape.proto, types.proto, versions.proto,
function.proto, op_def.proto). Fields xlapy never writes (debug info, full types,
resource handles, variants) are left out: parsing skips them."""

from __future__ import annotations

from xlapy.compat.v1.proto.message import Enum, F, Message

DataType = Enum("DataType", {
    "DT_INVALID": 0, "DT_FLOAT": 1, "DT_DOUBLE": 2, "DT_INT32": 3, "DT_UINT8": 4,
    "DT_INT16": 5, "DT_INT8": 6, "DT_STRING": 7, "DT_COMPLEX64": 8, "DT_INT64": 9,
    "DT_BOOL": 10, "DT_QINT8": 11, "DT_QUINT8": 12, "DT_QINT32": 13, "DT_BFLOAT16": 14,
    "DT_QINT16": 15, "DT_QUINT16": 16, "DT_UINT16": 17, "DT_COMPLEX128": 18, "DT_HALF": 19,
    "DT_RESOURCE": 20, "DT_VARIANT": 21, "DT_UINT32": 22, "DT_UINT64": 23,
    **{f"{n}_REF": v + 100 for n, v in (("DT_FLOAT", 1), ("DT_DOUBLE", 2), ("DT_INT32", 3),
                                         ("DT_UINT8", 4), ("DT_INT16", 5), ("DT_INT8", 6),
                                         ("DT_STRING", 7), ("DT_INT64", 9), ("DT_BOOL", 10),
                                         ("DT_UINT16", 17), ("DT_HALF", 19))}})


class TensorShapeProto(Message):
    class Dim(Message):
        FIELDS = (F("size", 1, "int64"), F("name", 2, "string"))
        __slots__ = ()

    FIELDS = (F("dim", 2, Dim, repeated=True), F("unknown_rank", 3, "bool"))
    __slots__ = ()


class TensorProto(Message):
    FIELDS = (F("dtype", 1, DataType), F("tensor_shape", 2, TensorShapeProto),
              F("version_number", 3, "int32"), F("tensor_content", 4, "bytes"),
              F("half_val", 13, "int32", repeated=True),
              F("float_val", 5, "float", repeated=True),
              F("double_val", 6, "double", repeated=True),
              F("int_val", 7, "int32", repeated=True),
              F("string_val", 8, "bytes", repeated=True),
              F("scomplex_val", 9, "float", repeated=True),
              F("int64_val", 10, "int64", repeated=True),
              F("bool_val", 11, "bool", repeated=True),
              F("dcomplex_val", 12, "double", repeated=True),
              F("uint32_val", 16, "uint32", repeated=True),
              F("uint64_val", 17, "uint64", repeated=True))
    __slots__ = ()


class AttrValue(Message):
    class ListValue(Message):
        FIELDS = (F("s", 2, "bytes", repeated=True), F("i", 3, "int64", repeated=True),
                  F("f", 4, "float", repeated=True), F("b", 5, "bool", repeated=True),
                  F("type", 6, DataType, repeated=True),
                  F("shape", 7, TensorShapeProto, repeated=True),
                  F("tensor", 8, TensorProto, repeated=True),
                  F("func", 9, "NameAttrList", repeated=True))
        __slots__ = ()

    FIELDS = (F("s", 2, "bytes", oneof="value"), F("i", 3, "int64", oneof="value"),
              F("f", 4, "float", oneof="value"), F("b", 5, "bool", oneof="value"),
              F("type", 6, DataType, oneof="value"),
              F("shape", 7, TensorShapeProto, oneof="value"),
              F("tensor", 8, TensorProto, oneof="value"),
              F("list", 1, ListValue, oneof="value"),
              F("func", 10, "NameAttrList", oneof="value"),
              F("placeholder", 9, "string", oneof="value"))
    __slots__ = ()


class NameAttrList(Message):
    FIELDS = (F("name", 1, "string"), F("attr", 2, AttrValue, map_key="string"))
    __slots__ = ()


class NodeDef(Message):
    FIELDS = (F("name", 1, "string"), F("op", 2, "string"),
              F("input", 3, "string", repeated=True), F("device", 4, "string"),
              F("attr", 5, AttrValue, map_key="string"))
    __slots__ = ()


class VersionDef(Message):
    FIELDS = (F("producer", 1, "int32"), F("min_consumer", 2, "int32"),
              F("bad_consumers", 3, "int32", repeated=True))
    __slots__ = ()


class OpDef(Message):
    class ArgDef(Message):
        FIELDS = (F("name", 1, "string"), F("description", 2, "string"),
                  F("type", 3, DataType), F("type_attr", 4, "string"),
                  F("number_attr", 5, "string"), F("type_list_attr", 6, "string"),
                  F("is_ref", 16, "bool"))
        __slots__ = ()

    class AttrDef(Message):
        FIELDS = (F("name", 1, "string"), F("type", 2, "string"),
                  F("default_value", 3, AttrValue), F("description", 4, "string"),
                  F("has_minimum", 5, "bool"), F("minimum", 6, "int64"),
                  F("allowed_values", 7, AttrValue))
        __slots__ = ()

    FIELDS = (F("name", 1, "string"), F("input_arg", 2, ArgDef, repeated=True),
              F("output_arg", 3, ArgDef, repeated=True),
              F("control_output", 20, "string", repeated=True),
              F("attr", 4, AttrDef, repeated=True), F("summary", 5, "string"),
              F("description", 6, "string"), F("is_commutative", 18, "bool"),
              F("is_aggregate", 16, "bool"), F("is_stateful", 17, "bool"),
              F("allows_uninitialized_input", 19, "bool"))
    __slots__ = ()


class OpList(Message):
    FIELDS = (F("op", 1, OpDef, repeated=True),)
    __slots__ = ()


class FunctionDef(Message):
    FIELDS = (F("signature", 1, OpDef), F("attr", 5, AttrValue, map_key="string"),
              F("node_def", 3, NodeDef, repeated=True),
              F("ret", 4, "string", map_key="string"),
              F("control_ret", 6, "string", map_key="string"))
    __slots__ = ()


class GradientDef(Message):
    FIELDS = (F("function_name", 1, "string"), F("gradient_func", 2, "string"))
    __slots__ = ()


class FunctionDefLibrary(Message):
    FIELDS = (F("function", 1, FunctionDef, repeated=True),
              F("gradient", 2, GradientDef, repeated=True))
    __slots__ = ()


class GraphDef(Message):
    FIELDS = (F("node", 1, NodeDef, repeated=True), F("versions", 4, VersionDef),
              F("version", 3, "int32"), F("library", 2, FunctionDefLibrary))
    __slots__ = ()
