"""Collectives for compiled code: MPI called on the programs' own buffers.

Generated code (emitters/collectives.py) keeps one plan per collective instruction, an
external global `xlapy_mpi_plan.<k>` of PLAN_WORDS i64 words that the executable fills
before the program's first run (`fill_plans`, from the instruction's descriptor, which the
ExecutableSpec stores):

  SIZE       the number of processes in the instruction's group (1: no MPI call; the
             generated code copies, the identity semantics of one replica)
  INDEX      this process's position in its group
  COMM       the group's MPI communicator handle (MPI_Comm_split of a duplicate of
             COMM_WORLD, one per distinct set of groups, cached for the process)
  DTYPE, OP  MPI datatype and reduction handles (reductions), else unused
  PEER_TO, PEER_FROM   collective-permute: the ranks sent to / received from (MPI_PROC_NULL:
             none), HAS_SOURCE 0 when nobody sends here (the result is zeros)
  REPLICA    this process's replica id (replica-id)
  FN         the address of the MPI function the call wrapper calls
  IN_PLACE   MPI_IN_PLACE (an all-reduce whose result takes its operand's buffer sends it)

The generated code calls small wrappers compiled from LLVM IR once per process (below):

  void xlapy_mpi_allreduce(ptr plan, ptr send, ptr recv, i64 count)   MPI_Allreduce
  void xlapy_mpi_allgather(ptr plan, ptr send, ptr recv, i64 nbytes)  MPI_Allgather (bytes)
  void xlapy_mpi_reduce_scatter(ptr plan, ptr send, ptr recv, i64 count)
                                                                      MPI_Reduce_scatter_block
  void xlapy_mpi_alltoall(ptr plan, ptr send, ptr recv, i64 nbytes)   MPI_Alltoall (bytes)
  void xlapy_mpi_sendrecv(ptr plan, ptr send, ptr recv, i64 nbytes)   MPI_Sendrecv (bytes)

They take MPI's handles from the plan at the width of this process's MPI library (pointers in
Open MPI, ints in MPICH), so the programs' object code does not depend on the MPI used and
the disk cache serves it to any process. No Python runs between the program and MPI.

Reductions: add, multiply, maximum, minimum (and/or on pred and integers) on the types MPI
reduces natively with MPI's own ops, except float maximum/minimum (MPI's MAX/MIN do not
propagate NaN as XLA does) and bf16/f16 (MPI has no such types): those use user ops
compiled here (MPI_Op_create on an IR function that widens to f32, applies the op, rounds
back to nearest even: one bf16 rounding per pairwise step; MPI picks the pairing, so for
more than two processes a sum may round differently from the interpreter's, which adds in
group order, and so may f32/f64 sums with MPI's own SUM).

Faults: each wrapper records which plan it is in (a busy word) while MPI runs. A watchdog
thread (mpi_watchdog.py, started with the first plan that talks to other processes) aborts
the job with a message naming the instruction when one call has not returned within
XLAPY_MPI_TIMEOUT seconds (60 by default); Python's own blocking MPI calls here
(communicator duplication and splits, the fingerprint exchange) are watched the same way.
Before a program's first run the processes exchange its fingerprint (the module's name and
a hash of its optimized HLO): processes running different programs are named.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from xlapy.backends.cpu.codegen import cached_object
from xlapy.backends.cpu.runtime.loader import LoadedObject, register_lazy
from xlapy.backends.cpu.runtime.mpi_watchdog import (BUSY, CALLS, STATE_SYMBOL, guarded,
                                                      names, watch)
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range
from xlapy.errors import EvaluationError, XlapyError
from xlapy.hlo.shapes import PRIMITIVE_TYPES

PLAN_WORDS = 16
SIZE, INDEX, COMM, DTYPE, OP, PEER_TO, PEER_FROM, HAS_SOURCE, REPLICA, FN, IN_PLACE = range(11)
PLAN_PREFIX = "xlapy_mpi_plan."
WRAPPERS = ("allreduce", "allgather", "reduce_scatter", "alltoall", "sendrecv")
_MPI_FN = {"allreduce": "MPI_Allreduce", "allgather": "MPI_Allgather",
           "reduce_scatter": "MPI_Reduce_scatter_block", "alltoall": "MPI_Alltoall",
           "sendrecv": "MPI_Sendrecv"}
# user reduction ops compiled here: (op, type) -> symbol
USER_OPS = {(op, t): f"xlapy_mpi_op_{op}_{t}" for op in ("maximum", "minimum")
            for t in ("f32", "f64")}
USER_OPS.update({(op, t): f"xlapy_mpi_op_{op}_{t}"
                 for op in ("add", "multiply", "maximum", "minimum") for t in ("bf16", "f16")})
_NATIVE_TYPES = {"f32": "FLOAT", "f64": "DOUBLE", "s8": "INT8_T", "s16": "INT16_T",
                 "s32": "INT32_T", "s64": "INT64_T", "u8": "UINT8_T", "u16": "UINT16_T",
                 "u32": "UINT32_T", "u64": "UINT64_T", "c64": "C_FLOAT_COMPLEX",
                 "c128": "C_DOUBLE_COMPLEX", "pred": "C_BOOL"}
_NATIVE_OPS = {"add": "SUM", "multiply": "PROD", "maximum": "MAX", "minimum": "MIN"}


def reduction_supported(op: str | None, dtype: str) -> bool:
    """Whether an all-reduce/reduce-scatter with reducer `op` on `dtype` lowers."""
    if op is None:
        return False
    if (op, dtype) in USER_OPS:
        return True
    if op in ("and", "or"):
        return dtype == "pred" or dtype[0] in "su"
    if dtype == "pred" or dtype not in _NATIVE_TYPES:
        return False
    return not (dtype.startswith("c") and op in ("maximum", "minimum"))


# ---- the wrappers and user ops, LLVM IR built once per process ------------------------------

def _handle_bits() -> int:
    mpi = _mpi()
    return 8 * mpi._sizeof(mpi.Comm) if mpi is not None else 64


def _build_ir(bits: int) -> str:
    m = ir.Module("xlapy_mpi")
    H = ir.IntType(bits)
    i32 = T.I32
    state = ir.GlobalVariable(m, ir.ArrayType(T.I64, 4), STATE_SYMBOL)
    state.linkage = "external"

    def handle(b, plan, k):
        v = b.load(b.gep(plan, [c64(k)], source_etype=T.I64), typ=T.I64)
        return v if bits == 64 else b.trunc(v, H)

    def word(b, plan, k, ty=T.I64):
        v = b.load(b.gep(plan, [c64(k)], source_etype=T.I64), typ=T.I64)
        return v if ty == T.I64 else b.trunc(v, ty)

    for name in WRAPPERS:
        fn = ir.Function(m, ir.FunctionType(T.VOID, [T.PTR, T.PTR, T.PTR, T.I64]),
                         f"xlapy_mpi_{name}")
        plan, send, recv, n = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        n32 = b.trunc(n, i32)
        comm = handle(b, plan, COMM)
        byte = handle(b, plan, DTYPE)   # for the byte-wise ones: MPI_BYTE's handle
        if name in ("allreduce", "reduce_scatter"):
            tys, args = [T.PTR, T.PTR, i32, H, H, H], [send, recv, n32, byte,
                                                         handle(b, plan, OP), comm]
        elif name in ("allgather", "alltoall"):
            tys, args = [T.PTR, i32, H, T.PTR, i32, H, H], [send, n32, byte, recv, n32, byte,
                                                            comm]
        else:
            status = b.alloca(T.I64, size=c64(16))
            tag = ir.Constant(i32, 0x7a1)
            tys = [T.PTR, i32, H, i32, i32, T.PTR, i32, H, i32, i32, H, T.PTR]
            args = [send, n32, byte, word(b, plan, PEER_TO, i32), tag, recv, n32, byte,
                    word(b, plan, PEER_FROM, i32), tag, comm, status]
        busy = b.gep(state, [c64(0), c64(BUSY)])
        calls = b.gep(state, [c64(0), c64(CALLS)])
        b.store(b.add(b.load(calls, typ=T.I64), c64(1)), calls)
        b.store(b.ptrtoint(plan, T.I64), busy)
        fty = ir.FunctionType(i32, tys)
        # llvmlite emits an indirect call only through a typed function-pointer parameter
        invoke = ir.Function(m, ir.FunctionType(i32, [fty.as_pointer()] + tys),
                             f"invoke_{name}")
        invoke.linkage = "internal"
        ib = ir.IRBuilder(invoke.append_basic_block("entry"))
        ib.ret(ib.call(invoke.args[0], list(invoke.args[1:])))
        b.call(invoke, [b.inttoptr(word(b, plan, FN), fty.as_pointer())] + args)
        b.store(c64(0), busy)
        b.ret_void()

    for (op, t), sym in USER_OPS.items():
        # void op(ptr in, ptr inout, ptr len, ptr datatype): inout[i] = op(in[i], inout[i])
        fn = ir.Function(m, ir.FunctionType(T.VOID, [T.PTR] * 4), sym)
        a_ptr, io_ptr, len_ptr, _ = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        pt = PRIMITIVE_TYPES[t]
        st = T.storage_type(pt)
        count = b.sext(b.load(len_ptr, typ=i32), T.I64)
        with for_range(b, 0, count, name="i") as i:
            pa, pio = (b.gep(p, [i], source_etype=st) for p in (a_ptr, io_ptr))
            x = T.to_float(b, b.load(pa, typ=st), pt)
            y = T.to_float(b, b.load(pio, typ=st), pt)
            if op == "add":
                r = b.fadd(x, y)
            elif op == "multiply":
                r = b.fmul(x, y)
            else:   # NaN wins, as XLA's maximum/minimum
                r = b.select(b.fcmp_ordered(">" if op == "maximum" else "<", x, y), x, y)
                r = b.select(b.fcmp_unordered("uno", x, x), x, r)
            b.store(T.from_float(b, r, pt), pio)
        b.ret_void()
    return str(m)


@functools.lru_cache(maxsize=None)
def _loaded() -> LoadedObject:
    bits = _handle_bits()
    syms = tuple(f"xlapy_mpi_{n}" for n in WRAPPERS) + tuple(USER_OPS.values())
    return LoadedObject(cached_object(lambda: _build_ir(bits), f"mpi-h{bits}"),
                        symbols=syms, provides=syms)


def _register_wrappers() -> None:
    obj = _loaded()
    for n in WRAPPERS:
        llvm.add_symbol(f"xlapy_mpi_{n}", obj.address(f"xlapy_mpi_{n}"))


register_lazy([f"xlapy_mpi_{n}" for n in WRAPPERS], _register_wrappers)


# ---- MPI from Python: communicators, handles, plans ---------------------------------------

_LAUNCHED = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


def launched_by_mpi() -> bool:
    return any(v in os.environ for v in _LAUNCHED)


@functools.lru_cache(maxsize=None)
def _mpi():
    """mpi4py's MPI module when this process is part of an MPI job, else None."""
    if not launched_by_mpi():
        return None
    try:
        from mpi4py import MPI  # optional dependency: imported only under an MPI launcher
    except ImportError as e:
        raise XlapyError("this process was started by an MPI launcher, but collectives "
                         "need mpi4py: pip install 'xlapy[distributed]' "
                         f"({e})") from None
    return MPI


@functools.lru_cache(maxsize=None)
def _libmpi():
    MPI = _mpi()
    libs = sorted({line.split()[-1] for line in open("/proc/self/maps")
                   if "libmpi" in line and line.split()[-1].startswith("/")})
    for path in libs:
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL)
            lib.MPI_Allreduce  # noqa: B018  (the one that defines MPI's functions)
            return lib
        except (OSError, AttributeError):
            continue
    raise XlapyError(f"MPI ({MPI.Get_library_version().splitlines()[0]}): could not find "
                     "the loaded MPI library's functions for compiled collectives; run on "
                     "the interpreter (--backend interpreter / backend='interpreter')")


def _fn_address(name: str) -> int:
    return ctypes.cast(getattr(_libmpi(), name), ctypes.c_void_p).value


_comms: dict = {}
_user_ops: dict = {}
_lock = threading.Lock()
plans_lock = threading.Lock()   # held by an executable filling its plans (executable.py)


def _world_dup():
    if "world" not in _comms:
        with guarded("duplicating COMM_WORLD for the compiled collectives: not every rank "
                     "arrived"):
            _comms["world"] = _mpi().COMM_WORLD.Dup()
    return _comms["world"]


def _comm_for(groups: tuple):
    """The communicator of this process's group among `groups` (every rank's group, in
    group order): one MPI_Comm_split per distinct set of groups."""
    world = _world_dup()
    if groups == (tuple(range(world.size)),):
        return world
    if groups not in _comms:
        rank = world.rank
        color = next(i for i, g in enumerate(groups) if rank in g)
        with guarded(f"splitting the processes into groups {list(map(list, groups))}: not "
                     "every rank arrived"):
            _comms[groups] = world.Split(color, groups[color].index(rank))
    return _comms[groups]


def _user_op(op: str, dtype: str) -> int:
    if (op, dtype) not in _user_ops:
        addr = _loaded().address(USER_OPS[op, dtype])
        MPI = _mpi()
        handle = ctypes.c_uint64(0) if MPI._sizeof(MPI.Op) == 8 else ctypes.c_uint32(0)
        rc = _libmpi().MPI_Op_create(ctypes.c_void_p(addr), ctypes.c_int(1),
                                     ctypes.byref(handle))
        if rc != 0:
            raise XlapyError(f"MPI_Op_create for {op} on {dtype} failed (error {rc})")
        _user_ops[op, dtype] = handle.value
    return _user_ops[op, dtype]


class _Shim:
    """What ReplicaContext.participants reads of an instruction, from a descriptor."""

    def __init__(self, d: dict):
        self.opcode, self.name, self.attrs = d["opcode"], d["name"], {}
        if d.get("groups") is not None:
            self.attrs["replica_groups"] = _Groups(d["groups"])
        if d.get("channel"):
            self.attrs["channel_id"] = 1
        if d.get("global_ids"):
            self.attrs["use_global_device_ids"] = True

    def where(self) -> str:
        return ""


class _Groups:
    def __init__(self, groups):
        self.groups = [list(g) for g in groups]


def plan_words(d: dict, rank: int, size: int) -> list[int]:
    """The plan of descriptor `d` for process `rank` of `size` (see the module docstring)."""
    w = [0] * PLAN_WORDS
    w[REPLICA] = rank
    op = d["opcode"]
    try:
        if op == "collective-permute":
            n = 1 if d.get("channel") else size
            me = 0 if d.get("channel") else rank
            bad = sorted(i for p in d["pairs"] for i in p if i >= n)
            if bad:
                raise XlapyError(f"{d['name']}: id(s) {bad} in source_target_pairs, but "
                                 f"there are {n}")
            to = next((t for s, t in d["pairs"] if s == me), None)
            frm = next((s for s, t in d["pairs"] if t == me), None)
            w[SIZE], w[HAS_SOURCE] = n, int(frm is not None)
            w[INDEX] = me
            w[PEER_TO], w[PEER_FROM] = (-1 if to is None else to), (-1 if frm is None else frm)
            return w
        if op in ("replica-id", "partition-id"):
            w[SIZE] = 1
            return w
        # (imported here: a process that runs no collective skips the evaluator's import)
        from xlapy.hlo.evaluator import ReplicaContext
        shim = _Shim(d)
        mine = ReplicaContext(rank, 0, size, 1).participants(shim)
        groups = sorted({tuple(ReplicaContext(r, 0, size, 1).participants(shim))
                         for r in range(size)})
    except EvaluationError as e:
        raise XlapyError(str(e)) from None
    w[SIZE], w[INDEX] = len(mine), mine.index(rank)
    if d.get("expect") is not None and d["expect"] != len(mine):
        raise XlapyError(f"{d['name']}: {op} compiled for groups of {d['expect']} processes, "
                         f"but its group here has {len(mine)}")
    if d.get("split") is not None and d["split"] % len(mine):
        raise XlapyError(f"{d['name']}: dimension of size {d['split']} is not divisible by "
                         f"{len(mine)} processes")
    d["_groups"] = tuple(groups)
    return w


def _attach_mpi(d: dict, w: list[int]) -> None:
    """Fill the MPI handles of plan `w` (a plan whose group has more than one process)."""
    MPI = _mpi()
    op = d["opcode"]
    if op == "collective-permute":
        comm = _world_dup()
        w[PEER_TO] = MPI.PROC_NULL if w[PEER_TO] < 0 else w[PEER_TO]
        w[PEER_FROM] = MPI.PROC_NULL if w[PEER_FROM] < 0 else w[PEER_FROM]
    else:
        comm = _comm_for(d["_groups"])
    w[COMM] = MPI._handleof(comm)
    kind = {"all-reduce": "allreduce", "all-gather": "allgather",
            "reduce-scatter": "reduce_scatter", "all-to-all": "alltoall",
            "collective-permute": "sendrecv"}[op]
    w[FN] = _fn_address(_MPI_FN[kind])
    w[IN_PLACE] = int(MPI.IN_PLACE)
    if kind in ("allreduce", "reduce_scatter"):
        red, t = d["reducer"], d["dtype"]
        if (red, t) in USER_OPS:
            w[OP] = _user_op(red, t)
            w[DTYPE] = MPI._handleof(MPI.UINT16_T if t in ("bf16", "f16") else
                                     getattr(MPI, _NATIVE_TYPES[t]))
        else:
            native = _NATIVE_OPS.get(red)
            if red in ("and", "or"):
                native = ("LAND" if red == "and" else "LOR") if t == "pred" else \
                         ("BAND" if red == "and" else "BOR")
            w[OP] = MPI._handleof(getattr(MPI, native))
            w[DTYPE] = MPI._handleof(getattr(MPI, _NATIVE_TYPES[t]))
    else:
        w[DTYPE] = MPI._handleof(MPI.BYTE)
    for i, v in enumerate(w):   # handles are addresses or ints; the plan holds i64 bits
        w[i] = v - (1 << 64) if v >= 1 << 63 else v


def fill_plans(descriptors: list, addresses: list[int], fingerprint: str) -> None:
    """Fill the plans of a program's collectives (addresses of their globals) for this
    process, after checking that every process runs the same program."""
    MPI = _mpi()
    rank, size = (MPI.COMM_WORLD.rank, MPI.COMM_WORLD.size) if MPI is not None else (0, 1)
    with _lock:
        if MPI is not None and size > 1:
            _same_program(fingerprint)
        for d, addr in zip(descriptors, addresses):
            d = dict(d)
            w = plan_words(d, rank, size)
            if w[SIZE] > 1:
                _attach_mpi(d, w)
                watch()
                names[addr] = f"{d['opcode']} {d['name']}"
            (ctypes.c_int64 * PLAN_WORDS).from_address(addr)[:] = w


def descriptor_fingerprint(name: str, text: str) -> str:
    """How processes name a compiled program to each other: the module's name and a hash
    of its optimized HLO."""
    return f"{name} #{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def _same_program(fingerprint: str) -> None:
    world = _mpi().COMM_WORLD
    with guarded(f"before the first run of compiled program {fingerprint}: not every rank "
                 f"of {world.size} arrived"):
        prints = world.allgather(fingerprint)
    for r, f in enumerate(prints):
        if f != fingerprint:
            raise XlapyError(f"rank {world.rank} runs compiled program {fingerprint} but rank "
                             f"{r} runs {f}: the processes run different programs or shapes "
                             "(the fingerprint is a hash of the optimized HLO)")
