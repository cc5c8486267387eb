"""xlapy.distributed: several processes as one program's replicas, over MPI (as
jax.distributed, whose coordinator service xlapy replaces with the MPI launcher).

    mpirun -n 2 python train.py          # in train.py:
    xlapy.distributed.initialize()
    xp.process_index(), xp.process_count()   # this process's rank, the number of processes
    xp.pmap(step, axis_name="batch")(local_slice)   # local_device_count() == 1 per process

Each process is one replica; pmap's collectives meet across the processes (the
interpreter's MPI rendezvous, backends/interpreter/mpi.py). Without mpirun it is one
process of one device. Needs `pip install 'xlapy[distributed]'` (mpi4py, Open MPI).
"""

from __future__ import annotations

from xlapy.backends.interpreter import mpi
from xlapy.errors import XlapyError

_state = {"initialized": False}


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None) -> None:
    """Join the job mpirun started (a no-op in a process not started by an MPI launcher).
    The arguments jax takes for its coordinator are checked against MPI's view."""
    if coordinator_address is not None:
        raise XlapyError("xlapy.distributed.initialize: xlapy's processes find each other "
                         "through MPI, not a coordinator: start them with mpirun -n N and "
                         "call initialize() without coordinator_address")
    if not mpi.launched_by_mpi():
        if num_processes not in (None, 1) or process_id not in (None, 0):
            raise XlapyError("xlapy.distributed.initialize: this process was not started "
                             "by mpirun (mpirun -n N python ...): it is the only process")
        _state["initialized"] = True
        return
    comm = mpi.world()
    for what, given, actual in (("num_processes", num_processes, comm.size),
                                ("process_id", process_id, comm.rank)):
        if given is not None and given != actual:
            raise XlapyError(f"xlapy.distributed.initialize: {what}={given}, but mpirun "
                             f"started this process with {what}={actual}")
    _state["initialized"] = True


def is_initialized() -> bool:
    return _state["initialized"]


def shutdown() -> None:
    _state["initialized"] = False


__all__ = ["initialize", "is_initialized", "shutdown"]
