"""tf.train.Checkpoint and tf.train.CheckpointManager in graph mode: object-based
checkpoints, written in xlapy's checkpoint format (checkpoint_io.py) and found by
tf.train.latest_checkpoint.

    ckpt = tf.train.Checkpoint(optimizer=opt, model=model, step=step_var)
    path = ckpt.save("logs/ckpt", session=sess)            # logs/ckpt-1
    status = ckpt.restore(tf.train.latest_checkpoint("logs"))
    status.initialize_or_restore(sess)                     # or run_restore_ops(sess)

A value is keyed by the path of attribute names from the Checkpoint to its variable, as
TF keys them: "model/kernel/.ATTRIBUTES/VARIABLE_VALUE"; an optimizer's slot of a
variable by "<variable's path>/.OPTIMIZER_SLOT/<optimizer's path>/<slot name>". The
objects walked: variables, tf.train.Checkpoint, optimizers (their non-slot variables
such as beta1_power, and their public attributes: Keras' lr and iterations), layers and
models (their attributes), lists, tuples and dicts of these. Each variable gets its
shortest path (breadth first), so a layer's `kernel` is "layer/kernel" even though its
weight list holds it too. The checkpoint's save_counter is "save_counter/...".

In graph mode restore() only reads the checkpoint; the returned status's
run_restore_ops(session) or initialize_or_restore(session) loads the values of the
objects that exist by then (objects added after restore() are matched when it runs).
Without a session argument the default session is used, else the Keras session.
"""

from __future__ import annotations

import collections
import os
import time

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import FailedPreconditionError, InvalidArgumentError
from xlapy.compat.v1.ops.functional import in_root_graph
from xlapy.compat.v1.partitioned_variables import PartitionedVariable
from xlapy.compat.v1.session import get_default_session
from xlapy.compat.v1.train import checkpoint_io as io
from xlapy.compat.v1.train.optimizer import Optimizer
from xlapy.compat.v1.train.saver import (get_checkpoint_state, remove_checkpoint, restored_value,
                                         update_checkpoint_state)
from xlapy.compat.v1.variables import Variable

__all__ = ["Checkpoint", "CheckpointManager"]

_VALUE = ".ATTRIBUTES/VARIABLE_VALUE"
_SLOT = ".OPTIMIZER_SLOT"
# attributes that mark an object holding variables (layers, models, RNN cells)
_HOLDER_ATTRS = ("trainable_weights", "trainable_variables", "weights", "variables")


def _is_variable(x) -> bool:
    return hasattr(x, "_ref") and hasattr(x, "_snapshot") and hasattr(x, "initializer")


def _is_trackable(x) -> bool:
    if _is_variable(x) or isinstance(x, (Checkpoint, Optimizer, PartitionedVariable)):
        return True
    if isinstance(x, (list, tuple, dict)):
        return True
    return hasattr(x, "__dict__") and not isinstance(x, type) and any(
        hasattr(type(x), a) for a in _HOLDER_ATTRS)


def _escape(name: str) -> str:
    return name.replace(".", "..").replace("/", ".S")


def _children(obj) -> list:
    """[(name, child)] of a trackable object, in order."""
    if _is_variable(obj):
        return []
    if isinstance(obj, Checkpoint):
        out = [("save_counter", obj._save_counter)] if obj._save_counter is not None else []
        return out + [(k, v) for k, v in vars(obj).items()
                      if not k.startswith("_") and _is_trackable(v)]
    if isinstance(obj, PartitionedVariable):
        return [(f"part_{i}", v) for i, v in enumerate(obj)]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj) if _is_trackable(v)]
    if isinstance(obj, dict):
        return [(k, v) for k, v in obj.items() if isinstance(k, str) and _is_trackable(v)]
    if isinstance(obj, Optimizer):
        out = [(v.op.name.rsplit("/", 1)[-1], v) for v in obj._extra_vars]
        return out + [(k, v) for k, v in vars(obj).items()
                      if not k.startswith("_") and _is_variable(v)]
    return [(k, v) for k, v in vars(obj).items() if _is_trackable(v)]


def _variables_by_key(root) -> dict:
    """{checkpoint key: Variable} of the objects reachable from root, each by its shortest
    path (breadth first; the first path found wins)."""
    paths = {}
    order = []
    queue = collections.deque([((), root)])
    seen = {id(root)}
    while queue:
        path, obj = queue.popleft()
        order.append((path, obj))
        for name, child in _children(obj):
            if id(child) not in seen:
                seen.add(id(child))
                queue.append((path + (_escape(str(name)),), child))
    out = {}
    for path, obj in order:
        paths[id(obj)] = path
        if _is_variable(obj):
            out["/".join(path + (_VALUE,))] = obj
    for path, obj in order:  # the optimizers' slots of variables in the graph
        if isinstance(obj, Optimizer):
            for slot_name, table in obj._slots.items():
                for var, slot in table.items():
                    if id(var) in paths:
                        key = "/".join(paths[id(var)] + (_SLOT,) + path + (
                            _escape(slot_name),))
                        out[key] = slot
    return out


def _session(session):
    if session is not None:
        return session
    s = get_default_session()
    if s is None:
        from xlapy.compat.v1.keras import backend  # (Keras builds on train: only at call)
        s = backend.get_session()
    return s


def _values(sess, variables: dict) -> dict:
    if getattr(sess, "_closed", False):
        raise InvalidArgumentError("Attempted to use a closed Session.")
    out = {}
    for key, v in variables.items():
        if v.graph is not sess.graph:
            raise InvalidArgumentError(f"Checkpoint: {v.op.name} belongs to another graph "
                                       "than the session's")
        name = v.op.name
        if name not in sess._vars:
            raise FailedPreconditionError(f"Attempting to use uninitialized value {name} "
                                          f"(checkpoint key {key})")
        out[key] = sess._vars[name]
    return out


class Checkpoint:
    """Groups trackable objects (variables, optimizers, layers, models, other
    Checkpoints) given as keywords; saves and restores their variables."""

    def __init__(self, **kwargs):
        self._save_counter = None
        self._save_assign = None
        for k, v in sorted(kwargs.items()):
            if not _is_trackable(v):
                raise ValueError(f"`Checkpoint` was expecting a trackable object (a variable, "
                                 f"an optimizer, a layer or model, another Checkpoint, or a "
                                 f"list or dict of these), got {v!r}.")
            if k.startswith("_") or k in ("save_counter", "save", "write", "restore"):
                raise ValueError(f"Checkpoint: '{k}' cannot name a dependency")
            setattr(self, k, v)

    # ---- the save counter --------------------------------------------------------------------
    @property
    def save_counter(self):
        """The number of save() calls (an int64 variable, made on first use)."""
        if self._save_counter is None:
            with in_root_graph() as g, g.control_dependencies(None), g.name_scope(None):
                self._save_counter = Variable(np.int64(0), trainable=False,
                                              name="save_counter", dtype=dtypes.int64)
        return self._save_counter

    def _count_save(self, sess) -> int:
        counter = self.save_counter
        if counter.op.name not in sess._vars:
            sess.run(counter.initializer)
        if self._save_assign is None:
            g = counter.graph
            with g.as_default(), g.control_dependencies(None), g.name_scope(None):
                self._save_assign = counter.assign_add(1)
        return int(sess.run(self._save_assign))

    # ---- save --------------------------------------------------------------------------------
    def write(self, file_prefix, session=None) -> str:
        """Write the checkpoint `file_prefix` (no numbering, no state file); returns it."""
        sess = _session(session)
        prefix = os.fspath(file_prefix)
        values = _values(sess, _variables_by_key(self))
        parent = os.path.dirname(prefix)
        if parent:
            os.makedirs(parent, exist_ok=True)
        io.write_checkpoint(prefix, values)
        return prefix

    def save(self, file_prefix, session=None) -> str:
        """Write `file_prefix`-<save_counter after adding 1> and name it the latest in the
        directory's `checkpoint` file; returns its path."""
        sess = _session(session)
        n = self._count_save(sess)
        path = self.write(f"{os.fspath(file_prefix)}-{n}", session=sess)
        update_checkpoint_state(os.path.dirname(path) or ".", path, [path],
                                save_relative_paths=True)
        return path

    # ---- restore -----------------------------------------------------------------------------
    def restore(self, save_path):
        """A status whose run_restore_ops / initialize_or_restore load the checkpoint's values
        (save_path None: a status that only initializes)."""
        self.save_counter  # noqa: B018  (made now, so restoring sets it, as TF's)
        if save_path is None:
            return InitializationOnlyStatus(self)
        save_path = os.fspath(save_path)
        reader = io.CheckpointReader(save_path)  # NotFoundError when there is none
        keys = reader.get_variable_to_shape_map()
        if keys and not any(_VALUE in k or _SLOT in k for k in keys):
            return NameBasedSaverStatus(self, reader, save_path)
        return CheckpointLoadStatus(self, reader, save_path)


def _initialize(sess, variables) -> None:
    ops = [v.initializer for v in variables]
    if ops:
        sess.run(ops)


class _Status:
    def __init__(self, checkpoint, reader=None, save_path=None):
        self._checkpoint = checkpoint
        self._reader = reader
        self._save_path = save_path

    def expect_partial(self):
        return self

    def _load(self, sess, pairs) -> list:
        """Set [(checkpoint key, variable)] from the checkpoint; returns the variables."""
        new = {}
        for key, v in pairs:
            if v.graph is not sess.graph:
                raise InvalidArgumentError(f"Checkpoint: {v.op.name} belongs to another graph "
                                           "than the session's")
            new[v.op.name] = restored_value(self._reader, key, v)
        sess._vars.update(new)
        return [v for _, v in pairs]


class CheckpointLoadStatus(_Status):
    """What Checkpoint.restore returns for an object-based checkpoint."""

    def _matches(self):
        current = _variables_by_key(self._checkpoint)
        ckpt_keys = set(self._reader.get_variable_to_shape_map())
        return current, ckpt_keys

    def run_restore_ops(self, session=None) -> None:
        """Load the values of the objects that exist now and are in the checkpoint."""
        sess = _session(session)
        current, ckpt_keys = self._matches()
        self._load(sess, [(k, v) for k, v in current.items() if k in ckpt_keys])

    def initialize_or_restore(self, session=None) -> None:
        """run_restore_ops, and initialize the objects the checkpoint has no value for."""
        sess = _session(session)
        current, ckpt_keys = self._matches()
        self._load(sess, [(k, v) for k, v in current.items() if k in ckpt_keys])
        _initialize(sess, [v for k, v in current.items() if k not in ckpt_keys])

    def assert_consumed(self):
        """AssertionError unless every value of the checkpoint has an object and every
        object a value."""
        current, ckpt_keys = self._matches()
        unresolved = sorted(ckpt_keys - set(current))
        if unresolved:
            raise AssertionError(f"Unresolved object in checkpoint {self._save_path}: "
                                 f"{unresolved[0]}" + (f" (and {len(unresolved) - 1} more)"
                                                       if len(unresolved) > 1 else ""))
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self):
        """AssertionError unless every object now in the dependency graph has a value in
        the checkpoint."""
        current, ckpt_keys = self._matches()
        missing = sorted(k for k in current if k not in ckpt_keys)
        if missing:
            raise AssertionError(f"Object not assigned a value from checkpoint "
                                 f"{self._save_path}: {current[missing[0]].op.name} "
                                 f"({missing[0]})")
        return self

    def assert_nontrivial_match(self):
        """AssertionError unless some object besides the save counter is in the
        checkpoint."""
        current, ckpt_keys = self._matches()
        if not any(k in ckpt_keys for k in current if not k.startswith("save_counter/")):
            raise AssertionError(f"Nothing except the root object matched a checkpointed "
                                 f"value ({self._save_path}).")
        return self


class InitializationOnlyStatus(_Status):
    """What Checkpoint.restore(None) returns: initialize_or_restore initializes."""

    def _no_checkpoint(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    assert_consumed = assert_existing_objects_matched = assert_nontrivial_match = \
        _no_checkpoint

    def run_restore_ops(self, session=None) -> None:
        """Nothing to restore."""

    def initialize_or_restore(self, session=None) -> None:
        _initialize(_session(session), list(_variables_by_key(self._checkpoint).values()))


class NameBasedSaverStatus(_Status):
    """What Checkpoint.restore returns for a checkpoint tf.train.Saver wrote: variables are
    matched by their graph names (v.op.name), as the Saver keyed them."""

    def _pairs(self):
        return [(v.op.name, v) for v in _variables_by_key(self._checkpoint).values()
                if self._reader.has_tensor(v.op.name)]

    def run_restore_ops(self, session=None) -> None:
        self._load(_session(session), self._pairs())

    def initialize_or_restore(self, session=None) -> None:
        sess = _session(session)
        done = {id(v) for v in self._load(sess, self._pairs())}
        _initialize(sess, [v for v in _variables_by_key(self._checkpoint).values()
                           if id(v) not in done])

    def _refuse(self):
        raise AssertionError("Restoring a name-based tf.train.Saver checkpoint with the "
                             "object-based API matches variables by their global names; it "
                             "cannot tell which objects were consumed. Save the checkpoint "
                             "again with tf.train.Checkpoint to use these assertions.")

    assert_consumed = assert_existing_objects_matched = _refuse

    def assert_nontrivial_match(self):
        if not self._pairs():
            raise AssertionError(f"No variable matched a name in the name-based checkpoint "
                                 f"{self._save_path}.")
        return self


# ---- CheckpointManager -------------------------------------------------------------------------

class CheckpointManager:
    """Numbers, records and deletes the checkpoints of one Checkpoint in `directory`:
    save() writes <directory>/<checkpoint_name>-<n>, keeps the newest max_to_keep (None:
    all) plus one every keep_checkpoint_every_n_hours, and keeps the directory's
    `checkpoint` file listing them."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt"):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager expects a tf.train.Checkpoint, got "
                            f"{checkpoint!r}")
        if max_to_keep is not None and (not isinstance(max_to_keep, (int, np.integer))
                                        or max_to_keep <= 0):
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep!r}.")
        self._checkpoint = checkpoint
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._directory = os.fspath(directory)
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._maybe_delete: collections.OrderedDict = collections.OrderedDict()
        now = time.time()
        state = get_checkpoint_state(self._directory)
        if state is None:
            self._latest = None
            self._last_preserved = now - 1  # (a manager made again at once keeps the rule)
            return
        self._latest = state.model_checkpoint_path
        paths = list(state.all_model_checkpoint_paths)
        stamps = list(state.all_model_checkpoint_timestamps)
        if len(stamps) != len(paths):
            stamps = [now] * len(paths)
        self._last_preserved = state.last_preserved_timestamp or now - 1
        for p, t in zip(paths, stamps):
            self._maybe_delete[p] = min(t, now)

    directory = property(lambda self: self._directory)
    checkpoint = property(lambda self: self._checkpoint)
    latest_checkpoint = property(lambda self: self._latest)

    @property
    def checkpoints(self) -> list:
        """The managed checkpoints, oldest first."""
        return list(self._maybe_delete)

    def save(self, checkpoint_number=None, session=None) -> str:
        """Write a new checkpoint numbered checkpoint_number (an int, or a variable or tensor
        such as the global step; None: the checkpoint's save_counter after adding 1)."""
        sess = _session(session)
        n = self._checkpoint._count_save(sess)
        if checkpoint_number is not None:
            n = checkpoint_number if isinstance(checkpoint_number, (int, np.integer)) else \
                sess.run(checkpoint_number)
            if not np.issubdtype(np.asarray(n).dtype, np.integer):
                raise InvalidArgumentError(f"checkpoint_number must be an integer, got {n!r}")
        path = self._checkpoint.write(f"{self._prefix}-{int(n)}", session=sess)
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = time.time()
        self._latest = path
        self._record_state()  # the new checkpoint is listed before anything is deleted
        self._sweep()
        self._record_state()
        return path

    def _record_state(self) -> None:
        os.makedirs(self._directory or ".", exist_ok=True)
        update_checkpoint_state(self._directory or ".", self._latest,
                                list(self._maybe_delete),
                                all_model_checkpoint_timestamps=list(
                                    self._maybe_delete.values()),
                                last_preserved_timestamp=self._last_preserved,
                                save_relative_paths=True)

    def _sweep(self) -> None:
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = self._maybe_delete.popitem(last=False)
            if self._keep_hours and stamp - self._keep_hours * 3600 >= self._last_preserved:
                self._last_preserved = stamp  # kept for good: one every n hours
                continue
            remove_checkpoint(path)
