"""Programs that are one parallel kernel run without an entry function of their own.

Most first calls compile a program whose entry function only sets the floating-point mode,
puts a few buffer pointers in a table and hands one kernel to the thread pool (a row
softmax, a layernorm, an elementwise map over a large array). LLVM translates every
function through its whole code generation pipeline, and for that entry this costs about
0.6 ms of a ~17 ms softmax compile whatever its size (`.venv/bin/python
benchmarks/compile_breakdown.py --launch`). Such a program instead leaves the entry out of
its LLVM module and is run by one entry compiled once per process,

    void xlapy_launch(ptr params, ptr outs, ptr arena, ptr desc)

which reads the rest from a descriptor (an i64 array the executable keeps):

    desc[0]   the kernel's thread-pool wrapper, void kernel.par(ptr ctx, i64 start, i64 end)
    desc[1]   n: the wrapper runs over [0, n)
    desc[2]   the pool's chunk size
    desc[3]   1: flush denormals while it runs (as the generated entries do, fpmode.py)
    desc[4]   k: the number of pointers in the wrapper's ctx table, at most MAX_POINTERS
    desc[5+j] where ctx[j] comes from: (i << 2) | 0 params[i], (i << 2) | 1 outs[i],
              (offset << 2) | 2 arena + offset

Generated entry functions take the same four arguments (the fourth unused), so the
executable calls either the same way. `ModuleEmitter.single_launch()` decides: the entry
qualifies when its only work is one call of the pool with pointers that are parameters,
outputs or arena slots (no copies, no serial kernels, no control flow, not a profile
build); anything else keeps its generated entry.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from llvmlite import ir

from xlapy.backends.llvm import fpmode
from xlapy.backends.llvm.types import I64, PTR, VOID

MAX_POINTERS = 256
PARAM, OUT, ARENA = 0, 1, 2


@dataclass(frozen=True)
class Launch:
    """What xlapy_launch runs for one program (the picklable part of its descriptor)."""
    wrapper: str          # symbol of the kernel's pool wrapper in the program's object code
    n: int
    chunk: int
    flush_denormals: bool
    sources: tuple        # per ctx pointer: (PARAM | OUT | ARENA, index or byte offset)

    def descriptor(self, wrapper_address: int) -> list[int]:
        return [wrapper_address, self.n, self.chunk, int(self.flush_denormals),
                len(self.sources)] + [(v << 2) | kind for kind, v in self.sources]


def _build_ir() -> str:
    m = ir.Module("xlapy_launch")
    pool = ir.Function(m, ir.FunctionType(VOID, [PTR, PTR, I64, I64]), "xlapy_parallel_for")
    fn = ir.Function(m, ir.FunctionType(VOID, [PTR, PTR, PTR, PTR]), "xlapy_launch")
    fn.attributes.add("nounwind")
    params, outs, arena, desc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def c(v):
        return ir.Constant(I64, v)

    def word(k):
        return b.load(b.gep(desc, [k if isinstance(k, ir.Value) else c(k)], source_etype=I64),
                      typ=I64)

    tbl = b.alloca(PTR, size=c(MAX_POINTERS))
    count = word(4)
    pre = b.block
    header, body, done = (fn.append_basic_block(n) for n in ("h", "b", "d"))
    b.branch(header)
    b.position_at_end(header)
    j = b.phi(I64)
    j.add_incoming(c(0), pre)
    b.cbranch(b.icmp_signed("<", j, count), body, done)
    b.position_at_end(body)
    src = word(b.add(j, c(5)))
    kind, index = b.and_(src, c(3)), b.lshr(src, c(2))
    is_arena = b.icmp_signed("==", kind, c(ARENA))
    load_blk, arena_blk, store_blk = (fn.append_basic_block(n) for n in ("tl", "ar", "st"))
    b.cbranch(is_arena, arena_blk, load_blk)
    b.position_at_end(load_blk)  # (an arena offset is no index into either table)
    table = b.select(b.icmp_signed("==", kind, c(PARAM)), params, outs)
    loaded = b.load(b.gep(table, [index], source_etype=PTR), typ=PTR)
    b.branch(store_blk)
    b.position_at_end(arena_blk)
    offset_ptr = b.gep(arena, [index], source_etype=ir.IntType(8))
    b.branch(store_blk)
    b.position_at_end(store_blk)
    ptr = b.phi(PTR)
    ptr.add_incoming(loaded, load_blk)
    ptr.add_incoming(offset_ptr, arena_blk)
    b.store(ptr, b.gep(tbl, [j], source_etype=PTR))
    j.add_incoming(b.add(j, c(1)), store_blk)
    b.branch(header)
    b.position_at_end(done)
    saved = fpmode.get_mode(b)
    if saved is not None:
        bits = c(fpmode.flush_bits())
        flush = b.icmp_signed("!=", word(3), c(0))
        fpmode.set_mode(b, b.or_(saved, b.select(flush, bits, c(0))))
    wrapper = b.inttoptr(word(0), PTR)
    b.call(pool, [wrapper, tbl, word(1), word(2)])
    fpmode.set_mode(b, saved)
    b.ret_void()
    return str(m)


@functools.lru_cache(maxsize=None)
def _loaded():
    from xlapy.backends.cpu import jit
    return jit.LoadedObject(jit.cached_object(_build_ir()), uses_pool=True,
                            symbols=("xlapy_launch",))


@functools.lru_cache(maxsize=None)
def launcher_address() -> int:
    """Address of xlapy_launch (compiled once per process; the disk cache keeps its object)."""
    return _loaded().address("xlapy_launch")
