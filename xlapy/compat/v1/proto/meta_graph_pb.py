"""TF's MetaGraphDef, SaverDef, VariableDef and SavedModel messages, with TF's field numbers
(meta_graph.proto, saver.proto, variable.proto, saved_model.proto)."""

from __future__ import annotations

from xlapy.compat.v1.proto.graph_pb import (DataType, GraphDef, OpList, TensorProto,
                                            TensorShapeProto)
from xlapy.compat.v1.proto.message import Enum, F, Message


class SaverDef(Message):
    CheckpointFormatVersion = Enum("CheckpointFormatVersion", {"LEGACY": 0, "V1": 1, "V2": 2})
    LEGACY, V1, V2 = 0, 1, 2
    FIELDS = (F("filename_tensor_name", 1, "string"), F("save_tensor_name", 2, "string"),
              F("restore_op_name", 3, "string"), F("max_to_keep", 4, "int32"),
              F("sharded", 5, "bool"), F("keep_checkpoint_every_n_hours", 6, "float"),
              F("version", 7, CheckpointFormatVersion))
    __slots__ = ()


class VariableDef(Message):
    FIELDS = (F("variable_name", 1, "string"), F("initial_value_name", 6, "string"),
              F("initializer_name", 2, "string"), F("snapshot_name", 3, "string"),
              F("is_resource", 5, "bool"), F("trainable", 7, "bool"))
    __slots__ = ()


class CollectionDef(Message):
    class NodeList(Message):
        FIELDS = (F("value", 1, "string", repeated=True),)
        __slots__ = ()

    class BytesList(Message):
        FIELDS = (F("value", 1, "bytes", repeated=True),)
        __slots__ = ()

    class Int64List(Message):
        FIELDS = (F("value", 1, "int64", repeated=True),)
        __slots__ = ()

    class FloatList(Message):
        FIELDS = (F("value", 1, "float", repeated=True),)
        __slots__ = ()

    FIELDS = (F("node_list", 1, NodeList, oneof="kind"),
              F("bytes_list", 2, BytesList, oneof="kind"),
              F("int64_list", 3, Int64List, oneof="kind"),
              F("float_list", 4, FloatList, oneof="kind"))
    __slots__ = ()


class TensorInfo(Message):
    class CooSparse(Message):
        FIELDS = (F("values_tensor_name", 1, "string"), F("indices_tensor_name", 2, "string"),
                  F("dense_shape_tensor_name", 3, "string"))
        __slots__ = ()

    FIELDS = (F("name", 1, "string", oneof="encoding"),
              F("coo_sparse", 4, CooSparse, oneof="encoding"),
              F("dtype", 2, DataType), F("tensor_shape", 3, TensorShapeProto))
    __slots__ = ()


class SignatureDef(Message):
    FIELDS = (F("inputs", 1, TensorInfo, map_key="string"),
              F("outputs", 2, TensorInfo, map_key="string"),
              F("method_name", 3, "string"),
              F("defaults", 4, TensorProto, map_key="string"))
    __slots__ = ()


class AssetFileDef(Message):
    FIELDS = (F("tensor_info", 1, TensorInfo), F("filename", 2, "string"))
    __slots__ = ()


class MetaGraphDef(Message):
    class MetaInfoDef(Message):
        FIELDS = (F("meta_graph_version", 1, "string"), F("stripped_op_list", 2, OpList),
                  F("tags", 4, "string", repeated=True),
                  F("tensorflow_version", 5, "string"),
                  F("tensorflow_git_version", 6, "string"),
                  F("stripped_default_attrs", 7, "bool"))
        __slots__ = ()

    FIELDS = (F("meta_info_def", 1, MetaInfoDef), F("graph_def", 2, GraphDef),
              F("saver_def", 3, SaverDef),
              F("collection_def", 4, CollectionDef, map_key="string"),
              F("signature_def", 5, SignatureDef, map_key="string"),
              F("asset_file_def", 6, AssetFileDef, repeated=True))
    __slots__ = ()


class SavedModel(Message):
    FIELDS = (F("saved_model_schema_version", 1, "int64"),
              F("meta_graphs", 2, MetaGraphDef, repeated=True))
    __slots__ = ()
