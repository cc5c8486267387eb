"""tf.contrib.training.bucket and bucket_by_sequence_length: batches drawn from buckets of
examples (one bucket per range of sequence lengths, so that a batch pads little).

TF builds one queue per bucket, runners moving full batches into a top queue; here one
bucketing queue (its state in the session, as queue_ops.py's queues) does both:

- XlapyBucketEnqueue(which_bucket, keep_input, *tensors), run by the QueueRunner threads,
  puts an example in its bucket (waiting while the bucket holds its capacity); a bucket
  holding batch_size examples becomes a batch in the queue of ready batches (at most
  `capacity` of them).
- XlapyBucketDequeue gives the next ready batch and its bucket number. Once the queue is
  closed (the input ended), the ready batches come first; then, with
  allow_smaller_final_batch, what each bucket still holds, as smaller batches; then
  OutOfRangeError. dynamic_pad pads the examples of a batch to the largest shape, as
  PaddingFIFOQueue does.
"""

from __future__ import annotations

import collections

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import (CancelledError, InvalidArgumentError, InvalidTypeError,
                                    OutOfRangeError)
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op
from xlapy.compat.v1.ops.array_ops import constant
from xlapy.compat.v1.ops.math_ops import cast, less_equal, reduce_sum
from xlapy.compat.v1.ops.queue_more import check_row, pad_stack, partial_shapes
from xlapy.compat.v1.ops.queue_ops import QueueBase, _State, _states, _wait
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.train.queue_runner import QueueRunner, add_queue_runner


class _BucketQueue(QueueBase):
    _kind = "BucketQueue"

    def __init__(self, capacity, dtypes_, shapes, batch_sizes, bucket_capacities,
                 dynamic_pad, allow_smaller, name):
        super().__init__(capacity, dtypes_, shapes, name=name)
        self._batch_sizes = batch_sizes
        # (a bucket always takes a whole batch, whatever its capacity)
        self._bucket_caps = [max(c, b) for c, b in zip(bucket_capacities, batch_sizes)]
        self._dynamic_pad = dynamic_pad
        self._allow_smaller = allow_smaller

    def _state(self, session) -> _State:
        st = _states(session).get(id(self))
        if st is None:
            st = _State(self, session)
            st.buckets = [collections.deque() for _ in self._batch_sizes]
            st = _states(session).setdefault(id(self), st)
        return st

    def _promote(self, st) -> None:
        """Full buckets become ready batches while there is room for them."""
        for b, rows in enumerate(st.buckets):
            n = self._batch_sizes[b]
            while len(rows) >= n and len(st.items) < self._capacity:
                st.items.append((b, [rows.popleft() for _ in range(n)]))

    def _batch(self, rows) -> list:
        if self._dynamic_pad:
            return [pad_stack([r[k] for r in rows], dt, s)
                    for k, (dt, s) in enumerate(zip(self.dtypes, self.shapes))]
        return [np.stack([r[k] for r in rows]) for k in range(len(self._dtypes))]


def _enqueue_executor(session, op):
    q = op.get_attr("queue")

    def run(which, keep, *vals):
        if not bool(keep):
            return []
        b = int(which)
        if not 0 <= b < len(q._batch_sizes):
            raise InvalidArgumentError(f"bucket: which_bucket is {b}, not in [0, "
                                       f"{len(q._batch_sizes)})\n\t [[{op.name}]]", op=op)
        row = tuple(np.array(v) for v in vals)
        check_row(q, row)
        st = q._state(session)
        with st.cond:
            _wait(q, st, lambda: len(st.buckets[b]) < q._bucket_caps[b], "enqueue to", op)
            if st.closed:
                raise CancelledError(f"{q._kind} '{q.name}' is closed.\n\t [[{op.name}]]",
                                     op=op)
            st.buckets[b].append(row)
            q._promote(st)
            st.cond.notify_all()
        return []
    return run


def _dequeue_executor(session, op):
    q = op.get_attr("queue")

    def run():
        st = q._state(session)
        with st.cond:
            _wait(q, st, lambda: len(st.items) > 0, "dequeue from", op)
            q._promote(st)
            left = next((b for b, rows in enumerate(st.buckets) if rows), None)
            if st.items:
                b, rows = st.items.popleft()
                q._promote(st)
            elif q._allow_smaller and left is not None:
                b, have = left, st.buckets[left]
                rows = [have.popleft() for _ in range(min(len(have), q._batch_sizes[b]))]
            else:
                raise OutOfRangeError(f"{q._kind} '{q.name}' is closed and has insufficient "
                                      f"elements (no full batch in any bucket)"
                                      f"\n\t [[{op.name}]]", op=op)
            st.cond.notify_all()
        return [np.int32(b)] + q._batch(rows)
    return run


def _dequeue_infer(op):
    q = op.get_attr("queue")
    sizes = set(q._batch_sizes)
    lead = TensorShape([sizes.pop() if len(sizes) == 1 and not q._allow_smaller else None])
    return [(dtypes.int32, TensorShape([]))] + [(dt, lead.concatenate(s))
                                                 for dt, s in zip(q.dtypes, q.shapes)]


register_op("XlapyBucketEnqueue", lowering=None, stateful=True,
            infer=lambda op: [])(lambda m, *a: None)
register_op("XlapyBucketDequeue", lowering=None, stateful=True,
            infer=_dequeue_infer)(lambda m, *a: None)
get_op_def("XlapyBucketEnqueue").extra.update(executor=_enqueue_executor)
get_op_def("XlapyBucketDequeue").extra.update(executor=_dequeue_executor)
not_differentiable("XlapyBucketEnqueue", "XlapyBucketDequeue")


# ---- the API --------------------------------------------------------------------------------

def _flatten(tensors):
    """(flat list of tensors, a function rebuilding the structure from a flat list)."""
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return [convert_to_tensor(tensors[k]) for k in keys], lambda out: dict(zip(keys, out))
    if isinstance(tensors, (list, tuple)):
        if not tensors:
            raise InvalidArgumentError("bucket: expected at least one tensor")
        return [convert_to_tensor(t) for t in tensors], list
    return [convert_to_tensor(tensors)], lambda out: out[0]


def _per_bucket(value, num_buckets, what):
    values = list(value) if isinstance(value, (list, tuple)) else [value] * num_buckets
    if len(values) != num_buckets:
        raise InvalidArgumentError(f"bucket: {what} is a list of {len(values)} elements, but "
                                   f"there are {num_buckets} buckets")
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0
           for v in values):
        raise InvalidArgumentError(f"bucket: {what} must be positive integers, got {value!r}")
    return [int(v) for v in values]


def _scalar(x, dtype, what):
    t = convert_to_tensor(x, dtype=dtype)
    if t.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"bucket: {what} must be a scalar, got shape "
                                   f"{t.shape.tf_str()}")
    return t


def bucket(tensors, which_bucket, batch_size, num_buckets, num_threads=1, capacity=32,
           bucket_capacities=None, shapes=None, dynamic_pad=False,
           allow_smaller_final_batch=False, keep_input=True, shared_name=None, name=None):
    """(bucket number, batched tensors): examples put into bucket `which_bucket` (an int32
    scalar in [0, num_buckets)), batched per bucket (batch_size may be one per bucket),
    by num_threads QueueRunner threads."""
    num_buckets = int(num_buckets)
    if num_buckets < 1:
        raise InvalidArgumentError(f"bucket: num_buckets must be positive, got {num_buckets}")
    sizes = _per_bucket(batch_size, num_buckets, "batch_size")
    caps = _per_bucket(capacity if bucket_capacities is None else bucket_capacities,
                       num_buckets, "bucket_capacities")
    flat, rebuild = _flatten(tensors)
    if shapes is None:
        shapes = [t.shape for t in flat]
    elif dynamic_pad:
        shapes = partial_shapes(shapes, "bucket")
    else:
        shapes = [TensorShape(s) for s in shapes]
    if len(shapes) != len(flat):
        raise InvalidArgumentError(f"bucket: {len(shapes)} shapes for {len(flat)} tensors")
    for k, (t, s) in enumerate(zip(flat, shapes)):
        if not s.is_compatible_with(t.shape):
            raise InvalidArgumentError(f"bucket: tensor {k} of shape {t.shape.tf_str()} does "
                                       f"not have the shape {s.tf_str()}")
        if (s.ndims is None) if dynamic_pad else (not s.is_fully_defined()):
            raise InvalidArgumentError(
                f"bucket: the shape of tensor {k} is {s.tf_str()}: "
                + ("dynamic_pad needs shapes of known rank" if dynamic_pad else
                   "all shapes must be fully defined (or use dynamic_pad=True)"))
    which = _scalar(which_bucket, dtypes.int32, "which_bucket")
    keep = _scalar(keep_input, dtypes.bool, "keep_input")
    g = get_default_graph()
    with g.name_scope(name or "bucket"):
        q = _BucketQueue(capacity, [t.dtype for t in flat], shapes, sizes, caps,
                         bool(dynamic_pad), bool(allow_smaller_final_batch), "bucket_queue")
        enq = make_op("XlapyBucketEnqueue", [which, keep] + flat, {"queue": q},
                      name="bucket_enqueue")
        add_queue_runner(QueueRunner(q, [enq] * int(num_threads)))
        outs = list(make_op("XlapyBucketDequeue", [], {"queue": q},
                            name="bucket_dequeue").outputs)
    return outs[0], rebuild(outs[1:])


def bucket_by_sequence_length(input_length, tensors, batch_size, bucket_boundaries,
                              num_threads=1, capacity=32, bucket_capacities=None, shapes=None,
                              dynamic_pad=False, allow_smaller_final_batch=False,
                              keep_input=True, shared_name=None, name=None):
    """(batched input_length, batched tensors): bucket with one bucket per range of
    input_length, (-inf, b0), [b0, b1), ..., [b_last, inf) of bucket_boundaries."""
    if not isinstance(bucket_boundaries, (list, tuple)):
        raise InvalidTypeError(f"bucket_boundaries must be a list or tuple, but received: "
                               f"{bucket_boundaries!r}")
    for b in bucket_boundaries:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)):
            raise InvalidTypeError(f"bucket boundaries must be integers, but saw: {b!r}")
    for s, e in zip(bucket_boundaries[:-1], bucket_boundaries[1:]):
        if s >= e:
            raise InvalidArgumentError(f"Buckets must contain sequential increasing lengths, "
                                       f"but saw: {s} before {e}")
    length = convert_to_tensor(input_length)
    if not length.dtype.is_integer or length.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"bucket_by_sequence_length: input_length must be an "
                                   f"integer scalar, got {length.dtype.name} of shape "
                                   f"{length.shape.tf_str()}")
    flat, rebuild = _flatten(tensors)
    with get_default_graph().name_scope(name or "bucket_by_sequence_length"):
        bounds = constant(np.array(bucket_boundaries, length.dtype.as_numpy_dtype))
        which = reduce_sum(cast(less_equal(bounds, length), dtypes.int32))
        _, out = bucket([length] + flat, which, batch_size, len(bucket_boundaries) + 1,
                        num_threads=num_threads, capacity=capacity,
                        bucket_capacities=bucket_capacities,
                        shapes=None if shapes is None else [[]] + list(shapes),
                        dynamic_pad=dynamic_pad,
                        allow_smaller_final_batch=allow_smaller_final_batch,
                        keep_input=keep_input, name="bucket")
    return out[0], rebuild(out[1:])


__all__ = ["bucket", "bucket_by_sequence_length"]
