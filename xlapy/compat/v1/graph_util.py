"""tf.graph_util: freezing and pruning GraphDefs.

    frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph_def, ["output"])
    with open("frozen.pb", "wb") as f:
        f.write(frozen.SerializeToString())

convert_variables_to_constants keeps the nodes the outputs need (extract_sub_graph) and
replaces each variable among them (VariableV2) by a Const holding its value in `sess`;
initializers and Assign ops are not needed by the outputs and so are dropped.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.graph_def import attr_value, dtype_of
from xlapy.compat.v1.importer import _parse_input, as_graph_def_message
from xlapy.compat.v1.proto.graph_pb import GraphDef, NodeDef

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes",
           "tensor_shape_from_node_def_name"]

_VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")


def _node_name(name: str) -> str:
    return _parse_input(name)[0]


def extract_sub_graph(graph_def, dest_nodes):
    """The GraphDef of the nodes dest_nodes need (through data and control inputs), in the
    original order."""
    gd = as_graph_def_message(graph_def)
    if isinstance(dest_nodes, str):
        raise InvalidArgumentError("dest_nodes must be a list of node names, got a string")
    by_name = {n.name: n for n in gd.node}
    keep, stack = set(), []
    for d in dest_nodes:
        d = _node_name(d)
        if d not in by_name:
            raise InvalidArgumentError(f"{d} is not in graph")
        stack.append(d)
    while stack:
        n = stack.pop()
        if n in keep:
            continue
        keep.add(n)
        for inp in by_name[n].input:
            src = _node_name(inp)
            if src not in by_name:
                raise InvalidArgumentError(f"node '{n}' has an input '{inp}' which is not in "
                                           "the graph")
            stack.append(src)
    out = GraphDef()
    out.node.extend(n for n in gd.node if n.name in keep)
    out.library.CopyFrom(gd.library)
    out.versions.CopyFrom(gd.versions)
    return out


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """The sub-graph computing output_node_names, its variables replaced by Consts with
    their values in sess."""
    sub = extract_sub_graph(input_graph_def, output_node_names)
    names = [n.name for n in sub.node if n.op in _VARIABLE_OPS and
             (variable_names_whitelist is None or n.name in variable_names_whitelist) and
             (variable_names_blacklist is None or n.name not in variable_names_blacklist)]
    values = dict(zip(names, sess.run([n + ":0" for n in names]))) if names else {}
    out = GraphDef()
    for n in sub.node:
        if n.name in values:
            c = NodeDef(name=n.name, op="Const", device=n.device)
            dtype = dtype_of(n.attr["dtype"].type)
            c.attr["dtype"].CopyFrom(attr_value(dtype))
            c.attr["value"].CopyFrom(attr_value(values[n.name].astype(dtype.np)))
            out.node.append(c)
        else:
            out.node.append(n)
    out.library.CopyFrom(sub.library)
    out.versions.CopyFrom(sub.versions)
    return out


def remove_training_nodes(input_graph, protected_nodes=None):
    """The GraphDef without CheckNumerics nodes, Identity nodes spliced out (their consumers
    read the Identity's input), except protected ones and those with control inputs."""
    gd = as_graph_def_message(input_graph)
    protected = set(protected_nodes or ())
    by_name = {n.name: n for n in gd.node}
    removable = {n.name for n in gd.node if n.op in ("Identity", "CheckNumerics") and
                 n.name not in protected and len(n.input) == 1 and
                 not n.input[0].startswith("^")}

    def target(inp):
        ctrl = inp.startswith("^")
        name = _node_name(inp)
        seen = 0
        while name in removable and seen < len(by_name):
            inp = by_name[name].input[0]
            name = _node_name(inp)
            seen += 1
        return "^" + name if ctrl else inp

    out = GraphDef()
    for n in gd.node:
        if n.name in removable:
            continue
        m = out.node.add()
        m.CopyFrom(n)
        del m.input[:]
        m.input.extend(target(i) for i in n.input)
    out.library.CopyFrom(gd.library)
    out.versions.CopyFrom(gd.versions)
    return out


def tensor_shape_from_node_def_name(graph, input_name):
    name = input_name if ":" in input_name else input_name + ":0"
    return graph.get_tensor_by_name(name).shape

