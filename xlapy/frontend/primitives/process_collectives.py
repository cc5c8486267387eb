"""process_allreduce: x reduced over every process of the MPI job, outside any named axis
(replica r of the lowered program is process r). compat.v1's Horovod-style allreduce
(compat/v1/distributed) lowers to it, so its XLA cluster holds an HLO all-reduce.

    kind    the HLO reducer: add, multiply, maximum, minimum
    eager   MPI on the NumPy value through the interpreter's MPI rendezvous (a missing or
            diverging process is named within XLAPY_MPI_TIMEOUT); one process without
            mpirun is a job of one (a copy)
    vmap    elementwise across the batch (each member is reduced over the processes)
    JVP     linear for add (jvp/collectives.py); the others have no rule
"""

from __future__ import annotations

import itertools

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import ShapedArray, primitive
from xlapy.hlo.attributes import ReplicaGroups

KINDS = ("add", "multiply", "maximum", "minimum")
_NUMPY = {"add": np.add, "minimum": np.minimum, "maximum": np.maximum, "multiply": np.multiply}


def job():
    """MPI's COMM_WORLD when this process was started by an MPI launcher, else None."""
    from xlapy.backends.interpreter import mpi  # optional runtime: MPI only when launched so
    return mpi.world() if mpi.launched_by_mpi() else None


_rendezvous: dict = {}
_seq = itertools.count()


def rendezvous(comm):
    from xlapy.backends.interpreter.mpi import MpiRendezvous
    return _rendezvous.setdefault(id(comm), MpiRendezvous(comm))


def mpi_reduce(x, kind: str) -> np.ndarray:
    """x reduced over the job's processes with the HLO reducer `kind`."""
    if kind not in KINDS:
        raise XlapyError(f"process_allreduce: unknown reducer {kind!r} (one of {KINDS})")
    x = np.asarray(x)
    comm = job()
    if comm is None or comm.size == 1:
        return np.array(x, copy=True)
    rv = rendezvous(comm)
    seq = next(_seq)
    what = f"allreduce #{seq} ({kind}) of {x.dtype}{list(x.shape)}"
    out = rv.allreduce(seq, what, [x], kind)
    if out is not None:
        return out[0]
    got = rv.exchange(comm.rank, seq, what, x)  # max/min (NaN as XLA), other dtypes
    with np.errstate(all="ignore"):
        return _NUMPY[kind].reduce([np.asarray(got[r]) for r in range(comm.size)])


process_allreduce_p = primitive("process_allreduce")
process_allreduce_p.def_abstract_eval(lambda a, *, kind: ShapedArray(a.shape, a.dtype))
process_allreduce_p.def_impl(lambda x, *, kind: mpi_reduce(x, kind))


@process_allreduce_p.def_lowering
def _lower(ctx, x, *, kind):
    comp = ctx.b.scalar_computation(kind, x.shape.element_type)
    return ctx.b.op("all-reduce", x, replica_groups=ReplicaGroups(()), to_apply=comp)


@process_allreduce_p.def_batch
def _batch(frame, vals, dims, *, kind):
    return process_allreduce_p.bind(vals[0], kind=kind), dims[0]


__all__ = ["process_allreduce_p", "mpi_reduce", "job", "rendezvous", "KINDS"]
