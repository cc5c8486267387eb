"""Copies of an array between two layouts of the same dims (a convolution's operand or
result in features-innermost order for a kernel written for it: conv_winograd.py takes
NCHW operands through NHWC-ordered copies), on the thread pool."""

from __future__ import annotations

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


def emit_copy(pe, src_shape, dst_shape, src_ptr, dst_ptr, name: str) -> None:
    """dst (laid out as dst_shape) = src (as src_shape): each line of dst's innermost dim
    (reading src with that dim's stride there), lines split across the pool."""
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
    lines = src_shape.size // max(n, 1)
    ctx = pe.table([src_ptr, dst_ptr])
    if pe.me.use_threads and src_shape.size >= PARALLEL_ELEMENTS and lines >= 2:
        grain = max(lines // (4 * pe.me.num_threads), 1)
        pe.b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(lines), c64(grain)])
    else:
        pe.b.call(fn, [ctx, c64(0), c64(lines)])
