"""tf.ConditionalAccumulator and tf.SparseConditionalAccumulator: the gradient aggregators
of synchronous replicated training (SyncReplicasOptimizer's kind).

An accumulator has a global step (0 at first) and, per session, a sum of gradients and
their count. apply_grad(grad, local_step) drops a stale gradient (local_step smaller than
the global step) and otherwise adds it; take_grad(num_required) waits until num_required
gradients are in, returns their mean (reduction_type="MEAN") or sum ("SUM"), empties the
accumulator and increments the global step; set_global_step moves the step (with a
warning when backwards).

The sparse accumulator sums IndexedSlices rows per index; its mean divides each index's
row by the number of gradients that had that index. Its take_grad gives (indices, values,
shape): the indices sorted, the shape's first dimension the accumulator's (-1 when
unknown), the others those of the values.

As the queues, the state lives in the session (queue_ops.py); a take_grad that waits
past ConfigProto.operation_timeout_in_ms, or while no gradient at all arrives for
queue_ops.NO_RUNNER_WAIT_S seconds (apply_grad must run in another thread), fails with a
DeadlineExceededError instead of hanging; closing the session ends it with
CancelledError.
"""

from __future__ import annotations

import time

import numpy as np

from xlapy.compat.v1 import dtypes, logging
from xlapy.compat.v1.errors import (CancelledError, DeadlineExceededError,
                                    InvalidArgumentError, InvalidTypeError)
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops import queue_ops
from xlapy.compat.v1.ops._common import make_op
from xlapy.compat.v1.ops.math_ops import cast
from xlapy.compat.v1.ops.misc_framework import IndexedSlices
from xlapy.compat.v1.tensor_shape import TensorShape, as_shape


class _AccState(queue_ops._State):
    """One accumulator's state in one session (a queue state, so that Session.close wakes
    a waiting take_grad)."""

    def __init__(self, acc, session):
        super().__init__(acc, session)
        self.count = 0
        self.global_step = 0
        self.sum = None            # dense: the sum of the gradients
        self.rows: dict = {}       # sparse: index -> [sum of rows, number of gradients]
        self.row_shape = None      # sparse: the shape of a row of the values
        self.last_apply = time.monotonic()


class ConditionalAccumulatorBase:
    """What the dense and the sparse accumulator share: the global step, the count."""

    _kind = "ConditionalAccumulator"
    _seed = None

    def __init__(self, dtype, shape, accumulator_ref, reduction_type="MEAN"):
        self._dtype = dtypes.as_dtype(dtype)
        if not (self._dtype.is_floating or self._dtype.is_integer or self._dtype.is_complex):
            raise InvalidTypeError(f"{self._kind}: dtype must be numeric, got "
                                   f"{self._dtype.name}")
        self._shape = TensorShape(None) if shape is None else as_shape(shape)
        if reduction_type not in ("MEAN", "SUM"):
            raise InvalidArgumentError(f"{self._kind}: reduction_type must be 'MEAN' or 'SUM',"
                                       f" got {reduction_type!r}")
        self._reduction = reduction_type
        self._name = get_default_graph().unique_name(accumulator_ref, mark_as_used=True)

    accumulator_ref = property(lambda self: self._name)
    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)

    def _state(self, session) -> _AccState:
        st = queue_ops._states(session).get(id(self))
        if st is None:
            st = queue_ops._states(session).setdefault(id(self), _AccState(self, session))
        return st

    def num_accumulated(self, name=None):
        """The number of gradients aggregated so far (an int32 scalar)."""
        return make_op("AccumulatorNumAccumulated", [], {"acc": self},
                       name=name or "num_accumulated").outputs[0]

    def set_global_step(self, new_global_step, name=None):
        """An op setting the accumulator's global step (gradients computed before it are
        then dropped)."""
        step = cast(convert_to_tensor(new_global_step), dtypes.int64)
        return make_op("AccumulatorSetGlobalStep", [step], {"acc": self},
                       name=name or "AccumulatorSetGlobalStep")

    @staticmethod
    def _local_step(local_step):
        return cast(convert_to_tensor(local_step), dtypes.int64)

    @staticmethod
    def _num_required(num_required):
        return cast(convert_to_tensor(num_required), dtypes.int32)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Aggregates dense gradients (see the module doc)."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        super().__init__(dtype, shape, name, reduction_type)

    def apply_grad(self, grad, local_step=0, name=None):
        """An op adding grad, unless local_step is smaller than the global step."""
        grad = convert_to_tensor(grad, dtype=self._dtype)
        if not grad.shape.is_compatible_with(self._shape):
            raise InvalidArgumentError(f"ConditionalAccumulator '{self.name}': the gradient's "
                                       f"shape {grad.shape.tf_str()} is incompatible with "
                                       f"the accumulator's {self._shape.tf_str()}")
        return make_op("AccumulatorApplyGradient", [self._local_step(local_step), grad],
                       {"acc": self}, name=name or "AccumulatorApplyGradient")

    def take_grad(self, num_required, name=None):
        """The mean (or sum) of the gradients, once num_required of them arrived."""
        return make_op("AccumulatorTakeGradient", [self._num_required(num_required)],
                       {"acc": self}, name=name or "AccumulatorTakeGradient").outputs[0]


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Aggregates sparse gradients, given as IndexedSlices or (indices, values, shape)."""

    _kind = "SparseConditionalAccumulator"

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        super().__init__(dtype, shape, name, reduction_type)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """An op adding the sparse gradient (rows grad_values at grad_indices of a tensor of
        shape grad_shape), unless local_step is smaller than the global step."""
        values = convert_to_tensor(grad_values, dtype=self._dtype)
        indices = cast(convert_to_tensor(grad_indices), dtypes.int64)
        if indices.shape.ndims not in (None, 1):
            raise InvalidArgumentError(f"{self._kind} '{self.name}': grad_indices must be a "
                                       f"vector, got shape {indices.shape.tf_str()}")
        if values.shape.ndims == 0:
            raise InvalidArgumentError(f"{self._kind} '{self.name}': grad_values cannot be a "
                                       f"scalar")
        if self._shape.ndims is not None and not values.shape.is_compatible_with(
                TensorShape([None]).concatenate(self._shape[1:])):
            raise InvalidArgumentError(f"{self._kind} '{self.name}': grad_values' shape "
                                       f"{values.shape.tf_str()} does not fit the "
                                       f"accumulator's {self._shape.tf_str()}")
        inputs = [self._local_step(local_step), indices, values]
        if grad_shape is not None:
            inputs.append(cast(convert_to_tensor(grad_shape), dtypes.int64))
        return make_op("SparseAccumulatorApplyGradient", inputs,
                       {"acc": self, "has_known_shape": grad_shape is not None},
                       name=name or "SparseAccumulatorApplyGradient")

    def take_grad(self, num_required, name=None):
        """(indices, values, shape) of the mean (or sum), once num_required gradients
        arrived."""
        op = make_op("SparseAccumulatorTakeGradient", [self._num_required(num_required)],
                     {"acc": self}, name=name or "SparseAccumulatorTakeGradient")
        return tuple(op.outputs)

    def take_indexed_slices_grad(self, num_required, name=None):
        indices, values, shape = self.take_grad(num_required, name)
        return IndexedSlices(values, indices, shape)


# ---- the ops --------------------------------------------------------------------------------

def _take_infer(op):
    acc = op.get_attr("acc")
    return [(acc.dtype, acc._shape)]


def _sparse_take_infer(op):
    acc = op.get_attr("acc")
    s = acc._shape
    values = TensorShape(None) if s.ndims is None else TensorShape([None]).concatenate(s[1:])
    return [(dtypes.int64, TensorShape([None])), (acc.dtype, values),
            (dtypes.int64, TensorShape([s.ndims]))]


def _wait_for(acc, st, n, op):
    """Wait on st.cond (held) until n gradients are in."""
    start = time.monotonic()
    while st.count < n and not st.closed:
        now = time.monotonic()
        if st.timeout is not None and now - start >= st.timeout:
            raise DeadlineExceededError(f"Timed out waiting for {n} gradients in {acc._kind} "
                                        f"'{acc.name}' (it has {st.count})\n\t [[{op.name}]]",
                                        op=op)
        if now - max(start, st.last_apply) >= queue_ops.NO_RUNNER_WAIT_S:
            raise DeadlineExceededError(
                f"{acc._kind} '{acc.name}' has {st.count} of the {n} gradients take_grad "
                f"needs and none arrived for {queue_ops.NO_RUNNER_WAIT_S:.0f} s: apply_grad "
                f"must run in another thread of this session\n\t [[{op.name}]]", op=op)
        st.cond.wait(0.05)
    if st.closed:
        raise CancelledError(f"The session was closed while take_grad waited on {acc._kind} "
                             f"'{acc.name}'\n\t [[{op.name}]]", op=op)


def _mean(total, count, dtype):
    """total / count in dtype (integers divide truncating toward zero, as TF's)."""
    if dtype.is_integer:
        return (np.sign(total) * (np.abs(total) // count)).astype(total.dtype)
    return (total / count).astype(total.dtype)


def _fresh(acc, st, local_step) -> bool:
    """Whether a gradient of local_step counts (a stale one is dropped); a gradient, even
    a stale one, shows that someone applies them."""
    st.last_apply = time.monotonic()
    return int(local_step) >= st.global_step


def _bad(acc, op, msg):
    return InvalidArgumentError(f"Shape mismatch in {acc._kind} '{acc.name}': {msg}"
                                f"\n\t [[{op.name}]]", op=op)


def _apply_executor(session, op):
    acc = op.get_attr("acc")

    def run(local_step, grad):
        st = acc._state(session)
        grad = np.asarray(grad)
        with st.cond:
            if not _fresh(acc, st, local_step):
                return []
            if not acc._shape.is_compatible_with(grad.shape):
                raise _bad(acc, op, f"expected {acc._shape.tf_str()}, got {list(grad.shape)}")
            if st.count and st.sum.shape != grad.shape:
                raise _bad(acc, op, f"expected {list(st.sum.shape)} (the gradients applied "
                                    f"so far), got {list(grad.shape)}")
            st.sum = grad.copy() if not st.count else st.sum + grad
            st.count += 1
            st.cond.notify_all()
        return []
    return run


def _check_sparse(acc, st, op, indices, values, shape):
    s = acc._shape
    if indices.ndim != 1:
        raise _bad(acc, op, f"indices must be a vector, got shape {list(indices.shape)}")
    if values.ndim == 0 or values.shape[0] != len(indices):
        raise _bad(acc, op, f"expected {len(indices)} rows of values (one per index), got "
                            f"values of shape {list(values.shape)}")
    if shape is not None:
        if shape.ndim != 1 or len(shape) != values.ndim or \
                tuple(shape[1:]) != values.shape[1:]:
            raise _bad(acc, op, f"grad_shape {shape.tolist()} does not fit values of shape "
                                f"{list(values.shape)}")
        if not s.is_compatible_with(tuple(shape)):
            raise _bad(acc, op, f"expected shape {s.tf_str()}, got {shape.tolist()}")
    if st.count and values.shape[1:] != st.row_shape:
        raise _bad(acc, op, f"expected values with rows of shape {list(st.row_shape)} (the "
                            f"gradients applied so far), got {list(values.shape[1:])}")
    if s.ndims is not None and (values.ndim != s.ndims or
                                not s[1:].is_compatible_with(values.shape[1:])):
        want = TensorShape([None]).concatenate(s[1:]).tf_str()
        raise _bad(acc, op, f"expected values of shape {want}, got {list(values.shape)}")
    limit = s.dims[0] if s.ndims else None
    if len(indices) and (indices.min() < 0 or (limit is not None and indices.max() >= limit)):
        raise _bad(acc, op, f"indices must be in [0, {limit if limit is not None else 'inf'})"
                            f", got {indices.tolist()}")


def _sparse_apply_executor(session, op):
    acc = op.get_attr("acc")

    def run(local_step, indices, values, *shape):
        st = acc._state(session)
        indices, values = np.asarray(indices), np.asarray(values)
        with st.cond:
            if not _fresh(acc, st, local_step):
                return []
            _check_sparse(acc, st, op, indices, values, np.asarray(shape[0]) if shape else None)
            if not st.count:
                st.rows, st.row_shape = {}, values.shape[1:]
            seen = set()
            for i, row in zip(indices.tolist(), values):
                entry = st.rows.get(i)
                if entry is None:
                    st.rows[i] = [row.copy(), 1]
                else:
                    entry[0] = entry[0] + row
                    entry[1] += i not in seen
                seen.add(i)
            st.count += 1
            st.cond.notify_all()
        return []
    return run


def _take_executor(session, op):
    acc, sparse = op.get_attr("acc"), op.type == "SparseAccumulatorTakeGradient"

    def run(num_required):
        n = int(np.asarray(num_required))
        if n < 1:
            raise InvalidArgumentError(f"Argument num_required must be positive, but was {n}"
                                       f"\n\t [[{op.name}]]", op=op)
        st = acc._state(session)
        with st.cond:
            _wait_for(acc, st, n, op)
            count, total, rows, row_shape = st.count, st.sum, st.rows, st.row_shape
            st.count, st.sum, st.rows = 0, None, {}
            st.global_step += 1
            st.cond.notify_all()
        mean = acc._reduction == "MEAN"
        if not sparse:
            return [_mean(total, count, acc.dtype) if mean else total]
        keys = sorted(rows)
        npdt = acc.dtype.as_numpy_dtype
        values = np.stack([_mean(rows[k][0], rows[k][1], acc.dtype) if mean else rows[k][0]
                           for k in keys]) if keys else np.zeros((0,) + row_shape, npdt)
        dim0 = acc._shape.dims[0] if acc._shape.ndims and acc._shape.dims[0] is not None \
            else -1
        return [np.array(keys, np.int64), values.astype(npdt, copy=False),
                np.array((dim0,) + row_shape, np.int64)]
    return run


def _num_executor(session, op):
    acc = op.get_attr("acc")

    def run():
        st = acc._state(session)
        with st.cond:
            return [np.int32(st.count)]
    return run


def _set_step_executor(session, op):
    acc = op.get_attr("acc")

    def run(step):
        st = acc._state(session)
        step = int(step)
        with st.cond:
            if step < st.global_step:
                logging.warning("%s '%s': setting the global step back from %d to %d",
                                acc._kind, acc.name, st.global_step, step)
            st.global_step = step
        return []
    return run


_OPS = {
    "AccumulatorApplyGradient": (lambda op: [], _apply_executor),
    "SparseAccumulatorApplyGradient": (lambda op: [], _sparse_apply_executor),
    "AccumulatorTakeGradient": (_take_infer, _take_executor),
    "SparseAccumulatorTakeGradient": (_sparse_take_infer, _take_executor),
    "AccumulatorNumAccumulated": (lambda op: [(dtypes.int32, TensorShape([]))], _num_executor),
    "AccumulatorSetGlobalStep": (lambda op: [], _set_step_executor),
}
for _t, (_infer, _executor) in _OPS.items():
    register_op(_t, lowering=None, stateful=True, infer=_infer)(lambda m, *a: None)
    get_op_def(_t).extra.update(executor=_executor)
not_differentiable(*_OPS)

__all__ = ["ConditionalAccumulator", "ConditionalAccumulatorBase",
           "SparseConditionalAccumulator"]
