"""The window arithmetic the direct convolution kernels share (conv_depthwise.py,
conv_depthwise_filter.py, conv_one_output.py, and the im2col kernel of conv_im2col.py):
a pool kernel's frame, an output pixel's coordinates, the lhs position of an output and
window position (padding, strides, dilations, reversal), and the interior / edge split of
pixels whose windows need no bounds checks."""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.kernel_abi import set_vector_width
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, strides


def kernel_fn(pe, name: str):
    """(fn, builder, (start, end), (lhs, rhs, out)) of a kernel fn(ctx = [lhs, rhs, out],
    start, end) for the thread pool."""
    fn = ir.Function(pe.llmod, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64]),
                     pe.me.unique(name))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctx, start, end = fn.args
    ptrs = tuple(b.load(b.gep(ctx, [c64(j)], source_etype=T.PTR), typ=T.PTR) for j in range(3))
    return fn, b, (start, end), ptrs


def pixel_coords(b, instr, pix, p):
    """(output offset, lhs offset of its batch, output spatial positions) of pixel p, the
    row-major index over the output dims `pix` (major -> minor)."""
    dn, out = instr.attrs["dim_labels"], instr.shape
    os_, ls = strides(out), strides(instr.operands[0].shape)
    idx, rem = {}, p
    for d in reversed(pix):
        idx[d] = b.urem(rem, c64(out.dims[d]))
        rem = b.udiv(rem, c64(out.dims[d]))
    off = c64(0)
    for d in pix:
        off = b.add(off, b.mul(idx[d], c64(os_[d])))
    return (off, b.mul(idx[dn.output_batch], c64(ls[dn.input_batch])),
            [idx[dn.output_spatial[s]] for s in range(len(dn.output_spatial))])


def window_position(b, w, s, o, k, size):
    """(lhs position, in bounds and not in a dilation hole) of output position o and
    kernel position k (i64 values or ints; reversed when the window says so) along
    spatial dim s, of `size` lhs positions."""
    o = c64(o) if isinstance(o, int) else o
    k = c64(k) if isinstance(k, int) else k
    if w.rhs_reversal[s]:
        k = b.sub(c64(w.size[s] - 1), k)
    pos = b.add(b.mul(o, c64(w.stride[s])), b.mul(k, c64(w.rhs_dilate[s])))
    pos = b.sub(pos, c64(w.pad_low[s]))
    ok = ir.Constant(T.I1, 1)
    dil = w.lhs_dilate[s]
    if dil != 1:
        ok = b.icmp_signed("==", b.srem(pos, c64(dil)), c64(0))
        pos = b.sdiv(pos, c64(dil))
    ok = b.and_(ok, b.icmp_signed(">=", pos, c64(0)))
    ok = b.and_(ok, b.icmp_signed("<", pos, c64(size)))
    return pos, ok


def lhs_offset(b, instr, o_sp, ks, base, checked: bool = True):
    """(element offset, valid) in the lhs of the convolution instr of output spatial
    position o_sp and window position ks (one entry per spatial dim), from `base` (the
    batch's and feature's part); the offset leaves out the dims outside the lhs. Not
    `checked` (the position is known to be inside): (offset, None)."""
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    lhs = instr.operands[0].shape
    ls = strides(lhs)
    ok, off = ir.Constant(T.I1, 1), base
    for s in range(len(dn.output_spatial)):
        pos, valid = window_position(b, w, s, o_sp[s], ks[s], lhs.dims[dn.input_spatial[s]])
        if checked:
            ok = b.and_(ok, valid)
            pos = b.select(ok, pos, c64(0))
        off = b.add(off, b.mul(pos, c64(ls[dn.input_spatial[s]])))
    return off, (ok if checked else None)


def by_window(b, instr, o_sp, emit) -> None:
    """emit(checked): emit(False) for pixels whose whole window is inside the lhs (taps
    without bounds checks), emit(True) for the others."""
    inside = window_inside(b, instr, o_sp)
    if inside is None:
        emit(True)
        return
    with b.if_else(inside) as (interior, edge):
        with interior:
            emit(False)
        with edge:
            emit(True)


def window_inside(b, instr, o_sp):
    """An i1: the whole window of output spatial position o_sp is inside the lhs (no
    padding; None when lhs dilation leaves holes anyway)."""
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    lhs = instr.operands[0].shape
    if any(d != 1 for d in w.lhs_dilate):
        return None
    ok = ir.Constant(T.I1, 1)
    for s in range(len(dn.output_spatial)):
        first = b.sub(b.mul(o_sp[s], c64(w.stride[s])), c64(w.pad_low[s]))
        last = b.add(first, c64((w.size[s] - 1) * w.rhs_dilate[s]))
        ok = b.and_(ok, b.icmp_signed(">=", first, c64(0)))
        ok = b.and_(ok, b.icmp_signed("<", last, c64(lhs.dims[dn.input_spatial[s]])))
    return ok
