"""The profiler's result and log messages, with TF's field numbers (tfprof_output.proto,
tfprof_log.proto): what tf.profiler.profile returns (GraphNodeProto for the scope and graph
views, MultiGraphNodeProto for the op and code views), tf.profiler.advise's AdviceProto and
the OpLogProto that tf.profiler.write_op_log writes.

They are messages of xlapy's small protobuf runtime (proto/message.py): attribute access,
repeated fields, str() as text format, SerializeToString / ParseFromString."""

from __future__ import annotations

from xlapy.compat.v1.proto.graph_pb import DataType, TensorShapeProto
from xlapy.compat.v1.proto.message import F, Message

__all__ = ["AdviceProto", "CodeDef", "GraphNodeProto", "MultiGraphNodeProto", "OpLogEntry",
           "OpLogProto", "TFProfTensorProto"]


class TFProfTensorProto(Message):
    FIELDS = (F("dtype", 1, DataType), F("value_double", 2, "double", repeated=True),
              F("value_int64", 3, "int64", repeated=True),
              F("value_str", 4, "string", repeated=True))
    __slots__ = ()


class GraphNodeProto(Message):
    """A node of the scope or graph view; `children` are the displayed nodes below it."""
    FIELDS = (F("name", 1, "string"), F("tensor_value", 15, TFProfTensorProto),
              F("run_count", 21, "int64"), F("exec_micros", 2, "int64"),
              F("accelerator_exec_micros", 17, "int64"), F("cpu_exec_micros", 18, "int64"),
              F("requested_bytes", 3, "int64"), F("peak_bytes", 24, "int64"),
              F("residual_bytes", 25, "int64"), F("output_bytes", 26, "int64"),
              F("parameters", 4, "int64"), F("float_ops", 13, "int64"),
              F("devices", 10, "string", repeated=True),
              F("total_definition_count", 23, "int64"), F("total_run_count", 22, "int64"),
              F("total_exec_micros", 6, "int64"),
              F("total_accelerator_exec_micros", 19, "int64"),
              F("total_cpu_exec_micros", 20, "int64"),
              F("total_requested_bytes", 7, "int64"), F("total_peak_bytes", 27, "int64"),
              F("total_residual_bytes", 28, "int64"), F("total_output_bytes", 29, "int64"),
              F("total_parameters", 8, "int64"), F("total_float_ops", 14, "int64"),
              F("shapes", 11, TensorShapeProto, repeated=True),
              F("input_shapes", 16, TensorShapeProto, map_key="int32"),
              F("children", 12, "GraphNodeProto", repeated=True))
    __slots__ = ()


class MultiGraphNodeProto(Message):
    """A node grouping graph nodes (an op type in the op view); `graph_nodes` are the
    grouped nodes. In the op view each node has one child, the next op type."""
    FIELDS = (F("name", 1, "string"), F("exec_micros", 2, "int64"),
              F("accelerator_exec_micros", 12, "int64"), F("cpu_exec_micros", 13, "int64"),
              F("requested_bytes", 3, "int64"), F("peak_bytes", 16, "int64"),
              F("residual_bytes", 17, "int64"), F("output_bytes", 18, "int64"),
              F("parameters", 4, "int64"), F("float_ops", 5, "int64"),
              F("total_exec_micros", 6, "int64"),
              F("total_accelerator_exec_micros", 14, "int64"),
              F("total_cpu_exec_micros", 15, "int64"),
              F("total_requested_bytes", 7, "int64"), F("total_peak_bytes", 19, "int64"),
              F("total_residual_bytes", 20, "int64"), F("total_output_bytes", 21, "int64"),
              F("total_parameters", 8, "int64"), F("total_float_ops", 9, "int64"),
              F("graph_nodes", 10, GraphNodeProto, repeated=True),
              F("children", 11, "MultiGraphNodeProto", repeated=True))
    __slots__ = ()


class AdviceProto(Message):
    class Checker(Message):
        FIELDS = (F("reports", 2, "string", repeated=True),)
        __slots__ = ()

    FIELDS = (F("checkers", 1, Checker, map_key="string"),)
    __slots__ = ()


class CodeDef(Message):
    class Trace(Message):
        FIELDS = (F("file_id", 6, "int64"), F("lineno", 2, "int32"),
                  F("function_id", 7, "int64"), F("line_id", 8, "int64"),
                  F("func_start_line", 5, "int32"))
        __slots__ = ()

    FIELDS = (F("traces", 1, Trace, repeated=True),)
    __slots__ = ()


class OpLogEntry(Message):
    """Extra facts about one op: its FLOPs, extra op types (account_type_regexes match
    them, e.g. '_trainable_variables') and the code that created it."""
    FIELDS = (F("name", 1, "string"), F("float_ops", 2, "int64"),
              F("types", 3, "string", repeated=True), F("code_def", 4, CodeDef))
    __slots__ = ()


class OpLogProto(Message):
    FIELDS = (F("log_entries", 1, OpLogEntry, repeated=True),
              F("id_to_string", 2, "string", map_key="int64"))
    __slots__ = ()
