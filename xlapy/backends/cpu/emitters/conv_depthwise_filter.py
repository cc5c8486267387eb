"""The depthwise filter gradient (batch groups of one lhs batch element and one output
feature each, as jax.grad emits for a depthwise convolution; the plan:
conv_plan.filter_grad_plan) as a direct kernel: a vector of channels at a time, every
output position's sum over the lhs features and the window accumulated in registers."""

from __future__ import annotations

import contextlib

from llvmlite import ir

from xlapy.backends.cpu.emitters.conv_depthwise import PARALLEL_WORK
from xlapy.backends.cpu.emitters.conv_window import kernel_fn, lhs_offset
from xlapy.backends.cpu.passes.conv_plan import filter_grad_plan
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, entry_alloca, for_range, strides


def emit_filter_grad(pe, instr, dest, operands) -> bool:
    g = filter_grad_plan(instr)
    if g is None:
        return False
    fty = T.value_type(instr.shape.element_type)
    vl = max(vector_bits() // (32 if fty == T.F32 else 64), 1)
    units = g // vl + g % vl
    fn = _filter_kernel(pe, instr, g, vl)
    b, me = pe.b, pe.me
    ctx = pe.table([operands[0], operands[1], dest[0]])
    if me.use_threads and units >= 2 and instr.operands[1].shape.size >= PARALLEL_WORK:
        b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(units), c64(1)])
    else:
        b.call(fn, [ctx, c64(0), c64(units)])
    return True


def _filter_kernel(pe, instr, channels: int, vl: int) -> ir.Function:
    """fn(ctx = [lhs, rhs, out], start, end): channel units [start, end) (a vector of vl
    channels each, then the last channels one at a time): every output position's sum
    over the lhs features and the window, accumulated in registers."""
    fn, b, (start, end), (lhs_p, rhs_p, out_p) = kernel_fn(
        pe, f"conv.depthwise_filter.{instr.name}")
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    lhs, rhs, out = instr.operands[0].shape, instr.operands[1].shape, instr.shape
    ls, rs, os_ = strides(lhs), strides(rhs), strides(out)
    fty = T.value_type(out.element_type)
    nsp = len(dn.output_spatial)
    osz = [out.dims[dn.output_spatial[s]] for s in range(nsp)]
    positions = []
    for lin in range(out.size // channels):
        o, rem = [], lin
        for s in reversed(range(nsp)):
            o.insert(0, rem % osz[s])
            rem //= osz[s]
        positions.append(o)
    vec_units = channels // vl

    def block(c0, ty, lanes):
        zero = ir.Constant(ty, [0.0] * lanes) if lanes > 1 else ir.Constant(fty, 0.0)
        fma = T.intrinsic(pe.llmod, "llvm.fmuladd", ty, 3)
        slots = []
        for _ in positions:
            s = entry_alloca(b, ty)
            b.store(zero, s)
            slots.append(s)
        n_in = lhs.dims[dn.input_feature]
        with for_range(b, 0, n_in, name="i") as i:
            lbase = b.add(c0, b.mul(i, c64(ls[dn.input_feature])))
            rbase = b.add(c0, b.mul(i, c64(rs[dn.kernel_input_feature])))
            ks = []
            with contextlib.ExitStack() as stack:
                for s in range(nsp):
                    ks.append(stack.enter_context(for_range(b, 0, w.size[s], name=f"k{s}")))
                roff = rbase
                for s in range(nsp):
                    roff = b.add(roff, b.mul(ks[s], c64(rs[dn.kernel_spatial[s]])))
                y = b.load(b.gep(rhs_p, [roff], source_etype=fty), typ=ty, align=1)
                for slot, o in zip(slots, positions):
                    off, ok = lhs_offset(b, instr, o, ks, lbase)
                    with b.if_then(ok):
                        x = b.load(b.gep(lhs_p, [off], source_etype=fty), typ=ty, align=1)
                        b.store(b.call(fma, [x, y, b.load(slot, typ=ty)]), slot)
        for slot, o in zip(slots, positions):
            off = c0
            for s in range(nsp):
                off = b.add(off, c64(o[s] * os_[dn.output_spatial[s]]))
            b.store(b.load(slot, typ=ty), b.gep(out_p, [off], source_etype=fty), align=1)

    with for_range(b, start, end, name="unit") as u:
        with b.if_else(b.icmp_signed("<", u, c64(vec_units))) as (vec, scalar):
            with vec:
                block(b.mul(u, c64(vl)), ir.VectorType(fty, vl), vl)
            with scalar:
                block(b.add(c64(vec_units * vl), b.sub(u, c64(vec_units))), fty, 1)
    b.ret_void()
    return fn
