"""xlapy's thread pool, built as LLVM IR once per process (no OpenMP runtime needed).

    void xlapy_parallel_for(void (*fn)(void *ctx, i64 start, i64 end), void *ctx,
                            i64 n, i64 chunk)

runs fn over [0, n) in chunks of `chunk` iterations, on the calling thread and the pool's
workers. Design, for robustness on busy machines:

  - the caller publishes a job and immediately works on it itself;
  - chunks are claimed with a compare-and-swap on one 64-bit word holding
    (job generation << 32 | next chunk), so a worker that wakes up late can never run a
    chunk of the wrong job, and a descheduled worker simply takes fewer chunks; a new job
    first closes that word (new generation, no chunk left) and only then writes its fields,
    so a worker holding a stale copy of the word fails its compare-and-swap;
  - the caller waits only for chunks that were claimed, never for idle workers: a worker
    the OS has not scheduled yet costs nothing (libgomp's static fork-join waits for every
    thread at the barrier, which multiplies run time when other processes load the CPU);
  - idle workers spin briefly, then sleep on a futex;
  - one job at a time: a nested or concurrent call runs serially on its own thread;
  - every chunk runs with the caller's floating-point mode (denormal flushing, fpmode.py).

Workers are created lazily (XLAPY_NUM_THREADS - 1 of them) and re-created in a forked
child. Linux only (futex); elsewhere every call runs on the calling thread.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

import llvmlite.binding as llvm
from llvmlite import ir

from xlapy.backends.cpu.codegen import cached_object
from xlapy.backends.cpu.options import default_num_threads
from xlapy.backends.cpu.runtime.loader import LoadedObject, register_lazy
from xlapy.backends.cpu.target import SYS_FUTEX, threads_available
from xlapy.backends.llvm import fpmode
from xlapy.backends.llvm.types import I32, I64, PTR, VOID
from xlapy.errors import LoweringError

SPINS = 2000
_FUTEX_WAIT, _FUTEX_WAKE = 128, 129  # the _PRIVATE variants
SYMBOL = "xlapy_parallel_for"


def declare(module: ir.Module) -> ir.Function:
    """The pool's entry point, xlapy_parallel_for(fn, ctx, n, chunk), declared in module."""
    fn = module.globals.get(SYMBOL)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(VOID, [PTR, PTR, I64, I64]), SYMBOL)
    return fn


def _machine(triple: str | None) -> str:
    """The machine name of an LLVM triple (None: this host's)."""
    return triple.split("-")[0] if triple else platform.machine()


def _pause(b: ir.IRBuilder, arch: str):
    """The spin-wait hint (x86 PAUSE, AArch64 YIELD = HINT #1), through intrinsics rather
    than inline assembly, which needs LLVM's assembly parser for the target (llvmlite only
    initializes the host's)."""
    m = b.module
    if arch == "x86_64":
        b.call(m.declare_intrinsic("llvm.x86.sse2.pause", (), ir.FunctionType(VOID, [])), [])
    elif arch in ("aarch64", "arm64"):
        hint = m.declare_intrinsic("llvm.aarch64.hint", (), ir.FunctionType(VOID, [I32]))
        b.call(hint, [ir.Constant(I32, 1)])


def build_ir(triple: str | None = None) -> str:
    """The pool's module, for this host or for the machine of an LLVM triple (ahead-of-time
    objects carry one; their workers are started with pthread_create from their own code)."""
    m = ir.Module("xlapy_threadpool")
    arch = _machine(triple)
    if triple:
        m.triple = triple
    sys_futex = SYS_FUTEX[arch]

    def glob(name, ty, init=0):
        g = ir.GlobalVariable(m, ty, name)
        g.initializer = ir.Constant(ty, init)
        g.linkage = "internal"
        g.align = 64
        return g

    claim = glob("claim", I64)          # generation << 32 | next chunk index
    g_fn, g_ctx = glob("fn", PTR, None), glob("ctx", PTR, None)
    g_n, g_chunk, g_nchunks = glob("n", I64), glob("chunk", I64), glob("nchunks", I64)
    g_done = glob("done", I64)          # chunks finished in the current job
    g_fin = glob("fin", I32)            # futex word: 1 when the current job is complete
    g_wake = glob("wake", I32)          # futex word: bumped for every new job
    g_busy = glob("busy", I32)          # a job is running
    g_nworkers = glob("nworkers", I32)
    g_fpmode = glob("fpmode", I64)      # the caller's floating-point mode (fpmode.py)

    syscall = ir.Function(m, ir.FunctionType(I64, [I64], var_arg=True), "syscall")
    kernel_ty = ir.FunctionType(VOID, [PTR, I64, I64])
    sc = "seq_cst"
    # llvmlite emits an indirect call only through a typed function-pointer parameter
    invoke = ir.Function(m, ir.FunctionType(VOID, [kernel_ty.as_pointer(), PTR, I64, I64]),
                         "invoke")
    invoke.linkage = "internal"
    ib = ir.IRBuilder(invoke.append_basic_block("entry"))
    ib.call(invoke.args[0], list(invoke.args[1:]))
    ib.ret_void()

    def c32(v):
        return ir.Constant(I32, v)

    def c64(v):
        return ir.Constant(I64, v)

    def futex(b, addr, op, val):
        b.call(syscall, [c64(sys_futex), addr, c32(op), val, ir.Constant(PTR, None)])

    # run_chunks(gen): claim and run chunks of job `gen` until none are left
    run = ir.Function(m, ir.FunctionType(VOID, [I64]), "run_chunks")
    run.linkage = "internal"
    b = ir.IRBuilder(run.append_basic_block("entry"))
    gen = run.args[0]
    loop, claimed, done_blk, out = (run.append_basic_block(n) for n in
                                    ("loop", "claimed", "finish", "out"))
    b.branch(loop)
    b.position_at_end(loop)
    w = b.load_atomic(claim, sc, 8, typ=I64)
    same = b.icmp_unsigned("==", b.lshr(w, c64(32)), gen)
    idx = b.and_(w, c64(0xFFFFFFFF))
    more = b.icmp_unsigned("<", idx, b.load(g_nchunks, typ=I64))
    try_blk = run.append_basic_block("try")
    b.cbranch(b.and_(same, more), try_blk, out)
    b.position_at_end(try_blk)
    res = b.cmpxchg(claim, w, b.add(w, c64(1)), sc, sc)
    b.cbranch(b.extract_value(res, 1), claimed, loop)
    b.position_at_end(claimed)
    # every chunk runs in the mode of the job's caller (denormal flushing: a value must not
    # depend on which thread computed it); read after the claim, like the job's other fields
    if fpmode.supported(triple):
        fpmode.set_mode(b, b.load(g_fpmode, typ=I64))
    chunk = b.load(g_chunk, typ=I64)
    start = b.mul(idx, chunk)
    end = b.add(start, chunk)
    n = b.load(g_n, typ=I64)
    end = b.select(b.icmp_signed("<", end, n), end, n)
    b.call(invoke, [b.load(g_fn, typ=PTR), b.load(g_ctx, typ=PTR), start, end])
    finished = b.add(b.atomic_rmw("add", g_done, c64(1), sc), c64(1))
    b.cbranch(b.icmp_unsigned("==", finished, b.load(g_nchunks, typ=I64)), done_blk, loop)
    b.position_at_end(done_blk)
    b.store_atomic(c32(1), g_fin, sc, 4)
    futex(b, g_fin, _FUTEX_WAKE, c32(1))
    b.branch(loop)
    b.position_at_end(out)
    b.ret_void()

    # worker(index): wait for a new job, help with it when index < nworkers, forever
    # (a worker beyond the count xlapy_pool_set_workers last set sits the jobs out)
    worker = ir.Function(m, ir.FunctionType(PTR, [PTR]), "xlapy_pool_worker")
    b = ir.IRBuilder(worker.append_basic_block("entry"))
    seen_slot = b.alloca(I32)
    spin_i = b.alloca(I32)  # in the entry block: an alloca in the loop would grow the stack
    # a worker starting up joins the job in flight, if any: a thread that first runs after
    # a job was published (a new pool's first job, a worker the OS was slow to start)
    # would otherwise take that job's wake-up as seen and sit it out, and the caller would
    # run every unit alone (joining a finished job is harmless: its claim word has no
    # chunk left, or a newer generation)
    b.store(b.sub(b.load_atomic(g_wake, sc, 4, typ=I32), c32(1)), seen_slot)
    top = worker.append_basic_block("top")
    b.branch(top)
    b.position_at_end(top)
    seen = b.load(seen_slot, typ=I32)
    b.store(c32(0), spin_i)
    spin, spin_body, sleep, go, help_ = (worker.append_basic_block(n) for n in
                                         ("spin", "spin_body", "sleep", "go", "help"))
    b.branch(spin)
    b.position_at_end(spin)
    changed = b.icmp_unsigned("!=", b.load_atomic(g_wake, sc, 4, typ=I32), seen)
    i = b.load(spin_i, typ=I32)
    b.cbranch(changed, go, spin_body)
    b.position_at_end(spin_body)
    _pause(b, arch)
    b.store(b.add(i, c32(1)), spin_i)
    b.cbranch(b.icmp_signed("<", i, c32(SPINS)), spin, sleep)
    b.position_at_end(sleep)
    futex(b, g_wake, _FUTEX_WAIT, seen)
    b.branch(spin)  # re-check (wakeups may be spurious)
    b.position_at_end(go)
    b.store(b.load_atomic(g_wake, sc, 4, typ=I32), seen_slot)
    active = b.sext(b.load_atomic(g_nworkers, sc, 4, typ=I32), I64)
    b.cbranch(b.icmp_signed("<", b.ptrtoint(worker.args[0], I64), active), help_, top)
    b.position_at_end(help_)
    b.call(run, [b.lshr(b.load_atomic(claim, sc, 8, typ=I64), c64(32))])
    b.branch(top)

    # xlapy_parallel_for(fn, ctx, n, chunk)
    pf = ir.Function(m, ir.FunctionType(VOID, [PTR, PTR, I64, I64]), "xlapy_parallel_for")
    fn_a, ctx_a, n_a, chunk_a = pf.args
    b = ir.IRBuilder(pf.append_basic_block("entry"))
    serial, parallel, locked = (pf.append_basic_block(n) for n in ("serial", "parallel", "locked"))
    few = b.icmp_signed("<=", n_a, chunk_a)
    nobody = b.icmp_signed("<=", b.load_atomic(g_nworkers, sc, 4, typ=I32), c32(0))
    b.cbranch(b.or_(few, nobody), serial, parallel)
    b.position_at_end(serial)
    b.call(invoke, [fn_a, ctx_a, c64(0), n_a])
    b.ret_void()
    b.position_at_end(parallel)
    got = b.extract_value(b.cmpxchg(g_busy, c32(0), c32(1), sc, sc), 1)
    b.cbranch(got, locked, serial)  # another job runs (nested or concurrent): go serial
    b.position_at_end(locked)
    # Close the claim word first (new generation, no chunk claimable) and only then rewrite
    # the job's fields: a worker still looping on the previous job may have read the old
    # claim word and be about to compare-and-swap it; changing the word makes that CAS fail.
    # (Without this, such a worker could claim a chunk index of the old generation after the
    # new job's fields were written, run a chunk of the new job twice and overshoot `done`,
    # leaving the caller waiting forever for done == nchunks.)
    new_gen = b.add(b.lshr(b.load_atomic(claim, sc, 8, typ=I64), c64(32)), c64(1))
    b.store_atomic(b.or_(b.shl(new_gen, c64(32)), c64(0xFFFFFFFF)), claim, sc, 8)
    b.store(fn_a, g_fn)
    b.store(ctx_a, g_ctx)
    b.store(n_a, g_n)
    b.store(chunk_a, g_chunk)
    mode = fpmode.get_mode(b)
    if mode is not None:
        b.store(mode, g_fpmode)
    nchunks = b.sdiv(b.add(n_a, b.sub(chunk_a, c64(1))), chunk_a)
    b.store(nchunks, g_nchunks)
    b.store_atomic(c64(0), g_done, sc, 8)
    b.store_atomic(c32(0), g_fin, sc, 4)
    b.store_atomic(b.shl(new_gen, c64(32)), claim, sc, 8)   # publishes the job
    b.atomic_rmw("add", g_wake, c32(1), sc)
    futex(b, g_wake, _FUTEX_WAKE, c32(0x7FFFFFFF))
    b.call(run, [new_gen])
    wait, wait_body, spin2, sleep2, finish = (pf.append_basic_block(n) for n in
                                              ("wait", "wait_body", "spin2", "sleep2", "finish"))
    j = b.alloca(I32)
    b.store(c32(0), j)
    b.branch(wait)
    b.position_at_end(wait)
    complete = b.icmp_unsigned("==", b.load_atomic(g_done, sc, 8, typ=I64), nchunks)
    b.cbranch(complete, finish, wait_body)
    b.position_at_end(wait_body)
    jv = b.load(j, typ=I32)
    b.store(b.add(jv, c32(1)), j)
    b.cbranch(b.icmp_signed("<", jv, c32(SPINS)), spin2, sleep2)
    b.position_at_end(spin2)
    _pause(b, arch)
    b.branch(wait)
    b.position_at_end(sleep2)
    futex(b, g_fin, _FUTEX_WAIT, c32(0))
    b.branch(wait)
    b.position_at_end(finish)
    b.store_atomic(c32(0), g_busy, sc, 4)
    b.ret_void()

    # xlapy_pool_set_workers(n): record how many workers exist (Python starts them)
    setw = ir.Function(m, ir.FunctionType(VOID, [I32]), "xlapy_pool_set_workers")
    b = ir.IRBuilder(setw.append_basic_block("entry"))
    b.store_atomic(setw.args[0], g_nworkers, sc, 4)
    b.store_atomic(c32(0), g_busy, sc, 4)
    b.ret_void()

    # xlapy_pool_after_fork(): in a forked child, before its workers start: close the claim
    # word, whose copy may hold a job of the parent with chunks left (its caller is not in
    # the child), so that a worker joining the job in flight at its start finds none
    fork = ir.Function(m, ir.FunctionType(VOID, []), "xlapy_pool_after_fork")
    b = ir.IRBuilder(fork.append_basic_block("entry"))
    gen = b.lshr(b.load_atomic(claim, sc, 8, typ=I64), c64(32))
    b.store_atomic(b.or_(b.shl(b.add(gen, c64(1)), c64(32)), c64(0xFFFFFFFF)), claim, sc, 8)
    b.ret_void()
    return str(m)


class _Pool:
    def __init__(self):
        self.code = LoadedObject(cached_object(build_ir, "threadpool"), provides=(SYMBOL,))
        self.parallel_for = self.code.address("xlapy_parallel_for")
        self._set_workers = ctypes.CFUNCTYPE(None, ctypes.c_int32)(
            self.code.address("xlapy_pool_set_workers"))
        self._worker = self.code.address("xlapy_pool_worker")
        self._after_fork = ctypes.CFUNCTYPE(None)(self.code.address("xlapy_pool_after_fork"))
        self.workers = 0

    def start(self, count: int) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        create = libc.pthread_create
        create.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        started = 0
        for _ in range(max(count, 0)):
            tid = ctypes.c_ulong()
            if create(ctypes.byref(tid), None, self._worker, None) != 0:
                break
            started += 1
        self.workers = started
        self._set_workers(started)

    def restart_after_fork(self) -> None:
        self._set_workers(0)     # the child has none of the parent's threads
        self._after_fork()
        self.start(self.workers)


@functools.lru_cache(maxsize=None)
def pool(num_threads: int) -> _Pool | None:
    """The process's pool with num_threads - 1 workers (None when threads are not usable)."""
    if not threads_available():
        return None
    p = _Pool()
    p.start(num_threads - 1)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=p.restart_after_fork)
    return p


def _register() -> None:
    p = pool(default_num_threads())
    if p is None:
        raise LoweringError("this code uses the thread pool, which is not available here; "
                            "compile with XLAPY_NUM_THREADS=1")
    llvm.add_symbol(SYMBOL, p.parallel_for)


register_lazy([SYMBOL], _register)
