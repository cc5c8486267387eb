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
(T, Tidx, ...) and _output_shapes are dropped. Functional control flow (While and If, their
gradients) is imported from the library's FunctionDefs in xlapy's form (graph_def.py):
each function a graph of its own (FuncGraph) built the same way, made once per import and
shared by the ops that call it; an op attribute naming an op ("xlapy-op:", a gradient's
forward op) is the node of that name. A function TensorFlow wrote (its bodies name op
outputs by argument name), and py_func, cannot be imported: an UnimplementedError names
the node.
"""

from __future__ import annotations

import re

from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from xlapy.compat.v1.framework import (Operation, Tensor, canonical_device,
                                       get_default_graph)
from xlapy.compat.v1.graph_def import (OP_REF, TF_ONLY_ATTRS, PythonObjectAttr, dtype_of,
                                       python_value, tensor_shape)
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


def _attrs(node, op_def, functions, created) -> dict:
    out = {}
    for k, a in node.attr.items():
        if k in TF_ONLY_ATTRS and k not in op_def.attrs:
            continue
        kind = a.WhichOneof("value")
        if kind == "func":
            out[k] = functions.get(node, a.func.name)
            continue
        if kind == "list" and len(a.list.func):
            out[k] = tuple(functions.get(node, f.name) for f in a.list.func)
            continue
        if kind == "s" and a.s.startswith(OP_REF):
            ref = a.s[len(OP_REF):].decode()
            if ref not in created:
                raise InvalidArgumentError(f"import_graph_def: node '{node.name}' ({node.op}) "
                                           f"refers to node '{ref}' in its attr '{k}', which "
                                           "is not among the nodes imported before it")
            out[k] = created[ref]
            continue
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
    from xlapy.compat.v1.op_registry import registered_ops
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
    functions = _Functions(gd.library, graph, clear_devices)
    created = _create_nodes(graph, nodes, canon, prefix, clear_devices, functions)
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


def _create_nodes(graph, nodes: list, canon: dict, prefix: str, clear_devices: bool,
                  functions) -> dict:
    """Creates the ops of `nodes` in `graph` (named prefix + node name), inputs in `canon`
    ({(node, index): tensor or op}) taken from there; {node name: op}."""
    from xlapy.compat.v1.op_registry import get_op_def  # (ops register on first use)
    names = {n.name for n in nodes}
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
        attrs = _attrs(n, op_def, functions, created)
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
    return created


class _Functions:
    """The library's functions as Function objects, each built once (on first use) in a
    FuncGraph of the importing graph."""

    def __init__(self, library, graph, clear_devices: bool):
        self.defs = {f.signature.name: f for f in library.function}
        self.graph = graph
        self.clear_devices = clear_devices
        self.built: dict = {}
        self.building: set = set()

    def get(self, node, name: str):
        fn = self.built.get(name)
        if fn is not None:
            return fn
        fd = self.defs.get(name)
        if fd is None or "_xlapy_graph" not in fd.attr:
            what = ("is not in the GraphDef's library" if fd is None else
                    "is not in xlapy's form (a function TensorFlow wrote names op outputs "
                    "by argument name)")
            raise UnimplementedError(
                f"import_graph_def: node '{node.name}' ({node.op}) calls the function "
                f"'{name}', which {what}; rebuild this part of the model in Python instead")
        if name in self.building:
            raise InvalidArgumentError(f"import_graph_def: function '{name}' calls itself")
        self.building.add(name)
        try:
            fn = self.built[name] = self._build(fd)
        finally:
            self.building.discard(name)
        return fn

    def _build(self, fd):
        from xlapy.compat.v1.ops.functional import (  # (ops import the framework)
            FuncGraph, Function, placeholder_in)
        fg = FuncGraph(fd.attr["_xlapy_graph"].s.decode(), self.graph)
        shapes = [tensor_shape(s) for s in fd.attr["_xlapy_input_shapes"].list.shape]
        args = list(fd.signature.input_arg)
        if len(shapes) != len(args):
            raise InvalidArgumentError(f"import_graph_def: function '{fd.signature.name}' has "
                                       f"{len(args)} inputs and {len(shapes)} input shapes")
        inputs = [placeholder_in(fg, dtype_of(a.type), shape, a.name)
                  for a, shape in zip(args, shapes)]
        canon = {(a.name, 0): t for a, t in zip(args, inputs)}
        nodes = list(fd.node_def)
        created = _create_nodes(fg, nodes, canon, "", self.clear_devices, self)
        none = set(fd.attr["_xlapy_none_outputs"].list.i) if "_xlapy_none_outputs" in fd.attr \
            else set()
        outputs = []
        for j, arg in enumerate(fd.signature.output_arg):
            if j in none:
                outputs.append(None)
                continue
            ref = fd.ret.get(arg.name)
            if ref is None:
                raise InvalidArgumentError(f"import_graph_def: function '{fd.signature.name}' "
                                           f"has no value for its output '{arg.name}'")
            src, idx = _parse_input(ref)
            if (src, idx) in canon:
                outputs.append(canon[(src, idx)])
            elif src in created and idx is not None and idx < len(created[src].outputs):
                outputs.append(created[src].outputs[idx])
            else:
                raise InvalidArgumentError(f"import_graph_def: function '{fd.signature.name}' "
                                           f"returns '{ref}', which it does not compute")
        return Function(fg, inputs, outputs)
