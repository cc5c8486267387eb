"""Row reductions on the gpu: one block per output element (row), warp shuffles and shared
memory (addrspace 3) to combine the threads' partial results.

A fusion (or a lone reduce) qualifies when its root is a reduce, or a tuple of reduces
(multi-output), over the same operand dimensions and the same reduced dimensions, and those
dimensions are the operand's minor-most in its layout (each row is contiguous), with
element types that reduce in their own type (f32, f64, integers, pred; f16/bf16 sums widen
to f32 and go to the loop kernel's reduction). Other reductions (column reductions
included: one thread per output element walks its column, adjacent threads read adjacent
addresses) are loop kernels.

  thread t of block r:  acc = init; for k = t; k < R; k += T: acc = f(acc, input(r, k))
  warp:                 acc = f(acc, shfl.down(acc, 16 .. 1))
  block:                lane 0 of warp w writes smem[w]; barrier; warp 0 reduces smem
  thread 0:             writes the row's outputs

As XLA documents for reduce, the init value may be combined more than once (it is an
identity of the reducer in practice) and the order of combination is unspecified.
"""

from __future__ import annotations

from typing import NamedTuple

from llvmlite import ir

from xlapy.backends.gpu.emitters.kernel_abi import I32, libdevice_math, new_kernel, sreg
from xlapy.backends.gpu.emitters.launch import LaunchDims, row_launch, row_threads
from xlapy.backends.gpu.target import WARP_SIZE
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ArrayInput, ElementalEmitter
from xlapy.backends.llvm.loops import for_range, index_of, merge_index, row_major_index_of
from xlapy.hlo.ir import Computation, Instruction

FULL_MASK = 0xFFFFFFFF


class RowReduction(NamedTuple):
    comp: Computation
    reduces: list          # the root's reduce instructions, in output order
    rows: int
    row_length: int
    dims: tuple            # reduced dimensions of the operands

    @property
    def launch(self) -> LaunchDims:
        return row_launch(self.rows, self.row_length)


def _computation_of(instr: Instruction) -> Computation | None:
    if instr.opcode == "fusion":
        return instr.fused_computation
    if instr.opcode == "reduce":
        comp = Computation(f"{instr.name}.alone")
        params = [comp.add_instruction(Instruction("parameter", op.shape, parameter_number=k,
                                                   name=f"p{k}"))
                  for k, op in enumerate(instr.operands)]
        comp.root = comp.add_instruction(Instruction("reduce", instr.shape, params,
                                                     instr.attrs, instr.name))
        return comp
    return None


def row_reduction_plan(instr: Instruction) -> RowReduction | None:
    comp = _computation_of(instr)
    if comp is None:
        return None
    root = comp.root
    reduces = list(root.operands) if root.opcode == "tuple" else [root]
    if not reduces or any(r.opcode != "reduce" for r in reduces):
        return None
    first = reduces[0]
    in_shape = first.operands[0].shape
    dims = tuple(sorted(first.attrs["dimensions"]))
    if not dims or in_shape.rank == 0:
        return None
    for r in reduces:
        n = len(r.operands) // 2
        for op in r.operands[:n]:
            s = op.shape
            if s.dims != in_shape.dims or s.minor_to_major != in_shape.minor_to_major:
                return None
            if s.element_type.name in ("f16", "bf16"):
                return None
        if tuple(sorted(r.attrs["dimensions"])) != dims:
            return None
        for leaf in r.shape.leaves():
            if leaf.minor_to_major != reduces[0].shape.leaves()[0].minor_to_major:
                return None
    if set(in_shape.minor_to_major[:len(dims)]) != set(dims):
        return None  # the rows are not contiguous: a column-like reduction
    row_length = 1
    for d in dims:
        row_length *= in_shape.dims[d]
    rows = in_shape.size // row_length if row_length else 0
    if row_length < WARP_SIZE or rows == 0:
        return None  # short rows: one thread per output element is better
    return RowReduction(comp, reduces, rows, row_length, dims)


def _to_words(b: ir.IRBuilder, v: ir.Value) -> list:
    """A scalar as i32 words (for shuffles)."""
    t = v.type
    if isinstance(t, ir.FloatType):
        return [b.bitcast(v, I32)]
    if isinstance(t, ir.DoubleType):
        v = b.bitcast(v, T.I64)
        t = T.I64
    if isinstance(t, ir.HalfType):
        return [b.zext(b.bitcast(v, ir.IntType(16)), I32)]
    if t.width < 32:
        return [b.zext(v, I32)]
    if t.width == 32:
        return [v]
    lo = b.trunc(v, I32)
    hi = b.trunc(b.lshr(v, ir.Constant(t, 32)), I32)
    return [lo, hi]


def _from_words(b: ir.IRBuilder, words: list, t: ir.Type) -> ir.Value:
    if isinstance(t, ir.FloatType):
        return b.bitcast(words[0], t)
    if isinstance(t, ir.HalfType):
        return b.bitcast(b.trunc(words[0], ir.IntType(16)), t)
    if isinstance(t, ir.DoubleType):
        return b.bitcast(_from_words(b, words, T.I64), t)
    if t.width < 32:
        return b.trunc(words[0], t)
    if t.width == 32:
        return words[0]
    lo = b.zext(words[0], t)
    hi = b.shl(b.zext(words[1], t), ir.Constant(t, 32))
    return b.or_(lo, hi)


def shfl_down(b: ir.IRBuilder, v: ir.Value, delta: int) -> ir.Value:
    module = b.module
    fn = module.globals.get("llvm.nvvm.shfl.sync.down.i32")
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(I32, [I32] * 4), "llvm.nvvm.shfl.sync.down.i32")
    words = [b.call(fn, [ir.Constant(I32, FULL_MASK), w, ir.Constant(I32, delta),
                         ir.Constant(I32, WARP_SIZE - 1)]) for w in _to_words(b, v)]
    return _from_words(b, words, v.type)


def barrier(b: ir.IRBuilder) -> None:
    module = b.module
    name = "llvm.nvvm.barrier0"
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(T.VOID, []), name)
        fn.attributes.add("convergent")
    b.call(fn, [])


def emit_row_reduction(module: ir.Module, instr: Instruction, plan: RowReduction, name: str,
                       use_libdevice: bool = True) -> ir.Function:
    out_shapes = instr.shape.leaves()
    in_shapes = [leaf for op in instr.operands for leaf in op.shape.leaves()]
    fn, b = new_kernel(module, name, len(out_shapes) + len(in_shapes))
    outs, ins = fn.args[:len(out_shapes)], fn.args[len(out_shapes):]
    em = ElementalEmitter(b, module, math=libdevice_math if use_libdevice else None)
    it = iter(ins)
    param_gens = []
    for op in instr.operands:
        assert not op.shape.is_tuple, "fusion parameters are arrays"
        param_gens.append(ArrayInput(em, next(it), op.shape))
    gens = em.generators(plan.comp, param_gens)

    first = plan.reduces[0]
    in_shape = first.operands[0].shape
    out_shape = first.shape.leaves()[0]
    dims = plan.dims
    keep = [d for d in range(in_shape.rank) if d not in dims]
    red_phys = [d for d in reversed(in_shape.minor_to_major) if d in dims]  # major -> minor
    threads = row_threads(plan.row_length)
    warps = threads // WARP_SIZE

    row = b.zext(sreg(b, "ctaid.x"), T.I64)
    tid32 = sreg(b, "tid.x")
    tid = b.zext(tid32, T.I64)
    lane = b.and_(tid32, ir.Constant(I32, WARP_SIZE - 1))
    warp = b.lshr(tid32, ir.Constant(I32, 5))
    out_index = index_of(b, out_shape, row)

    # accumulators: one slot per value of each reduce (variadic reduces have several)
    accs = []   # per reduce: list of slots
    for r in plan.reduces:
        n = len(r.operands) // 2
        slots = []
        for g in (gens[id(op)] for op in r.operands[n:]):
            with em.scope():
                v = g([])
            s = em.alloca(v.type)
            b.store(v, s)
            slots.append(s)
        accs.append(slots)

    def combine(r, slots, values):
        with em.scope():
            cur = [b.load(s) for s in slots]
            res = em.call_scalar(r.attrs["to_apply"], cur + values)
            res = list(res) if isinstance(res, tuple) else [res]
            for s, v in zip(slots, res):
                b.store(v, s)

    # strided loop over the row
    with for_range(b, tid, plan.row_length, step=threads, name="k") as k:
        with em.scope():
            ridx = row_major_index_of(b, [in_shape.dims[d] for d in red_phys], k)
            full = merge_index(in_shape.rank, (keep, out_index), (red_phys, ridx))
            for r, slots in zip(plan.reduces, accs):
                n = len(r.operands) // 2
                values = [gens[id(op)](full) for op in r.operands[:n]]
                combine(r, slots, values)

    def warp_reduce():
        for delta in (16, 8, 4, 2, 1):
            for r, slots in zip(plan.reduces, accs):
                others = [shfl_down(b, b.load(s), delta) for s in slots]
                combine(r, slots, others)

    warp_reduce()
    if warps > 1:
        shared = []
        for slots in accs:
            row_sh = []
            for s in slots:
                ty = ir.ArrayType(s.allocated_type, warps)
                g = ir.GlobalVariable(module, ty, module.get_unique_name(f"{name}.smem"),
                                      addrspace=3)
                g.linkage = "internal"
                g.initializer = ir.Constant(ty, ir.Undefined)
                g.align = 8
                row_sh.append(g)
            shared.append(row_sh)
        with b.if_then(b.icmp_unsigned("==", lane, ir.Constant(I32, 0))):
            for slots, gs in zip(accs, shared):
                for s, g in zip(slots, gs):
                    b.store(b.load(s), b.gep(g, [ir.Constant(I32, 0), warp], inbounds=True))
        barrier(b)
        with b.if_then(b.icmp_unsigned("==", warp, ir.Constant(I32, 0))):
            in_range = b.icmp_unsigned("<", lane, ir.Constant(I32, warps))
            for r, slots, gs in zip(plan.reduces, accs, shared):
                n = len(r.operands) // 2
                for s, g, init in zip(slots, gs, r.operands[n:]):
                    with em.scope():
                        iv = gens[id(init)]([])
                    idx = b.select(in_range, lane, ir.Constant(I32, 0))
                    v = b.load(b.gep(g, [ir.Constant(I32, 0), idx], inbounds=True))
                    b.store(b.select(in_range, v, iv), s)
            warp_reduce()
    with b.if_then(b.icmp_unsigned("==", tid32, ir.Constant(I32, 0))):
        o = 0
        for r, slots in zip(plan.reduces, accs):
            for s, leaf in zip(slots, r.shape.leaves()):
                t = leaf.element_type
                addr = b.gep(outs[o], [row], inbounds=True, source_etype=T.storage_type(t))
                T.store(b, b.load(s), addr, t)
                o += 1
    b.ret_void()
    return fn
