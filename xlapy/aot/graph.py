"""A compat.v1 graph with a tf2xla config, as tfcompile takes a TensorFlow graph: one HLO
module whose arguments are the feeds and whose results are the fetches.

  program = from_graph(graph, config, session=None)

The ops between the feeds and the fetches are traced as one cluster (compat/v1/jit:
encapsulate, trace_function), so each op's XLA lowering applies as under a session with
XLA on. Variables, as tfcompile: a variable listed with `readonly: true` (and, with a
session, one the config does not list) is a constant with its value in the session; a
listed variable without readonly is an argument (its value before the run) and a result
(its value after), named `var_<name>` in the header. Every placeholder the fetches need must
be fed, with a static shape (the config's, else the placeholder's).
"""

from __future__ import annotations

import numpy as np

from xlapy.aot.config import Config, DATA_TYPES
from xlapy.aot.sources import (Program, c_identifier, check_interface, embed_constants,
                               unique_names)
from xlapy.errors import AotError, XlapyError
from xlapy.hlo.shapes import primitive_type

_NAMES = {v: k for k, v in DATA_TYPES.items()}


def _tensor(graph, tid, what: str, where: str):
    try:
        op = graph.get_operation_by_name(tid.node_name)
    except (KeyError, ValueError, XlapyError):
        raise AotError(f"{where}: {what} names node '{tid.node_name}', which the graph does "
                       "not have") from None
    if not 0 <= tid.output_index < len(op.outputs):
        raise AotError(f"{where}: {what} names output {tid.output_index} of '{op.name}', "
                       f"which has {len(op.outputs)}")
    return op.outputs[tid.output_index]


def _ops_needed(fetches: list, fed: set) -> list:
    """The ops the fetches depend on (data and control inputs), stopping at fed tensors, in
    creation order."""
    seen: set = set()
    stack = [t.op for t in fetches]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        for t in op.inputs:
            if t not in fed:
                stack.append(t.op)
        stack.extend(op.control_inputs)
    return sorted(seen, key=lambda o: o._id)


def from_graph(graph, config: Config, session=None) -> Program:
    # (imported here: `import xlapy.aot` does not load the compat API or the frontend)
    from xlapy.compat.v1.jit.encapsulate import encapsulate
    from xlapy.compat.v1.jit.launch import trace_function
    from xlapy.compat.v1.op_registry import get_op_def
    from xlapy.frontend.core import ShapedArray
    from xlapy.frontend.graph import make_graph
    from xlapy.frontend.lowering import lower_to_module
    feeds = [_tensor(graph, f.id, "feed", f.where) for f in config.feeds]
    fetches = [_tensor(graph, f.id, "fetch", f.where) for f in config.fetches]
    fed = set(feeds)
    ops = [op for op in _ops_needed(fetches, fed) if op.type != "VariableV2"]
    variables = {op.name: op for op in _ops_needed(fetches, fed) if op.type == "VariableV2"}
    listed = {v.node_name: v for v in config.variables}
    for v in config.variables:
        if v.node_name not in variables:
            try:
                op = graph.get_operation_by_name(v.node_name)
            except (KeyError, ValueError, XlapyError):
                op = None
            if op is None or op.type != "VariableV2":
                raise AotError(f"{v.where}: variable '{v.node_name}' is not a variable of the "
                               "graph")
            variables[v.node_name] = op
    for op in ops:
        d = get_op_def(op.type)
        if op.type == "Placeholder":
            raise AotError(f"placeholder '{op.name}' is needed by the fetches but not fed: add "
                           f"feed {{ id {{ node_name: \"{op.name}\" }} }} to the config")
        if d.lowering is None:
            why = ("random ops cannot be compiled (their values must come from the session's "
                   "generators)" if d.rng else f"op type {op.type} has no XLA lowering")
            raise AotError(f"node '{op.name}' ({op.type}) cannot be compiled ahead of time: "
                           f"{why}")
    cluster = encapsulate("aot", ops, set(ops), fed, set(fetches))
    written = set(cluster.writes)
    # feeds: shapes and dtypes
    feed_avals = []
    for f, t in zip(config.feeds, feeds):
        dims = f.shape if f.shape is not None else t.shape.as_list() \
            if t.shape.ndims is not None else None
        if dims is None or any(d is None or d < 0 for d in dims):
            raise AotError(f"{f.where}: feed '{f.id}' has no static shape "
                           f"({dims if dims is not None else 'unknown rank'}): ahead-of-time "
                           "code needs one; give the config's feed a shape with every dim's "
                           "size")
        if t.shape.ndims is not None and not t.shape.is_compatible_with(dims):
            raise AotError(f"{f.where}: feed '{f.id}' has shape {dims}, incompatible with "
                           f"the tensor's {t.shape}")
        dtype = t.dtype.np if f.type is None else primitive_type(f.type).np_dtype
        if f.type is not None and np.dtype(dtype) != np.dtype(t.dtype.np):
            raise AotError(f"{f.where}: feed '{f.id}' has type {_NAMES.get(f.type, f.type)}, "
                           f"the tensor {t.dtype.name}")
        feed_avals.append(ShapedArray(tuple(dims), np.dtype(dtype)))
    # variables: constants (readonly, or not listed) or arguments and results
    rw, consts = [], {}
    for name, op in sorted(variables.items(), key=lambda kv: kv[1]._id):
        v = listed.get(name)
        if v is not None and not v.readonly:
            rw.append((v, op))
            continue
        if op in written:
            raise AotError(f"variable '{name}' is {'readonly' if v else 'not listed'} in the "
                           "config but the graph assigns it: list it without readonly to "
                           "make it an argument and a result")
        if session is None:
            raise AotError(f"variable '{name}' becomes a constant with its current value "
                           f"({'readonly' if v else 'not listed as a variable'}): pass the "
                           "session that holds it (session=...)")
        try:
            consts[op] = np.asarray(session.run(op.outputs[0]))
        except XlapyError as e:
            raise AotError(f"variable '{name}': {str(e).splitlines()[0]}") from None
    rw_avals = []
    for v, op in rw:
        shape = v.shape
        if shape is None and session is not None:
            shape = list(np.shape(session.run(op.outputs[0])))
        if shape is None:
            shape = op.outputs[0].shape.as_list() if op.outputs[0].shape.ndims is not None \
                else None
        if shape is None or any(d is None or d < 0 for d in shape):
            raise AotError(f"{v.where}: variable '{v.node_name}' has no static shape: give it "
                           "one in the config")
        dtype = op.outputs[0].dtype.np if v.type is None else primitive_type(v.type).np_dtype
        rw_avals.append(ShapedArray(tuple(shape), np.dtype(dtype)))
    read_vars = [op for op in cluster.variables]
    position = {t: k for k, t in enumerate(cluster.inputs)}
    missing = [t for t in cluster.inputs if t not in fed]
    if missing:  # (the walk stops only at feeds: every outside input is one)
        raise AotError(f"tensor {missing[0].name} is consumed but neither fed nor computed")
    traced = trace_function(cluster, read_vars, {})
    rw_ops = [op for _, op in rw]
    out_pos = {t: k for k, t in enumerate(cluster.outputs)}
    write_pos = {op: k for k, op in enumerate(cluster.writes)}

    def program(*flat):
        feed_vals, rw_vals = flat[:len(feeds)], flat[len(feeds):]
        dyn = [None] * len(cluster.inputs)
        for t, value in zip(feeds, feed_vals):
            if t in position:
                dyn[position[t]] = value
        state = dict(zip(rw_ops, rw_vals))
        var_vals = [state[op] if op in state else consts[op] for op in read_vars]
        outs = traced(*dyn, *var_vals)
        n_out = len(cluster.outputs)
        results = []
        for t in fetches:
            if t in out_pos:
                results.append(outs[out_pos[t]])
            elif t in fed:
                results.append(feed_vals[feeds.index(t)])
            else:  # a variable fetched as it is
                results.append(state[t.op] if t.op in state else consts[t.op])
        for op in rw_ops:
            results.append(outs[n_out + write_pos[op]] if op in write_pos else state[op])
        return tuple(results)

    graph_ir, const_vals, _ = make_graph(program, feed_avals + rw_avals)
    module, extra = lower_to_module(graph_ir, const_vals, "graph")
    embed_constants(module, [np.asarray(const_vals[i]) for i in extra])
    check_interface(module)
    arg_names = [c_identifier(f.name) if f.name else None for f in config.feeds]
    arg_names += [None] * len(rw)
    result_names = [c_identifier(f.name) if f.name else None for f in config.fetches]
    result_names += [None] * len(rw)
    for f in list(config.feeds) + list(config.fetches):
        if f.name and c_identifier(f.name) != f.name:
            raise AotError(f"{f.where}: name '{f.name}' is not a C identifier")
    var_names = [c_identifier(v.name or v.node_name) for v, _ in rw]
    variables = [(n, len(feeds) + k, len(fetches) + k) for k, n in enumerate(var_names)]
    return Program(module, unique_names(arg_names), unique_names(result_names), variables,
                   source="compat.v1 graph")
