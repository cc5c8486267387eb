"""The patch matrix (im2col) and kernel matrix copies of the gemm convolutions
(emitters/conv.py; the plan: passes/conv_plan.py).

The im2col kernel copies runs of the lhs: a line of A covers its innermost dims while
their lhs positions continue one progression (NHWC: a kernel column's input features and
the next kernel columns'), the part of a line inside the lhs is one range of its spatial
dim (zeros before and after it), and a work item is a plane of lines along the next
spatial dim (conv_plan's line_dims and plane). A spatial dim with lhs dilation (holes) or
a reversed kernel dim in a line is read element by element.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.conv_window import window_position
from xlapy.backends.cpu.emitters.kernel_abi import set_vector_width
from xlapy.backends.cpu.passes.conv_plan import a_dims, strides_of
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range


def _strides(shape) -> list[int]:
    return strides_of(shape)


def umin(b, x, y):
    return b.select(b.icmp_unsigned("<", x, y), x, y)


def new_fn(pe, name: str, n_args: int = 3) -> tuple[ir.Function, ir.IRBuilder]:
    fn = ir.Function(pe.llmod, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64]),
                     pe.me.unique(name))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def ptrs(b, ctx, n):
    return [b.load(b.gep(ctx, [c64(k)], source_etype=T.PTR), typ=T.PTR) for k in range(n)]


def pack_kernel_fn(pe, instr, plan) -> ir.Function:
    """fn(ctx = [rhs, dst], g0, g1): dst[g][k][n] = the kernel's element at contracting
    position k (plan.cols order) and output feature g * N + n, for groups [g0, g1).

    Where the innermost contracting dim is closer together in the kernel than its output
    features (a filter gradient's kernel, the output gradient, with its positions
    innermost), the copy goes a line of that dim at a time, the output features inside:
    it reads runs of the line and writes a [line, N] block that stays in the L1 cache
    (NCHW 8x32x32x32 3x3 -> 64's filter gradient, a kernel of 8192 x 64 elements: 5.0 ms
    CPU time against 5.2 reading them with the output features innermost)."""
    fn, b = new_fn(pe, f"conv.pack_kernel.{instr.name}")
    ctx, g0, g1 = fn.args
    rhs_ptr, dst = ptrs(b, ctx, 2)
    rhs = instr.operands[1].shape
    dn = instr.attrs["dim_labels"]
    rst = _strides(rhs)
    fty = T.value_type(rhs.element_type)
    col_strides = [rst[dn.kernel_input_feature] if kind == "i" else rst[dn.kernel_spatial[j]]
                   for kind, j, _ in plan.cols]
    ostride = rst[dn.kernel_output_feature]
    by_line = plan.cols[-1][2] > 1 and col_strides[-1] < ostride
    inner = plan.cols[-1][2] if by_line else 1
    cols = plan.cols[:-1] if by_line else plan.cols
    strides = col_strides[:-1] if by_line else col_strides
    with for_range(b, g0, g1, name="g") as g:
        with for_range(b, 0, plan.k // inner, name="k") as k:
            rem, src = k, b.mul(g, c64(plan.n * ostride))
            for (_, _, size), st in zip(reversed(cols), reversed(strides)):
                src = b.add(src, b.mul(b.urem(rem, c64(size)), c64(st)))
                rem = b.udiv(rem, c64(size))
            row = b.mul(b.add(b.mul(g, c64(plan.k)), b.mul(k, c64(inner))), c64(plan.n))
            with for_range(b, 0, plan.n, name="n") as n:
                src_n = b.add(src, b.mul(n, c64(ostride)))
                if by_line:
                    with for_range(b, 0, inner, name="e") as e:
                        x = b.load(b.gep(rhs_ptr, [b.add(src_n, b.mul(
                            e, c64(col_strides[-1])))], source_etype=fty), typ=fty)
                        b.store(x, b.gep(dst, [b.add(row, b.add(b.mul(e, c64(plan.n)), n))],
                                         source_etype=fty))
                else:
                    x = b.load(b.gep(rhs_ptr, [src_n], source_etype=fty), typ=fty)
                    b.store(x, b.gep(dst, [b.add(row, n)], source_etype=fty))
    b.ret_void()
    return fn


def pdims(plan):
    """The materialized A's dims, major -> minor (conv_plan.a_dims)."""
    return a_dims(plan.rows, plan.cols, plan.a_rows_first)


def im2col_lines(plan) -> int:
    """The im2col kernel's work items: its lines, or planes of lines (plan.plane)."""
    n = 1
    for d in pdims(plan)[:-plan.line_dims - plan.plane]:
        n *= d[3]
    return n


def im2col_inner(plan) -> int:
    """Elements of A per work item of the im2col kernel."""
    n = 1
    for d in pdims(plan)[-plan.line_dims - plan.plane:]:
        n *= d[3]
    return n


def im2col_fn(pe, instr, plan) -> ir.Function:
    """fn(ctx = [lhs, A, g], start, end): the work items [start, end) of the patch matrix A
    of group g, zeros in the padding and between lhs-dilated elements. A work item is a
    line (A's plan.line_dims innermost dims, the others fixed: one run of the lhs, its
    valid part one range of its spatial dim, if it has one), or with plan.plane the lines
    along the next dim (a spatial dim: the others' coordinates decoded once per plane)."""
    fn, b = new_fn(pe, f"conv.im2col.{instr.name}")
    ctx, start, end = fn.args
    lhs_ptr, a_ptr, gp = ptrs(b, ctx, 3)
    g = b.ptrtoint(gp, T.I64)
    lhs = instr.operands[0].shape
    out = instr.shape
    a = instr.attrs
    dn, w = a["dim_labels"], a["window"]
    lst = _strides(lhs)
    fty = T.value_type(lhs.element_type)
    zero = ir.Constant(fty, 0) if isinstance(fty, ir.IntType) else ir.Constant(fty, 0.0)
    pd = pdims(plan)
    line_d = pd[-plan.line_dims:]
    n_item = im2col_inner(plan)
    n_inner = n_item // (pd[-plan.line_dims - 1][3] if plan.plane else 1)
    i_group = instr.operands[1].shape.dims[dn.kernel_input_feature]
    nsp = len(dn.output_spatial)
    # the line's spatial dim (its most-major, if any), and the lhs step between its elements
    sp_d = line_d[0] if line_d[0][1] == "s" else None
    last = line_d[-1]
    if last[1] == "s":
        s_ = last[2]
        el_step = (w.stride[s_] if last[0] == "r" else w.rhs_dilate[s_]) \
            * lst[dn.input_spatial[s_]]
    else:
        el_step = lst[dn.input_batch] if last[1] == "b" else lst[dn.input_feature]
    # a spatial dim in the line with no lhs dilation and no reversal of its kernel dim is in
    # bounds over one range of its positions: that range is copied, the rest zeroed
    ranged = sp_d is not None and w.lhs_dilate[sp_d[2]] == 1 \
        and not (sp_d[0] == "c" and w.rhs_reversal[sp_d[2]])

    def one_line(coord, base, dst_line):
        """A line at the coordinates `coord` of the dims outside it."""
        def value(key, default):
            return coord.get(key, default)

        ok = ir.Constant(T.I1, 1)
        s_pos = None
        for s in range(nsp):
            if sp_d is not None and sp_d[2] == s and not ranged:
                continue
            pos, valid = window_position(b, w, s, value(("r", "s", s), c64(0)),
                                         value(("c", "s", s), c64(0)),
                                         lhs.dims[dn.input_spatial[s]])
            if sp_d is not None and sp_d[2] == s:   # ranged: pos is the line's first
                s_pos = pos
                continue
            ok = b.and_(ok, valid)
            base = b.add(base, b.mul(b.select(valid, pos, c64(0)),
                                     c64(lst[dn.input_spatial[s]])))
        if sp_d is None or ranged:
            if sp_d is None:
                lo, hi = c64(0), b.select(ok, c64(n_inner), c64(0))
                src = b.gep(lhs_ptr, [base], source_etype=fty)
            else:
                s = sp_d[2]
                d = w.stride[s] if sp_d[0] == "r" else w.rhs_dilate[s]
                lo, hi = _valid_range(b, s_pos, d, lhs.dims[dn.input_spatial[s]], sp_d[3])
                per = n_inner // sp_d[3]
                hi = b.select(ok, b.mul(hi, c64(per)), c64(0))
                lo = umin(b, b.mul(lo, c64(per)), hi)
                src = b.gep(lhs_ptr, [b.add(base, b.mul(s_pos, c64(
                    lst[dn.input_spatial[s]])))], source_etype=fty)
            with for_range(b, 0, lo, name="z") as e:
                b.store(zero, b.gep(dst_line, [e], source_etype=fty))
            with for_range(b, lo, hi, name="e") as e:
                x = b.load(b.gep(src, [b.mul(e, c64(el_step))], source_etype=fty), typ=fty)
                b.store(x, b.gep(dst_line, [e], source_etype=fty))
            with for_range(b, hi, c64(n_inner), name="z") as e:
                b.store(zero, b.gep(dst_line, [e], source_etype=fty))
            return
        # one spatial dim, lhs-dilated or a reversed kernel dim: element by element
        s = sp_d[2]
        o_fixed = value(("r", "s", s), None)
        c_fixed = value(("c", "s", s), None)
        with for_range(b, 0, n_inner, name="e") as e:
            o = e if sp_d[0] == "r" else (c64(0) if o_fixed is None else o_fixed)
            c = e if sp_d[0] == "c" else (c64(0) if c_fixed is None else c_fixed)
            pos, valid = window_position(b, w, s, o, c, lhs.dims[dn.input_spatial[s]])
            valid = b.and_(valid, ok)
            at = b.add(base, b.mul(b.select(valid, pos, c64(0)),
                                   c64(lst[dn.input_spatial[s]])))
            at = b.select(valid, at, c64(0))
            x = b.load(b.gep(lhs_ptr, [at], source_etype=fty), typ=fty)
            b.store(b.select(valid, x, zero), b.gep(dst_line, [e], source_etype=fty))

    with for_range(b, start, end, name="line") as line:
        coord = {}
        rem = line
        for role, kind, j, size in reversed(pd[:-plan.line_dims - plan.plane]):
            coord[(role, kind, j)] = b.urem(rem, c64(size))
            rem = b.udiv(rem, c64(size))
        # fixed parts: batch and feature; the spatial ones per line (one_line)
        bidx = coord.get(("r", "b", 0), c64(0))
        if plan.batch_groups:
            bidx = b.add(bidx, b.mul(g, c64(out.dims[dn.output_batch])))
        fidx = coord.get(("c", "i", 0), c64(0))
        if not plan.batch_groups:
            fidx = b.add(fidx, b.mul(g, c64(i_group)))
        base = b.add(b.mul(bidx, c64(lst[dn.input_batch])),
                     b.mul(fidx, c64(lst[dn.input_feature])))
        dst = b.gep(a_ptr, [b.mul(line, c64(n_item))], source_etype=fty)
        if plan.plane:
            role, kind, j, size = pd[-plan.line_dims - 1]
            with for_range(b, 0, size, name="plane") as p:
                one_line({**coord, (role, kind, j): p}, base,
                         b.gep(dst, [b.mul(p, c64(n_inner))], source_etype=fty))
        else:
            one_line(coord, base, dst)
    b.ret_void()
    return fn


def _valid_range(b, p0, d: int, size: int, n: int):
    """[lo, hi) (i64 values, lo <= hi <= n) of the e in [0, n) with 0 <= p0 + d e < size
    (p0 an i64, d > 0)."""
    neg = b.icmp_signed("<", p0, c64(0))
    lo = b.select(neg, b.udiv(b.add(b.sub(c64(0), p0), c64(d - 1)), c64(d)), c64(0))
    room = b.sub(c64(size), p0)
    hi = b.select(b.icmp_signed("<=", room, c64(0)), c64(0),
                  b.udiv(b.add(room, c64(d - 1)), c64(d)))
    hi = umin(b, hi, c64(n))
    return umin(b, lo, hi), hi
