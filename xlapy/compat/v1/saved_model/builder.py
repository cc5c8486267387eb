"""tf.saved_model.builder.SavedModelBuilder: a SavedModel directory, as TF lays it out.

    export_dir/saved_model.pb                          SavedModel proto (saved_model.pbtxt
                                                       with save(as_text=True))
    export_dir/variables/variables.index               the variables, written by tf.train.Saver
    export_dir/variables/variables.data-00000-of-00001 (xlapy's checkpoint format)
"""

from __future__ import annotations

import os

from xlapy.compat.v1.errors import AlreadyExistsError, FailedPreconditionError, NotFoundError
from xlapy.compat.v1.proto.meta_graph_pb import SavedModel
from xlapy.compat.v1.saved_model import constants

__all__ = ["SavedModelBuilder"]


def _check_signatures(graph, signature_def_map) -> None:
    for key, sig in (signature_def_map or {}).items():
        if not isinstance(key, str):
            raise TypeError(f"signature_def_map keys must be strings, got {key!r}")
        for kind in ("inputs", "outputs"):
            for k, info in getattr(sig, kind).items():
                try:
                    graph.get_tensor_by_name(info.name)
                except (NotFoundError, ValueError) as e:
                    raise NotFoundError(f"signature '{key}': {kind[:-1]} '{k}' names "
                                        f"{info.name!r}, which is not a tensor of the "
                                        f"graph ({e})") from None


class SavedModelBuilder:
    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        if os.path.exists(self._export_dir) and os.listdir(self._export_dir):
            raise AlreadyExistsError(f"Export directory already exists, and isn't empty. "
                                     f"Please choose a different export directory, or delete "
                                     f"all the contents of the specified directory: "
                                     f"{self._export_dir}")
        self._proto = SavedModel(saved_model_schema_version=constants.SCHEMA_VERSION)
        self._has_variables = False
        self._saver_def = None

    def _meta(self, graph, tags, signature_def_map, main_op, clear_devices):
        from xlapy.compat.v1.train.meta_graph import export_meta_graph
        _check_signatures(graph, signature_def_map)
        meta = export_meta_graph(graph=graph, saver_def=self._saver_def,
                                 clear_devices=clear_devices)
        meta.meta_info_def.tags.extend(tags)
        for k, sig in (signature_def_map or {}).items():
            meta.signature_def[k].CopyFrom(sig)
        if main_op is not None:
            meta.collection_def[constants.MAIN_OP_KEY].node_list.value.append(main_op.name)
        self._proto.meta_graphs.append(meta)

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None, train_op=None):
        from xlapy.compat.v1.train.saver import Saver
        if self._has_variables:
            raise FailedPreconditionError("Graph state including variables and assets has "
                                          "already been saved. Please invoke "
                                          "`add_meta_graph()` instead.")
        with sess.graph.as_default():
            saver = saver or Saver(allow_empty=True, max_to_keep=0)
        var_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
        os.makedirs(var_dir, exist_ok=True)
        saver.save(sess, os.path.join(var_dir, constants.VARIABLES_FILENAME),
                   write_meta_graph=False, write_state=False)
        self._saver_def = saver.as_saver_def()
        self._has_variables = True
        self._meta(sess.graph, tags, signature_def_map, main_op or legacy_init_op,
                   clear_devices)

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None):
        from xlapy.compat.v1.framework import get_default_graph
        if not self._has_variables:
            raise FailedPreconditionError("Graph state including variables and assets has "
                                          "not been saved yet. Please invoke "
                                          "`add_meta_graph_and_variables()` first.")
        self._meta(get_default_graph(), tags, signature_def_map, main_op or legacy_init_op,
                   clear_devices)

    def save(self, as_text=False) -> str:
        from xlapy.compat.v1.train.meta_graph import write_message
        os.makedirs(self._export_dir, exist_ok=True)
        name = constants.SAVED_MODEL_FILENAME_PBTXT if as_text else \
            constants.SAVED_MODEL_FILENAME_PB
        path = os.path.join(self._export_dir, name)
        write_message(self._proto, path, as_text)
        return path
