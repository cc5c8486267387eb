"""The code an ahead-of-time object adds around the program: its C entry point and the
switch of its thread pool, as LLVM IR.

  void ENTRY(const void *const *args, void *const *results, void *temp)
      runs the program (the emitted `xlapy_entry(params, outs, arena, desc)`, inlined)
  void ENTRY_set_num_threads(int n)
      n - 1 workers help with the parallel kernels and gemms from then on; n <= 1: none
      (the default, as tfcompile's objects). Workers are started with pthread_create on
      first need and never stopped: a lower count makes the extra ones sit jobs out.
  int ENTRY_num_threads(void)
      the count in effect

The pool itself is the JIT's (backends/cpu/runtime/threadpool.py, built for the target's
triple): the JIT starts its workers from Python, an object from set_num_threads. Without a
pool (max_threads 1, or a system without futex) xlapy_parallel_for runs every job on the
calling thread, set_num_threads does nothing and the count stays 1.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.llvm.loops import entry_alloca
from xlapy.backends.llvm.types import I32, I64, PTR, VOID

PROGRAM = "xlapy_entry"


def add_entry(llmod: ir.Module, entry_point: str) -> None:
    """The exported entry point, calling the emitted program (made internal, so that LLVM
    inlines it here)."""
    program = llmod.get_global(PROGRAM)
    program.linkage = "internal"
    fn = ir.Function(llmod, ir.FunctionType(VOID, [PTR, PTR, PTR]), entry_point)
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.call(program, list(fn.args) + [ir.Constant(PTR, None)])
    b.ret_void()


def _module(triple: str, name: str) -> ir.Module:
    m = ir.Module(name)
    m.triple = triple
    return m


def _count_global(m: ir.Module, name: str, init: int) -> ir.GlobalVariable:
    g = ir.GlobalVariable(m, I32, name)
    g.initializer = ir.Constant(I32, init)
    g.linkage = "internal"
    return g


def _num_threads_getter(m: ir.Module, entry_point: str, count) -> None:
    get = ir.Function(m, ir.FunctionType(I32, []), f"{entry_point}_num_threads")
    b = ir.IRBuilder(get.append_basic_block("entry"))
    b.ret(b.load_atomic(count, "seq_cst", 4, typ=I32))


def pool_ir(triple: str, entry_point: str) -> list[str]:
    """The thread pool and ENTRY_set_num_threads / ENTRY_num_threads (two modules)."""
    m = _module(triple, "xlapy_aot_threads")
    worker = ir.Function(m, ir.FunctionType(PTR, [PTR]), "xlapy_pool_worker")
    set_workers = ir.Function(m, ir.FunctionType(VOID, [I32]), "xlapy_pool_set_workers")
    create = ir.Function(m, ir.FunctionType(I32, [PTR, PTR, PTR, PTR]), "pthread_create")
    started = _count_global(m, "xlapy.workers_started", 0)
    count = _count_global(m, "xlapy.num_threads", 1)
    fn = ir.Function(m, ir.FunctionType(VOID, [I32]), f"{entry_point}_set_num_threads")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    tid = entry_alloca(b, I64)  # pthread_t: unsigned long on both machines
    n = fn.args[0]
    want = b.select(b.icmp_signed(">", n, ir.Constant(I32, 1)), b.sub(n, ir.Constant(I32, 1)),
                    ir.Constant(I32, 0))
    loop, body, done = (fn.append_basic_block(x) for x in ("loop", "start", "done"))
    b.branch(loop)
    b.position_at_end(loop)
    have = b.load(started, typ=I32)
    b.cbranch(b.icmp_signed("<", have, want), body, done)
    b.position_at_end(body)
    # worker k gets k as its argument: it helps while k < the count set below
    err = b.call(create, [tid, ir.Constant(PTR, None), worker, b.inttoptr(b.zext(have, I64), PTR)])
    ok = b.icmp_signed("==", err, ir.Constant(I32, 0))
    b.store(b.select(ok, b.add(have, ir.Constant(I32, 1)), have), started)
    b.cbranch(ok, loop, done)
    b.position_at_end(done)
    workers = b.load(started, typ=I32)
    workers = b.select(b.icmp_signed("<", workers, want), workers, want)
    b.call(set_workers, [workers])
    b.store_atomic(b.add(workers, ir.Constant(I32, 1)), count, "seq_cst", 4)
    b.ret_void()
    _num_threads_getter(m, entry_point, count)
    return [threadpool.build_ir(triple), str(m)]


def serial_ir(triple: str, entry_point: str) -> list[str]:
    """xlapy_parallel_for running every job on the calling thread, and the count functions
    (the count stays 1)."""
    m = _module(triple, "xlapy_aot_serial")
    # (llvmlite calls through a pointer only when it is typed as a function pointer; it
    # prints as ptr, so the signature is the one the program declares)
    kernel = ir.FunctionType(VOID, [PTR, I64, I64])
    pf = ir.Function(m, ir.FunctionType(VOID, [kernel.as_pointer(), PTR, I64, I64]),
                     threadpool.SYMBOL)
    b = ir.IRBuilder(pf.append_basic_block("entry"))
    fn_ptr, ctx, n, _chunk = pf.args
    b.call(fn_ptr, [ctx, ir.Constant(I64, 0), n])
    b.ret_void()
    count = _count_global(m, "xlapy.num_threads", 1)
    fn = ir.Function(m, ir.FunctionType(VOID, [I32]), f"{entry_point}_set_num_threads")
    ir.IRBuilder(fn.append_basic_block("entry")).ret_void()
    _num_threads_getter(m, entry_point, count)
    return [str(m)]
