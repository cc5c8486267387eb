"""tf.saved_model.loader: load a SavedModel's MetaGraphDef into a session.

    meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], path)
    sig = meta.signature_def["serving_default"]
    y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: x})

load imports the MetaGraphDef whose tags are `tags` into sess.graph (tf.import_meta_graph),
restores the variables from export_dir/variables and runs the main op, if any. Reading a
signature key the SavedModel does not have raises NotFoundError (a KeyError) naming the
keys it has.
"""

from __future__ import annotations

import os

from xlapy.compat.v1.errors import NotFoundError
from xlapy.compat.v1.proto.message import MessageMap
from xlapy.compat.v1.proto.meta_graph_pb import SavedModel
from xlapy.compat.v1.saved_model import constants
from xlapy.compat.v1.train import checkpoint_io

__all__ = ["load", "maybe_saved_model_directory"]


def maybe_saved_model_directory(export_dir) -> bool:
    export_dir = os.fspath(export_dir)
    return any(os.path.isfile(os.path.join(export_dir, n)) for n in (
        constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT))


contains_saved_model = maybe_saved_model_directory


def read_saved_model(export_dir) -> SavedModel:
    from xlapy.compat.v1.train.meta_graph import read_message
    export_dir = os.fspath(export_dir)
    for name in (constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT):
        path = os.path.join(export_dir, name)
        if os.path.isfile(path):
            return read_message(SavedModel, path)
    raise NotFoundError(f"SavedModel file does not exist at: {export_dir}/"
                        f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|"
                        f"{constants.SAVED_MODEL_FILENAME_PB}}}")


class _Signatures(MessageMap):
    """signature_def of a loaded MetaGraphDef: a missing key is an error, not a new entry."""

    def __missing__(self, key):
        raise NotFoundError(f"The SavedModel has no signature '{key}'; its signatures are "
                            f"{sorted(self)}")


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    from xlapy.compat.v1.train.meta_graph import import_meta_graph
    model = read_saved_model(export_dir)
    want = set(tags)
    meta = next((m for m in model.meta_graphs if set(m.meta_info_def.tags) == want), None)
    if meta is None:
        have = [sorted(m.meta_info_def.tags) for m in model.meta_graphs]
        raise NotFoundError(f"MetaGraphDef associated with tags {sorted(want)} could not be "
                            f"found in SavedModel. To inspect available tag-sets in the "
                            f"SavedModel, please use the SavedModel CLI: `saved_model_cli`\n"
                            f"available_tags: {have}")
    with sess.graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
        prefix = os.path.join(os.fspath(export_dir), constants.VARIABLES_DIRECTORY,
                              constants.VARIABLES_FILENAME)
        if saver is not None and checkpoint_io.checkpoint_exists(prefix):
            saver.restore(sess, prefix)
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            ops = sess.graph.get_collection(key)
            if ops:
                sess.run(ops[0])
                break
    sigs = _Signatures(meta, meta._field("signature_def"))
    for k, v in meta.signature_def.items():
        dict.__setitem__(sigs, k, v)
    meta._v["signature_def"] = sigs
    return meta
