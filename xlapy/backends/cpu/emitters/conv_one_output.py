"""Convolutions with one to four output features (conv_plan.one_output_plan: the input
gradient of an image's first layer) as a direct kernel: for each output pixel, every window
position's lhs features times the kernel's, in vectors along the features (each lhs vector
loaded once for all the output features), summed into vector chains (PARTIAL_SUMS in all)
and reduced once. As a gemm this is a product with a few columns, which builds the whole
patch matrix to read each element once or a few times: the input gradient of a 7x7 stride-2
stem layer with 3 input features (8x32x32x64 lhs-dilated outputs, as four phases): 8.7 ms
CPU time on the gemm path, 2.3 direct (JAX 2.8-3.6); 8x32x32x64 -> 3 features, 3x3: 0.47
ms against Winograd's 1.11; 7x7: 3.8 against the gemm path's 9.5; 8x16x16x256 3x3 -> 4:
0.88 against 1.08 (load ~20).

Pixels whose window is inside the lhs read it without bounds checks; the others read a
clamped in-bounds address and zero what falls in the padding or a dilation hole.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.conv_depthwise import PARALLEL_WORK, PARTIAL_SUMS
from xlapy.backends.cpu.emitters.conv_window import (by_window, kernel_fn, lhs_offset,
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
    dn = instr.attrs["dim_labels"]
    pixels = instr.shape.size // instr.shape.dims[dn.output_feature]
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
    """fn(ctx = [lhs, rhs, out], start, end): the output pixels [start, end) (all output
    features of each), row-major over the output's other dims in their memory order."""
    fn, b, (start, end), (lhs_p, rhs_p, out_p) = kernel_fn(
        pe, f"conv.one_output.{instr.name}")
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    rhs, out = instr.operands[1].shape, instr.shape
    rs = strides_of(rhs)
    n_out = out.dims[dn.output_feature]
    ro, oo = rs[dn.kernel_output_feature], strides_of(out)[dn.output_feature]
    chains = max(PARTIAL_SUMS // n_out, 1)
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
    pix = [d for d in reversed(out.minor_to_major) if d != dn.output_feature]

    with for_range(b, start, end, name="px") as p:
        out_off, lhs_base, o_sp = pixel_coords(b, instr, pix, p)

        def pixel(checked):
            accs = [[vzero] * chains for _ in range(n_out)]
            tails = [fzero] * n_out
            step = 0
            for roff, ks in windows:
                off, ok = lhs_offset(b, instr, o_sp, ks, lhs_base, checked)
                for c0 in range(0, whole, vl):
                    x = b.load(b.gep(lhs_p, [b.add(off, c64(c0))], source_etype=fty),
                               typ=vty, align=1)
                    if checked:
                        x = b.select(ok, x, vzero)
                    j = step % chains
                    for f in range(n_out):
                        y = b.load(b.gep(rhs_p, [c64(roff + f * ro + c0)], source_etype=fty),
                                   typ=vty, align=1)
                        accs[f][j] = b.call(vfma, [x, y, accs[f][j]])
                    step += 1
                for c0 in range(whole, n_in):
                    x = b.load(b.gep(lhs_p, [b.add(off, c64(c0))], source_etype=fty), typ=fty)
                    if checked:
                        x = b.select(ok, x, fzero)
                    for f in range(n_out):
                        y = b.load(b.gep(rhs_p, [c64(roff + f * ro + c0)], source_etype=fty),
                                   typ=fty)
                        tails[f] = b.call(sfma, [x, y, tails[f]])
            for f in range(n_out):
                b.store(_reduce(b, accs[f], tails[f], vl),
                        b.gep(out_p, [b.add(out_off, c64(f * oo))], source_etype=fty))

        by_window(b, instr, o_sp, pixel)
    b.ret_void()
    return fn


def _reduce(b, accs, tail, vl: int):
    """The sum of the vector chains' lanes and the scalar tail."""
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
    return b.fadd(b.extract_element(v, ir.Constant(ir.IntType(32), 0)), tail)


def _window_count(w) -> int:
    n = 1
    for size in w.size:
        n *= size
    return n
