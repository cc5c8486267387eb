"""Elemental rules with inner loops: reduce, reduce-window, dot, convolution.

Each output element is computed by a loop nest over the reduced (window, contracting,
kernel) positions, accumulating in stack slots that LLVM promotes to registers. These are
the general, always-correct forms; the CPU backend replaces the hot cases by faster
kernels (gemm for dot, vectorized row/column reductions), which are tested against these.

Semantics follow XLA: reduce-window and convolution skip positions that fall into padding
or between lhs-dilated elements (padding contributes nothing); variadic reductions carry
one accumulator per input; f16/bf16 dots accumulate in f32 and round once at the end.
"""

from __future__ import annotations

import contextlib

from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import elemental_rule
from xlapy.backends.llvm.elemental_ops import convert_value
from xlapy.backends.llvm.loops import c64, for_range


def _as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


@contextlib.contextmanager
def _loops(b, sizes, name):
    """Nested loops over `sizes` (skipping size-1 dims); yields the index list."""
    idx = [c64(0)] * len(sizes)
    with contextlib.ExitStack() as stack:
        for k, n in enumerate(sizes):
            if n != 1:
                idx[k] = stack.enter_context(for_range(b, 0, n, name=f"{name}{k}"))
        yield idx


def _accumulate(em, slots, reducer, values):
    b = em.b
    accs = [b.load(s) for s in slots]
    new = _as_tuple(em.call_scalar(reducer, accs + list(values)))
    for s, v in zip(slots, new):
        b.store(v, s)


@elemental_rule("reduce")
def _reduce(em, instr, gens, index):
    b = em.b
    n = len(instr.operands) // 2
    inputs, inits = gens[:n], gens[n:]
    in_shape = instr.operands[0].shape
    dims = sorted(instr.attrs["dimensions"])
    keep = [d for d in range(in_shape.rank) if d not in dims]
    slots = []
    for g in inits:
        v = g([])
        slot = em.alloca(v.type)
        b.store(v, slot)
        slots.append(slot)
    with em.scope(), _loops(b, [in_shape.dims[d] for d in dims], "r") as ridx:
        full = [None] * in_shape.rank
        for k, d in enumerate(keep):
            full[d] = index[k]
        for k, d in enumerate(dims):
            full[d] = ridx[k]
        _accumulate(em, slots, instr.attrs["to_apply"], [g(full) for g in inputs])
    out = tuple(b.load(s) for s in slots)
    return out if instr.shape.is_tuple else out[0]


@elemental_rule("reduce-window")
def _reduce_window(em, instr, gens, index):
    b = em.b
    n = len(instr.operands) // 2
    inputs, inits = gens[:n], gens[n:]
    in_shape = instr.operands[0].shape
    w = instr.attrs["window"]
    slots = []
    for g in inits:
        v = g([])
        slot = em.alloca(v.type)
        b.store(v, slot)
        slots.append(slot)
    with em.scope(), _loops(b, list(w.size), "w") as widx:
        ok = ir.Constant(T.I1, 1)
        src = []
        for d in range(in_shape.rank):
            # position in the padded, lhs-dilated input
            pos = b.add(b.mul(index[d], c64(w.stride[d])), b.mul(widx[d], c64(w.rhs_dilate[d])))
            pos = b.sub(pos, c64(w.pad_low[d]))
            dil = w.lhs_dilate[d]
            if dil != 1:
                ok = b.and_(ok, b.icmp_signed("==", b.srem(pos, c64(dil)), c64(0)))
                pos = b.sdiv(pos, c64(dil))
            ok = b.and_(ok, b.icmp_signed(">=", pos, c64(0)))
            ok = b.and_(ok, b.icmp_signed("<", pos, c64(in_shape.dims[d])))
            src.append(pos)
        with b.if_then(ok):
            with em.scope():
                _accumulate(em, slots, instr.attrs["to_apply"], [g(src) for g in inputs])
    out = tuple(b.load(s) for s in slots)
    return out if instr.shape.is_tuple else out[0]


def _acc_type(t):
    """(accumulator PrimitiveType) for a dot/conv producing t."""
    from xlapy.hlo.shapes import F32
    return F32 if t.name in ("f16", "bf16") else t


def _mul_add(em, acc_t, acc, x, y):
    b = em.b
    if acc_t.is_float:
        return b.fadd(acc, b.fmul(x, y))
    if acc_t.is_pred:
        return b.or_(acc, b.and_(x, y))
    return b.add(acc, b.mul(x, y))


@elemental_rule("dot")
def _dot(em, instr, gens, index):
    b = em.b
    a = instr.attrs
    lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
    lb, rb = list(a.get("lhs_batch_dims", ())), list(a.get("rhs_batch_dims", ()))
    lc, rc = list(a.get("lhs_contracting_dims", ())), list(a.get("rhs_contracting_dims", ()))
    lfree = [d for d in range(lhs.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.rank) if d not in rb and d not in rc]
    out_t = instr.shape.element_type
    acc_t = _acc_type(out_t)
    slot = em.alloca(T.value_type(acc_t))
    b.store(T.const(acc_t, 0), slot)
    nb = len(lb)
    with em.scope(), _loops(b, [lhs.dims[d] for d in lc], "k") as kidx:
        li = [None] * lhs.rank
        ri = [None] * rhs.rank
        for k, (dl, dr) in enumerate(zip(lb, rb)):
            li[dl] = ri[dr] = index[k]
        for k, d in enumerate(lfree):
            li[d] = index[nb + k]
        for k, d in enumerate(rfree):
            ri[d] = index[nb + len(lfree) + k]
        for k, (dl, dr) in enumerate(zip(lc, rc)):
            li[dl] = ri[dr] = kidx[k]
        x = convert_value(em, gens[0](li), lhs.element_type, acc_t)
        y = convert_value(em, gens[1](ri), rhs.element_type, acc_t)
        b.store(_mul_add(em, acc_t, b.load(slot), x, y), slot)
    return convert_value(em, b.load(slot), acc_t, out_t)


@elemental_rule("convolution")
def _convolution(em, instr, gens, index):
    b = em.b
    a = instr.attrs
    dn = a["dim_labels"]
    w = a["window"]
    lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
    out_t = instr.shape.element_type
    acc_t = _acc_type(out_t)
    groups = a.get("feature_group_count", 1)
    bgroups = a.get("batch_group_count", 1)
    c_in_per_group = rhs.dims[dn.kernel_input_feature]
    c_out = instr.shape.dims[dn.output_feature]
    o = index[dn.output_feature]
    out_b = index[dn.output_batch]
    batch = out_b
    feat_base = c64(0)
    if groups > 1:
        g = b.udiv(o, c64(c_out // groups))
        feat_base = b.mul(g, c64(c_in_per_group))
    if bgroups > 1:
        g = b.udiv(o, c64(c_out // bgroups))
        batch = b.add(b.mul(g, c64(instr.shape.dims[dn.output_batch])), out_b)
    slot = em.alloca(T.value_type(acc_t))
    b.store(T.const(acc_t, 0), slot)
    nsp = len(dn.input_spatial)
    with em.scope(), _loops(b, [c_in_per_group] + list(w.size), "cv") as loop_idx:
        c, kpos = loop_idx[0], loop_idx[1:]
        ok = ir.Constant(T.I1, 1)
        li = [None] * lhs.rank
        ri = [None] * rhs.rank
        li[dn.input_batch] = batch
        li[dn.input_feature] = b.add(feat_base, c)
        ri[dn.kernel_input_feature] = c
        ri[dn.kernel_output_feature] = o
        for s in range(nsp):
            k = kpos[s]
            ri[dn.kernel_spatial[s]] = (b.sub(c64(w.size[s] - 1), k) if w.rhs_reversal[s] else k)
            pos = b.add(b.mul(index[dn.output_spatial[s]], c64(w.stride[s])),
                        b.mul(k, c64(w.rhs_dilate[s])))
            pos = b.sub(pos, c64(w.pad_low[s]))
            dil = w.lhs_dilate[s]
            if dil != 1:
                ok = b.and_(ok, b.icmp_signed("==", b.srem(pos, c64(dil)), c64(0)))
                pos = b.sdiv(pos, c64(dil))
            size = lhs.dims[dn.input_spatial[s]]
            ok = b.and_(ok, b.icmp_signed(">=", pos, c64(0)))
            ok = b.and_(ok, b.icmp_signed("<", pos, c64(size)))
            li[dn.input_spatial[s]] = pos
        with b.if_then(ok):
            with em.scope():
                x = convert_value(em, gens[0](li), lhs.element_type, acc_t)
                y = convert_value(em, gens[1](ri), rhs.element_type, acc_t)
                b.store(_mul_add(em, acc_t, b.load(slot), x, y), slot)
    return convert_value(em, b.load(slot), acc_t, out_t)
