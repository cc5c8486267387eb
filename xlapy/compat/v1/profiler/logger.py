"""The op log: what the profiler knows about ops beyond the graph itself. For each op with
FLOPs (flops.py) an OpLogEntry with float_ops; each trainable variable's op gets the extra
op type '_trainable_variables' (what trainable_variables_parameter() accounts). A caller's
op log is merged in (its types added, its float_ops kept where set).

tf.profiler.write_op_log writes the merged log to <log_dir>/tfprof_log (OpLogProto wire
format).

xlapy does not record the Python call stack of op creation, so the log has no code traces
(add_trace is accepted and has no effect) and the 'code' view stays empty.
"""

from __future__ import annotations

import os
import sys

from xlapy.compat.v1.framework import Graph, GraphKeys
from xlapy.compat.v1.profiler.flops import IncompleteShape, float_ops
from xlapy.compat.v1.profiler.option_builder import TRAINABLE_VARIABLES
from xlapy.compat.v1.profiler.protos import OpLogEntry, OpLogProto

REGISTERED_FLOP_STATS = "flops"


def check_graph(graph) -> Graph:
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a tf.Graph, got {type(graph).__name__}")
    return graph


def _logged_ops(graph, run_meta=None, add_trainable_var=True) -> dict:
    """{op name: OpLogEntry} for the ops with FLOPs and the trainable variables."""
    logged: dict = {}
    missing_shape = 0
    for op in graph.get_operations():
        try:
            n = float_ops(op)
        except IncompleteShape:
            missing_shape += 1
            n = None
        if n:
            logged[op.name] = OpLogEntry(name=op.name, float_ops=n)
    if add_trainable_var:
        for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES):
            op = getattr(v, "op", None)
            if op is None:
                continue
            entry = logged.get(op.name)
            if entry is None:
                entry = logged[op.name] = OpLogEntry(name=op.name)
            if TRAINABLE_VARIABLES not in entry.types:
                entry.types.append(TRAINABLE_VARIABLES)
    if missing_shape and not run_meta:
        sys.stderr.write(f"{missing_shape} ops no flops stats due to incomplete shapes.\n")
    return logged


def merge_default_with_oplog(graph, op_log=None, run_meta=None, add_trace=True,
                             add_trainable_var=True) -> OpLogProto:
    """The profiler's own op log of `graph` merged with the caller's `op_log`."""
    check_graph(graph)
    if op_log is not None and not isinstance(op_log, OpLogProto):
        raise TypeError(f"op_log must be a tf.profiler.OpLogProto, got "
                        f"{type(op_log).__name__}")
    logged = _logged_ops(graph, run_meta, add_trainable_var)
    out = OpLogProto()
    if op_log is None or not op_log.log_entries:
        out.log_entries.extend(logged.values())
        return out
    merged: dict = {}
    for entry in op_log.log_entries:
        e = OpLogEntry()
        e.CopyFrom(entry)
        merged[e.name] = e
    for name, entry in logged.items():
        mine = merged.get(name)
        if mine is None:
            merged[name] = entry
            continue
        mine.types.extend(entry.types)
        if entry.float_ops > 0 and mine.float_ops == 0:
            mine.float_ops = entry.float_ops
    out.log_entries.extend(merged.values())
    for k, v in op_log.id_to_string.items():
        out.id_to_string[k] = v
    return out


def write_op_log(graph, log_dir, op_log=None, run_meta=None, add_trace=True):
    """Writes the op log of `graph` (merged with `op_log`) to log_dir/tfprof_log."""
    log = merge_default_with_oplog(graph, op_log, run_meta, add_trace)
    if not isinstance(log_dir, (str, os.PathLike)):
        raise TypeError(f"log_dir must be a path, got {type(log_dir).__name__}")
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, "tfprof_log"), "wb") as f:
        f.write(log.SerializeToString())
