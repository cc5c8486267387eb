"""tf.import_graph_def: a GraphDef's nodes recreated as ops of the default graph.

    graph_def = tf.GraphDef()
    graph_def.ParseFromString(open("frozen.pb", "rb").read())
    out, = tf.import_graph_def(graph_def, input_map={"input:0": x},
                               return_elements=["output:0"], name="")

Each NodeDef becomes an op of its type through the op registry (so the op's shape
inference, kernel and XLA lowering are those of an op built in Python, and imported graphs
cluster and compile like any other); nodes are created in dependency order, named
`<name>/<node name>` ("import" by default, made unique; name="" keeps the node names).
Inputs are `node`, `node:k` and `^node` (a control input). TF's inferred type attributes
(T, Tidx, ...) and _output_shapes are dropped. Functional control flow (While and If, whose
bodies are Python-built sub-graphs in xlapy) and py_func cannot be imported: an
UnimplementedError names the node.
"""

from __future__ import annotations

import re

from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from xlapy.compat.v1.framework import (Operation, Tensor, canonical_device,
                                       get_default_graph)
from xlapy.compat.v1.graph_def import TF_ONLY_ATTRS, PythonObjectAttr, python_value
from xlapy.compat.v1.proto.graph_pb import GraphDef


def as_graph_def_message(graph_def) -> GraphDef:
    """Our GraphDef for a GraphDef (ours, or a protobuf-runtime message of TF's GraphDef)."""
    if isinstance(graph_def, GraphDef):
        return graph_def
    if hasattr(graph_def, "SerializeToString") and hasattr(graph_def, "node"):
        return GraphDef.FromString(graph_def.SerializeToString())
    raise InvalidArgumentError(f"graph_def must be a GraphDef proto, got "
                               f"{type(graph_def).__name__}")


def _parse_input(name: str):
    """'^x' -> ('x', None); 'x:2' -> ('x', 2); 'x' -> ('x', 0)."""
    if name.startswith("^"):
        return name[1:], None
    m = re.fullmatch(r"(.+):(\d+)", name)
    return (m.group(1), int(m.group(2))) if m else (name, 0)


def _topological(nodes: list) -> list:
    by_name = {n.name: n for n in nodes}
    order, state = [], {}
    for root in nodes:
        if root.name in state:
            continue
        stack = [(root, False)]
        while stack:
            n, done = stack.pop()
            if done:
                state[n.name] = 2
                order.append(n)
                continue
            if state.get(n.name) == 2:
                continue
            if state.get(n.name) == 1:
                raise InvalidArgumentError(f"GraphDef has a cycle through node '{n.name}' "
                                           "(xlapy imports acyclic graphs only)")
            state[n.name] = 1
            stack.append((n, True))
            for inp in n.input:
                src = by_name.get(_parse_input(inp)[0])
                if src is not None and state.get(src.name) != 2:
                    if state.get(src.name) == 1:
                        raise InvalidArgumentError(f"GraphDef has a cycle through node "
                                                   f"'{src.name}' (xlapy imports acyclic "
                                                   "graphs only)")
                    stack.append((src, False))
    return order


def _attrs(node, op_def) -> dict:
    out = {}
    for k, a in node.attr.items():
        if k in TF_ONLY_ATTRS and k not in op_def.attrs:
            continue
        if a.WhichOneof("value") == "func" or (a.WhichOneof("value") == "list" and
                                               len(a.list.func)):
            raise UnimplementedError(
                f"import_graph_def: node '{node.name}' ({node.op}) calls the function "
                f"'{a.func.name or a.list.func[0].name}'; xlapy cannot import functional "
                f"control flow ({node.op}): its bodies are sub-graphs built in Python. "
                "Rebuild this part of the model in Python instead.")
        try:
            out[k] = python_value(a)
        except PythonObjectAttr as e:
            raise UnimplementedError(f"import_graph_def: node '{node.name}' ({node.op}) holds "
                                     f"a Python object ({e}) in its attr '{k}', which a "
                                     "GraphDef cannot carry") from None
    if node.op == "Placeholder" and "shape" not in out:
        from xlapy.compat.v1.tensor_shape import TensorShape
        out["shape"] = TensorShape(None)
    return out


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None, *, clear_devices=False):
    from xlapy.compat.v1.op_registry import get_op_def, registered_ops
    gd = as_graph_def_message(graph_def)
    graph = get_default_graph()
    input_map = dict(input_map or {})
    for k, v in input_map.items():
        if not isinstance(k, str):
            raise InvalidArgumentError(f"input_map keys must be strings, got {k!r}")
        if hasattr(v, "_to_tensor"):
            input_map[k] = v = v._to_tensor()
        if not isinstance(v, (Tensor, Operation)) or v.graph is not graph:
            raise InvalidArgumentError(f"input_map['{k}'] must be a Tensor or Operation of "
                                       f"the default graph, got {v!r}")
    nodes = list(gd.node)
    names = set()
    registry = registered_ops()
    for n in nodes:
        if n.name in names:
            raise InvalidArgumentError(f"Node '{n.name}' is not unique in the GraphDef")
        names.add(n.name)
        if n.op not in registry:
            raise NotFoundError(f"Op type not registered '{n.op}' in binary running on xlapy "
                                f"(node '{n.name}'). Make sure the Op and Kernel are "
                                "registered in the binary running in this process.")
    # the keys of input_map must name tensors of the GraphDef
    canon = {}
    for k, v in input_map.items():
        src, idx = _parse_input(k)
        if src not in names:
            raise InvalidArgumentError(f"Attempted to map inputs that were not found in "
                                       f"graph_def: [{k}]")
        canon[(src, idx)] = v
    if name is None:
        name = "import"
    prefix = ""
    if name:
        with graph.name_scope(name) as scope:
            prefix = scope
    created: dict = {}

    def resolve(node, inp):
        src, idx = _parse_input(inp)
        if (src, idx) in canon:
            return canon[(src, idx)]
        if src not in names:
            raise InvalidArgumentError(f"Node '{node.name}': Unknown input node '{inp}'")
        op = created[src]
        if idx is None:
            return op
        if idx >= len(op.outputs):
            raise InvalidArgumentError(f"Node '{node.name}': Connecting to invalid output "
                                       f"{idx} of source node {src} which has "
                                       f"{len(op.outputs)} outputs")
        return op.outputs[idx]

    for n in _topological(nodes):
        op_def = get_op_def(n.op)
        inputs, controls = [], []
        for inp in n.input:
            r = resolve(n, inp)
            if inp.startswith("^"):
                controls.append(r.op if isinstance(r, Tensor) else r)
            else:
                if isinstance(r, Operation):
                    raise InvalidArgumentError(f"input_map maps '{inp}' of node '{n.name}' "
                                               "to an Operation; a data input needs a Tensor")
                inputs.append(r)
        attrs = _attrs(n, op_def)
        try:
            op = graph.create_op(n.op, inputs, attrs, name=prefix + n.name + "/")
        except (InvalidArgumentError, NotFoundError, UnimplementedError) as e:
            raise type(e)(f"import_graph_def: node '{n.name}' ({n.op}): {e}") from None
        for c in controls:
            op._add_control_input(c)
        if n.device and not clear_devices:
            try:
                op.device = canonical_device(n.device)
            except InvalidArgumentError:
                pass  # a device this runtime does not have: placed as any op
        created[n.name] = op
        parts = op.name.split("/")
        for i in range(1, len(parts)):  # its scopes are taken, as TF marks them on import
            graph._names_in_use.setdefault("/".join(parts[:i]), 1)
    if return_elements is None:
        return None
    out = []
    for r in return_elements:
        src, idx = _parse_input(r)
        if src not in created:
            raise InvalidArgumentError(f"Requested return node '{r}' not found in graph def")
        op = created[src]
        if ":" not in r:
            out.append(op)
        elif idx >= len(op.outputs):
            raise InvalidArgumentError(f"Invalid return output {idx} of node '{src}', which "
                                       f"has {len(op.outputs)} outputs")
        else:
            out.append(op.outputs[idx])
    return out
