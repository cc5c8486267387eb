"""The LAPACK custom-calls JAX emits on the cpu (lapack_?getrf_ffi, lapack_?gesdd_ffi, ...):
generated code that runs the instruction's call plan (hlo/lapack_calls.py lists the targets
and their contracts).

One internal routine per instruction, void fn(result leaves..., operands...):

  work = LAPACK's workspace query (the routine called once with lwork = -1; or the fixed
         length the plan names), malloc'ed once
  for each index of the batch dims:
      each plan buffer: the operand's matrix copied into a column-major scratch buffer (its
      logical elements, whatever the operand's layout), or zeros
      call xlapy_<routine>(args...)         (scipy's LAPACK / BLAS, registered by
                                             runtime/blas.py)
      each output buffer copied to its result leaf (any layout), each int the routine set
      (info, sdim) stored to its leaf at the batch index

The evaluator (hlo/evaluator/lapack.py) runs the same plans, so both call the same routine
with the same arguments and workspace: results are bitwise equal (and equal to XLA:CPU's,
which calls scipy's LAPACK too).
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters import potrf_ir
from xlapy.backends.cpu.emitters.registry import custom_call_target
from xlapy.backends.cpu.emitters.routine import Scratch, element_ptr, routine_function
from xlapy.backends.cpu.target import self_contained
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import lowering_error
from xlapy.backends.llvm.loops import c64, entry_alloca, index_nest
from xlapy.hlo.lapack_calls import NONFINITE_INFO, LapackCallError, plan, targets

TARGETS = targets()


def _libc(module: ir.Module, name: str, fty: ir.FunctionType) -> ir.Function:
    fn = module.globals.get(name)
    return fn if fn is not None else ir.Function(module, fty, name)


def _const_slot(b, ty, value):
    s = entry_alloca(b, ty)
    b.store(ir.Constant(ty, value), s)
    return s


def _memset0(b, ptr, nbytes: int) -> None:
    if nbytes:
        fn = b.module.declare_intrinsic("llvm.memset", [T.PTR, T.I64])
        b.call(fn, [ptr, ir.Constant(T.I8, 0), c64(nbytes), ir.Constant(T.I1, 0)])


def _copy_matrix(b, to_scratch: bool, scratch, rows: int, cols: int, ety, arr, shape, bidx):
    """Between a column-major scratch matrix (or vector, cols None) and the batch element
    `bidx` of an array of `shape` (any layout)."""
    dims = (rows,) if cols is None else (cols, rows)
    with index_nest(b, dims, name="cp") as idx:
        if cols is None:
            (i,), lin = idx, idx[0]
            index = [*bidx, i]
        else:
            j, i = idx
            lin = b.add(b.mul(j, c64(rows)), i)
            index = [*bidx, i, j]
        cell = b.gep(scratch, [lin], source_etype=ety)
        elem = element_ptr(b, arr, shape, index)
        src, dst = (elem, cell) if to_scratch else (cell, elem)
        b.store(b.load(src, typ=ety), dst)


def _call_if_finite(b, routine, args, buf, rt, outs_slots):
    """Call the routine if every element of the scratch buffer is finite (both parts of a
    complex one), else set its int outputs to NONFINITE_INFO."""
    ptr, ety, n = buf
    parts = n * (2 if isinstance(ety, ir.LiteralStructType) else 1)
    ok = entry_alloca(b, T.I1)
    b.store(ir.Constant(T.I1, 1), ok)
    with index_nest(b, (parts,), name="finite") as (k,):
        v = b.load(b.gep(ptr, [k], source_etype=rt), typ=rt)
        nonfinite = b.fcmp_unordered("uno", b.fsub(v, v), v)   # inf - inf, NaN: NaN
        b.store(b.and_(b.load(ok), b.not_(nonfinite)), ok)
    with b.if_else(b.load(ok)) as (finite, not_finite):
        with finite:
            b.call(routine, args)
        with not_finite:
            for slot in outs_slots.values():
                b.store(ir.Constant(T.I32, NONFINITE_INFO), slot)


def _unpack_vectors(b, packed, wi, n: int, rt, arr, shape, bidx):
    """LAPACK's packed real eigenvectors (column-major n x n at `packed`) to the complex
    matrix `bidx` of `arr`: column j is (v_j, 0) for a real eigenvalue (wi[j] = 0 or NaN),
    v_j + i v_{j+1} for the first of a conjugate pair (wi[j] > 0), v_{j-1} - i v_j for
    the second (wi[j] < 0)."""
    nn, zero = c64(n), ir.Constant(rt, 0.0)
    with index_nest(b, (n, n), name="unpack") as (j, i):
        w = b.load(b.gep(wi, [j], source_etype=rt), typ=rt)
        first = b.and_(b.fcmp_ordered(">", w, zero), b.icmp_signed("<", b.add(j, c64(1)), nn))
        second = b.and_(b.fcmp_ordered("<", w, zero), b.icmp_signed(">", j, c64(0)))

        def cell(col):
            return b.load(b.gep(packed, [b.add(b.mul(col, nn), i)], source_etype=rt), typ=rt)

        here = cell(j)
        re = b.select(second, cell(b.select(second, b.sub(j, c64(1)), j)), here)
        im = b.select(first, cell(b.select(first, b.add(j, c64(1)), j)),
                      b.select(second, b.fneg(here), zero))
        z = b.insert_value(b.insert_value(ir.Constant(ir.LiteralStructType([rt, rt]),
                                                      ir.Undefined), re, 0), im, 1)
        b.store(z, element_ptr(b, arr, shape, [*bidx, i, j]))


@custom_call_target(*TARGETS)
def emit_lapack_call(pe, instr, dest, operands) -> bool:
    leaves = instr.shape.leaves() if instr.shape.is_tuple else [instr.shape]
    op_shapes = [o.shape for o in instr.operands]
    try:
        p = plan(instr.attrs.get("custom_call_target", ""), op_shapes, leaves,
                 instr.attrs.get("backend_config"))
    except LapackCallError as e:
        raise lowering_error(instr, str(e)) from None
    single = p.dtype.itemsize == 4 or p.dtype.itemsize == 8 and p.dtype.kind == "c"
    rt, rsize = (T.F32, 4) if single else (T.F64, 8)       # the real (part) type
    ct, esize = (rt, rsize) if p.dtype.kind == "f" else (
        ir.LiteralStructType([rt, rt]), 2 * rsize)         # complex: {re, im}
    nl = len(leaves)
    fn, b = routine_function(pe, f"lapack.{instr.name}", nl + len(op_shapes))
    outs, ins = fn.args[:nl], fn.args[nl:]
    if not self_contained():
        routine = pe.llmod.globals.get(f"xlapy_{p.routine}") or ir.Function(
            pe.llmod, ir.FunctionType(T.VOID, [T.PTR] * len(p.args)), f"xlapy_{p.routine}")
    elif p.routine in ("spotrf", "dpotrf"):   # self-contained code has no LAPACK: the
        routine = potrf_ir.potrf_function(pe.llmod, "f32" if esize == 4 else "f64")  # own
    else:
        raise lowering_error(instr, f"self-contained (ahead-of-time) code has no LAPACK: "
                                    f"{p.routine} is available only to the JIT")

    scratch, released = {}, []
    for buf in p.bufs:
        n = 1
        for d in buf.dims:
            n *= d
        ety, size = (T.I32, 4) if buf.int32 else (rt, rsize) if buf.real else (ct, esize)
        s = Scratch(b, n * size, f"lapack.{buf.name}")
        scratch[buf.name] = (s.ptr, ety, n)
        released.append(s)
    outs_slots: dict[int, ir.Value] = {}
    work = iwork = lwork_slot = None
    if not p.empty:
        iw = Scratch(b, max(p.liwork, 1) * 4, "lapack.iwork")
        released.append(iw)
        iwork = iw.ptr
        lwork_slot = entry_alloca(b, T.I32)

    def arguments(query: bool):
        args = []
        for i, a in enumerate(p.args):
            a = p.query_args.get(i, a) if query else a
            kind = a[0]
            if kind == "char":
                args.append(_const_slot(b, T.I8, ord(a[1])))
            elif kind == "int":
                args.append(_const_slot(b, T.I32, a[1]))
            elif kind == "one":   # 1.0, or the complex {1.0, 0.0}
                args.append(_const_slot(b, ct, 1.0 if p.dtype.kind == "f" else (
                    ir.Constant(rt, 1.0), ir.Constant(rt, 0.0))))
            elif kind == "buf":
                ptr, ety, _ = scratch[a[1]]
                args.append(b.gep(ptr, [c64(a[2])], source_etype=ety) if a[2] else ptr)
            elif kind == "null":
                args.append(ir.Constant(T.PTR, None))
            elif kind == "work":
                args.append(work)
            elif kind == "lwork":
                args.append(lwork_slot)
            elif kind == "iwork":
                args.append(iwork)
            elif kind == "liwork":
                args.append(_const_slot(b, T.I32, p.liwork))
            else:   # "out": an int the routine sets
                if i not in outs_slots:
                    outs_slots[i] = entry_alloca(b, T.I32)
                args.append(outs_slots[i])
        return args

    heap_work = None
    if not p.empty:
        if p.lwork is not None:
            w = Scratch(b, max(p.lwork, 1) * esize, "lapack.work")
            released.append(w)
            work = w.ptr
            b.store(ir.Constant(T.I32, p.lwork), lwork_slot)
        else:   # LAPACK's workspace query, as jaxlib makes it
            work = entry_alloca(b, ct)
            b.store(ir.Constant(T.I32, -1), lwork_slot)
            b.call(routine, arguments(True))
            n = b.fptosi(b.load(work, typ=rt), T.I64)   # (the real part, for complex)
            n = b.select(b.icmp_signed("<", n, c64(1)), c64(1), n)
            b.store(b.trunc(n, T.I32), lwork_slot)
            malloc = _libc(b.module, "malloc", ir.FunctionType(T.PTR, [T.I64]))
            heap_work = work = b.call(malloc, [b.mul(n, c64(esize))], name="lapack.work")

    call_args = None if p.empty else arguments(False)
    with index_nest(b, p.batch, name="batch") as bidx:
        for buf in p.bufs:
            ptr, ety, n = scratch[buf.name]
            if buf.src is None:
                _memset0(b, ptr, n * (4 if buf.int32 else rsize if buf.real else esize))
            elif n:
                _copy_matrix(b, True, ptr, buf.dims[0], buf.dims[1] if len(buf.dims) > 1
                             else None, ety, ins[buf.src], op_shapes[buf.src], bidx)
        for slot in outs_slots.values():
            b.store(ir.Constant(T.I32, 0), slot)
        if p.finite_only and not p.empty:
            _call_if_finite(b, routine, call_args, scratch[p.finite_only], rt, outs_slots)
        elif not p.empty:
            b.call(routine, call_args)
        for i, a in enumerate(p.args):
            if a[0] == "out" and a[1] is not None:
                leaf = leaves[a[1]]
                v = b.load(outs_slots[i]) if i in outs_slots else ir.Constant(T.I32, 0)
                b.store(v, element_ptr(b, outs[a[1]], leaf, list(bidx)))
        for buf in p.bufs:
            ptr, ety, n = scratch[buf.name]
            if buf.out is not None and n and buf.unpack:
                _unpack_vectors(b, ptr, scratch[buf.unpack][0], buf.dims[0], rt,
                                outs[buf.out], leaves[buf.out], bidx)
            elif buf.out is not None and n:
                _copy_matrix(b, False, ptr, buf.dims[0], buf.dims[1] if len(buf.dims) > 1
                             else None, ety, outs[buf.out], leaves[buf.out], bidx)
    if heap_work is not None:
        b.call(_libc(b.module, "free", ir.FunctionType(T.VOID, [T.PTR])), [heap_work])
    for s in released:
        s.release()
    b.ret_void()
    pe.b.call(fn, [*dest, *operands])
    return True
