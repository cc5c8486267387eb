"""Data-parallel training over MPI for xlapy.compat.v1 graphs, in the manner of Horovod's
horovod.tensorflow (import it as hvd and the usual script runs under mpirun):

    import xlapy.compat.v1 as tf
    from xlapy.compat.v1 import distributed as hvd
    hvd.init()
    opt = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1 * hvd.size()))
    train = opt.minimize(loss)                 # gradients averaged over the processes
    sess.run(hvd.broadcast_global_variables(0))   # every process starts from rank 0's

    mpirun -n 2 python train.py

allreduce(tensor, average=None, op=None): the tensor reduced over the processes (Average by
default, as Horovod). Inside an XLA cluster the reduction is an HLO all-reduce, so a
training step stays one compiled program (ops.py). Without mpirun: a job of one process.
"""

from __future__ import annotations

from xlapy.compat.v1.distributed.ops import allreduce_op, broadcast_op, job_size
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import convert_to_tensor
from xlapy.compat.v1.train.optimizer import Optimizer

Sum, Average, Min, Max, Product = "sum", "average", "min", "max", "product"


def init(comm=None) -> None:
    """Join the MPI job (xlapy.distributed.initialize); a no-op without mpirun."""
    if comm is not None:
        raise InvalidArgumentError("init: xlapy uses MPI's COMM_WORLD; a sub-communicator "
                                   "is not supported")
    import xlapy.distributed
    xlapy.distributed.initialize()


def size() -> int:
    return job_size()


def rank() -> int:
    from xlapy.frontend.devices import process_index
    return process_index()


def _local_comm():
    from xlapy.frontend.primitives.process_collectives import job
    comm = job()
    if comm is None:
        return None
    from mpi4py import MPI  # there is a job, so mpi4py is there
    return comm.Split_type(MPI.COMM_TYPE_SHARED)


def local_size() -> int:
    """The number of processes on this machine."""
    c = _local_comm()
    return 1 if c is None else c.size


def local_rank() -> int:
    """This process's rank among the processes on this machine."""
    c = _local_comm()
    return 0 if c is None else c.rank


def allreduce(tensor, average=None, device_dense="", device_sparse="", compression=None,
              op=None, prescale_factor=1.0, postscale_factor=1.0, name=None):
    """`tensor` reduced over every process: op=Average (the default) or Sum, Min, Max,
    Product; `average` is Horovod's older spelling (True: Average, False: Sum)."""
    if average is not None and op is not None:
        raise InvalidArgumentError("allreduce: give either average or op, not both")
    if op is None:
        op = Sum if average is False else Average
    if compression is not None and getattr(compression, "__name__", "") not in ("none",
                                                                               "NoneCompressor"):
        raise InvalidArgumentError("allreduce: compression is not supported")
    x = convert_to_tensor(tensor)
    if prescale_factor != 1.0:
        x = x * prescale_factor
    out = allreduce_op(x, op, name=name)
    return out * postscale_factor if postscale_factor != 1.0 else out


def broadcast(tensor, root_rank: int, name=None):
    """root_rank's value of `tensor` on every process."""
    return broadcast_op(tensor, root_rank, name=name)


def broadcast_variables(variables, root_rank: int):
    """An op assigning root_rank's value of each variable to it on every process."""
    from xlapy.compat.v1.ops.array_ops import group
    return group(*[v.assign(broadcast(v.value() if hasattr(v, "value") else v, root_rank))
                   for v in variables])


def broadcast_global_variables(root_rank: int):
    """broadcast_variables of every global variable (run once after the initializer)."""
    from xlapy.compat.v1.variables import global_variables
    return broadcast_variables(global_variables(), root_rank)


class DistributedOptimizer(Optimizer):
    """`optimizer` with its gradients reduced over the processes (op=Average) between
    compute_gradients and apply_gradients; everything else is the wrapped optimizer's."""

    def __init__(self, optimizer, name=None, use_locking=False, device_dense="",
                 device_sparse="", compression=None, sparse_as_dense=False, op=Average,
                 backward_passes_per_step=1):
        if backward_passes_per_step != 1:
            raise InvalidArgumentError("DistributedOptimizer: backward_passes_per_step > 1 "
                                       "is not supported")
        super().__init__(use_locking, name or f"Distributed{type(optimizer).__name__}")
        self._optimizer = optimizer
        self._op = op
        self._compression = compression

    def compute_gradients(self, *args, **kwargs):
        pairs = self._optimizer.compute_gradients(*args, **kwargs)
        out = []
        for k, (g, v) in enumerate(pairs):
            out.append((None if g is None else
                        allreduce(g, op=self._op, compression=self._compression,
                                  name=f"{self._name}_Allreduce_{k}"), v))
        return out

    def apply_gradients(self, *args, **kwargs):
        return self._optimizer.apply_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self, *args, **kwargs):
        return self._optimizer.variables(*args, **kwargs)


__all__ = ["init", "size", "rank", "local_size", "local_rank", "allreduce", "broadcast",
           "broadcast_variables", "broadcast_global_variables", "DistributedOptimizer",
           "Sum", "Average", "Min", "Max", "Product"]
