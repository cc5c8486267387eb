"""tf.train.export_meta_graph / import_meta_graph: a graph, its collections and its saver as
TF's MetaGraphDef protobuf (`<prefix>.meta` next to a checkpoint).

    saver.save(sess, "ckpt/model")                      # writes ckpt/model.meta too
    # later, in a fresh process:
    saver = tf.train.import_meta_graph("ckpt/model.meta")
    saver.restore(sess, "ckpt/model")
    sess.run(tf.get_collection("train_op")[0], feed)    # training goes on

Collections are written as TF writes them: variables (global, trainable, local, model,
moving average, metric, global_step) as VariableDef bytes, tensors and operations as a
node_list of names, strings / ints / floats as bytes / int64 / float lists; other objects
(queue runners, savers, Python objects) are left out. Importing recreates the ops
(tf.import_graph_def), Variable objects from the VariableDefs (one object per variable,
shared by the collections that list it) and the other collections, and returns a Saver of
the global variables. saver_def names TF's save ops ("save/Const:0", ...); xlapy's Saver
does not build such ops, so the names are nominal.
"""

from __future__ import annotations

import os

from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError
from xlapy.compat.v1.framework import GraphKeys, Operation, Tensor, get_default_graph
from xlapy.compat.v1.graph_def import graph_def as make_graph_def
from xlapy.compat.v1.importer import as_graph_def_message, import_graph_def
from xlapy.compat.v1.proto.message import DecodeError, parse_text
from xlapy.compat.v1.proto.meta_graph_pb import MetaGraphDef, SaverDef, VariableDef

VARIABLE_COLLECTIONS = (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
                        GraphKeys.LOCAL_VARIABLES, GraphKeys.MODEL_VARIABLES,
                        GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.METRIC_VARIABLES,
                        GraphKeys.GLOBAL_STEP)
META_GRAPH_VERSION = "v1.0"
TF_VERSION = "1.15.0"


def _is_variable(v) -> bool:
    return hasattr(v, "_variable") and hasattr(v, "_initializer_op") and hasattr(v, "_ref")


def _strip(name: str, scope: str | None) -> str:
    if scope and name.startswith(scope + "/"):
        return name[len(scope) + 1:]
    return name


def variable_def(v, export_scope=None) -> VariableDef:
    return VariableDef(variable_name=_strip(v._variable.name, export_scope),
                       initial_value_name=_strip(v._initial_value.name, export_scope),
                       initializer_name=_strip(v._initializer_op.name, export_scope),
                       snapshot_name=_strip(v._snapshot.name, export_scope),
                       trainable=bool(v._trainable))


def _collection(meta, key, items, export_scope) -> None:
    if not items:
        return
    if all(_is_variable(v) for v in items):
        meta.collection_def[key].bytes_list.value.extend(
            variable_def(v, export_scope).SerializeToString() for v in items)
    elif all(isinstance(v, (Tensor, Operation)) or _is_variable(v) for v in items):
        meta.collection_def[key].node_list.value.extend(
            _strip(v.name if not _is_variable(v) else v._variable.name, export_scope)
            for v in items)
    elif all(isinstance(v, (str, bytes)) for v in items):
        meta.collection_def[key].bytes_list.value.extend(items)
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        meta.collection_def[key].int64_list.value.extend(items)
    elif all(isinstance(v, float) for v in items):
        meta.collection_def[key].float_list.value.extend(items)
    # anything else (queue runners, savers, Python objects) has no CollectionDef here


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, **kwargs):
    """The MetaGraphDef of `graph` (the default graph), written to `filename` if given."""
    graph = graph if graph is not None else get_default_graph()
    meta = MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.meta_info_def.meta_graph_version = META_GRAPH_VERSION
    meta.meta_info_def.tensorflow_version = TF_VERSION
    meta.meta_info_def.tensorflow_git_version = "xlapy"
    gd = as_graph_def_message(graph_def) if graph_def is not None else make_graph_def(graph)
    if export_scope or clear_devices:
        kept = []
        for n in gd.node:
            if export_scope and not n.name.startswith(export_scope + "/"):
                continue
            n.name = _strip(n.name, export_scope)
            inputs = [("^" if i.startswith("^") else "") + _strip(i.lstrip("^"), export_scope)
                      for i in n.input]
            del n.input[:]
            n.input.extend(inputs)
            if clear_devices:
                n.device = ""
            kept.append(n)
        del gd.node[:]
        gd.node.extend(kept)
    meta.graph_def.CopyFrom(gd)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    for key in sorted(keys):
        items = graph.get_collection(key)
        if export_scope:
            items = [v for v in items if not hasattr(v, "name") or
                     (v._variable.name if _is_variable(v) else v.name).startswith(
                         export_scope + "/")]
        _collection(meta, key, items, export_scope)
    if filename:
        write_message(meta, filename, as_text)
    return meta


def write_message(message, filename, as_text=False) -> None:
    filename = os.fspath(filename)
    parent = os.path.dirname(filename)
    if parent:
        os.makedirs(parent, exist_ok=True)
    if as_text:
        with open(filename, "w") as f:
            f.write(str(message))
    else:
        with open(filename, "wb") as f:
            f.write(message.SerializeToString())


def read_message(cls, filename):
    """A message from a binary or text format file."""
    filename = os.fspath(filename)
    if not os.path.exists(filename):
        raise NotFoundError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        data = f.read()
    try:
        return cls.FromString(data)
    except DecodeError:
        pass
    try:
        return parse_text(data.decode("utf-8"), cls())
    except (DecodeError, UnicodeDecodeError) as e:
        raise InvalidArgumentError(f"{filename} is not a {cls.__name__} protobuf (binary or "
                                   f"text format): {e}") from None


def _meta(meta_graph_or_file) -> MetaGraphDef:
    if isinstance(meta_graph_or_file, MetaGraphDef):
        return meta_graph_or_file
    if hasattr(meta_graph_or_file, "SerializeToString"):
        return MetaGraphDef.FromString(meta_graph_or_file.SerializeToString())
    return read_message(MetaGraphDef, meta_graph_or_file)


def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None,
                             input_map=None) -> dict:
    """Import the graph and its collections; {variable name: Variable} of the import."""
    from xlapy.compat.v1.variables import Variable
    meta = _meta(meta_graph_or_file)
    graph = get_default_graph()
    import_graph_def(meta.graph_def, input_map=input_map, name=import_scope or "",
                     clear_devices=clear_devices)
    prefix = ""
    if import_scope:
        prefix = graph.get_name_scope()
        prefix = (prefix + "/" if prefix else "") + import_scope + "/"
        if not any(op.name.startswith(prefix) for op in graph.get_operations()):
            # the scope was made unique (import_1/...): the newest one
            prefix = max((op.name.split("/")[0] + "/" for op in graph.get_operations()
                          if op.name.startswith(import_scope)), key=len, default=prefix)
    variables: dict = {}
    for key in sorted(meta.collection_def):
        col = meta.collection_def[key]
        kind = col.WhichOneof("kind")
        if kind is None:
            continue
        values = list(getattr(col, kind).value)
        items = []
        if kind == "bytes_list" and key in VARIABLE_COLLECTIONS:
            for raw in values:
                vd = VariableDef.FromString(raw)
                name = prefix + vd.variable_name
                if name not in variables:
                    variables[name] = Variable._from_variable_def(graph, vd, prefix)
                items.append(variables[name])
        elif kind == "node_list":
            for name in values:
                el = graph.as_graph_element(prefix + name)
                v = next((x for x in variables.values() if x._variable is el), None)
                items.append(v if v is not None else el)
        else:
            items = values
        for it in items:
            graph.add_to_collection(key, it)
    return variables


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None,
                      **kwargs):
    """Import a MetaGraphDef into the default graph; a Saver of its variables (None when it
    has none)."""
    from xlapy.compat.v1.train.saver import Saver
    meta = _meta(meta_graph_or_file)
    variables = import_scoped_meta_graph(meta, clear_devices, import_scope,
                                         kwargs.get("input_map"))
    if not variables:
        return None
    sd = meta.saver_def if meta.HasField("saver_def") else SaverDef(max_to_keep=5)
    kw = dict(max_to_keep=sd.max_to_keep or 5,
              keep_checkpoint_every_n_hours=sd.keep_checkpoint_every_n_hours or 10000.0)
    if not import_scope:
        return Saver(**kw)
    # checkpoint names are the names without the import scope
    graph = get_default_graph()
    var_list = {}
    for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
        if any(v is x for x in variables.values()):
            name = v.op.name
            var_list[name[name.index(import_scope) + len(import_scope) + 1:]] = v
    return Saver(var_list, **kw)


def saver_def_of(saver) -> SaverDef:
    return SaverDef(filename_tensor_name="save/Const:0",
                    save_tensor_name="save/control_dependency:0",
                    restore_op_name="save/restore_all", max_to_keep=saver._max_to_keep,
                    keep_checkpoint_every_n_hours=float(saver._keep_hours),
                    version=SaverDef.V2)
