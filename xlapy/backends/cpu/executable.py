"""Running compiled code: argument marshalling, the arena, results as NumPy arrays.

An ExecutableSpec is everything needed to run a compiled module (the object code, arena
size, parameter and result leaf shapes); it is what the disk cache stores. CpuExecutable
loads the object code into this process and calls its entry function

    void xlapy_entry(ptr params, ptr outs, ptr arena, ptr desc)

with arrays of leaf pointers, or, for a program that is one kernel on the thread pool
(spec.launch), the runtime's xlapy_launch with that kernel's descriptor as `desc`
(runtime/launch.py). ctypes releases the GIL for the duration of the call.
Arrays whose layout is not row-major cross the boundary physically transposed.
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass

import numpy as np

from xlapy.backends.base import Executable, flatten
from xlapy.backends.cpu.runtime import (collectives, constants, guard_pages, host_callback,
                                        output_pool)
from xlapy.backends.cpu.runtime.launch import launcher_address
from xlapy.backends.cpu.runtime.loader import LoadedObject
from xlapy.backends.cpu.runtime.trampoline import MAX_LEAVES, cycles, trampoline
from xlapy.errors import ResourceExhaustedError, XlapyError
from xlapy.hlo import host_callbacks
from xlapy.hlo.ir import Module
from xlapy.hlo.parser import parse
from xlapy.hlo.shapes import Shape

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p)


@dataclass
class ExecutableSpec:
    objects: list               # object code: one file, or the parts of a split module
    arena_size: int
    param_shapes: list          # entry parameter shapes (may be tuples)
    result_shape: Shape
    optimized_text: str = ""    # the module after the cpu pipeline (HLO text, shown only:
                                # constants of more than printer.LARGE_CONSTANT elements {...})
    entry_symbol: str = "xlapy_entry"
    profile_labels: list | None = None  # (computation, instruction, root opcode) per slot
    compile_seconds: dict | None = None  # time per compilation phase
    aliases: dict | None = None  # output leaf -> donated parameter leaf it is written into
    launch: object = None        # launch.Launch: no entry function, xlapy_launch runs it
    collectives: list | None = None  # descriptors of the collectives' plans (MPI calls)
    constants: dict | None = None  # external constant symbol -> its bytes (an array or
                                 # bytes; the large constants, kept out of the object code)

    @staticmethod
    def for_module(module: Module, objects: list, arena_size: int) -> "ExecutableSpec":
        return ExecutableSpec(list(objects), arena_size,
                              [p.shape for p in module.entry.parameters],
                              module.entry.root.shape,
                              module.to_string(print_large_constants=False))


def _major_to_minor(shape: Shape) -> list[int]:
    return list(reversed(shape.minor_to_major))


def _physical_memory() -> int:
    """Bytes of memory this machine has (0 when unknown)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 0


class CpuExecutable(Executable):
    def __init__(self, module: Module, spec: ExecutableSpec):
        super().__init__(module, "cpu")
        self.spec = spec
        main = spec.launch.wrapper if spec.launch is not None else spec.entry_symbol
        self._constants = constants.hold(spec.constants)  # (before the code that reads them)
        if spec.constants:   # the spec keeps the held copies, not a second one of the bytes
            spec.constants = dict(zip(spec.constants, self._constants))
        self._code = LoadedObject(spec.objects, symbols=(main,))
        self._plans_pending = bool(spec.collectives)
        if spec.launch is not None:
            self._entry_addr = launcher_address()
            self._desc = np.array(spec.launch.descriptor(self._code.address(main)),
                                  dtype=np.int64)
            self._desc_ptr = self._desc.ctypes.data
        else:
            self._entry_addr = self._code.address(spec.entry_symbol)
            self._desc_ptr = None
        self._fn = _ENTRY(self._entry_addr)
        self._param_leaves = [leaf for s in spec.param_shapes for leaf in s.leaves()]
        self._out_leaves = spec.result_shape.leaves()
        # a run that needs more than the machine has fails up front (where memory is
        # overcommitted, allocating it could succeed and the run then be killed)
        need = sum(s.byte_size for s in self._out_leaves) + spec.arena_size
        self._too_big = need > _physical_memory() > 0
        self._guarded = guard_pages.enabled()  # (read once per executable)
        try:
            self._arena = self._new_arena()
        except MemoryError:
            raise self._out_of_memory() from None
        self._arena_ptr = self._arena.ctypes.data
        self._lock = threading.Lock()
        # Fast path: flat row-major parameters and results, through the native trampoline.
        self._fast_params = [(tuple(s.dims), s.dtype) for s in spec.param_shapes
                             if not s.is_tuple and s.has_default_layout]
        # (dims, dtype, row-major strides): an argument with exactly these strides is
        # C-contiguous without asking for its flags object (a few hundred ns each)
        self._fast_checks = [(dims, np.dtype(dtype), _row_major_strides(dims, dtype))
                             for dims, dtype in self._fast_params]
        self._fast_outs = [(tuple(s.dims), s.dtype) for s in self._out_leaves]
        self._recycled = [output_pool.recyclable(dims, dtype) for dims, dtype in self._fast_outs]
        self._any_recycled = any(self._recycled)
        flat = (len(self._fast_params) == len(spec.param_shapes)
                and all(s.has_default_layout for s in self._out_leaves)
                and len(self._param_leaves) <= MAX_LEAVES and len(self._out_leaves) <= MAX_LEAVES)
        self._trampoline = trampoline() if flat and not self._guarded else None
        self._result_is_tuple = spec.result_shape.is_tuple
        # a tuple of arrays (no nested tuples) is returned as the outputs' tuple itself
        self._flat_tuple = self._result_is_tuple and not any(
            s.is_tuple for s in spec.result_shape.tuple_shapes)
        self._aliases = sorted((spec.aliases or {}).items())
        self._optimized = None
        # host callbacks (runtime/host_callback.py) report their exceptions after the run
        self._callbacks = any(i.opcode == "custom-call" and i.attrs.get(
            "custom_call_target") == host_callbacks.TARGET for i in module.instructions())

    @property
    def optimized_module(self):
        """The module after the cpu pass pipeline (fusions included)."""
        if self._optimized is None and self.spec.optimized_text:
            self._optimized = parse(self.spec.optimized_text)
        return self._optimized

    def profile(self, reset: bool = False) -> list[dict]:
        """Per-instruction time of every run so far (a build with --xla_hlo_profile):
        [{computation, instruction, opcode, calls, seconds, percent}], slowest first."""
        labels = self.spec.profile_labels
        if labels is None:
            raise XlapyError("this executable was compiled without profiling; set "
                             "XLAPY_FLAGS=--xla_hlo_profile before compiling")
        n = len(labels)
        cyc = (ctypes.c_int64 * n).from_address(self._code.engine.get_global_value_address(
            "xlapy_profile_cycles"))
        cnt = (ctypes.c_int64 * n).from_address(self._code.engine.get_global_value_address(
            "xlapy_profile_counts"))
        hz = _cycles_per_second()
        rows = [{"computation": c, "instruction": i, "opcode": op, "calls": int(cnt[k]),
                 "seconds": cyc[k] / hz} for k, (c, i, op) in enumerate(labels)]
        total = sum(r["seconds"] for r in rows if r["computation"] == rows[0]["computation"]) \
            if rows else 0.0
        for r in rows:
            r["percent"] = 100.0 * r["seconds"] / total if total else 0.0
        if reset:
            ctypes.memset(ctypes.addressof(cyc), 0, 8 * n)
            ctypes.memset(ctypes.addressof(cnt), 0, 8 * n)
        return sorted(rows, key=lambda r: -r["seconds"])

    def memory_analysis(self) -> dict:
        """Bytes of arguments, outputs, the scratch arena, and generated code."""
        return {
            "argument_size_in_bytes": sum(s.byte_size for s in self._param_leaves),
            "output_size_in_bytes": sum(s.byte_size for s in self._out_leaves),
            "temp_size_in_bytes": self.spec.arena_size,
            "generated_code_size_in_bytes": sum(len(o) for o in self.spec.objects),
        }

    def _out_of_memory(self) -> ResourceExhaustedError:
        outs = sum(s.byte_size for s in self._out_leaves)
        return ResourceExhaustedError(
            f"not enough memory to run {self.module.name}: its outputs "
            f"({', '.join(str(s) for s in self._out_leaves)}) take {outs} bytes and its "
            f"scratch arena {self.spec.arena_size} bytes (this machine has "
            f"{_physical_memory()} bytes)")

    def _new_arena(self):
        if self._guarded:
            return guard_pages.empty((self.spec.arena_size,), np.uint8)
        raw = np.empty(self.spec.arena_size + 64, dtype=np.uint8)
        offset = (-raw.ctypes.data) % 64
        return raw[offset:offset + self.spec.arena_size] if self.spec.arena_size else raw

    def _fill_plans(self) -> None:
        """Before the first run of a program with collectives: its plans (groups, MPI
        handles) for this process (runtime/collectives.py), once even when several threads
        make the first call."""
        with collectives.plans_lock:
            if not self._plans_pending:
                return
            n = len(self.spec.collectives)
            addrs = [self._code.engine.get_global_value_address(
                f"{collectives.PLAN_PREFIX}{k}") for k in range(n)]
            collectives.fill_plans(self.spec.collectives, addrs,
                                   collectives.descriptor_fingerprint(
                                       self.module.name, self.spec.optimized_text))
            self._plans_pending = False

    def run(self, *args):
        if not self._callbacks:
            return self._run(*args)
        host_callback.clear_pending()
        try:
            out = self._run(*args)
        finally:
            host_callback.raise_pending()
        return out

    def _run(self, *args):
        if self._plans_pending:
            self._fill_plans()
        if self._too_big:
            raise self._out_of_memory()
        tramp = self._trampoline
        if tramp is not None and len(args) == len(self._fast_checks):
            for a, (dims, dtype, strides) in zip(args, self._fast_checks):
                if (not isinstance(a, np.ndarray) or a.dtype != dtype or a.shape != dims
                        or (a.strides != strides and not a.flags.c_contiguous)):
                    break
            else:
                given = None
                if self._aliases:
                    args, given = self._donated(args)
                if self._lock.acquire(blocking=False):
                    try:
                        outs = self._take_outputs(given)
                        tramp(args, outs, self._arena_ptr, self._entry_addr, self._desc_ptr)
                        self._remember(outs, given)
                    except MemoryError:
                        raise self._out_of_memory() from None
                    finally:
                        self._lock.release()
                else:
                    try:
                        outs = tuple([given[k] if given and k in given else np.empty(dims, dtype)
                                      for k, (dims, dtype) in enumerate(self._fast_outs)])
                        arena = self._new_arena()
                    except MemoryError:
                        raise self._out_of_memory() from None
                    tramp(args, outs, arena.ctypes.data, self._entry_addr, self._desc_ptr)
                if self._flat_tuple:
                    return outs
                if self._result_is_tuple:
                    return _unflatten(self.spec.result_shape, outs)
                return outs[0]
        try:
            return self._execute(self.check_arguments(args))
        except MemoryError:
            raise self._out_of_memory() from None

    __call__ = run

    # Output recycling (output_pool.py): a large result the caller has dropped is reused as
    # a later call's output buffer, by this or any other executable.

    def _donated(self, leaves) -> tuple:
        """Donation: each aliased output is written into its parameter's array. An array
        that cannot take it (read-only, or sharing memory with another argument) is copied
        first, so the result is right either way and the caller's array is left alone."""
        leaves = list(leaves)
        given = {}
        for out, p in self._aliases:
            a = leaves[p]
            if not (a.flags.writeable and a.flags.c_contiguous and a.flags.aligned) or any(
                    q != p and isinstance(b, np.ndarray) and np.may_share_memory(a, b)
                    for q, b in enumerate(leaves)):
                a = np.array(a, order="C", copy=True)
                leaves[p] = a
            given[out] = a
        return tuple(leaves), given

    def _take_outputs(self, given=None) -> tuple:
        if not given and not self._any_recycled:
            return tuple([np.empty(dims, dtype) for dims, dtype in self._fast_outs])
        return tuple(given[k] if given and k in given else
                     output_pool.take(dims, dtype) if recycled else np.empty(dims, dtype)
                     for k, ((dims, dtype), recycled)
                     in enumerate(zip(self._fast_outs, self._recycled)))

    def _remember(self, outs: tuple, given=None) -> None:
        if not self._any_recycled:
            return
        for k, (o, recycled) in enumerate(zip(outs, self._recycled)):
            if recycled and not (given and k in given):
                output_pool.keep(o)

    def _execute(self, args: list):
        if self._plans_pending:
            self._fill_plans()
        leaves = []
        for a in args:
            if isinstance(a, tuple):
                leaves.extend(flatten(a))
            else:
                leaves.append(a)
        given = {}
        if self._aliases:
            leaves, given = self._donated(leaves)
        written = {}  # guarded: output -> the guarded copy of its donated parameter
        if self._guarded:
            leaves = [guard_pages.copy(a) for a in leaves]
            written = {out: leaves[p] for out, p in self._aliases}
        ptrs = []
        keep = []
        for a, shape in zip(leaves, self._param_leaves):
            if not shape.has_default_layout:
                a = np.array(np.transpose(a, _major_to_minor(shape)), order="C")
                if self._guarded:
                    a = guard_pages.copy(a)
                keep.append(a)
            ptrs.append(a.ctypes.data)
        outs, views = [], []
        for k, shape in enumerate(self._out_leaves):
            order = _major_to_minor(shape)
            dims = [shape.dims[d] for d in order]
            phys = (written[k] if k in written else given[k] if k in given
                    else guard_pages.empty(dims, shape.dtype) if self._guarded
                    else np.empty(dims, dtype=shape.dtype))
            outs.append(phys)
            views.append(phys if shape.has_default_layout
                         else np.transpose(phys, np.argsort(order)))
        params = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
        out_ptrs = (ctypes.c_void_p * max(len(outs), 1))(*[o.ctypes.data for o in outs])
        if self._lock.acquire(blocking=False):
            try:
                self._fn(params, out_ptrs, self._arena.ctypes.data, self._desc_ptr)
            finally:
                self._lock.release()
        else:  # another thread is running this executable: use a private arena
            arena = self._new_arena()
            self._fn(params, out_ptrs, arena.ctypes.data, self._desc_ptr)
        for k, copy in written.items():  # donated: the result in the caller's array, as unguarded
            given[k][...] = copy
            views[k] = given[k]
        return _unflatten(self.spec.result_shape, views)


def _row_major_strides(dims: tuple, dtype) -> tuple:
    strides, step = [], np.dtype(dtype).itemsize
    for d in reversed(dims):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def _unflatten(shape: Shape, leaves: list):
    return _build(shape, iter(leaves))


def _build(s: Shape, it):
    # module level: a recursive closure would make a reference cycle holding the leaves
    if s.is_tuple:
        return tuple(_build(x, it) for x in s.tuple_shapes)
    return next(it)


_HZ: list = []


def _cycles_per_second() -> float:
    """The cycle counter's rate, measured once against the wall clock."""
    if not _HZ:
        import time
        c0, t0 = cycles(), time.perf_counter()
        time.sleep(0.05)
        c1, t1 = cycles(), time.perf_counter()
        _HZ.append((c1 - c0) / (t1 - t0))
    return _HZ[0]
