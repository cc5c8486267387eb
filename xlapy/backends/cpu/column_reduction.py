"""Column reductions: a reduce that keeps only the input's minor (contiguous) dimension,
e.g. [R, C] -> [C] (every bias gradient), possibly followed by an elementwise epilogue in
the same fusion (the bias update).

The elemental form computes each output element with its own strided inner loop over the
rows. This kernel instead walks the rows outermost and a block of columns innermost,
accumulating into a small stack array: the inner loop reads contiguous memory and has no
dependence between iterations, so it vectorizes. Then the epilogue runs per column, with
the reduction's generator replaced by a read of the accumulator. Column blocks are the
parallel dimension. Summation order per column is the rows' order (sequential), as in the
elemental form; f16/bf16 sums accumulate in f32, like everywhere else.

Multi-output form (passes/column_fusion.py): the fusion's root may be a tuple holding the
reduction's output and elementwise outputs with the reduction input's dimensions (a
gradient and its bias gradient). Those are computed and stored inside the row loop, at the
element the reduction reads, so the shared inputs are read from memory once.
"""

from __future__ import annotations

from typing import NamedTuple

from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ArrayInput, ElementalEmitter, Gen, TupleGen
from xlapy.backends.llvm.elemental_reduce import simple_reducer
from xlapy.backends.llvm.loops import c64, for_range, linear_of
from xlapy.hlo.ir import Instruction, operand_closure
from xlapy.hlo.opcodes import ELEMENTWISE

BLOCK = 256       # columns per block (the accumulator: BLOCK elements on the stack) ...
WIDE_BLOCK = 512  # ... or this many from 2 * WIDE_BLOCK columns on: each thread then reads
                  # longer contiguous runs of every row (the MLP step's merged bias-gradient
                  # kernels, 256x1024, in benchmarks/mlp_breakdown.py's profile: 0.26 ms with
                  # 256-column blocks, 0.18 ms with 512)


def block_size(columns: int) -> int:
    return WIDE_BLOCK if columns >= 2 * WIDE_BLOCK else BLOCK


MIN_COLUMNS = 16


class ColumnPlan(NamedTuple):
    red: Instruction            # the reduce
    blocks: int                 # blocks of columns (the parallel dimension)
    column_root: Instruction    # the root element holding the reduction (its epilogue)
    elements: list              # the root's elements (the root itself when not a tuple)


def column_plan(instr: Instruction) -> ColumnPlan | None:
    """The plan if instr is a column reduction kernel, else None."""
    comp = instr.fused_computation if instr.opcode == "fusion" else None
    if comp is None:
        return None
    reduces = [i for i in comp.instructions if i.opcode == "reduce"]
    if len(reduces) != 1:
        return None
    red = reduces[0]
    if len(red.operands) != 2 or simple_reducer(red.attrs["to_apply"]) is None:
        return None
    x = red.operands[0].shape
    dims = set(red.attrs["dimensions"])
    kept = [d for d in range(x.rank) if d not in dims]
    if len(kept) != 1 or kept[0] != x.minor_to_major[0]:
        return None
    if x.dims[kept[0]] < MIN_COLUMNS or x.size // max(x.dims[kept[0]], 1) < 2:
        return None
    split = split_outputs(comp, red)
    if split is None:
        return None
    column_root, _ = split
    # every other instruction must be elementwise at the output's index (an epilogue), or
    # feed the reduction or an output of the input's dimensions
    feeding = _feeders(red)
    for e in split[1]:
        feeding |= _feeders(e) | {id(e)}
    for i in comp.instructions:
        if i is red or i.opcode in ("parameter", "constant", "tuple") or id(i) in feeding:
            continue
        if i.shape.dims != column_root.shape.dims and i.opcode != "broadcast":
            return None
    blocks = -(-x.dims[kept[0]] // block_size(x.dims[kept[0]]))
    return ColumnPlan(red, blocks, column_root, comp.root_elements())


def split_outputs(comp, red: Instruction):
    """(the root element holding the reduction, [root elements with the reduction input's
    dimensions and layout, which must not depend on the reduction]) or None."""
    x = red.operands[0].shape
    column, full = [], []
    for e in comp.root_elements():
        if e.shape.is_tuple:
            return None
        if e is red or id(red) in _feeders(e):
            column.append(e)
        elif e.shape.dims == x.dims and e.shape.minor_to_major == x.minor_to_major:
            full.append(e)
        else:
            return None
    if len(column) != 1 or column[0].shape.dims != red.shape.dims:
        return None
    return column[0], full


def _feeders(x: Instruction) -> set:
    """ids of the instructions x depends on (not x itself)."""
    return {id(i) for i in operand_closure(x) if i is not x}


def overwritable_operands(instr: Instruction, element: int | None = None) -> list[int]:
    """Operands whose buffer the column output (root element `element` of a multi-output
    kernel) may be written into, for donation: arrays of the column output's shape that
    the fused computation reads only at the output's own column, either in the epilogue
    (elementwise on column-shaped values, up to the column output) or broadcast along the
    rows. A block of columns reads those columns in its row loop and epilogue before the
    epilogue writes them, and no other block touches them. (A bias b read as b + x and
    updated as b - lr * sum(g): the bias update can go where b was.)"""
    from xlapy.backends.cpu.inplace import _same_buffer_shape
    plan = column_plan(instr)
    if plan is None:
        return []
    red, column_root = plan.red, plan.column_root
    comp = instr.fused_computation
    if element is not None and plan.elements[element] is not column_root:
        return []
    x = red.operands[0].shape
    row_broadcast = [x.minor_to_major[0]]
    cols = column_root.shape

    def per_column(v) -> bool:
        for u in v.users:
            if u is comp.root and u.opcode == "tuple":
                if v is not column_root:
                    return False
            elif u.opcode == "broadcast" and list(u.attrs.get("dimensions", ())) == \
                    row_broadcast and u.shape.dims == x.dims:
                continue
            elif u.opcode in ELEMENTWISE and u.shape.dims == cols.dims and u is not red:
                if not per_column(u):
                    return False
            else:
                return False
        return True

    params = {p.parameter_number: p for p in comp.parameters}
    return [k for k, o in enumerate(instr.operands)
            if k in params and _same_buffer_shape(o.shape, cols) and per_column(params[k])]


def emit_column_kernel(module: ir.Module, instr: Instruction, name: str, parallel: bool,
                       shared_inputs: frozenset = frozenset()):
    """shared_inputs: input leaf indices that live in the column output's buffer (a donated
    bias, see overwritable_operands); the kernel reads them through that output pointer."""
    from xlapy.backends.cpu.kernels import Kernel, parallel_wrapper, set_vector_width
    red, blocks, column_root, root_elems = column_plan(instr)
    comp = instr.fused_computation
    n_out = len(root_elems)
    in_shapes = [leaf for op in instr.operands for leaf in op.shape.leaves()]
    fty = ir.FunctionType(T.VOID, [T.PTR] * (n_out + len(in_shapes)) + [T.I64, T.I64])
    fn = ir.Function(module, fty, name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    for a in fn.args[:-2]:
        a.add_attribute("noalias")
    out = fn.args[root_elems.index(column_root)]
    out_shape = column_root.shape
    start, end = fn.args[-2], fn.args[-1]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    em = ElementalEmitter(b, module)
    it = iter(enumerate(fn.args[n_out:-2]))

    def gen_for(shape):
        if shape.is_tuple:
            return TupleGen([gen_for(s) for s in shape.tuple_shapes], shape)
        k, arg = next(it)
        return ArrayInput(em, out if k in shared_inputs else arg, shape)

    param_gens = [gen_for(op.shape) for op in instr.operands]
    x_shape = red.operands[0].shape
    t = x_shape.element_type
    minor = x_shape.minor_to_major[0]
    C = x_shape.dims[minor]
    reduced = [d for d in reversed(x_shape.minor_to_major) if d != minor]  # major -> minor
    widen = t.name in ("f16", "bf16") and simple_reducer(red.attrs["to_apply"]) == "add"
    acc_ty = T.F32 if widen else T.value_type(t)
    block = block_size(C)
    acc = em.alloca(ir.ArrayType(acc_ty, block))
    base_gens = em.generators(comp, param_gens)
    input_gen, init_gen = base_gens[id(red.operands[0])], base_gens[id(red.operands[1])]

    def acc_slot(j):
        return b.gep(acc, [c64(0), j])

    with for_range(b, start, end, name="blk") as blk:
        c0 = b.mul(blk, c64(block))
        c1 = b.add(c0, c64(block))
        c1 = b.select(b.icmp_signed("<", c1, c64(C)), c1, c64(C))
        width = b.sub(c1, c0)
        with em.scope():
            init = init_gen([])
            if widen:
                init = T.to_float(b, init, t)
            with for_range(b, 0, width, name="ci") as j:
                b.store(init, acc_slot(j))
        # rows outermost (every reduced dimension, major to minor), columns innermost
        import contextlib
        with contextlib.ExitStack() as stack:
            idx = [None] * x_shape.rank
            for d in reduced:
                idx[d] = stack.enter_context(for_range(b, 0, x_shape.dims[d], name=f"r{d}"))
            with for_range(b, 0, width, name="c") as j:
                full = list(idx)
                full[minor] = b.add(c0, j)
                with em.scope():
                    v = input_gen(full)
                    for k, e in enumerate(root_elems):
                        if e is column_root:
                            continue
                        # an elementwise output: computed here, where its inputs are loaded
                        addr = b.gep(fn.args[k], [linear_of(b, e.shape, full)], inbounds=True,
                                     source_etype=T.storage_type(e.shape.element_type))
                        T.store(b, base_gens[id(e)](full), addr, e.shape.element_type)
                    a = b.load(acc_slot(j))
                    if widen:
                        v = T.to_float(b, v, t)
                        new = b.fadd(a, v)
                    else:
                        new = em.call_scalar(red.attrs["to_apply"], [a, v])
                    b.store(new, acc_slot(j))
        # epilogue: the fusion's root per column, the reduction read from the accumulator
        def read_acc(index):
            j = b.sub(index[0], c0)
            v = b.load(acc_slot(j))
            return T.from_float(b, v, t) if widen else v

        gens = em.generators(comp, param_gens, overrides={id(red): Gen(read_acc, red.shape)})
        root = gens[id(column_root)]
        with for_range(b, c0, c1, name="e") as c:
            with em.scope():
                v = root([c])
                addr = b.gep(out, [linear_of(b, out_shape, [c])], inbounds=True,
                             source_etype=T.storage_type(out_shape.element_type))
                T.store(b, v, addr, out_shape.element_type)
    b.ret_void()
    cost = x_shape.size
    wrapper = parallel_wrapper(module, fn, n_out + len(in_shapes)) if parallel else None
    return Kernel(fn, wrapper, n_out, len(in_shapes), blocks, cost)
