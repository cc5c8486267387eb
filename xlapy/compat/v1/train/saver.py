"""tf.train.Saver and the checkpoint functions of tf.train.

    saver = tf.train.Saver()                       # every global variable, by its op name
    path = saver.save(sess, "logs/model.ckpt", global_step=step)   # logs/model.ckpt-1000
    saver.restore(sess, tf.train.latest_checkpoint("logs"))

var_list: None (the global variables and the SAVEABLE_OBJECTS collection), a list of
Variables (saved under their op names) or a dict {checkpoint name: Variable}. save writes
PREFIX.index and PREFIX.data-00000-of-00001 (train/checkpoint_io.py describes the format)
and updates DIR/checkpoint, TF's state file, keeping the newest max_to_keep checkpoints
(None or 0: keep all, list only the newest) plus one every keep_checkpoint_every_n_hours.
Values are read from and written to the session's variables directly: saving reads each
variable (an uninitialized one raises FailedPreconditionError, as TF's save op did) and
restoring sets them, initialized or not. save also writes PREFIX.meta, the graph's
MetaGraphDef (train/meta_graph.py; write_meta_graph=False: not), which
tf.train.import_meta_graph reads back.
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    NotFoundError)
from xlapy.compat.v1.framework import GraphKeys, get_default_graph
from xlapy.compat.v1.proto.meta_graph_pb import SaverDef  # V1 and V2 write xlapy's format
from xlapy.compat.v1.train import checkpoint_io as io
from xlapy.compat.v1.train.checkpoint_io import CheckpointReader, CheckpointState

log = logging.getLogger("xlapy.compat.v1.train")


def _var_name(v) -> str:
    return v.op.name


def _saveables(var_list) -> dict:
    """{checkpoint name: Variable} for a Saver's var_list."""
    if var_list is None:
        g = get_default_graph()
        var_list = g.get_collection(GraphKeys.GLOBAL_VARIABLES) + \
            g.get_collection(GraphKeys.SAVEABLE_OBJECTS)
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = []
        for v in var_list:
            if not hasattr(v, "_ref"):
                raise InvalidArgumentError(f"Saver: var_list holds {v!r}, which is not a "
                                           "Variable")
            items.append((_var_name(v), v))
    out: dict = {}
    for name, v in items:
        if not isinstance(name, str):
            raise InvalidArgumentError(f"Saver: var_list keys must be strings, got {name!r}")
        if not hasattr(v, "_ref"):
            raise InvalidArgumentError(f"Saver: the value for '{name}' in var_list is {v!r}, "
                                       "not a Variable")
        if name in out:
            raise InvalidArgumentError(f"At least two variables have the same name: {name}")
        out[name] = v
    return out


def restored_value(reader, key: str, v):
    """The checkpoint's tensor `key` for variable v, checked against v's shape and dtype
    (TF's Assign errors) before anything is set."""
    value = reader.get_tensor(key)
    if not v.shape.is_compatible_with(value.shape):
        raise InvalidArgumentError(
            f"Assign requires shapes of both tensors to match. lhs shape= "
            f"{v.shape.as_list()} rhs shape= {list(value.shape)} (restoring '{key}' into "
            f"{v.op.name})")
    if value.dtype != v.dtype.np:
        raise InvalidArgumentError(f"tensor '{key}' in the checkpoint has dtype {value.dtype}, "
                                   f"the variable {v.op.name} has {v.dtype.name}")
    return value


class Saver:
    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None,
                 restore_sequentially=False, saver_def=None, builder=None, defer_build=False,
                 allow_empty=False, write_version=SaverDef.V2, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        self._var_list = var_list
        self._vars: dict | None = None
        self._allow_empty = allow_empty
        self._max_to_keep = max_to_keep or 0
        self._keep_hours = keep_checkpoint_every_n_hours
        self._next_keep_time = time.time() + keep_checkpoint_every_n_hours * 3600
        self._pad = pad_step_number
        self._relative = save_relative_paths
        self._filename = filename
        self._last: list = []      # [(path, time)] newest last
        self._to_delete: list = []
        self._graph = get_default_graph()
        if not defer_build:
            self.build()

    def build(self) -> None:
        if self._vars is not None:
            return
        with self._graph.as_default():
            self._vars = _saveables(self._var_list)
        if not self._vars and not self._allow_empty:
            raise InvalidArgumentError("No variables to save")

    # ---- save ------------------------------------------------------------------------------
    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        self.build()
        if not self._vars:
            return None
        if latest_filename is not None and os.path.basename(latest_filename) != \
                latest_filename:
            raise InvalidArgumentError("'latest_filename' collides with 'save_path': "
                                       f"'{latest_filename}' must be a plain file name")
        save_path = os.fspath(save_path)
        store = self._store(sess)
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = int(sess.run(global_step))
            step = f"{int(global_step):08d}" if self._pad else str(int(global_step))
            prefix = f"{save_path}-{step}"
        else:
            prefix = save_path
        parent = os.path.dirname(save_path)
        if parent and not os.path.isdir(parent):
            raise InvalidArgumentError(f"Parent directory of {save_path} doesn't exist, can't "
                                       "save.")
        values = {}
        for name, v in self._vars.items():
            key = v.op.name
            if key not in store:
                raise FailedPreconditionError(f"Attempting to use uninitialized value {key}\n"
                                              f"\t [[save/SaveV2]]")
            values[name] = store[key]
        io.write_checkpoint(prefix, values)
        if write_meta_graph:
            self.export_meta_graph(f"{prefix}.{meta_graph_suffix}",
                                   strip_default_attrs=strip_default_attrs)
        if write_state:
            self._record(prefix)
            self._update_state(parent or ".", prefix, latest_filename or "checkpoint")
            self._delete_old()
        return prefix

    def _store(self, sess) -> dict:
        if getattr(sess, "_closed", False):
            raise InvalidArgumentError("Attempted to use a closed Session.")
        if sess.graph is not self._graph:
            raise InvalidArgumentError("The Saver's variables belong to another graph than "
                                       "the session's.")
        return sess._vars

    def _record(self, prefix: str) -> None:
        if not self._max_to_keep:
            return
        self._last = [(p, t) for p, t in self._last if p != prefix]
        self._last.append((prefix, time.time()))
        while len(self._last) > self._max_to_keep:
            self._to_delete.append(self._last.pop(0))

    def _delete_old(self) -> None:
        while self._to_delete:
            path, t = self._to_delete.pop(0)
            if t > self._next_keep_time:  # keep one every keep_checkpoint_every_n_hours
                self._next_keep_time += self._keep_hours * 3600
                continue
            for f in (io.index_path(path), io.data_path(path), f"{path}.meta"):
                try:
                    os.remove(f)
                except FileNotFoundError:
                    pass

    def _update_state(self, directory: str, prefix: str, filename: str) -> None:
        paths = [p for p, _ in self._last] or [prefix]
        if prefix not in paths:
            paths.append(prefix)
        update_checkpoint_state(directory, prefix, paths, latest_filename=filename,
                                save_relative_paths=self._relative)

    # ---- restore ---------------------------------------------------------------------------
    def restore(self, sess, save_path) -> None:
        self.build()
        if save_path is None:
            raise InvalidArgumentError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not io.checkpoint_exists(save_path):
            raise InvalidArgumentError(f"The passed save_path is not a valid checkpoint: "
                                       f"{save_path}")
        store = self._store(sess)
        reader = CheckpointReader(save_path)
        new = {}
        for name, v in self._vars.items():
            if not reader.has_tensor(name):
                raise NotFoundError(f"Key {name} not found in checkpoint\n\t [[save/RestoreV2]]")
            new[v.op.name] = restored_value(reader, name, v)
        store.update(new)

    # ---- bookkeeping -----------------------------------------------------------------------
    @property
    def last_checkpoints(self) -> list:
        return [p for p, _ in self._last]

    def set_last_checkpoints(self, last_checkpoints) -> None:
        now = time.time()
        self._last = [(p, now) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time) -> None:
        self._last = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths) -> None:
        self._last = [(p, os.path.getmtime(io.index_path(p))) for p in checkpoint_paths
                      if io.checkpoint_exists(p)]

    def as_saver_def(self):
        from xlapy.compat.v1.train.meta_graph import saver_def_of
        return saver_def_of(self)

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False,
                          export_scope=None, clear_devices=False,
                          clear_extraneous_savers=False, strip_default_attrs=False,
                          save_debug_info=False):
        from xlapy.compat.v1.train.meta_graph import export_meta_graph
        return export_meta_graph(filename=filename, graph=self._graph,
                                 saver_def=self.as_saver_def(),
                                 collection_list=collection_list, as_text=as_text,
                                 export_scope=export_scope, clear_devices=clear_devices)


# ---- the module functions --------------------------------------------------------------------

def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=False) -> None:
    """Write DIR/checkpoint naming the latest checkpoint and the ones kept. Paths are written
    relative to save_dir when they were given relative (or save_relative_paths)."""
    save_dir = os.fspath(save_dir)
    paths = list(all_model_checkpoint_paths or [])
    if model_checkpoint_path not in paths:
        paths.append(model_checkpoint_path)

    def rel(p):
        p = os.fspath(p)
        if os.path.isabs(p) and not save_relative_paths:
            return p
        return os.path.relpath(os.path.abspath(p), os.path.abspath(save_dir))
    state = CheckpointState(rel(model_checkpoint_path), [rel(p) for p in paths],
                            all_model_checkpoint_timestamps or (),
                            last_preserved_timestamp or 0.0)
    io.write_state(save_dir, state, latest_filename or "checkpoint")


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of DIR/checkpoint (relative paths joined to DIR), or None."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    try:
        st = io.read_state(checkpoint_dir, latest_filename or "checkpoint")
    except InvalidArgumentError as e:
        log.warning("%s: unreadable checkpoint state file: %s", checkpoint_dir, e)
        return None
    if st is None:
        return None
    if not st.model_checkpoint_path:
        raise InvalidArgumentError(f"Invalid checkpoint state loaded from {checkpoint_dir}")

    def join(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)
    st.model_checkpoint_path = join(st.model_checkpoint_path)
    st.all_model_checkpoint_paths = [join(p) for p in st.all_model_checkpoint_paths]
    return st


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint in checkpoint_dir, or None."""
    st = get_checkpoint_state(checkpoint_dir, latest_filename)
    if st and io.checkpoint_exists(st.model_checkpoint_path):
        return st.model_checkpoint_path
    if st:
        log.error("Couldn't match files for checkpoint %s", st.model_checkpoint_path)
    return None


def checkpoint_exists(checkpoint_prefix) -> bool:
    return io.checkpoint_exists(os.fspath(checkpoint_prefix))


def get_checkpoint_mtimes(checkpoint_prefixes) -> list:
    return [os.path.getmtime(io.index_path(p)) for p in checkpoint_prefixes
            if io.checkpoint_exists(p)]


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=SaverDef.V2,
                      meta_graph_suffix="meta") -> None:
    for f in (io.index_path(checkpoint_prefix), io.data_path(checkpoint_prefix),
              f"{checkpoint_prefix}.{meta_graph_suffix}"):
        if os.path.exists(f):
            os.remove(f)


def _resolve(ckpt_dir_or_file) -> str:
    p = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(p):
        latest = latest_checkpoint(p)
        if latest is None:
            raise InvalidArgumentError(f"Couldn't find 'checkpoint' file or checkpoints in "
                                       f"given directory {p}")
        return latest
    return p


def NewCheckpointReader(filepattern) -> CheckpointReader:
    return CheckpointReader(os.fspath(filepattern))


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    return CheckpointReader(_resolve(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file, name):
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file) -> list:
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return sorted(shapes.items())


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Import a MetaGraphDef (a `.meta` file) into the default graph; returns a Saver of its
    variables (train/meta_graph.py)."""
    from xlapy.compat.v1.train.meta_graph import import_meta_graph as imp
    return imp(meta_graph_or_file, clear_devices=clear_devices, import_scope=import_scope,
               **kwargs)
