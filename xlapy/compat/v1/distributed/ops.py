"""The ops of xlapy.compat.v1.distributed: XlapyAllreduce and XlapyBroadcast.

XlapyAllreduce(x, reduce_op) reduces x over every process of the MPI job (reduce_op: sum,
average, min, max, product), as Horovod's HorovodAllreduce:
  executor    MPI on the NumPy value, through the interpreter's MPI rendezvous (a process
              that died or runs another program is named within XLAPY_MPI_TIMEOUT seconds)
  XLA         an HLO all-reduce over every replica (replica r is process r), so a training
              step whose gradients are averaged stays one compiled cluster; average divides
              the sum by the process count, a constant of the program
  gradient    the same all-reduce of the incoming gradient (the sum's transpose is a sum)
XlapyBroadcast(x, root_rank): root_rank's value on every process (executor only).
One process (no mpirun) is a job of one: the ops return their input.
"""

from __future__ import annotations

import itertools

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import make, same_as_input, tensor
from xlapy.frontend.primitives.process_collectives import (job, mpi_reduce,
                                                          process_allreduce_p, rendezvous)

_seq = itertools.count(1 << 40)  # broadcasts' sequence numbers (a name in messages only)

REDUCE_OPS = ("sum", "average", "min", "max", "product")
_HLO = {"sum": "add", "average": "add", "min": "minimum", "max": "maximum",
        "product": "multiply"}


def job_size() -> int:
    c = job()
    return 1 if c is None else c.size


def _average(m, total, n: int):
    if n == 1:
        return total
    kind = np.dtype(total.dtype).kind
    if kind in "iu":
        return total // np.asarray(n, total.dtype)  # integer division, as tf.div
    return total / np.asarray(n, total.dtype)


def _check(reduce_op: str) -> str:
    if reduce_op not in REDUCE_OPS:
        raise InvalidArgumentError(f"allreduce: op must be one of {REDUCE_OPS}, got "
                                   f"{reduce_op!r}")
    return reduce_op


def _allreduce_kernel(m, x, reduce_op="average"):
    kind = _HLO[_check(reduce_op)]
    total = mpi_reduce(np.asarray(x), kind)
    return _average(m, total, job_size()) if reduce_op == "average" else total


def _allreduce_lowering(m, x, reduce_op="average"):
    kind = _HLO[_check(reduce_op)]
    total = process_allreduce_p.bind(x, kind=kind)
    return _average(m, total, job_size()) if reduce_op == "average" else total


register_op("XlapyAllreduce", infer=same_as_input(0), attrs=("reduce_op",),
            lowering=_allreduce_lowering, stateful=True)(_allreduce_kernel)


@register_gradient("XlapyAllreduce")
def _allreduce_grad(op, grad):
    reduce_op = op.get_attr("reduce_op")
    if reduce_op not in ("sum", "average"):
        raise InvalidArgumentError(f"allreduce with op={reduce_op!r} has no gradient "
                                   "(only sum and average)")
    return [allreduce_op(grad, reduce_op)]


def _broadcast_kernel(m, x, root_rank=0):
    comm = job()
    if comm is None or comm.size == 1:
        return np.array(x, copy=True)
    if not 0 <= root_rank < comm.size:
        raise InvalidArgumentError(f"broadcast: root_rank {root_rank} is not a rank of the "
                                   f"job of {comm.size} processes")
    rv = rendezvous(comm)
    seq = next(_seq)
    x = np.asarray(x)
    got = rv.exchange(comm.rank, seq, f"broadcast #{seq} of {x.dtype}{list(x.shape)}",
                      x if comm.rank == root_rank else None)
    return np.asarray(got[root_rank])


register_op("XlapyBroadcast", infer=same_as_input(0), attrs=("root_rank",), lowering=None,
            stateful=True)(_broadcast_kernel)
not_differentiable("XlapyBroadcast")


def allreduce_op(x, reduce_op: str, name=None):
    return make("XlapyAllreduce", [tensor(x)], {"reduce_op": _check(reduce_op)}, name=name)


def broadcast_op(x, root_rank: int, name=None):
    return make("XlapyBroadcast", [tensor(x)], {"root_rank": int(root_rank)}, name=name)
