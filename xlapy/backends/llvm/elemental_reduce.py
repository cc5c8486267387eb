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


from llvmlite import ir

from xlapy.backends.llvm import complex_math as C
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import elemental_rule
from xlapy.backends.llvm.elemental_ops import convert_value
from xlapy.backends.llvm.elemental_vector import vector_gen
from xlapy.backends.llvm.loops import (NOT_VECTORIZED, c64, entry_alloca, for_range, index_nest,
                                       merge_index)
from xlapy.hlo.opcodes import TRANSCENDENTAL
from xlapy.hlo.reducers import identity, simple_reducer
from xlapy.hlo.shapes import F32


def _as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def _widened_add(instr) -> bool:
    """An f16/bf16 sum: XLA accumulates it in f32 and rounds once at the end."""
    t = instr.operands[0].shape.element_type
    return (len(instr.operands) == 2 and t.name in ("f16", "bf16")
            and simple_reducer(instr.attrs["to_apply"]) == "add")


def _wide_reduce(em, instr, gens, index, positions):
    """Sum of an f16/bf16 input in f32: `positions(emit)` calls emit(src_index, guard) for
    every input position, guard an i1 or None."""
    b = em.b
    t = instr.operands[0].shape.element_type
    slot = em.alloca(T.F32)
    b.store(T.to_float(b, gens[1]([]), t), slot)

    def emit(src, guard=None):
        def add():
            with em.scope():
                b.store(b.fadd(b.load(slot), T.to_float(b, gens[0](src), t)), slot)
        if guard is None:
            add()
        else:
            with b.if_then(guard):
                add()

    positions(emit)
    return T.from_float(b, b.load(slot), t)


def _accumulate(em, slots, reducer, values):
    b = em.b
    accs = [b.load(s) for s in slots]
    new = _as_tuple(em.call_scalar(reducer, accs + list(values)))
    for s, v in zip(slots, new):
        b.store(v, s)


LANES = 16  # independent accumulators of a vectorized reduction
DIRECT_VECTORS = True  # operand trees that elemental_vector supports: vector code directly


_VECTOR_OPS = {"add": ("fadd", "add"), "multiply": ("fmul", "mul"),
               "maximum": ("llvm.maximum", None), "minimum": ("llvm.minimum", None),
               "and": (None, "and_"), "or": (None, "or_")}


def _vector_combine(em, op: str, t, a, b_):
    """op on two vectors of T (LANES lanes or fewer)."""
    b = em.b
    fop, iop = _VECTOR_OPS[op]
    if t.is_float:
        if fop is None:
            return None
        if fop.startswith("llvm."):
            return b.call(T.intrinsic(em.module, fop, a.type, 2), [a, b_])
        return getattr(b, fop)(a, b_)
    if op in ("maximum", "minimum"):
        cmp = b.icmp_signed if t.is_signed else b.icmp_unsigned
        return b.select(cmp(">" if op == "maximum" else "<", a, b_), a, b_)
    return getattr(b, iop)(a, b_)


def _reduce_vectorized(em, instr, gens, index, op) -> object:
    """Reduce whose reduced dims include the input's minor (contiguous) dimension: the
    accumulator is an LLVM vector of LANES lanes striding along that dimension (LANES
    consecutive elements are combined lane-wise per step: vector code from elemental_vector
    where the operand tree has one, else an inner loop of LANES iterations that LLVM's loop
    vectorizer turns into vector code), then the lanes are combined in vector halves and
    with the scalar tail. The summation order
    differs from a sequential loop (as in XLA's vectorized reductions); every element is
    still combined exactly once: lane 0 starts from the init value, the others from the
    reducer's identity."""
    b = em.b
    in_shape = instr.operands[0].shape
    dims = sorted(instr.attrs["dimensions"])
    keep = [d for d in range(in_shape.rank) if d not in dims]
    minor = in_shape.minor_to_major[0]
    outer_dims = [d for d in dims if d != minor]
    n = in_shape.dims[minor]
    t = in_shape.element_type
    reducer = instr.attrs["to_apply"]
    init = gens[1]([])
    ident = T.const(t, identity(op, t))
    vty = ir.VectorType(init.type, LANES)
    acc0 = ir.Constant(vty, [ident] * LANES)
    acc0 = b.insert_element(acc0, init, ir.Constant(T.I32, 0))
    slot = em.alloca(vty)
    b.store(acc0, slot)
    tail_slot = em.alloca(init.type)
    b.store(ident, tail_slot)
    chunks = n // LANES
    direct = vector_gen(em, instr.operands[0], minor, LANES) if DIRECT_VECTORS else None
    if direct is None:
        lanes = entry_alloca(b, init.type, LANES)
        # read back as one vector: without this the slot has the element's alignment while
        # the vector load assumes the vector's (a misaligned aligned-move where the slot stays
        # in memory, e.g. when LLVM does not inline the kernel)
        lanes.align = 64
    with em.scope(), index_nest(b, [in_shape.dims[d] for d in outer_dims], "r") as oidx:
        full = merge_index(in_shape.rank, (keep, index), (outer_dims, oidx))
        # counted in elements (step LANES): the address is then one induction variable, as
        # -O3's IndVarSimplify would leave it (the short "direct" pipeline has no such pass)
        with em.scope(), for_range(b, 0, chunks * LANES, step=LANES, name="vr") as base:
            if direct is not None:  # vector code for the operand tree (elemental_vector)
                idx = list(full)
                idx[minor] = base
                vec = direct(idx)
            else:
                # the LANES values come from an inner loop over a stack array that the loop
                # vectorizer turns into one vector iteration: the element's computation (an
                # exp, a tanh) is emitted once, not LANES times for the SLP vectorizer
                with em.scope(), for_range(b, 0, LANES, name="vl") as k:
                    idx = list(full)
                    idx[minor] = b.add(base, k, flags=["nsw", "nuw"])
                    b.store(gens[0](idx), b.gep(lanes, [k], source_etype=init.type))
                vec = b.load(b.bitcast(lanes, vty.as_pointer()), typ=vty)
            b.store(_vector_combine(em, op, t, b.load(slot), vec), slot)
        if n % LANES:
            # fewer than LANES elements, combined in order: nothing to vectorize
            with em.scope(), for_range(b, chunks * LANES, n, name="vt", hints=NOT_VECTORIZED) as j:
                idx = list(full)
                idx[minor] = j
                acc = b.load(tail_slot)
                b.store(em.call_scalar(reducer, [acc, gens[0](idx)]), tail_slot)
    v = b.load(slot)
    # the lanes combined in halves, as vectors (lane k with lane k + width/2), then with the
    # tail: log2(LANES) vector operations instead of LANES - 1 scalar ones for LLVM's SLP
    # vectorizer to pair up again
    width = LANES
    while width > 1:
        half = width // 2
        lo, hi = (b.shuffle_vector(v, T.undef(v.type), T.shuffle_mask(tuple(range(k, k + half))))
                  for k in (0, half))
        v = _vector_combine(em, op, t, lo, hi)
        width = half
    return em.call_scalar(reducer, [b.extract_element(v, ir.Constant(T.I32, 0)),
                                    b.load(tail_slot)])


def _init_slots(em, inits) -> list:
    """One accumulator slot per init generator, holding the init value."""
    slots = []
    for g in inits:
        v = g([])
        slot = em.alloca(v.type)
        em.b.store(v, slot)
        slots.append(slot)
    return slots


def _inputs_and_inits(gens):
    """The generators of a variadic reduce's (or reduce-window's) N inputs and N inits."""
    n = len(gens) // 2
    return gens[:n], gens[n:]


@elemental_rule("reduce")
def _reduce(em, instr, gens, index):
    b = em.b
    inputs, inits = _inputs_and_inits(gens)
    in_shape = instr.operands[0].shape
    dims = sorted(instr.attrs["dimensions"])
    keep = [d for d in range(in_shape.rank) if d not in dims]
    if _widened_add(instr):
        def positions(emit):
            with em.scope(), index_nest(b, [in_shape.dims[d] for d in dims], "r") as ridx:
                full = merge_index(in_shape.rank, (keep, index), (dims, ridx))
                emit(full)
        return _wide_reduce(em, instr, gens, index, positions)
    op = simple_reducer(instr.attrs["to_apply"]) if len(inputs) == 1 else None
    t = in_shape.element_type
    if (op is not None and in_shape.rank and in_shape.minor_to_major[0] in dims
            and in_shape.dims[in_shape.minor_to_major[0]] >= 2 * LANES
            and t.name not in ("f16", "bf16") and not t.is_pred and not t.is_complex
            and not (t.is_float and op in ("and", "or"))):
        return _reduce_vectorized(em, instr, gens, index, op)
    sizes = [in_shape.dims[d] for d in dims]
    total = 1
    for n_ in sizes:
        total *= n_
    hints = None
    if total <= UNROLL_LIMIT:
        if UNROLL_MATH or not _computes_math(instr, len(inputs)):
            return _reduce_unrolled(em, instr, inputs, inits, index, keep, dims, sizes)
        short = _reduce_short_row(em, instr, gens, index, keep, op) if SHORT_VECTORS else None
        if short is not None:
            return short
        hints = NOT_VECTORIZED  # (a vector body and its remainder: the math twice again)
    slots = _init_slots(em, inits)
    with em.scope(), index_nest(b, sizes, "r", hints) as ridx:
        full = merge_index(in_shape.rank, (keep, index), (dims, ridx))
        _accumulate(em, slots, instr.attrs["to_apply"], [g(full) for g in inputs])
    out = tuple(b.load(s) for s in slots)
    return out if instr.shape.is_tuple else out[0]


UNROLL_LIMIT = 16  # reductions of at most this many elements are emitted without a loop
# ... unless each element computes a math function (exp, log, tanh, ...: inlined polynomial
# code, tens of instructions): unrolled, a softmax's row of 10 classes inlined ten copies of
# exp, half of the LLVM time of the TF softmax tutorial's training step; a loop has one
# (benchmarks/compile_breakdown.py; UNROLL_MATH = True unrolls them too)
UNROLL_MATH = False
INLINED_MATH = TRANSCENDENTAL - {"sqrt", "rsqrt"}  # (those two are instructions)
# ... and when such a reduction runs along the input's contiguous dimension alone (a
# softmax's row of 10 classes), its elements are computed as one vector of LANES lanes of
# which the first n are used (masked loads: elemental_vector's `count`), then combined one
# after the other in the loop's order: the math once, as vector code, for the whole row
# (the same values, lane for lane, as the scalar functions), and no loop for LLVM
SHORT_VECTORS = True


def _reduce_short_row(em, instr, gens, index, keep, op):
    """A reduction of 2 <= n <= LANES elements along the minor dimension alone from vector
    code: the operand's row as one vector (elemental_vector with
    count n), its lanes combined with the reducer in order, starting from the init value,
    as the loop does (the same result, bit for bit). None where the operand tree has no
    vector form, and for a target with a math library of its own (em.math: the gpu's
    libdevice), whose scalar functions the vector forms (xlapy's) would not match."""
    in_shape = instr.operands[0].shape
    t = in_shape.element_type
    dims = list(instr.attrs["dimensions"])
    if (op is None or not DIRECT_VECTORS or em.math is not None or t.name not in ("f32", "f64")
            or not in_shape.rank or dims != [in_shape.minor_to_major[0]]):
        return None
    minor = dims[0]
    n = in_shape.dims[minor]
    if not 2 <= n <= LANES:
        return None
    vg = vector_gen(em, instr.operands[0], minor, LANES, n)
    if vg is None:
        return None
    b = em.b
    full = merge_index(in_shape.rank, (keep, index), ([minor], [c64(0)]))
    v = vg(full)
    acc = gens[1]([])
    for k in range(n):
        acc = em.call_scalar(instr.attrs["to_apply"],
                             [acc, b.extract_element(v, ir.Constant(T.I32, k))])
    return acc


def _computes_math(instr, n_inputs: int) -> bool:
    """Whether the reduced values of instr (a fused reduce) are computed with a math
    function per element; values entering through a broadcast are computed once per
    output element (or hoisted by the row kernel), not per reduced element."""
    todo = list(instr.operands[:n_inputs])
    seen = set()
    while todo:
        i = todo.pop()
        if id(i) in seen:
            continue
        seen.add(id(i))
        if i.opcode in INLINED_MATH:
            return True
        if i.opcode != "broadcast":
            todo.extend(i.operands)
    return False


def _reduce_unrolled(em, instr, inputs, inits, index, keep, dims, sizes):
    """A tiny reduction as straight-line code, in the same order as the loop: the kernel's
    loop over output elements then has no inner loop, so LLVM can vectorize it across
    outputs (rows of 10 classes, say), and shared subexpressions are computed once."""
    import itertools
    in_shape = instr.operands[0].shape
    accs = [g([]) for g in inits]
    for combo in itertools.product(*[range(n) for n in sizes]):
        full = merge_index(in_shape.rank, (keep, index), (dims, [c64(v) for v in combo]))
        accs = list(_as_tuple(em.call_scalar(instr.attrs["to_apply"],
                                             accs + [g(full) for g in inputs])))
    return tuple(accs) if instr.shape.is_tuple else accs[0]


def _window_source(b, w, in_shape, out_shape, index, widx):
    """(source index, in-bounds i1 or None when every position is) of window position widx
    for output index `index`: the position in the padded, lhs-dilated input, mapped back.
    Bounds are only tested on the sides a dim's padding can reach (statically known)."""
    ok = None

    def both(c):
        return c if ok is None else b.and_(ok, c)

    src = []
    for d in range(in_shape.rank):
        pos = b.add(b.mul(index[d], c64(w.stride[d])), b.mul(widx[d], c64(w.rhs_dilate[d])))
        pos = b.sub(pos, c64(w.pad_low[d]))
        dil = w.lhs_dilate[d]
        if dil != 1:
            ok = both(b.icmp_signed("==", b.srem(pos, c64(dil)), c64(0)))
            pos = b.sdiv(pos, c64(dil))
        lowest = -w.pad_low[d]
        highest = (out_shape.dims[d] - 1) * w.stride[d] + (w.size[d] - 1) * w.rhs_dilate[d] \
            - w.pad_low[d]
        if dil != 1 or lowest < 0:
            ok = both(b.icmp_signed(">=", pos, c64(0)))
        if dil != 1 or highest // max(dil, 1) >= in_shape.dims[d]:
            ok = both(b.icmp_signed("<", pos, c64(in_shape.dims[d])))
        src.append(pos)
    return src, ok


@elemental_rule("reduce-window")
def _reduce_window(em, instr, gens, index):
    b = em.b
    inputs, inits = _inputs_and_inits(gens)
    in_shape = instr.operands[0].shape
    out_shape = instr.shape.leaves()[0]
    w = instr.attrs["window"]

    def positions(emit):
        """emit(src_index, in_bounds) for every window position; padding and the holes of
        lhs dilation are skipped (they contribute nothing)."""
        with em.scope(), index_nest(b, list(w.size), "w") as widx:
            src, ok = _window_source(b, w, in_shape, out_shape, index, widx)
            emit(src, ok if ok is not None else ir.Constant(T.I1, 1))

    if _widened_add(instr):
        return _wide_reduce(em, instr, gens, index, positions)
    window = 1
    for s_ in w.size:
        window *= s_
    if window <= UNROLL_LIMIT:
        return _reduce_window_unrolled(em, instr, inputs, inits, index, in_shape, out_shape)
    slots = _init_slots(em, inits)

    def emit(src, ok):
        with b.if_then(ok):
            with em.scope():
                _accumulate(em, slots, instr.attrs["to_apply"], [g(src) for g in inputs])

    positions(emit)
    out = tuple(b.load(s) for s in slots)
    return out if instr.shape.is_tuple else out[0]


def _reduce_window_unrolled(em, instr, inputs, inits, index, in_shape, out_shape):
    """A small window (pooling's 2x2, 3x3) as straight-line code in the loop's order, with
    no branch: a position in padding reads an in-bounds element (index clamped to 0) and
    keeps the accumulators (select), so the kernel's loop over output elements stays
    vectorizable (across an NHWC pool's channels). The value read there is computed but
    never used: the same element some other output reads anyway."""
    import itertools
    b = em.b
    w = instr.attrs["window"]
    accs = [g([]) for g in inits]
    for combo in itertools.product(*[range(n_) for n_ in w.size]):
        with em.scope():
            src, ok = _window_source(b, w, in_shape, out_shape, index, [c64(j) for j in combo])
            if ok is not None:
                src = [b.select(ok, p, c64(0)) for p in src]
            new = _as_tuple(em.call_scalar(instr.attrs["to_apply"],
                                           accs + [g(src) for g in inputs]))
            accs = [v if ok is None else b.select(ok, v, a) for v, a in zip(new, accs)]
    return tuple(accs) if instr.shape.is_tuple else accs[0]


def _acc_type(t):
    """(accumulator PrimitiveType) for a dot/conv producing t."""
    return F32 if t.name in ("f16", "bf16") else t


def _mul_add(em, acc_t, acc, x, y):
    b = em.b
    if acc_t.is_complex:
        return C.add(b, acc, C.mul(b, x, y))
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
    with em.scope(), index_nest(b, [lhs.dims[d] for d in lc], "k") as kidx:
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
    with em.scope(), index_nest(b, [c_in_per_group] + list(w.size), "cv") as loop_idx:
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
