"""Convolutions with a single output feature (conv_plan.one_output_plan: the input gradient
of a one-feature image's first layer) as a direct kernel: for each output pixel, every
window position's lhs features times the kernel's, in vectors along the features, summed
into PARTIAL_SUMS vector chains and reduced once. As a gemm this is a product with one
column, which builds the whole patch matrix to read each element once.

Pixels whose window is inside the lhs read it without bounds checks; the others read a
clamped in-bounds address and zero what falls in the padding or a dilation hole.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.conv_depthwise import (PARALLEL_WORK, PARTIAL_SUMS,
                                                         by_window, kernel_fn, lhs_offset,
                                                         pixel_coords)
from xlapy.backends.cpu.passes.conv_plan import one_output_plan, strides_of
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range


def emit_one_output(pe, instr, dest, operands) -> bool:
    c = one_output_plan(instr)
    if c is None:
        return False
    fn = _kernel(pe, instr, c)
    pixels = instr.shape.size
    b, me = pe.b, pe.me
    ctx = pe.table([operands[0], operands[1], dest[0]])
    if me.use_threads and pixels * instr.operands[1].shape.size >= PARALLEL_WORK \
            and pixels >= 2:
        grain = max(pixels // (4 * me.num_threads), 1)
        b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(pixels), c64(grain)])
    else:
        b.call(fn, [ctx, c64(0), c64(pixels)])
    return True


def _kernel(pe, instr, n_in: int) -> ir.Function:
    """fn(ctx = [lhs, rhs, out], start, end): the output pixels [start, end), row-major over
    the output's dims in its memory order."""
    fn, b, (start, end), (lhs_p, rhs_p, out_p) = kernel_fn(
        pe, f"conv.one_output.{instr.name}")
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    rhs, out = instr.operands[1].shape, instr.shape
    rs = strides_of(rhs)
    fty = T.value_type(out.element_type)
    nsp = len(dn.output_spatial)
    vl = max(vector_bits() // (32 if fty == T.F32 else 64), 1)
    vty = ir.VectorType(fty, vl)
    vzero = ir.Constant(vty, [0.0] * vl)
    fzero = ir.Constant(fty, 0.0)
    vfma = T.intrinsic(pe.llmod, "llvm.fmuladd", vty, 3)
    sfma = T.intrinsic(pe.llmod, "llvm.fmuladd", fty, 3)
    whole = n_in // vl * vl
    windows = []
    for lin in range(_window_count(w)):
        ks, rem = [], lin
        for s in reversed(range(nsp)):
            ks.insert(0, rem % w.size[s])
            rem //= w.size[s]
        windows.append((sum(k * rs[dn.kernel_spatial[s]] for s, k in enumerate(ks)), ks))
    pix = list(reversed(out.minor_to_major))

    with for_range(b, start, end, name="px") as p:
        out_off, lhs_base, o_sp = pixel_coords(b, instr, pix, p)

        def pixel(checked):
            accs = [vzero] * PARTIAL_SUMS
            tail = fzero
            step = 0
            for roff, ks in windows:
                off, ok = lhs_offset(b, instr, o_sp, ks, lhs_base, checked)
                for c0 in range(0, whole, vl):
                    x = b.load(b.gep(lhs_p, [b.add(off, c64(c0))], source_etype=fty),
                               typ=vty, align=1)
                    if checked:
                        x = b.select(ok, x, vzero)
                    y = b.load(b.gep(rhs_p, [c64(roff + c0)], source_etype=fty), typ=vty,
                               align=1)
                    j = step % PARTIAL_SUMS
                    accs[j] = b.call(vfma, [x, y, accs[j]])
                    step += 1
                for c0 in range(whole, n_in):
                    x = b.load(b.gep(lhs_p, [b.add(off, c64(c0))], source_etype=fty), typ=fty)
                    if checked:
                        x = b.select(ok, x, fzero)
                    y = b.load(b.gep(rhs_p, [c64(roff + c0)], source_etype=fty), typ=fty)
                    tail = b.call(sfma, [x, y, tail])
            while len(accs) > 1:
                accs = [b.fadd(accs[i], accs[i + 1]) if i + 1 < len(accs) else accs[i]
                        for i in range(0, len(accs), 2)]
            v, lanes = accs[0], vl
            while lanes > 1:   # lanes halved: the upper half added onto the lower
                half = lanes // 2
                hi = b.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), vl),
                                                        [half + i if i < half else i
                                                         for i in range(vl)]))
                v, lanes = b.fadd(v, hi), half
            total = b.fadd(b.extract_element(v, ir.Constant(ir.IntType(32), 0)), tail)
            b.store(total, b.gep(out_p, [out_off], source_etype=fty))

        by_window(b, instr, o_sp, pixel)
    b.ret_void()
    return fn


def _window_count(w) -> int:
    n = 1
    for size in w.size:
        n *= size
    return n
