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

A reduce whose inputs use another reduce of the same rows (softmax's sum of exp(x - max),
layernorm's variance around the mean) is computed in a later phase: the block first
reduces the one it needs, thread 0 broadcasts the value through shared memory, and the
fused code reads it at the row's index instead of recomputing the inner reduction for
every element (which made such a kernel quadratic in the row length).

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
from xlapy.backends.llvm.elemental import ArrayInput, ElementalEmitter, Gen
from xlapy.backends.llvm.elemental_data import if_else
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


def _compatible(r: Instruction, plan: RowReduction) -> bool:
    """Whether a reduce inside the fusion reduces the same rows as the root's reduces (so
    one block computes its value for its row)."""
    if r.opcode != "reduce" or tuple(sorted(r.attrs["dimensions"])) != plan.dims:
        return False
    first = plan.reduces[0]
    in_shape, out_shape = first.operands[0].shape, first.shape.leaves()[0]
    n = len(r.operands) // 2
    return all(op.shape.dims == in_shape.dims and
               op.shape.minor_to_major == in_shape.minor_to_major and
               op.shape.element_type.name not in ("f16", "bf16") for op in r.operands[:n]) \
        and all(leaf.dims == out_shape.dims for leaf in r.shape.leaves())


def reduction_phases(plan: RowReduction) -> list[list[Instruction]]:
    """The fusion's row reductions in the order a block computes them: a reduce whose
    inputs use another reduce's value (softmax's sum of exp(x - max), layernorm's
    variance) comes in a later phase, after the block has that value."""
    level: dict[int, int] = {}
    order = []
    for instr in plan.comp.post_order():
        deps = [level[id(o)] for o in instr.operands if id(o) in level]
        if instr.opcode == "reduce" and _compatible(instr, plan):
            level[id(instr)] = 1 + max(deps, default=-1)
            order.append(instr)
        elif deps:
            level[id(instr)] = max(deps)      # (carries the reduces it depends on)
    phases: list[list[Instruction]] = [[] for _ in range(1 + max(level[id(r)] for r in order))]
    for r in order:
        phases[level[id(r)]].append(r)
    return phases


def _same_index(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if isinstance(x, ir.Constant) and isinstance(y, ir.Constant) and \
                x.type == y.type and x.constant == y.constant:
            continue
        return False
    return True


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
    is_first = b.icmp_unsigned("==", tid32, ir.Constant(I32, 0))

    def combine(r, slots, values):
        with em.scope():
            cur = [b.load(s) for s in slots]
            res = em.call_scalar(r.attrs["to_apply"], cur + values)
            res = list(res) if isinstance(res, tuple) else [res]
            for s, v in zip(slots, res):
                b.store(v, s)

    def shared_array(ty, n: int):
        t = ir.ArrayType(ty, n)
        g = ir.GlobalVariable(module, t, module.get_unique_name(f"{name}.smem"), addrspace=3)
        g.linkage = "internal"
        g.initializer = ir.Constant(t, ir.Undefined)
        g.align = 8
        return g

    def at(g, i):
        return b.gep(g, [ir.Constant(I32, 0), i], inbounds=True)

    def block_reduce(reduces, gens) -> dict:
        """Every thread's share of the rows' elements, then warp shuffles, then the warps'
        results through shared memory: thread 0 holds each reduce's value in its slots."""
        accs = {}   # id(reduce) -> one slot per value (variadic reduces have several)
        for r in reduces:
            n = len(r.operands) // 2
            slots = []
            for g in (gens[id(op)] for op in r.operands[n:]):
                with em.scope():
                    v = g([])
                s = em.alloca(v.type)
                b.store(v, s)
                slots.append(s)
            accs[id(r)] = slots
        with for_range(b, tid, plan.row_length, step=threads, name="k") as k:
            with em.scope():
                ridx = row_major_index_of(b, [in_shape.dims[d] for d in red_phys], k)
                full = merge_index(in_shape.rank, (keep, out_index), (red_phys, ridx))
                for r in reduces:
                    n = len(r.operands) // 2
                    combine(r, accs[id(r)], [gens[id(op)](full) for op in r.operands[:n]])

        def warp_reduce():
            for delta in (16, 8, 4, 2, 1):
                for r in reduces:
                    slots = accs[id(r)]
                    combine(r, slots, [shfl_down(b, b.load(s), delta) for s in slots])

        warp_reduce()
        if warps > 1:
            shared = {id(r): [shared_array(s.allocated_type, warps) for s in accs[id(r)]]
                      for r in reduces}
            with b.if_then(b.icmp_unsigned("==", lane, ir.Constant(I32, 0))):
                for r in reduces:
                    for s, g in zip(accs[id(r)], shared[id(r)]):
                        b.store(b.load(s), at(g, warp))
            barrier(b)
            with b.if_then(b.icmp_unsigned("==", warp, ir.Constant(I32, 0))):
                in_range = b.icmp_unsigned("<", lane, ir.Constant(I32, warps))
                for r in reduces:
                    n = len(r.operands) // 2
                    for s, g, init in zip(accs[id(r)], shared[id(r)], r.operands[n:]):
                        with em.scope():
                            iv = gens[id(init)]([])
                        idx = b.select(in_range, lane, ir.Constant(I32, 0))
                        b.store(b.select(in_range, b.load(at(g, idx)), iv), s)
                warp_reduce()
        return accs

    def broadcast(reduces, accs) -> None:
        """Thread 0's values to every thread of the block (through shared memory)."""
        bcast = {id(r): [shared_array(s.allocated_type, 1) for s in accs[id(r)]]
                 for r in reduces}
        zero = ir.Constant(I32, 0)
        with b.if_then(is_first):
            for r in reduces:
                for s, g in zip(accs[id(r)], bcast[id(r)]):
                    b.store(b.load(s), at(g, zero))
        barrier(b)
        for r in reduces:
            for s, g in zip(accs[id(r)], bcast[id(r)]):
                b.store(b.load(at(g, zero)), s)

    def known(r, slots, fallback):
        """r's generator once the block has r's value for its row: that value at the row's
        own index (the index the fused code asks for after a broadcast: the same IR
        values, or equal ones at run time), computed anew at any other index."""
        def value():
            values = tuple(b.load(s) for s in slots)
            return values if r.shape.is_tuple else values[0]

        def gen(index):
            index = list(index)
            if _same_index(index, out_index):
                return value()
            if r.shape.is_tuple or len(index) != len(out_index) or \
                    any(i.type != o.type for i, o in zip(index, out_index)):
                return fallback(index)
            same = None
            for i, o in zip(index, out_index):
                eq = b.icmp_unsigned("==", i, o)
                same = eq if same is None else b.and_(same, eq)
            if same is None:
                return value()
            return if_else(em, same, "row", value, lambda: fallback(index))
        return Gen(gen, r.shape)

    # phase by phase: a reduce whose inputs use another's value comes after it
    overrides: dict = {}
    values: dict = {}
    phases = reduction_phases(plan)
    for k, reduces in enumerate(phases):
        gens = em.generators(plan.comp, param_gens, overrides)
        accs = block_reduce(reduces, gens)
        values.update(accs)
        if k + 1 < len(phases):
            broadcast(reduces, accs)
            for r in reduces:
                overrides[id(r)] = known(r, accs[id(r)], gens[id(r)])

    with b.if_then(is_first):
        o = 0
        for r in plan.reduces:
            for s, leaf in zip(values[id(r)], r.shape.leaves()):
                t = leaf.element_type
                addr = b.gep(outs[o], [row], inbounds=True, source_etype=T.storage_type(t))
                T.store(b, b.load(s), addr, t)
                o += 1
    b.ret_void()
    return fn
