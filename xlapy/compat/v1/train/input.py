"""tf.train's queue-based input pipeline: input_producer, string_input_producer,
range_input_producer, slice_input_producer, batch and shuffle_batch, each a queue with a
QueueRunner in the QUEUE_RUNNERS collection (start them with tf.train.start_queue_runners).
num_epochs ends the input: the producer's queue closes after that many passes and the
consumers get OutOfRangeError once it is drained. batch(dynamic_pad=True) batches through a
PaddingFIFOQueue: the shapes need only a known rank, each batch is padded to its largest
example."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, OutOfRangeError
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op
from xlapy.compat.v1.ops.queue_more import PaddingFIFOQueue
from xlapy.compat.v1.ops.queue_ops import FIFOQueue, RandomShuffleQueue
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.train.queue_runner import QueueRunner, add_queue_runner

register_op("XlapyInputProducerEnqueue", lowering=None, stateful=True,
            infer=lambda op: [])(lambda m, *a: None)


def _producer_executor(session, op):
    q = op.get_attr("queue")
    shuffle, seed, epochs = op.get_attr("shuffle"), op.get_attr("seed"), op.get_attr("epochs")
    from xlapy.compat.v1.ops.queue_ops import put_rows
    key = ("producer", id(op))

    def run(x):
        from xlapy.compat.v1.ops.queue_ops import _states
        st = _states(session)
        state = st.get(key)
        if state is None:
            state = st[key] = {"done": 0, "rng": np.random.RandomState(seed)}
        if epochs is not None and state["done"] >= epochs:
            raise OutOfRangeError(f"input_producer: {epochs} epochs done\n\t [[{op.name}]]",
                                  op=op)
        x = np.asarray(x)
        order = state["rng"].permutation(len(x)) if shuffle else np.arange(len(x))
        state["done"] += 1
        put_rows(q, session, [(np.array(r),) for r in x[order]], op)
        return []
    return run


get_op_def("XlapyInputProducerEnqueue").extra.update(executor=_producer_executor)
not_differentiable("XlapyInputProducerEnqueue")


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A queue fed with the rows of input_tensor, one pass (shuffled) per epoch."""
    x = convert_to_tensor(input_tensor)
    if x.shape.ndims == 0:
        raise InvalidArgumentError("input_producer needs a tensor of rank 1 or more")
    if num_epochs is not None and int(num_epochs) <= 0:
        raise InvalidArgumentError(f"num_epochs must be positive, got {num_epochs}")
    g = get_default_graph()
    with g.name_scope(name or "input_producer"):
        shape = element_shape if element_shape is not None else (
            TensorShape(x.shape.dims[1:]) if x.shape.ndims is not None else None)
        q = FIFOQueue(capacity, [x.dtype], shapes=None if shape is None else [shape])
        if seed is None and g.seed is not None:
            seed = int(g.seed) + len(g.get_operations())
        enq = make_op("XlapyInputProducerEnqueue", [x],
                      {"queue": q, "shuffle": bool(shuffle), "seed": seed,
                       "epochs": None if num_epochs is None else int(num_epochs)})
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
    return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    return input_producer(string_tensor, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                          capacity=capacity, name=name or "input_producer",
                          cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    from xlapy.compat.v1.ops.manip_ops import range_
    return input_producer(range_(limit), num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                          capacity=capacity, name=name or "input_producer")


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One slice (along the first dimension) of each tensor of tensor_list at a time."""
    from xlapy.compat.v1.ops.array_ops import shape
    from xlapy.compat.v1.ops.gather_ops import gather
    ts = [convert_to_tensor(t) for t in tensor_list]
    if not ts:
        raise InvalidArgumentError("Expected at least one tensor in slice_input_producer().")
    with get_default_graph().name_scope(name or "input_producer"):
        n = shape(ts[0], out_type=dtypes.int32)[0]
        q = range_input_producer(n, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                                 capacity=capacity)
        i = q.dequeue()
        return [gather(t, i) for t in ts]


def _batch(tensors, batch_size, capacity, num_threads, enqueue_many, shapes,
           allow_smaller_final_batch, make_queue, name, dynamic_pad=False):
    single = not isinstance(tensors, (list, tuple, dict))
    keys = sorted(tensors) if isinstance(tensors, dict) else None
    flat = [tensors[k] for k in keys] if keys else ([tensors] if single else list(tensors))
    flat = [convert_to_tensor(t) for t in flat]
    if shapes is None:
        shapes = [TensorShape(t.shape.dims[1:]) if enqueue_many and t.shape.ndims else
                  (TensorShape(None) if enqueue_many else t.shape) for t in flat]
        if dynamic_pad and any(s.ndims is None for s in shapes):
            raise InvalidArgumentError(
                "With dynamic_pad, all shapes must have a known rank: give shapes=, got "
                f"{[str(s) for s in shapes]}")
        if not dynamic_pad and any(s.ndims is None or not s.is_fully_defined()
                                   for s in shapes):
            raise InvalidArgumentError(
                "All shapes must be fully defined: give shapes= (xlapy's batches, like TF's "
                f"without dynamic_pad, need them), got {[str(s) for s in shapes]}")
    with get_default_graph().name_scope(name):
        q = make_queue([t.dtype for t in flat], shapes)
        enq = (q.enqueue_many if enqueue_many else q.enqueue)(flat)
        add_queue_runner(QueueRunner(q, [enq] * int(num_threads)))
        out = (q.dequeue_up_to if allow_smaller_final_batch else q.dequeue_many)(batch_size)
    out = out if isinstance(out, list) else [out]
    if keys:
        return dict(zip(keys, out))
    return out[0] if single else out


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    queue = PaddingFIFOQueue if dynamic_pad else FIFOQueue
    return _batch(tensors, batch_size, capacity, num_threads, enqueue_many, shapes,
                  allow_smaller_final_batch,
                  lambda dts, shp: queue(capacity, dts, shapes=shp), name or "batch",
                  dynamic_pad=bool(dynamic_pad))


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    return _batch(tensors, batch_size, capacity, num_threads, enqueue_many, shapes,
                  allow_smaller_final_batch,
                  lambda dts, shp: RandomShuffleQueue(capacity, min_after_dequeue, dts,
                                                      shapes=shp, seed=seed),
                  name or "shuffle_batch")
