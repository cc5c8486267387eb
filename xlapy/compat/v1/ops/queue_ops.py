"""TF 1.x queues: tf.FIFOQueue and tf.RandomShuffleQueue, the input pipelines of the era
before tf.data (tf.train.batch / shuffle_batch / slice_input_producer, queue_runners.py).

A queue's contents live in the session that runs its ops (one queue state per session and
queue, as TF keeps one per resource container), guarded by a condition variable:
enqueue waits while the queue is full, dequeue while it holds too few elements (a
RandomShuffleQueue keeps min_after_dequeue back until it is closed) and takes a random one.
A closed queue gives OutOfRangeError to a dequeue it cannot serve and CancelledError to an
enqueue; closing the session closes its queues, so waiting threads end.

The ops run in the session's executor (never inside a compiled cluster): the model reading
a dequeued batch compiles as any graph. A dequeue that waits on an empty queue which no
QueueRunner of this session feeds fails after `operation_timeout_in_ms` (ConfigProto), or
after 10 s with no runner at all, with a DeadlineExceededError naming
tf.train.start_queue_runners, instead of hanging as TensorFlow did.
"""

from __future__ import annotations

import collections
import threading
import time

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import (CancelledError, DeadlineExceededError,
                                    InvalidArgumentError, OutOfRangeError)
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op
from xlapy.compat.v1.tensor_shape import TensorShape, as_shape

NO_RUNNER_WAIT_S = 10.0


class _State:
    def __init__(self, queue, session):
        self.cond = threading.Condition()
        self.items: collections.deque = collections.deque()
        self.closed = False
        self.runners = 0  # QueueRunner threads of this session feeding the queue
        self.rng = np.random.RandomState(queue._seed)
        timeout = getattr(getattr(session, "_config", None), "operation_timeout_in_ms", 0)
        self.timeout = timeout / 1e3 if timeout and timeout > 0 else None


def _states(session) -> dict:
    if not hasattr(session, "_xlapy_queues"):
        session._xlapy_queues = {}
    return session._xlapy_queues


def close_all(session) -> None:
    """Close every queue of a session (Session.close), waking the threads waiting on them."""
    for st in list(getattr(session, "_xlapy_queues", {}).values()):
        if not isinstance(st, _State):
            continue  # (an input producer's epoch count)
        with st.cond:
            st.closed = True
            st.cond.notify_all()


class QueueBase:
    """A queue of tuples of tensors (`dtypes`, with `shapes` when given)."""

    _kind = "FIFOQueue"

    def __init__(self, capacity, dtypes_, shapes=None, names=None, shared_name=None,
                 name="fifo_queue", min_after_dequeue=0, seed=None):
        if not isinstance(dtypes_, (list, tuple)):
            dtypes_ = [dtypes_]
        self._dtypes = [dtypes.as_dtype(d) for d in dtypes_]
        if shapes is not None:
            shapes = [as_shape(s) for s in (shapes if isinstance(shapes, (list, tuple)) and
                                            shapes and not isinstance(shapes[0], int)
                                            else [shapes])]
            if len(shapes) != len(self._dtypes):
                raise InvalidArgumentError(f"queue shapes ({len(shapes)}) and dtypes "
                                           f"({len(self._dtypes)}) differ in length")
        self._shapes = shapes
        self._names = list(names) if names is not None else None
        self._capacity = int(capacity)
        if self._capacity <= 0:
            raise InvalidArgumentError(f"queue capacity must be positive, got {capacity}")
        self._min_after = int(min_after_dequeue)
        if self._min_after >= self._capacity:
            raise InvalidArgumentError(f"min_after_dequeue ({self._min_after}) must be "
                                       f"smaller than capacity ({self._capacity})")
        g = get_default_graph()
        self._seed = None if seed is None else int(seed)
        if self._seed is None and g.seed is not None:
            self._seed = int(g.seed) + len(g.get_operations())
        self._name = g.unique_name(name, mark_as_used=True)

    name = property(lambda self: self._name)
    dtypes = property(lambda self: list(self._dtypes))
    shapes = property(lambda self: list(self._shapes) if self._shapes else
                      [TensorShape(None)] * len(self._dtypes))
    names = property(lambda self: self._names)

    # ---- the per-session state -------------------------------------------------------------
    def _state(self, session) -> _State:
        st = _states(session).get(id(self))
        if st is None:
            st = _states(session)[id(self)] = _State(self, session)
        return st

    def _available(self, st) -> int:
        return len(st.items) - (0 if st.closed else self._min_after)

    def _take(self, st):
        if self._min_after or self._kind == "RandomShuffleQueue":
            k = st.rng.randint(len(st.items))
            st.items.rotate(-k)
            item = st.items.popleft()
            st.items.rotate(k)
            return item
        return st.items.popleft()

    # ---- ops --------------------------------------------------------------------------------
    def _components(self, vals, many):
        if isinstance(vals, dict):
            if self._names is None:
                raise InvalidArgumentError("this queue has no names: enqueue a list")
            vals = [vals[n] for n in self._names]
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise InvalidArgumentError(f"Expected {len(self._dtypes)} components to enqueue, "
                                       f"got {len(vals)}")
        out = []
        for k, (v, dt) in enumerate(zip(vals, self._dtypes)):
            t = convert_to_tensor(v, dtype=dt)
            if self._shapes is not None:
                want = self._shapes[k]
                got = TensorShape(t.shape.dims[1:]) if many and t.shape.ndims else t.shape
                if not want.is_compatible_with(got):
                    raise InvalidArgumentError(f"Shape mismatch in tuple component {k}. "
                                               f"Expected {want}, got {got}")
            out.append(t)
        return out

    def enqueue(self, vals, name=None):
        return make_op("QueueEnqueueV2", self._components(vals, False), {"queue": self},
                       name=name or "enqueue")

    def enqueue_many(self, vals, name=None):
        return make_op("QueueEnqueueManyV2", self._components(vals, True), {"queue": self},
                       name=name or "enqueue_many")

    def _dequeue(self, op_type, n, name):
        op = make_op(op_type, [] if n is None else [convert_to_tensor(n, dtype=dtypes.int32)],
                     {"queue": self, "n": n if isinstance(n, int) else None},
                     name=name or "dequeue")
        outs = list(op.outputs)
        if self._names is not None:
            return dict(zip(self._names, outs))
        return outs[0] if len(outs) == 1 else outs

    def dequeue(self, name=None):
        return self._dequeue("QueueDequeueV2", None, name)

    def dequeue_many(self, n, name=None):
        return self._dequeue("QueueDequeueManyV2", n, name)

    def dequeue_up_to(self, n, name=None):
        return self._dequeue("QueueDequeueUpToV2", n, name)

    def close(self, cancel_pending_enqueues=False, name=None):
        return make_op("QueueCloseV2", [], {"queue": self}, name=name or "close")

    def size(self, name=None):
        return make_op("QueueSizeV2", [], {"queue": self}, name=name or "size").outputs[0]

    def is_closed(self, name=None):
        return make_op("QueueIsClosedV2", [], {"queue": self},
                       name=name or "is_closed").outputs[0]


class FIFOQueue(QueueBase):
    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)


class RandomShuffleQueue(QueueBase):
    _kind = "RandomShuffleQueue"

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        super().__init__(capacity, dtypes, shapes, names, shared_name, name,
                         min_after_dequeue=min_after_dequeue, seed=seed)


# ---- the ops and their executor hooks ---------------------------------------------------------

def _dequeue_infer(op):
    q = op.get_attr("queue")
    n = op.get_attr("n")
    lead = [] if op.type == "QueueDequeueV2" else [
        n if op.type == "QueueDequeueManyV2" else None]
    return [(dt, TensorShape(lead).concatenate(s)) for dt, s in zip(q.dtypes, q.shapes)]


for _t in ("QueueEnqueueV2", "QueueEnqueueManyV2", "QueueCloseV2"):
    register_op(_t, lowering=None, stateful=True, infer=lambda op: [])(
        lambda m, *a: None)
for _t in ("QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2"):
    register_op(_t, lowering=None, stateful=True, infer=_dequeue_infer)(lambda m, *a: None)
register_op("QueueSizeV2", lowering=None, stateful=True,
            infer=lambda op: [(dtypes.int32, TensorShape([]))])(lambda m: None)
register_op("QueueIsClosedV2", lowering=None, stateful=True,
            infer=lambda op: [(dtypes.bool, TensorShape([]))])(lambda m: None)


def _wait(q, st, ready, what, op):
    """Wait on st.cond (held) until ready() or the queue closes; a clear error instead of a
    hang where nothing will ever feed it."""
    start = time.monotonic()
    while not ready() and not st.closed:
        waited = time.monotonic() - start
        if st.timeout is not None and waited >= st.timeout:
            raise DeadlineExceededError(f"Timed out waiting to {what} {q._kind} "
                                        f"'{q.name}'\n\t [[{op.name}]]", op=op)
        if st.runners == 0 and waited >= NO_RUNNER_WAIT_S and what != "enqueue to":
            raise DeadlineExceededError(
                f"{q._kind} '{q.name}' stayed empty for {NO_RUNNER_WAIT_S:.0f} s and no "
                f"QueueRunner feeds it in this session: did you call "
                f"tf.train.start_queue_runners(sess)?\n\t [[{op.name}]]", op=op)
        st.cond.wait(0.05)


def put_rows(q, session, rows, op) -> None:
    """Append rows (tuples of arrays) to q's state in session, waiting while it is full."""
    st = q._state(session)
    with st.cond:
        for row in rows:
            _wait(q, st, lambda: len(st.items) < q._capacity, "enqueue to", op)
            if st.closed:
                raise CancelledError(f"{q._kind} '{q.name}' is closed.\n\t [[{op.name}]]",
                                     op=op)
            st.items.append(row)
            st.cond.notify_all()


def take_row(q, session, op) -> tuple:
    """Dequeue one row (a tuple of arrays) of q in session for an op of another kind (a
    reader taking its next file name): waits like a dequeue, OutOfRangeError when q is
    closed and empty."""
    st = q._state(session)
    with st.cond:
        _wait(q, st, lambda: q._available(st) >= 1, "dequeue from", op)
        if not st.items:
            raise OutOfRangeError(f"{q._kind} '{q.name}' is closed and has insufficient "
                                  f"elements (requested 1, current size 0)\n\t [[{op.name}]]",
                                  op=op)
        row = q._take(st)
        st.cond.notify_all()
    return row


def _enqueue_executor(session, op):
    q, many = op.get_attr("queue"), op.type == "QueueEnqueueManyV2"

    def run(*vals):
        if many and len({len(v) for v in vals}) > 1:
            raise InvalidArgumentError(f"enqueue_many: the components' first dimensions "
                                       f"differ\n\t [[{op.name}]]", op=op)
        rows = [tuple(np.array(v[i]) for v in vals) for i in range(len(vals[0]))] \
            if many else [tuple(np.array(v) for v in vals)]
        put_rows(q, session, rows, op)
        return []
    return run


def _dequeue_executor(session, op):
    q = op.get_attr("queue")
    kind = op.type

    def run(*args):
        st = q._state(session)
        n = 1 if kind == "QueueDequeueV2" else int(np.asarray(args[0]))
        if n < 0:
            raise InvalidArgumentError(f"dequeue_many: n must be >= 0, got {n}", op=op)
        with st.cond:
            _wait(q, st, lambda: q._available(st) >= n, "dequeue from", op)
            have = len(st.items)
            if have < n and not (kind == "QueueDequeueUpToV2" and st.closed and have > 0):
                raise OutOfRangeError(f"{q._kind} '{q.name}' is closed and has insufficient "
                                      f"elements (requested {n}, current size {have})"
                                      f"\n\t [[{op.name}]]", op=op)
            rows = [q._take(st) for _ in range(min(n, have))]
            st.cond.notify_all()
        if kind == "QueueDequeueV2":
            return list(rows[0])
        return [np.stack([r[k] for r in rows]) if rows else
                np.zeros((0,) + tuple(d or 0 for d in (q.shapes[k].dims or ())),
                         q.dtypes[k].as_numpy_dtype)
                for k in range(len(q.dtypes))]
    return run


def _close_executor(session, op):
    q = op.get_attr("queue")

    def run():
        st = q._state(session)
        with st.cond:
            st.closed = True
            st.cond.notify_all()
        return []
    return run


def _size_executor(session, op):
    q = op.get_attr("queue")

    def run():
        st = q._state(session)
        with st.cond:
            return [np.int32(len(st.items))]
    return run


def _is_closed_executor(session, op):
    q = op.get_attr("queue")

    def run():
        return [np.bool_(q._state(session).closed)]
    return run


for _t, _f in (("QueueEnqueueV2", _enqueue_executor), ("QueueEnqueueManyV2", _enqueue_executor),
               ("QueueDequeueV2", _dequeue_executor), ("QueueDequeueManyV2", _dequeue_executor),
               ("QueueDequeueUpToV2", _dequeue_executor), ("QueueCloseV2", _close_executor),
               ("QueueSizeV2", _size_executor), ("QueueIsClosedV2", _is_closed_executor)):
    get_op_def(_t).extra.update(executor=_f)
not_differentiable("QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2",
                   "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2",
                   "QueueIsClosedV2")

__all__ = ["FIFOQueue", "QueueBase", "RandomShuffleQueue"]
