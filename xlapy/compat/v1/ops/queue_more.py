"""TF 1.x's other queues, on queue_ops.py's machinery (the contents live in the session that
runs the ops; enqueue waits while full, dequeue while too few are there; a closed queue
gives OutOfRangeError / CancelledError; closing the session wakes the waiting threads):

- tf.PaddingFIFOQueue: a FIFO queue whose shapes may have unknown (None) dimensions;
  dequeue_many / dequeue_up_to pad each component of the batch to the largest shape among
  its elements, with zeros (empty strings for tf.string, False for tf.bool).
- tf.PriorityQueue: each element's first component is an int64 scalar priority; elements
  leave smallest priority first (ties in the order they came).

Both reuse the QueueEnqueueV2 / QueueDequeueV2 / ... ops: the queue's rows container does
the rest (it checks each element's shapes as it is enqueued, or keeps a heap). The padded
batches need their own dequeue ops, XlapyPaddingQueueDequeueMany / -UpTo.

The gradient accumulators (tf.ConditionalAccumulator, tf.SparseConditionalAccumulator) are
in queue_more_accum.py, the bucketing queue of tf.contrib.training.bucket in
queue_more_bucket.py.
"""

from __future__ import annotations

import collections
import heapq
import itertools

import numpy as np

from xlapy.compat.v1 import dtypes as _dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, OutOfRangeError
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops.queue_more_accum import (ConditionalAccumulator,
                                                  ConditionalAccumulatorBase,
                                                  SparseConditionalAccumulator)
from xlapy.compat.v1.ops.queue_ops import QueueBase, _State, _states, _wait
from xlapy.compat.v1.tensor_shape import TensorShape, as_shape


# ---- shapes and padding (shared with queue_more_bucket.py) -----------------------------------

def _is_dim(s) -> bool:
    return s is None or isinstance(s, (int, np.integer))


def partial_shapes(shapes, what) -> list:
    """TF's rule for the shapes of a queue that takes partial shapes: a list with one shape
    (a list or TensorShape, of known rank) per component."""
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)) or not shapes or any(_is_dim(s) for s in shapes):
        raise InvalidArgumentError(f"{what}: when providing partial shapes, a list of shapes "
                                   f"must be provided, got {shapes!r}")
    out = [as_shape(s) for s in shapes]
    for k, s in enumerate(out):
        if s.ndims is None:
            raise InvalidArgumentError(f"{what}: all shapes must have a defined rank; "
                                       f"component {k} has none")
    return out


def full_shapes(shapes, what):
    """TF's rule for the shapes of a queue without padding: None, or fully defined shapes
    (a flat list of ints is the one shape of a one-component queue)."""
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise InvalidArgumentError(f"{what}: shapes must be a list of shapes, got {shapes!r}")
    if all(_is_dim(s) for s in shapes):
        shapes = [shapes]
    out = [as_shape(s) for s in shapes]
    if not all(s.is_fully_defined() for s in out):
        raise InvalidArgumentError(f"{what}: all shapes must be fully defined: "
                                   f"{[s.tf_str() for s in out]}")
    return out


def check_row(q, row, first=0) -> None:
    """An element enqueued at run time against q's shapes (the graph only knew the shapes
    of the tensors enqueued, which may be partial)."""
    if q._shapes is None:
        return
    for k in range(first, len(row)):
        want = q._shapes[k]
        if not want.is_compatible_with(row[k].shape):
            raise InvalidArgumentError(f"Shape mismatch in tuple component {k} enqueued to "
                                       f"{q._kind} '{q.name}'. Expected {want.tf_str()}, "
                                       f"got {list(row[k].shape)}")


def pad_stack(arrays, dtype, shape) -> np.ndarray:
    """Stack arrays of one rank along a new first axis, each padded at the end of every
    dimension to the batch's largest size (zeros, b"" for strings)."""
    npdt = dtype.as_numpy_dtype
    fill = b"" if dtype == _dtypes.string else 0
    if not arrays:
        dims = tuple(d or 0 for d in (shape.dims or ()))
        return np.full((0,) + dims, fill, npdt)
    target = tuple(max(a.shape[i] for a in arrays) for i in range(arrays[0].ndim))
    out = np.full((len(arrays),) + target, fill, npdt)
    for i, a in enumerate(arrays):
        out[(i,) + tuple(slice(0, d) for d in a.shape)] = a
    return out


class _CheckedRows(collections.deque):
    """A PaddingFIFOQueue's rows: each appended row is checked against the queue's shapes."""

    def __init__(self, queue):
        super().__init__()
        self._queue = queue

    def append(self, row):
        check_row(self._queue, row)
        super().append(row)


class _PriorityRows:
    """A PriorityQueue's rows: a heap on (priority, arrival number)."""

    def __init__(self, queue):
        self._queue = queue
        self._heap: list = []
        self._count = itertools.count()

    def __len__(self):
        return len(self._heap)

    def append(self, row):
        if row[0].shape != ():
            raise InvalidArgumentError(f"The priority (component 0) enqueued to PriorityQueue "
                                       f"'{self._queue.name}' must be a scalar, got shape "
                                       f"{list(row[0].shape)}")
        check_row(self._queue, row, first=1)
        heapq.heappush(self._heap, (int(row[0]), next(self._count), row))

    def pop(self):
        return heapq.heappop(self._heap)[2]


def _check_names(names, n, what):
    if names is not None and len(names) != n:
        raise InvalidArgumentError(f"{what}: names ({len(names)}) must have the same length as "
                                   f"the components ({n})")


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue that takes elements of variable shape and pads the batches it gives."""

    _kind = "PaddingFIFOQueue"

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        dts = list(dtypes) if isinstance(dtypes, (list, tuple)) else [dtypes]
        shapes = partial_shapes(shapes, "PaddingFIFOQueue")
        if len(shapes) != len(dts):
            raise InvalidArgumentError(f"Shapes must be provided for all components, but "
                                       f"received {len(dts)} dtypes and {len(shapes)} shapes.")
        _check_names(names, len(dts), "PaddingFIFOQueue")
        super().__init__(capacity, dts, shapes, names, shared_name, name)

    def _state(self, session) -> _State:
        st = _states(session).get(id(self))
        if st is None:
            st = _State(self, session)
            st.items = _CheckedRows(self)
            st = _states(session).setdefault(id(self), st)
        return st

    def dequeue_many(self, n, name=None):
        return self._dequeue("XlapyPaddingQueueDequeueMany", n, name)

    def dequeue_up_to(self, n, name=None):
        return self._dequeue("XlapyPaddingQueueDequeueUpTo", n, name)


class PriorityQueue(QueueBase):
    """A queue whose elements leave in the order of their int64 priority (first component,
    smallest first); `types` and `shapes` are those of the other components."""

    _kind = "PriorityQueue"

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        types = list(types) if isinstance(types, (list, tuple)) else [types]
        shapes = full_shapes(shapes, "PriorityQueue")
        if shapes is not None:
            if len(shapes) != len(types):
                raise InvalidArgumentError(f"PriorityQueue: shapes ({len(shapes)}) must have "
                                           f"the same length as types ({len(types)})")
            shapes = [TensorShape([])] + shapes
        _check_names(names, len(types) + 1, "PriorityQueue (the priority is a component)")
        super().__init__(capacity, [_dtypes.int64] + types, shapes, names, shared_name, name)

    def _state(self, session) -> _State:
        st = _states(session).get(id(self))
        if st is None:
            st = _State(self, session)
            st.items = _PriorityRows(self)
            st = _states(session).setdefault(id(self), st)
        return st

    def _take(self, st):
        return st.items.pop()

    def _need_shapes(self, what):
        if self._shapes is None:
            raise InvalidArgumentError(f"PriorityQueue '{self.name}': {what} needs the "
                                       f"components' shapes: give shapes= to the queue")

    def dequeue_many(self, n, name=None):
        self._need_shapes("dequeue_many")
        return super().dequeue_many(n, name)

    def dequeue_up_to(self, n, name=None):
        self._need_shapes("dequeue_up_to")
        return super().dequeue_up_to(n, name)


# ---- the padded dequeues ------------------------------------------------------------------

def _padded_infer(op):
    q, n = op.get_attr("queue"), op.get_attr("n")
    lead = TensorShape([n if op.type == "XlapyPaddingQueueDequeueMany" else None])
    return [(dt, lead.concatenate(s)) for dt, s in zip(q.dtypes, q.shapes)]


def _padded_dequeue_executor(session, op):
    q, up_to = op.get_attr("queue"), op.type == "XlapyPaddingQueueDequeueUpTo"

    def run(n):
        n = int(np.asarray(n))
        if n < 0:
            raise InvalidArgumentError(f"{'dequeue_up_to' if up_to else 'dequeue_many'}: n "
                                       f"must be >= 0, got {n}\n\t [[{op.name}]]", op=op)
        st = q._state(session)
        with st.cond:
            _wait(q, st, lambda: q._available(st) >= n, "dequeue from", op)
            have = len(st.items)
            if have < n and not (up_to and st.closed and have > 0):
                raise OutOfRangeError(f"{q._kind} '{q.name}' is closed and has insufficient "
                                      f"elements (requested {n}, current size {have})"
                                      f"\n\t [[{op.name}]]", op=op)
            rows = [q._take(st) for _ in range(min(n, have))]
            st.cond.notify_all()
        return [pad_stack([r[k] for r in rows], dt, s)
                for k, (dt, s) in enumerate(zip(q.dtypes, q.shapes))]
    return run


for _t in ("XlapyPaddingQueueDequeueMany", "XlapyPaddingQueueDequeueUpTo"):
    register_op(_t, lowering=None, stateful=True, infer=_padded_infer)(lambda m, *a: None)
    get_op_def(_t).extra.update(executor=_padded_dequeue_executor)
not_differentiable("XlapyPaddingQueueDequeueMany", "XlapyPaddingQueueDequeueUpTo")

__all__ = ["ConditionalAccumulator", "ConditionalAccumulatorBase", "PaddingFIFOQueue",
           "PriorityQueue", "SparseConditionalAccumulator"]
