"""The collectives on the cpu: calls into the MPI runtime (runtime/collectives.py) on the
program's own buffers.

  all-reduce          MPI_Allreduce(operand, result): no copy; MPI_IN_PLACE when the
                      result takes the operand's buffer (passes/inplace.py)
  all-gather dim d    MPI_Allgather straight into the result when the dims before d are all 1,
                      else into a temporary, then blocks copied into place
  reduce-scatter d    MPI_Reduce_scatter_block from the operand (blocks first packed by
                      member when the dims before d are not all 1)
  all-to-all          blocks packed by member, MPI_Alltoall, unpacked along the concat dim
                      (the tuple form: operands packed in order, one block per member)
  collective-permute  MPI_Sendrecv (zeros where no process sends here)
  replica-id          the process's rank, partition-id 0 (one partition per process)

Each instruction gets a plan (an external global of i64 words, runtime/collectives.py lists
them) that the executable fills before the first run, and a descriptor (its groups, pairs,
reducer, type) stored with the compiled program for that. A plan whose group is one process
(no MPI job) makes the code copy: the identity semantics of one replica. Arrays not in the
default (row-major) layout pass through a row-major temporary. The reducer must be add,
multiply, maximum or minimum (and/or on pred and integers); anything else is a
LoweringError naming it.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.cpu.emitters.routine import Scratch, copy_array, memcpy, routine_function
from xlapy.backends.cpu.runtime import collectives as rt
from xlapy.backends.cpu.target import self_contained
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import lowering_error
from xlapy.backends.llvm.loops import c64, for_range
from xlapy.hlo.reducers import simple_reducer
from xlapy.hlo.shapes import Shape

_INT_MAX = (1 << 31) - 1


def _leaves(tree) -> list:
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    return [tree]


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _declare(module: ir.Module, name: str) -> ir.Function:
    fn = module.globals.get(name)
    return fn if fn is not None else ir.Function(
        module, ir.FunctionType(T.VOID, [T.PTR, T.PTR, T.PTR, T.I64]), name)


def _descriptor(instr, expect=None, leaf: int = 0) -> dict:
    a = instr.attrs
    rg = a.get("replica_groups")
    st = a.get("source_target_pairs")
    d = {"opcode": instr.opcode, "name": instr.name,
         "groups": [list(g) for g in rg.groups] if rg is not None and rg.groups else None,
         "channel": "channel_id" in a, "global_ids": bool(a.get("use_global_device_ids")),
         "pairs": [list(p) for p in st.groups] if st is not None else None,
         "expect": expect}
    if instr.opcode == "all-to-all" and "dimensions" in a:
        d["split"] = instr.operands[0].shape.dims[a["dimensions"][0]]
    if "to_apply" in a:
        leaf = instr.operands[leaf].shape
        d["reducer"] = simple_reducer(a["to_apply"])
        d["dtype"] = leaf.element_type.name
    return d


def _plan(pe, instr, expect=None, leaf: int = 0):
    me = pe.me
    descs = me.__dict__.setdefault("collectives", [])
    ty = ir.ArrayType(T.I64, rt.PLAN_WORDS)
    g = ir.GlobalVariable(pe.llmod, ty, f"{rt.PLAN_PREFIX}{len(descs)}")
    g.initializer = ir.Constant(ty, [0] * rt.PLAN_WORDS)
    g.align = 8
    descs.append(_descriptor(instr, expect, leaf))
    return g


def _word(b, plan, k):
    return b.load(b.gep(plan, [c64(0), c64(k)]), typ=T.I64)


def _row_major(shape: Shape) -> Shape:
    return Shape.array(shape.element_type, shape.dims)


class _Arrays:
    """Row-major views of a routine's operands and results: temporaries where the layout is
    another, copied in at the start and out at the end."""

    def __init__(self, b):
        self.b, self.scratch, self.outs = b, [], []

    def input(self, ptr, shape: Shape):
        if shape.has_default_layout or shape.size <= 1:
            return ptr
        s = Scratch(self.b, shape.byte_size, "coll.in")
        self.scratch.append(s)
        copy_array(self.b, s.ptr, _row_major(shape), ptr, shape)
        return s.ptr

    def output(self, ptr, shape: Shape):
        if shape.has_default_layout or shape.size <= 1:
            return ptr
        s = Scratch(self.b, shape.byte_size, "coll.out")
        self.scratch.append(s)
        self.outs.append((ptr, shape, s.ptr))
        return s.ptr

    def finish(self):
        for ptr, shape, tmp in self.outs:
            copy_array(self.b, ptr, shape, tmp, _row_major(shape))
        for s in self.scratch:
            s.release()


def _check_count(instr, n: int) -> None:
    if n > _INT_MAX:
        raise lowering_error(instr, f"{n} elements/bytes in one MPI call: more than MPI's "
                                    "int count allows")


def _malloc(b, n):
    fn = b.module.globals.get("malloc") or ir.Function(
        b.module, ir.FunctionType(T.PTR, [T.I64]), "malloc")
    return b.call(fn, [n])


def _free(b, p):
    fn = b.module.globals.get("free") or ir.Function(
        b.module, ir.FunctionType(T.VOID, [T.PTR]), "free")
    b.call(fn, [p])


def _call_distinct(b, wrapper, plan, src, dst, n, nbytes: int):
    """wrapper(plan, src, dst, n); through a heap copy of src when src is dst (MPI's send and
    receive buffers must not overlap)."""
    same = b.icmp_unsigned("==", b.ptrtoint(src, T.I64), b.ptrtoint(dst, T.I64))
    with b.if_else(same) as (aliased, distinct):
        with aliased:
            tmp = _malloc(b, c64(nbytes))
            memcpy(b, tmp, src, nbytes)
            b.call(wrapper, [plan, tmp, dst, n])
            _free(b, tmp)
        with distinct:
            b.call(wrapper, [plan, src, dst, n])


def _block_copy(b, dst, src, outer: list, dst_index, src_index, nbytes):
    """memcpy of nbytes for each index of the nest `outer` (i64 values or ints), at byte
    offsets dst_index(idx) * nbytes / src_index(idx) * nbytes."""
    def nest(k, idx):
        if k == len(outer):
            d = b.gep(dst, [b.mul(dst_index(idx), nbytes)], source_etype=T.I8)
            s = b.gep(src, [b.mul(src_index(idx), nbytes)], source_etype=T.I8)
            memcpy(b, d, s, nbytes)
            return
        n = outer[k] if isinstance(outer[k], ir.Value) else c64(outer[k])
        with for_range(b, 0, n, name=f"blk{k}") as i:
            nest(k + 1, idx + [i])
    nest(0, [])


@custom_emitter("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                "collective-permute", "replica-id", "partition-id")
def emit_collective(pe, instr, dest, operands) -> bool:
    op = instr.opcode
    if self_contained():
        raise lowering_error(instr, "self-contained (ahead-of-time) code has no MPI runtime: "
                                    "collectives run only in the JIT")
    ins = [o.shape for o in instr.operands]
    outs = instr.shape.leaves() if instr.shape.is_tuple else [instr.shape]
    srcs = [x for o in operands for x in _leaves(o)]
    if op == "partition-id":
        pe.b.store(ir.Constant(T.I32, 0), dest[0])
        return True
    expect = None
    if op in ("all-reduce", "reduce-scatter"):
        d = _descriptor(instr)
        for s in ins:
            if not rt.reduction_supported(d["reducer"], s.element_type.name):
                what = d["reducer"] or f"computation {instr.attrs['to_apply'].name}"
                raise lowering_error(instr, f"{op} with reducer {what} on "
                                            f"{s.element_type.name}: the cpu backend reduces "
                                            "with add, multiply, maximum, minimum (and/or on "
                                            "pred and integers) only; run it on the "
                                            "interpreter (backend='interpreter')")
    if op in ("all-gather", "reduce-scatter"):
        dim = instr.attrs["dimensions"][0]
        big, small = (outs[0], ins[0]) if op == "all-gather" else (ins[0], outs[0])
        expect = big.dims[dim] // small.dims[dim] if small.dims[dim] else None
    if op == "all-to-all" and "dimensions" not in instr.attrs:
        expect = len(ins)
    plan = _plan(pe, instr, expect)
    fn, b = routine_function(pe, f"{op}.{instr.name}", len(outs) + len(srcs))
    dsts, srcs_in = list(fn.args[:len(outs)]), list(fn.args[len(outs):])
    arrays = _Arrays(b)
    size = _word(b, plan, rt.SIZE)
    one = b.icmp_signed("<=", size, c64(1))
    if op == "replica-id":
        b.store(b.trunc(_word(b, plan, rt.REPLICA), T.I32), dsts[0])
    elif op == "collective-permute":
        _permute(b, plan, arrays, srcs_in[0], ins[0], dsts[0], outs[0], one, instr)
    elif op == "all-to-all" and "dimensions" not in instr.attrs:
        _all_to_all_tuple(b, plan, arrays, srcs_in, ins, dsts, outs, one, instr)
    else:
        for k in range(len(outs)):
            if k:   # (each operand its own plan: its own MPI datatype)
                plan = _plan(pe, instr, expect, k)
            src = arrays.input(srcs_in[k], ins[k])
            dst = arrays.output(dsts[k], outs[k])
            if outs[k].size == 0 or ins[k].size == 0:
                continue
            with b.if_else(one) as (local, remote):
                with local:
                    nb = outs[k].byte_size
                    same = b.icmp_unsigned("!=", b.ptrtoint(src, T.I64),
                                           b.ptrtoint(dst, T.I64))
                    with b.if_then(same):
                        memcpy(b, dst, src, nb)
                with remote:
                    {"all-reduce": _all_reduce, "all-gather": _all_gather,
                     "reduce-scatter": _reduce_scatter, "all-to-all": _all_to_all}[op](
                        b, plan, src, ins[k], dst, outs[k], instr)
    arrays.finish()
    b.ret_void()
    pe.b.call(fn, list(dest) + srcs)
    return True


def _all_reduce(b, plan, src, s_in, dst, s_out, instr):
    """MPI_Allreduce(operand, result), or MPI_IN_PLACE when the result has the operand's
    buffer (passes/inplace.py allows it)."""
    _check_count(instr, s_in.size)
    same = b.icmp_unsigned("==", b.ptrtoint(src, T.I64), b.ptrtoint(dst, T.I64))
    send = b.select(same, b.inttoptr(_word(b, plan, rt.IN_PLACE), T.PTR), src)
    b.call(_declare(b.module, "xlapy_mpi_allreduce"), [plan, send, dst, c64(s_in.size)])


def _all_gather(b, plan, src, s_in, dst, s_out, instr):
    d = instr.attrs["dimensions"][0]
    G = s_out.dims[d] // s_in.dims[d]
    pre = _prod(s_in.dims[:d])
    nbytes = s_in.byte_size
    _check_count(instr, nbytes)
    gather = _declare(b.module, "xlapy_mpi_allgather")
    if pre == 1:
        b.call(gather, [plan, src, dst, c64(nbytes)])
        return
    tmp = Scratch(b, s_out.byte_size, "allgather.tmp")
    b.call(gather, [plan, src, tmp.ptr, c64(nbytes)])
    blk = c64(nbytes // pre)   # out[p][g] = tmp[g][p]
    _block_copy(b, dst, tmp.ptr, [pre, G], lambda i: b.add(b.mul(i[0], c64(G)), i[1]),
                lambda i: b.add(b.mul(i[1], c64(pre)), i[0]), blk)
    tmp.release()


def _reduce_scatter(b, plan, src, s_in, dst, s_out, instr):
    d = instr.attrs["dimensions"][0]
    G = s_in.dims[d] // s_out.dims[d]
    pre = _prod(s_in.dims[:d])
    _check_count(instr, s_out.size)
    scatter = _declare(b.module, "xlapy_mpi_reduce_scatter")
    if pre == 1:
        _call_distinct(b, scatter, plan, src, dst, c64(s_out.size), s_in.byte_size)
        return
    tmp = Scratch(b, s_in.byte_size, "reducescatter.tmp")
    blk = c64(s_out.byte_size // pre)   # tmp[g][p] = src[p][g]
    _block_copy(b, tmp.ptr, src, [G, pre], lambda i: b.add(b.mul(i[0], c64(pre)), i[1]),
                lambda i: b.add(b.mul(i[1], c64(G)), i[0]), blk)
    b.call(scatter, [plan, tmp.ptr, dst, c64(s_out.size)])
    tmp.release()


def _all_to_all(b, plan, src, s_in, dst, s_out, instr):
    """The array form: split along dimension d into one block per member, blocks from the
    members concatenated along d (XLA's all-to-all with one dimension)."""
    sd = instr.attrs["dimensions"][0]
    _check_count(instr, s_in.byte_size)
    dims, es = s_in.dims, s_in.element_type.bits // 8
    G = _word(b, plan, rt.SIZE)
    pre, post = _prod(dims[:sd]), _prod(dims[sd + 1:])
    blk = b.mul(b.udiv(c64(dims[sd]), G), c64(post * es))   # one block: c = dims[d] / G
    send = Scratch(b, s_in.byte_size, "alltoall.send")
    recv = Scratch(b, s_in.byte_size, "alltoall.recv")
    # send[g][p] = src[p][g]; then out[p][g] = recv[g][p]
    _block_copy(b, send.ptr, src, [G, pre], lambda i: b.add(b.mul(i[0], c64(pre)), i[1]),
                lambda i: b.add(b.mul(i[1], G), i[0]), blk)
    b.call(_declare(b.module, "xlapy_mpi_alltoall"),
           [plan, send.ptr, recv.ptr, b.mul(blk, c64(pre))])
    _block_copy(b, dst, recv.ptr, [pre, G], lambda i: b.add(b.mul(i[0], G), i[1]),
                lambda i: b.add(b.mul(i[1], c64(pre)), i[0]), blk)
    send.release()
    recv.release()


def _all_to_all_tuple(b, plan, arrays, srcs, ins, dsts, outs, one, instr):
    nb = ins[0].byte_size
    k = len(ins)
    _check_count(instr, nb)
    srcs = [arrays.input(p, s) for p, s in zip(srcs, ins)]
    dsts = [arrays.output(p, s) for p, s in zip(dsts, outs)]
    if nb == 0:
        return
    with b.if_else(one) as (local, remote):
        with local:
            memcpy(b, dsts[0], srcs[0], nb)
        with remote:
            send = Scratch(b, nb * k, "alltoall.send")
            recv = Scratch(b, nb * k, "alltoall.recv")
            for j, p in enumerate(srcs):
                memcpy(b, b.gep(send.ptr, [c64(j * nb)], source_etype=T.I8), p, nb)
            b.call(_declare(b.module, "xlapy_mpi_alltoall"), [plan, send.ptr, recv.ptr, c64(nb)])
            for j, p in enumerate(dsts):
                memcpy(b, p, b.gep(recv.ptr, [c64(j * nb)], source_etype=T.I8), nb)
            send.release()
            recv.release()


def _permute(b, plan, arrays, src, s_in, dst, s_out, one, instr):
    src = arrays.input(src, s_in)
    dst = arrays.output(dst, s_out)
    nb = s_in.byte_size
    _check_count(instr, nb)
    if nb == 0:
        return
    has_source = b.icmp_signed("!=", _word(b, plan, rt.HAS_SOURCE), c64(0))
    zero = b.module.declare_intrinsic("llvm.memset", [T.PTR, T.I64])
    with b.if_else(one) as (local, remote):
        with local:
            with b.if_else(has_source) as (copy, zeros):
                with copy:
                    same = b.icmp_unsigned("!=", b.ptrtoint(src, T.I64),
                                           b.ptrtoint(dst, T.I64))
                    with b.if_then(same):
                        memcpy(b, dst, src, nb)
                with zeros:
                    b.call(zero, [dst, ir.Constant(T.I8, 0), c64(nb), ir.Constant(T.I1, 0)])
        with remote:   # (a rank nobody sends to receives from MPI_PROC_NULL: nothing)
            _call_distinct(b, _declare(b.module, "xlapy_mpi_sendrecv"), plan, src, dst,
                           c64(nb), nb)
            with b.if_then(b.not_(has_source)):
                b.call(zero, [dst, ir.Constant(T.I8, 0), c64(nb), ir.Constant(T.I1, 0)])
