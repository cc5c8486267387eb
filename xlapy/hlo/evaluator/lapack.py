"""Interpreter rules for the LAPACK custom-calls JAX emits on the cpu (lapack_?getrf_ffi,
lapack_?gesdd_ffi, ...; the list and their contracts: hlo/lapack_calls.py).

Each runs its call plan with the routine of scipy's LAPACK (scipy.linalg.cython_lapack, or
cython_blas for trsm) called through ctypes on column-major NumPy copies of each matrix: the
routine jaxlib calls, with the same arguments and workspace sizes, so results are bitwise
XLA:CPU's (and the cpu backend's, which runs the same plans from generated code).
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from xlapy.errors import EvaluationError
from xlapy.hlo.evaluator.control import xlapy_call
from xlapy.hlo.lapack_calls import (NONFINITE_INFO, CallPlan, LapackCallError, plan,
                                    real_dtype, targets, unpack_eigenvectors)

_I32 = ctypes.c_int32


@functools.lru_cache(maxsize=None)
def routine(name: str, nargs: int):
    """The ctypes function of a scipy cython_lapack / cython_blas routine (all arguments are
    pointers, as Fortran passes them)."""
    from scipy.linalg import cython_blas, cython_lapack
    capi = cython_blas.__pyx_capi__ if name in cython_blas.__pyx_capi__ and \
        name not in cython_lapack.__pyx_capi__ else cython_lapack.__pyx_capi__
    capsule = capi[name]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
    get_ptr.restype, get_ptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    address = get_ptr(capsule, get_name(capsule))
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * nargs)(address)


def _arguments(p: CallPlan, bufs: dict, work, iwork, lwork: int, query: bool, keep: list):
    """The routine's argument pointers; returns them and {arg index: c_int32} for the ints
    it sets ("out" arguments). `keep` holds the ctypes objects passed by pointer."""

    def ref(obj):
        keep.append(obj)
        return ctypes.cast(ctypes.pointer(obj), ctypes.c_void_p)

    out, slots = [], {}
    for i, a in enumerate(p.args):
        a = p.query_args.get(i, a) if query else a
        kind = a[0]
        if kind == "char":
            out.append(ref(ctypes.c_char(a[1].encode())))
        elif kind in ("int", "lwork", "liwork"):
            out.append(ref(_I32({"int": a[-1], "lwork": lwork, "liwork": p.liwork}[kind])))
        elif kind == "one":   # (a NumPy scalar array: ctypes has no complex types)
            one = np.ones(1, p.dtype)
            keep.append(one)
            out.append(ctypes.c_void_p(one.ctypes.data))
        elif kind == "buf":
            arr = bufs[a[1]]
            out.append(ctypes.c_void_p(arr.ctypes.data + a[2] * arr.itemsize))
        elif kind == "null":
            out.append(ctypes.c_void_p(0))
        elif kind in ("work", "iwork"):
            out.append(ctypes.c_void_p((work if kind == "work" else iwork).ctypes.data))
        else:   # "out"
            slots[i] = _I32(0)
            out.append(ref(slots[i]))
    return out, slots


def run_plan(p: CallPlan, operands, result_shapes) -> list[np.ndarray]:
    """Run a call plan on NumPy operands; returns the result leaves."""
    outs = [np.zeros(s.dims, s.dtype) for s in result_shapes]
    fn = routine(p.routine, len(p.args))
    work = np.zeros(max(p.lwork or 0, 1), p.dtype)
    iwork = np.zeros(max(p.liwork, 1), np.int32)
    for bidx in np.ndindex(*p.batch):
        bufs = {}
        for b in p.bufs:
            dt = np.int32 if b.int32 else real_dtype(p.dtype) if b.real else p.dtype
            arr = np.zeros(b.dims, dt, order="F")
            if b.src is not None:
                arr[...] = operands[b.src][bidx]
            bufs[b.name] = arr
        if p.finite_only and not np.all(np.isfinite(bufs[p.finite_only])):
            for a in p.args:
                if a[0] == "out" and a[1] is not None:
                    outs[a[1]][bidx] = NONFINITE_INFO
        elif not p.empty:
            keep: list = []
            lwork = p.lwork
            if lwork is None:    # LAPACK's workspace query, as jaxlib makes it
                fn(*_arguments(p, bufs, work, iwork, -1, True, keep)[0])
                lwork = max(int(work[0].real), 1)
                if work.size < lwork:
                    work = np.zeros(lwork, p.dtype)
            args, slots = _arguments(p, bufs, work, iwork, lwork, False, keep)
            fn(*args)
            for i, slot in slots.items():
                if p.args[i][1] is not None:
                    outs[p.args[i][1]][bidx] = slot.value
        for b in p.bufs:
            if b.out is not None:
                outs[b.out][bidx] = (unpack_eigenvectors(bufs[b.name], bufs[b.unpack])
                                     if b.unpack else bufs[b.name])
    return outs


def _rule(ev, instr, operands):
    target = instr.attrs.get("custom_call_target", "")
    leaves = instr.shape.leaves() if instr.shape.is_tuple else [instr.shape]
    try:
        p = plan(target, [o.shape for o in instr.operands], leaves,
                 instr.attrs.get("backend_config"))
    except LapackCallError as e:
        raise EvaluationError(f"{instr.where()}{e}: {instr}") from None
    outs = run_plan(p, [np.asarray(o) for o in operands], leaves)
    return tuple(outs) if instr.shape.is_tuple else outs[0]


for _target in targets():
    xlapy_call(_target)(_rule)
