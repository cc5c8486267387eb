"""Programs that are one parallel kernel run without an entry function of their own.

Most first calls compile a program whose entry function only sets the floating-point mode,
puts a few buffer pointers in a table and hands one kernel to the thread pool (a row
softmax, a layernorm, an elementwise map over a large array). LLVM translates every
function through its whole code generation pipeline, however small: on the row softmax
that entry cost 0.6-0.7 ms of LLVM time and about 1 ms of the whole compile
(`.venv/bin/python benchmarks/compile_breakdown.py --launch --only "row softmax"`, two
runs: LLVM 9.0 / 9.0 ms against 9.6 / 9.7, lower + compile 15.8 / 16.2 against 16.8 /
17.2). Such a program instead leaves the entry out of its LLVM module and is run by one
entry compiled once per process,

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

from xlapy.backends.cpu.codegen import cached_object
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.runtime.loader import LoadedObject
from xlapy.backends.llvm import fpmode
from xlapy.backends.llvm.loops import c64, for_range
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
    fn = ir.Function(m, ir.FunctionType(VOID, [PTR, PTR, PTR, PTR]), "xlapy_launch")
    fn.attributes.add("nounwind")
    params, outs, arena, desc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def word(k):
        return b.load(b.gep(desc, [k if isinstance(k, ir.Value) else c64(k)], source_etype=I64),
                      typ=I64)

    tbl = b.alloca(PTR, size=c64(MAX_POINTERS))
    with for_range(b, 0, word(4), name="j") as j:
        src = word(b.add(j, c64(5)))
        kind, index = b.and_(src, c64(3)), b.lshr(src, c64(2))
        slot = b.gep(tbl, [j], source_etype=PTR)
        # an arena offset is no index into either table: load from one only for the others
        with b.if_else(b.icmp_signed("==", kind, c64(ARENA))) as (in_arena, in_table):
            with in_arena:
                b.store(b.gep(arena, [index], source_etype=ir.IntType(8)), slot)
            with in_table:
                table = b.select(b.icmp_signed("==", kind, c64(PARAM)), params, outs)
                b.store(b.load(b.gep(table, [index], source_etype=PTR), typ=PTR), slot)
    saved = fpmode.get_mode(b)
    if saved is not None:
        flush = b.icmp_signed("!=", word(3), c64(0))
        fpmode.set_mode(b, b.or_(saved, b.select(flush, c64(fpmode.flush_bits()), c64(0))))
    b.call(threadpool.declare(m), [b.inttoptr(word(0), PTR), tbl, word(1), word(2)])
    fpmode.set_mode(b, saved)
    b.ret_void()
    return str(m)


@functools.lru_cache(maxsize=None)
def _loaded():
    return LoadedObject(cached_object(_build_ir, "launch"), symbols=("xlapy_launch",),
                        provides=("xlapy_launch",))


def launcher_address() -> int:
    """Address of xlapy_launch (compiled once per process; the disk cache keeps its object)."""
    return _loaded().address("xlapy_launch")
