"""pmap: one program per device, the collectives over its named axis as HLO collectives.

    y = xp.pmap(f, axis_name="i")(x)     # x: [n, ...]; f sees x[d] on device d

f is traced once on one device's shapes under a graph trace that owns the axis (so
lax.psum/pmean/pmax/pmin/all_gather/ppermute/axis_index record equations instead of being
evaluated by a vmap), lowered to an HLO module with all-reduce, all-gather,
collective-permute and replica-id, and run on the reference interpreter:

  - in one process, as n replicas (threads) meeting at each collective (n is the leading
    size of the arguments: the devices are simulated, as XLA's host platform does with
    --xla_force_host_platform_device_count);
  - under mpirun, process r is replica r of the job and passes its own slice (leading
    size local_device_count() == 1).

Under mpirun (and for one device without it) the module is compiled by the cpu backend,
whose collectives call MPI on the program's buffers (backends/cpu/runtime/collectives.py);
backend="interpreter" runs it on the reference interpreter instead. Several simulated
devices in one process always run on the interpreter. A call traces and lowers once per
argument structure (shapes, dtypes, pytree) and replica count.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import ShapedArray
from xlapy.frontend.graph import Graph, GraphTrace
from xlapy.hlo.evaluator import Evaluator, run_replicated
from xlapy.hlo.verifier import verify
from xlapy.frontend.lowering import lower_to_module
from xlapy.frontend.primitives.collectives import LOWERING_AXES

@dataclass(frozen=True)
class PmapFrame:
    size: int
    name: object


class PmapTrace(GraphTrace):
    """A graph trace that owns a named axis: collectives over it are recorded."""

    def __init__(self, name, size: int):
        super().__init__()
        self.frame = PmapFrame(size, name)


@contextmanager
def lowering_axes(name, size: int):
    LOWERING_AXES.append((name, size))
    try:
        yield
    finally:
        LOWERING_AXES.pop()


def _trace(fn, avals, in_tree, name, size):
    with PmapTrace(name, size) as trace:
        args = [trace.new_arg(a) for a in avals]
        a, kw = pytree.unflatten(in_tree, args)
        out = fn(*a, **kw)
        flat, out_tree = pytree.flatten(out)
        outputs = [trace.atom(o) for o in flat]
    graph = Graph(trace.invars, trace.constvars, trace.eqns, outputs,
                  [o.aval for o in outputs])
    return graph, trace.const_values, out_tree


def _run_one(module, args: list, comm, backend, cache: dict, key):
    """This process's replica: compiled by the cpu backend (its collectives call MPI on the
    program's buffers; backend=None or "cpu"), or on the interpreter with the MPI rendezvous
    (backend="interpreter"). Without an MPI job the one replica's collectives are the
    identity."""
    if backend == "interpreter":
        from xlapy.backends.interpreter import mpi
        ev = Evaluator()
        if comm is not None:
            mpi.attach(ev, comm)
        with np.errstate(all="ignore"):
            return ev.evaluate(module, args)
    exe = cache.get(("cpu", key))
    if exe is None:
        from xlapy.backends.base import get_platform
        exe = cache[("cpu", key)] = get_platform("cpu").compiler.compile(module)
    return exe.run(*args)


def pmap(fn, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None):
    """Map `fn` over the leading axis of its arguments, one device per index, with the
    collectives of xlapy.lax over `axis_name` (see the module docstring)."""
    if in_axes != 0 or out_axes != 0 or static_broadcasted_argnums or devices is not None:
        raise XlapyError("pmap: only in_axes=0, out_axes=0 and no static_broadcasted_argnums "
                         "or devices are supported")
    if backend not in (None, "interpreter", "cpu"):
        raise XlapyError(f"pmap: unknown backend {backend!r}")
    name = axis_name if axis_name is not None else object()
    cache: dict = {}

    def mapped(*args, **kwargs):
        from xlapy.backends.interpreter import mpi  # the MPI runtime (optional mpi4py)
        flat, in_tree = pytree.flatten((args, kwargs))
        arrays = [np.asarray(a) for a in flat]
        if not arrays or any(a.ndim == 0 for a in arrays):
            raise XlapyError("pmap: every argument needs a leading device axis")
        sizes = {a.shape[0] for a in arrays}
        if len(sizes) != 1:
            raise XlapyError(f"pmap: the arguments' leading sizes differ: {sorted(sizes)}")
        n = sizes.pop()
        comm = mpi.world() if mpi.launched_by_mpi() else None
        replicas = comm.size if comm is not None else n
        if comm is not None and n != 1:
            raise XlapyError(f"pmap under MPI: each process passes its own device's slice "
                             f"(leading size local_device_count() == 1), got {n}")
        avals = [ShapedArray(a.shape[1:], a.dtype) for a in arrays]
        key = (in_tree, tuple((a.shape, str(a.dtype)) for a in avals), replicas)
        if key not in cache:  # trace and lower once per argument structure
            graph, consts, out_tree = _trace(fn, avals, in_tree, name, replicas)
            with lowering_axes(name, replicas):
                module, extra = lower_to_module(graph, consts, getattr(fn, "__name__", "fn"))
            verify(module)
            cache[key] = (module, extra, consts, out_tree)
        module, extra, consts, out_tree = cache[key]
        more = [np.asarray(consts[i]) for i in extra]
        if comm is not None or (n == 1 and backend != "interpreter"):
            outs = [_run_one(module, [a[0] for a in arrays] + more, comm, backend, cache, key)]
        else:
            outs = run_replicated(module, [[a[d] for a in arrays] + more for d in range(n)],
                                  n)
        leaves = [list(o) if isinstance(o, tuple) else [o] for o in outs]
        stacked = [np.stack([np.asarray(leaves[d][k]) for d in range(len(outs))])
                   for k in range(len(leaves[0]))]
        return pytree.unflatten(out_tree, stacked)

    mapped.__name__ = f"pmap({getattr(fn, '__name__', 'fn')})"
    return mapped
