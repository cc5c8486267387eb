"""Session tensor handles: tf.get_session_handle, tf.get_session_tensor,
tf.delete_session_tensor (TF 1.15's persistent tensors).

Running get_session_handle(t) keeps t's value in the session and fetches a TensorHandle:
a bytes string naming the value (TF's "op name;id;device" form), with .handle (the name as
str), .eval() and .delete(). A later run feeds the handle (or h.handle) to the placeholder
that get_session_tensor returns, and reads the value back without computing it again:

    h = sess.run(tf.get_session_handle(a * b))
    p, v = tf.get_session_tensor(h.handle, tf.float32)
    sess.run(v * 10, feed_dict={p: h.handle})

The values live in the session that made them (its own store, dropped with the session)
until delete_session_tensor's op runs or h.delete() is called; unlike TF, a TensorHandle
that is garbage collected does not delete its value. The three ops run in the executor
(they read and write the session's store), never in an XLA cluster.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, make_op
from xlapy.compat.v1.ops.array_ops import placeholder
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape

__all__ = ["TensorHandle", "delete_session_tensor", "get_session_handle",
           "get_session_tensor"]

_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
_stores: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # session -> {handle: value}
_ids = itertools.count()


def _store(session) -> dict:
    s = _stores.get(session)
    if s is None:
        s = _stores[session] = {}
    return s


def _handle_str(h) -> str:
    if isinstance(h, np.ndarray):
        h = h.item() if h.size == 1 else h
    if isinstance(h, bytes):
        return h.decode("utf-8", "surrogateescape")
    if isinstance(h, str):
        return h
    raise InvalidArgumentError(f"a session tensor handle must be a string, got {h!r}")


class TensorHandle(bytes):
    """The fetched value of a get_session_handle tensor: the handle's bytes, with the
    session and dtype of the value it names."""

    def __new__(cls, handle: str, dtype, session):
        obj = super().__new__(cls, handle.encode("utf-8"))
        obj._dtype = dtypes.as_dtype(dtype)
        obj._session_ref = weakref.ref(session)
        return obj

    @property
    def handle(self) -> str:
        """The handle's string, to feed the placeholder of get_session_tensor."""
        return self.decode("utf-8")

    def get_raw_handle(self) -> str:
        return self.handle

    def to_numpy_array(self) -> np.ndarray:
        return np.asarray(bytes(self), dtype=object)

    def __str__(self):
        return self.handle

    def _session(self):
        s = self._session_ref()
        if s is None:
            raise InvalidArgumentError(f"the session of tensor handle {self.handle} is gone")
        return s

    def eval(self):
        """The value the handle names (run in its session)."""
        sess = self._session()
        holder, value = _cached(sess, ("get", self._dtype),
                                lambda: get_session_tensor(self.handle, self._dtype))
        return sess.run(value, {holder: self.handle})

    def delete(self) -> None:
        """Delete the value the handle names from its session."""
        sess = self._session()
        holder, deleter = _cached(sess, ("delete",),
                                  lambda: delete_session_tensor(self.handle))
        sess.run(deleter, {holder: self.handle})


_graph_ops: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # graph -> {key: ops}


def _cached(sess, key, build):
    ops = _graph_ops.setdefault(sess.graph, {})
    if key not in ops:
        with sess.graph.as_default():
            ops[key] = build()
    return ops[key]


# ---- the ops -----------------------------------------------------------------------------------

def _runs_in_session(m, *args, **attrs):
    """Never called: the executor runs the op with extra["executor"] (it needs the
    session's store)."""
    raise InvalidArgumentError("session handle ops run in a session")


def _check_handle_input(op):
    h = op.inputs[0]
    if h.dtype != dtypes.string:
        raise InvalidTypeError(f"{op.type}: the handle must be a string tensor, got "
                               f"{h.dtype.name}")


@register_op("GetSessionHandle", infer=lambda op: [(dtypes.string, TensorShape([]))],
             lowering=None, stateful=True)
def _get_session_handle(m, value):
    return _runs_in_session(m, value)


def _get_handle_executor(session, op):
    dtype = op.inputs[0].dtype

    def run(value):
        name = f"{op.name};{next(_ids)};{_DEVICE}"
        _store(session)[name] = np.array(value, copy=True)
        out = np.empty((), object)
        out[()] = TensorHandle(name, dtype, session)
        return [out]
    return run


def _get_tensor_infer(op):
    _check_handle_input(op)
    return [(op.get_attr("dtype"), unknown_shape())]


@register_op("GetSessionTensor", infer=_get_tensor_infer, attrs=("dtype",), lowering=None,
             stateful=True)
def _get_session_tensor(m, handle, dtype=None):
    return _runs_in_session(m, handle)


def _lookup(session, handle, op) -> tuple:
    name = _handle_str(handle)
    store = _store(session)
    if name not in store:
        raise InvalidArgumentError(f"The tensor with handle '{name}' is not in the session "
                                   f"store.\n\t [[{op.name}]]", op=op)
    return name, store


def _get_tensor_executor(session, op):
    want = op.get_attr("dtype")

    def run(handle):
        name, store = _lookup(session, handle, op)
        value = store[name]
        if value.dtype != want.np:
            raise InvalidArgumentError(f"The tensor with handle '{name}' is "
                                       f"{dtypes.as_dtype(value.dtype).name}, not "
                                       f"{want.name} as {op.name} reads it", op=op)
        return [value]
    return run


def _delete_infer(op):
    _check_handle_input(op)
    return []


@register_op("DeleteSessionTensor", infer=_delete_infer, lowering=None, stateful=True)
def _delete_session_tensor(m, handle):
    return _runs_in_session(m, handle)


def _delete_executor(session, op):
    def run(handle):
        name, store = _lookup(session, handle, op)
        del store[name]
        return []
    return run


get_op_def("GetSessionHandle").extra["executor"] = _get_handle_executor
get_op_def("GetSessionTensor").extra["executor"] = _get_tensor_executor
get_op_def("DeleteSessionTensor").extra["executor"] = _delete_executor
not_differentiable("GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor")


# ---- the API -----------------------------------------------------------------------------------

def get_session_handle(data, name=None):
    """A string tensor: running it keeps data's value in the session and fetches a
    TensorHandle naming it."""
    if not isinstance(data, Tensor):
        raise InvalidTypeError("`data` must be of type Tensor.")
    return make("GetSessionHandle", [data], name=name or "GetSessionHandle")


def _placeholder():
    return placeholder(dtypes.string)


def get_session_tensor(handle, dtype, name=None):
    """(holder, tensor): feed holder a handle (a TensorHandle or its .handle) and tensor is
    the value of `dtype` it names. `handle` names the value's device in TF; here every
    value is on the CPU, so it is only checked to be a string."""
    if handle is not None:
        _handle_str(handle)
    with get_default_graph().name_scope(name or "GetSessionTensor"):
        holder = _placeholder()
        value = make("GetSessionTensor", [holder], {"dtype": dtypes.as_dtype(dtype)})
    return holder, value


def delete_session_tensor(handle, name=None):
    """(holder, deleter): running deleter with holder fed a handle deletes the value it
    names from the session."""
    if handle is not None:
        _handle_str(handle)
    with get_default_graph().name_scope(name or "DeleteSessionTensor"):
        holder = _placeholder()
        deleter = make_op("DeleteSessionTensor", [holder])
    return holder, deleter
