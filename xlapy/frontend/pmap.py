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
from xlapy.frontend.primitives.collectives import LOWERING

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
    LOWERING.axes.append((name, size))
    try:
        yield
    finally:
        LOWERING.axes.pop()


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
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    """Map `fn` over an axis of its arguments, one device per index, with the collectives
    of xlapy.lax over `axis_name` (see the module docstring; the axes as jax.pmap takes
    them: frontend/pmap_axes.py). donate_argnums is accepted and has no effect (the
    arguments are host arrays)."""
    from xlapy.frontend import pmap_axes
    in_axes = pmap_axes.check_spec(in_axes, "in_axes")
    out_axes = pmap_axes.check_spec(out_axes, "out_axes")
    static_nums = pmap_axes.static_argnums(static_broadcasted_argnums)
    if global_arg_shapes is not None:
        raise XlapyError("pmap: global_arg_shapes is not supported (JAX removed it too)")
    if backend not in (None, "interpreter", "cpu"):
        raise XlapyError(f"pmap: unknown backend {backend!r}")
    name = axis_name if axis_name is not None else object()
    cache: dict = {}

    def mapped(*args, **kwargs):
        from xlapy.backends.interpreter import mpi  # the MPI runtime (optional mpi4py)
        from xlapy.frontend.devices import forced_host_device_count, local_device_count
        call = pmap_axes.prepare(args, kwargs, in_axes, static_nums, axis_size)
        arrays, in_tree, n = call.leaves, call.in_tree, call.size
        comm = mpi.world() if mpi.launched_by_mpi() else None
        replicas = comm.size if comm is not None else n
        available = local_device_count() if comm is not None or forced_host_device_count() \
            else n  # one process: as many simulated devices as the mapped size
        if n > available or (devices is not None and n != len(devices)):
            have = len(devices) if devices is not None else available
            why = (" (given by devices=)" if devices is not None else
                   "; under MPI each process passes its own device's slice (size 1)"
                   if comm is not None else "")
            raise pmap_axes.PmapError(f"pmap: the mapped axis has size {n}, but only {have} "
                                      f"local devices are available{why}")
        avals = [ShapedArray(a.shape[1:] if m else a.shape, a.dtype)
                 for a, m in zip(arrays, call.mapped)]
        key = (in_tree, tuple((a.shape, str(a.dtype)) for a in avals), tuple(call.mapped),
               call.static, replicas)
        if key not in cache:  # trace and lower once per argument structure
            body = pmap_axes.with_static(fn, call.static)
            graph, consts, out_tree = _trace(body, avals, in_tree, name, replicas)
            with lowering_axes(name, replicas):
                module, extra = lower_to_module(graph, consts, getattr(fn, "__name__", "fn"))
            verify(module)
            cache[key] = (module, extra, consts, out_tree)
        module, extra, consts, out_tree = cache[key]
        more = [np.asarray(consts[i]) for i in extra]
        if comm is not None or (n == 1 and backend != "interpreter"):
            outs = [_run_one(module, call.device_args(0) + more, comm, backend, cache, key)]
        else:
            outs = run_replicated(module, [call.device_args(d) + more for d in range(n)], n)
        leaves = [list(o) if isinstance(o, tuple) else [o] for o in outs]
        return pmap_axes.place_outputs(out_tree, leaves, out_axes)

    mapped.__name__ = f"pmap({getattr(fn, '__name__', 'fn')})"
    return mapped
