"""Helpers for the dedicated emitters (sort, topk, scatter, select-and-scatter, ...) that emit
a whole routine into its own internal LLVM function:

  fn, b = routine_function(pe, "sort." + instr.name, n_ptrs)   void fn(ptr, ..., ptr)
  ...emit into b...; b.ret_void(); pe.b.call(fn, ptrs)

Mutable scalars of a routine are entry-block stack slots (`slot`); LLVM's mem2reg turns
them into registers (loops: backends/llvm/loops.py's for_range, index_nest, while_loop).
`element_ptr` addresses an element by logical index honouring the shape's layout, and
`scratch` gets a temporary buffer (the stack when small, malloc/free when big).
"""

from __future__ import annotations


from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, entry_alloca, index_nest, linear_of
from xlapy.hlo.shapes import Shape

# Scratch buffers up to this size live on the stack of the routine; bigger ones are
# malloc'ed: generated code may run on threads with small stacks (thread pools), so the
# stack is kept for small rows only.
STACK_SCRATCH_LIMIT = 64 * 1024


def routine_function(pe, base: str, n_ptrs: int, extra_args=()) -> tuple[ir.Function, ir.IRBuilder]:
    """An internal `void fn(ptr x n_ptrs, *extra_args)` and a builder at its entry."""
    fty = ir.FunctionType(T.VOID, [T.PTR] * n_ptrs + list(extra_args))
    fn = ir.Function(pe.llmod, fty, pe.me.unique(base))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def slot(b: ir.IRBuilder, ty: ir.Type, init=None, name: str = ""):
    """A mutable variable (entry-block alloca), stored `init` at the current position."""
    s = entry_alloca(b, ty, name=name)
    if init is not None:
        b.store(init if isinstance(init, ir.Value) else ir.Constant(ty, init), s)
    return s


def _libc(module: ir.Module, name: str, fty: ir.FunctionType) -> ir.Function:
    fn = module.globals.get(name)
    return fn if fn is not None else ir.Function(module, fty, name)


class Scratch:
    """A temporary buffer of `nbytes`: a stack array when small, else malloc'ed at creation
    and freed by `release()` (call it before every return of the routine)."""

    def __init__(self, b: ir.IRBuilder, nbytes: int, name: str = "scratch"):
        self.b = b
        nbytes = max(int(nbytes), 1)
        self.heap = nbytes > STACK_SCRATCH_LIMIT
        if self.heap:
            malloc = _libc(b.module, "malloc", ir.FunctionType(T.PTR, [T.I64]))
            self.ptr = b.call(malloc, [c64(nbytes)], name=name)
        else:
            arr = entry_alloca(b, T.I64, (nbytes + 7) // 8, name=name)
            # llvmlite types an alloca as a typed `i64*`; the buffer holds columns of any
            # type, addressed with explicit element types, so make it an opaque `ptr`
            arr.type = T.PTR
            self.ptr = arr

    def release(self):
        if self.heap:
            free = _libc(self.b.module, "free", ir.FunctionType(T.VOID, [T.PTR]))
            self.b.call(free, [self.ptr])


def memcpy(b: ir.IRBuilder, dst, src, nbytes) -> None:
    fn = b.module.declare_intrinsic("llvm.memcpy", [T.PTR, T.PTR, T.I64])
    if isinstance(nbytes, int):
        if nbytes == 0:
            return
        nbytes = c64(nbytes)
    b.call(fn, [dst, src, nbytes, ir.Constant(T.I1, 0)])


def element_ptr(b: ir.IRBuilder, ptr, shape: Shape, index):
    """Address of the element at logical `index` (list of i64) of an array at `ptr`."""
    return b.gep(ptr, [linear_of(b, shape, index)], inbounds=True,
                 source_etype=T.storage_type(shape.element_type))


def load_at(b: ir.IRBuilder, ptr, shape: Shape, index):
    """The element at logical `index`, in value form (types.py)."""
    return T.load(b, element_ptr(b, ptr, shape, index), shape.element_type)


def store_at(b: ir.IRBuilder, value, ptr, shape: Shape, index) -> None:
    T.store(b, value, element_ptr(b, ptr, shape, index), shape.element_type)


def as_i64(b: ir.IRBuilder, v, signed: bool):
    """An integer index value widened (or kept) to i64."""
    if v.type.width == 64:
        return v
    return b.sext(v, T.I64) if signed else b.zext(v, T.I64)


def copy_array(b: ir.IRBuilder, dst, dst_shape: Shape, src, src_shape: Shape) -> None:
    """dst = src for two arrays of the same dims, possibly different layouts."""
    if dst_shape.minor_to_major == src_shape.minor_to_major or dst_shape.size <= 1:
        memcpy(b, dst, src, dst_shape.byte_size)
        return
    t = T.storage_type(dst_shape.element_type)
    with index_nest(b, dst_shape.dims, name="cp") as index:
        v = b.load(element_ptr(b, src, src_shape, index), typ=t)
        b.store(v, element_ptr(b, dst, dst_shape, index))
