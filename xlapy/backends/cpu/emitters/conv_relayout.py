"""Copies of an array between two layouts of the same dims (a convolution's operand or
result in features-innermost order for a kernel written for it: conv_winograd.py takes
NCHW operands through NHWC-ordered copies), on the thread pool."""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.conv_im2col import new_fn, ptrs
from xlapy.backends.cpu.passes.conv_plan import strides_of
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range
from xlapy.hlo.shapes import Layout, Shape

PARALLEL_ELEMENTS = 1 << 15


def minor_first(shape, dim: int):
    """shape with `dim` its innermost dim, the others in their order."""
    m2m = (dim,) + tuple(d for d in shape.minor_to_major if d != dim)
    return Shape(shape.element_type, shape.dims, Layout(m2m))


TILE = 8   # a square of TILE x TILE elements is transposed in registers


def emit_copy(pe, src_shape, dst_shape, src_ptr, dst_ptr, name: str) -> None:
    """dst (laid out as dst_shape) = src (as src_shape), split across the pool: where the
    two innermost dims differ (NCHW <-> NHWC), TILE x TILE squares of them are read as
    vectors along src's innermost dim and written as vectors along dst's (_tiles_fn);
    else each line of dst's innermost dim reads src with that dim's stride there."""
    si, di = src_shape.minor_to_major[0], dst_shape.minor_to_major[0]
    if si != di and src_shape.dims[si] >= TILE and src_shape.dims[di] >= TILE \
            and T.storage_type(src_shape.element_type) == T.F32:
        fn, items = _tiles_fn(pe, src_shape, dst_shape, name)
    else:
        fn, items = _lines_fn(pe, src_shape, dst_shape, name)
    ctx = pe.table([src_ptr, dst_ptr])
    if pe.me.use_threads and src_shape.size >= PARALLEL_ELEMENTS and items >= 2:
        grain = max(items // (4 * pe.me.num_threads), 1)
        pe.b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(items), c64(grain)])
    else:
        pe.b.call(fn, [ctx, c64(0), c64(items)])


def _transpose(b, rows):
    """The TILE vectors of `rows` transposed (rows[r][c] -> out[c][r]): log2(TILE) rounds
    of shuffles, each interleaving pairs of vectors in blocks of half the previous size."""
    n = len(rows)
    vs = list(rows)
    half = n // 2
    while half >= 1:
        out = [None] * n
        for i in range(n):
            if i & half:
                continue
            j = i + half
            lo, hi = [], []
            for blk in range(0, n, 2 * half):
                lo += [blk + k for k in range(half)] + [n + blk + k for k in range(half)]
                hi += [blk + half + k for k in range(half)] + \
                    [n + blk + half + k for k in range(half)]
            mask_lo = ir.Constant(ir.VectorType(T.I32, n), lo)
            mask_hi = ir.Constant(ir.VectorType(T.I32, n), hi)
            out[i] = b.shuffle_vector(vs[i], vs[j], mask_lo)
            out[j] = b.shuffle_vector(vs[i], vs[j], mask_hi)
        vs = out
        half //= 2
    return vs


def _tiles_fn(pe, src_shape, dst_shape, name):
    """(fn(ctx = [src, dst], start, end), work items): an item is a band of TILE indices of
    dst's innermost dim (the last band narrower) at one index of the dims outside the two
    innermost ones; along it, whole squares go through _transpose, the rest one element
    at a time."""
    fn, b = new_fn(pe, f"conv.relayout_tiles.{name}")
    ctx, start, end = fn.args
    src, dst = ptrs(b, ctx, 2)
    sst, dstr = strides_of(src_shape), strides_of(dst_shape)
    et = T.storage_type(src_shape.element_type)
    vty = ir.VectorType(et, TILE)
    si, di = src_shape.minor_to_major[0], dst_shape.minor_to_major[0]
    ns, nd = src_shape.dims[si], src_shape.dims[di]
    others = [d for d in range(src_shape.rank) if d not in (si, di)]
    bands = -(-nd // TILE)
    items = bands
    for d in others:
        items *= src_shape.dims[d]
    with for_range(b, start, end, name="item") as item:
        band = b.urem(item, c64(bands))
        rem = b.udiv(item, c64(bands))
        s_off, d_off = c64(0), c64(0)
        for d in reversed(others):
            i = b.urem(rem, c64(src_shape.dims[d]))
            rem = b.udiv(rem, c64(src_shape.dims[d]))
            s_off = b.add(s_off, b.mul(i, c64(sst[d])))
            d_off = b.add(d_off, b.mul(i, c64(dstr[d])))
        d0 = b.mul(band, c64(TILE))
        s_off = b.add(s_off, b.mul(d0, c64(sst[di])))
        d_off = b.add(d_off, d0)
        whole = b.icmp_unsigned("<=", b.add(d0, c64(TILE)), c64(nd))
        n_whole = ns // TILE * TILE
        with b.if_else(whole) as (full, part):
            with full:
                with for_range(b, 0, n_whole, TILE, name="s") as s0:
                    rows = [b.load(b.gep(src, [b.add(s_off, b.add(
                        c64(r * sst[di]), s0))], source_etype=et), typ=vty, align=4)
                        for r in range(TILE)]
                    for c, v in enumerate(_transpose(b, rows)):
                        at = b.add(d_off, b.mul(b.add(s0, c64(c)), c64(dstr[si])))
                        b.store(v, b.gep(dst, [at], source_etype=et), align=4)
                _scalar(b, src, dst, et, s_off, d_off, sst[di], dstr[si], c64(n_whole),
                        c64(ns), c64(TILE))
            with part:
                _scalar(b, src, dst, et, s_off, d_off, sst[di], dstr[si], c64(0), c64(ns),
                        b.sub(c64(nd), d0))
    b.ret_void()
    return fn, items


def _scalar(b, src, dst, et, s_off, d_off, s_row, d_col, s0, s1, rows):
    """dst[d_off + s * d_col + r] = src[s_off + r * s_row + s] for s in [s0, s1), r < rows."""
    with for_range(b, s0, s1, name="ss") as s:
        with for_range(b, 0, rows, name="r") as r:
            x = b.load(b.gep(src, [b.add(s_off, b.add(b.mul(r, c64(s_row)), s))],
                             source_etype=et), typ=et)
            b.store(x, b.gep(dst, [b.add(d_off, b.add(b.mul(s, c64(d_col)), r))],
                             source_etype=et))


def _lines_fn(pe, src_shape, dst_shape, name):
    """(fn(ctx = [src, dst], start, end), work items): the lines of dst's innermost dim."""
    fn, b = new_fn(pe, f"conv.relayout.{name}")
    ctx, start, end = fn.args
    src, dst = ptrs(b, ctx, 2)
    sst, dstr = strides_of(src_shape), strides_of(dst_shape)
    et = T.storage_type(src_shape.element_type)
    inner = dst_shape.minor_to_major[0]
    outer = list(reversed(dst_shape.minor_to_major[1:]))   # major -> minor
    n = src_shape.dims[inner]
    with for_range(b, start, end, name="line") as line:
        rem, s_off, d_off = line, c64(0), c64(0)
        for d in reversed(outer):
            i = b.urem(rem, c64(src_shape.dims[d]))
            rem = b.udiv(rem, c64(src_shape.dims[d]))
            s_off = b.add(s_off, b.mul(i, c64(sst[d])))
            d_off = b.add(d_off, b.mul(i, c64(dstr[d])))
        with for_range(b, 0, n, name="e") as e:
            x = b.load(b.gep(src, [b.add(s_off, b.mul(e, c64(sst[inner])))],
                             source_etype=et), typ=et)
            b.store(x, b.gep(dst, [b.add(d_off, e)], source_etype=et))
    b.ret_void()
    return fn, src_shape.size // max(n, 1)
