"""More of tf.train's queue-based input helpers: limit_epochs, match_filenames_once,
batch_join / shuffle_batch_join (one enqueue thread per member of a list of inputs) and
maybe_batch / maybe_shuffle_batch (and their _join forms), which enqueue only the
examples whose keep_input is true.

As input.py's batch and shuffle_batch, the batching queues need fully defined shapes (give
shapes= otherwise), except with dynamic_pad=True (batch_join, maybe_batch and
maybe_batch_join): then shapes need a known rank, and each batch is padded to its largest
example (a PaddingFIFOQueue).
"""

from __future__ import annotations

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import (GraphKeys, control_dependencies, convert_to_tensor,
                                       get_default_graph)
from xlapy.compat.v1.ops.array_ops import expand_dims, fill, identity, reshape, shape
from xlapy.compat.v1.ops.gather_ops import boolean_mask
from xlapy.compat.v1.ops.misc_io_ops import matching_files
from xlapy.compat.v1.ops.nnx_io import count_up_to
from xlapy.compat.v1.ops.queue_more import PaddingFIFOQueue
from xlapy.compat.v1.ops.queue_ops import FIFOQueue, RandomShuffleQueue
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.train.queue_runner import QueueRunner, add_queue_runner
from xlapy.compat.v1.variables import Variable


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, which raises OutOfRangeError after num_epochs evaluations (a local
    variable `epochs` counts them: initialize local variables first)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise InvalidArgumentError(f"num_epochs must be > 0 not {num_epochs}.")
    with get_default_graph().name_scope(name or "limit_epochs"):
        epochs = Variable(convert_to_tensor(0, dtype=dtypes.int64), name="epochs",
                          trainable=False, collections=[GraphKeys.LOCAL_VARIABLES])
        counter = count_up_to(epochs, num_epochs)
        with control_dependencies([counter]):
            return identity(tensor)


def match_filenames_once(pattern, name=None):
    """A local variable holding the sorted names of the files matching pattern (a glob, or
    a list of them), read when local variables are initialized."""
    return Variable(matching_files(pattern), trainable=False, validate_shape=False,
                    collections=[GraphKeys.LOCAL_VARIABLES], name=name or "matching_filenames")


# ---- joins and filtered batches --------------------------------------------------------------

def _flatten(tensors):
    """(flat list of tensors, a function rebuilding the structure from a flat list)."""
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return [convert_to_tensor(tensors[k]) for k in keys], \
            lambda out: dict(zip(keys, out))
    if isinstance(tensors, (list, tuple)):
        return [convert_to_tensor(t) for t in tensors], list
    return [convert_to_tensor(tensors)], lambda out: out[0]


def _keep(keep_input, enqueue_many, first):
    """The rows of `first` to enqueue as a [n] bool mask, or None to keep all."""
    if keep_input is None:
        return None
    k = convert_to_tensor(keep_input, dtype=dtypes.bool)
    if k.shape.ndims not in (0, 1):
        raise InvalidArgumentError(f"`keep_input` must be a scalar or vector, got "
                                   f"{k.shape.tf_str()}")
    if k.shape.ndims == 1 and not enqueue_many:
        raise InvalidArgumentError("`keep_input` cannot be a vector when "
                                   "`enqueue_many=False`.")
    if not enqueue_many:
        return reshape(k, [1])
    return k if k.shape.ndims == 1 else fill(shape(first)[:1], k)


def _join(members, batch_size, capacity, threads_per_member, enqueue_many, shapes,
          dynamic_pad, allow_smaller_final_batch, keep_input, make_queue, name):
    if dynamic_pad:
        make_queue = _padding(make_queue.capacity)
    if not members:
        raise InvalidArgumentError("Expected at least one tensor in the input list")
    flats = [_flatten(m) for m in members]
    n = len(flats[0][0])
    if any(len(f) != n for f, _ in flats):
        raise InvalidArgumentError("All members of tensors_list must have the same number "
                                   "of tensors")
    first = flats[0][0]
    if shapes is None:
        shapes = [TensorShape(t.shape.dims[1:]) if enqueue_many and t.shape.ndims else t.shape
                  for t in first]
        if any(s.ndims is None or not (dynamic_pad or s.is_fully_defined()) for s in shapes):
            raise InvalidArgumentError(
                "All shapes must be fully defined (with dynamic_pad, of known rank): give "
                f"shapes= (as TF needs them too), got {[str(s) for s in shapes]}")
    with get_default_graph().name_scope(name):
        q = make_queue([t.dtype for t in first], shapes)
        enqueues = []
        for flat, _ in flats:
            mask = _keep(keep_input, enqueue_many, flat[0])
            if mask is None:
                enq = (q.enqueue_many if enqueue_many else q.enqueue)(flat)
            else:
                rows = flat if enqueue_many else [expand_dims(t, 0) for t in flat]
                enq = q.enqueue_many([boolean_mask(t, mask) for t in rows])
            enqueues.extend([enq] * int(threads_per_member))
        add_queue_runner(QueueRunner(q, enqueues))
        out = (q.dequeue_up_to if allow_smaller_final_batch else q.dequeue_many)(batch_size)
    out = out if isinstance(out, list) else [out]
    return flats[0][1](out)


def _fifo(capacity):
    def make(dts, shp):
        return FIFOQueue(capacity, dts, shapes=shp)
    make.capacity = capacity   # (dynamic_pad swaps it for _padding's)
    return make


def _padding(capacity):
    return lambda dts, shp: PaddingFIFOQueue(capacity, dts, shapes=shp)


def _shuffle(capacity, min_after_dequeue, seed):
    return lambda dts, shp: RandomShuffleQueue(capacity, min_after_dequeue, dts, shapes=shp,
                                               seed=seed)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """Batches of examples from a list of inputs, each enqueued by its own thread."""
    return _join(list(tensors_list), batch_size, capacity, 1, enqueue_many, shapes,
                 dynamic_pad, allow_smaller_final_batch, None, _fifo(capacity),
                 name or "batch_join")


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """Shuffled batches of examples from a list of inputs (one thread each)."""
    return _join(list(tensors_list), batch_size, capacity, 1, enqueue_many, shapes, False,
                 allow_smaller_final_batch, None, _shuffle(capacity, min_after_dequeue, seed),
                 name or "shuffle_batch_join")


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32,
                enqueue_many=False, shapes=None, dynamic_pad=False,
                allow_smaller_final_batch=False, shared_name=None, name=None):
    """batch, enqueueing only the examples whose keep_input is true."""
    return _join([tensors], batch_size, capacity, num_threads, enqueue_many, shapes,
                 dynamic_pad, allow_smaller_final_batch, keep_input, _fifo(capacity),
                 name or "batch")


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """shuffle_batch, enqueueing only the examples whose keep_input is true."""
    return _join([tensors], batch_size, capacity, num_threads, enqueue_many, shapes, False,
                 allow_smaller_final_batch, keep_input,
                 _shuffle(capacity, min_after_dequeue, seed), name or "shuffle_batch")


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    """batch_join, enqueueing only the examples whose keep_input is true."""
    return _join(list(tensors_list), batch_size, capacity, 1, enqueue_many, shapes,
                 dynamic_pad, allow_smaller_final_batch, keep_input, _fifo(capacity),
                 name or "batch_join")


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                             keep_input, seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    """shuffle_batch_join, enqueueing only the examples whose keep_input is true."""
    return _join(list(tensors_list), batch_size, capacity, 1, enqueue_many, shapes, False,
                 allow_smaller_final_batch, keep_input,
                 _shuffle(capacity, min_after_dequeue, seed), name or "shuffle_batch_join")
