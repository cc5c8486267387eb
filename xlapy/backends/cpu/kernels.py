"""Loop kernels: one LLVM function per elemental instruction (or loop fusion).

  void kernel(ptr out_0, ..., ptr in_0, ..., i64 start, i64 end)

computes the output elements whose most-major (physical) index lies in [start, end), by
composing the elemental generators of the instruction (or of its fused computation) inside
one loop nest. All pointer arguments are `noalias`, which lets LLVM vectorize without
runtime alias checks: when buffer assignment puts the output in an input's buffer
(in-place), the caller still passes that input's pointer but the kernel reads the input
through its output pointer instead (`shared_inputs`).

A parallel kernel also gets a wrapper `void kernel.par(ptr ctx, i64 start, i64 end)` for
xlapy's thread pool (threadpool.py): ctx holds the kernel's pointers; the pool hands out
chunks of the outer dimension to the calling thread and its workers.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from xlapy.backends.cpu.row_kernel import RowPlan
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ArrayInput, ElementalEmitter, TupleGen, lowering_error
from xlapy.backends.llvm.elemental_reduce import LANES
from xlapy.backends.llvm.elemental_vector import vector_gen
from xlapy.backends.llvm.loops import c64, lanes_then_rest, linear_of, loop_nest
from xlapy.hlo.ir import Computation, Instruction
from xlapy.hlo.opcodes import ELEMENTWISE, opcode_set
from xlapy.hlo.shapes import Shape

# Importing the rule modules registers the elemental rules.
from xlapy.backends.llvm import elemental_data, elemental_ops, elemental_reduce  # noqa: F401


@dataclass
class Kernel:
    function: ir.Function
    wrapper: ir.Function | None
    n_out: int
    n_in: int
    outer: int       # trip count of the outermost loop (the parallel dimension)
    cost: int        # rough work estimate (element operations) for the threading decision


def output_leaves(shape: Shape) -> list[Shape]:
    return shape.leaves()


def _outer_trip_count(shape: Shape) -> int:
    if shape.rank == 0:
        return 1
    return shape.dims[shape.minor_to_major[-1]]


def _inner_work(instr: Instruction) -> int:
    """Per-output-element work of the instructions with inner loops."""
    work = 1
    comps = [instr.fused_computation] if instr.opcode == "fusion" else []
    instrs = list(comps[0].instructions) if comps else [instr]
    for i in instrs:
        if i.opcode in ("reduce", "reduce-window", "dot", "convolution"):
            if i.opcode == "reduce":
                inner = i.operands[0].shape.size // max(i.shape.leaves()[0].size, 1)
            elif i.opcode == "reduce-window":
                inner = 1
                for s in i.attrs["window"].size:
                    inner *= s
            elif i.opcode == "dot":
                inner = 1
                for d in i.attrs.get("lhs_contracting_dims", ()):
                    inner *= i.operands[0].shape.dims[d]
            else:
                w = i.attrs["window"]
                inner = i.operands[1].shape.dims[i.attrs["dim_labels"].kernel_input_feature]
                for s in w.size:
                    inner *= s
            work = max(work, inner)
    return work


_FLAT_EXCLUDED = opcode_set({"bitcast-convert", "copy", "iota"}, "kernels._FLAT_EXCLUDED")


def flat_ok(instr: Instruction) -> bool:
    """A purely elementwise kernel whose every array operand has the output's dims and
    layout (scalars and broadcasts of scalars allowed): it can run as ONE loop over the
    linear index, with no per-dimension index arithmetic and a long vectorizable trip
    count even when the minor dimension is short."""
    outs = output_leaves(instr.shape)
    o0 = outs[0]
    if o0.rank < 1 or any(s.dims != o0.dims or s.minor_to_major != o0.minor_to_major
                          for s in outs):
        return False
    for op in instr.operands:
        for s in op.shape.leaves():
            if s.rank and (s.dims != o0.dims or s.minor_to_major != o0.minor_to_major):
                return False
    body = instr.fused_computation.instructions if instr.opcode == "fusion" else [instr]
    for i in body:
        if i.opcode in ("parameter", "tuple", "get-tuple-element"):
            continue
        if i.opcode == "constant" and i.shape.rank == 0:
            continue
        if i.opcode == "broadcast" and i.operands[0].shape.rank == 0:
            continue
        if i.opcode not in ELEMENTWISE or i.opcode in _FLAT_EXCLUDED:
            return False
    return True


def kernel_cost(instr: Instruction) -> tuple[int, int]:
    """(outer trip count, work estimate) of the loop kernel for instr."""
    from xlapy.backends.cpu.column_reduction import column_plan
    plan = column_plan(instr)
    if plan is not None:
        return plan.blocks, plan.red.operands[0].shape.size
    loop_shape = output_leaves(instr.shape)[0]
    if flat_ok(instr):
        return loop_shape.size, loop_shape.size
    return _outer_trip_count(loop_shape), loop_shape.size * _inner_work(instr)


def emit_kernel(module: ir.Module, instr: Instruction, name: str, parallel: bool,
                shared_inputs: frozenset = frozenset()) -> Kernel:
    """shared_inputs: input leaf indices that occupy the output's buffer (in-place, see
    inplace.py); the kernel reads them through its output pointer, so no two noalias
    pointers ever point into the same buffer."""
    from xlapy.backends.cpu.column_reduction import column_plan, emit_column_kernel
    if column_plan(instr) is not None:
        return emit_column_kernel(module, instr, name, parallel, shared_inputs)
    out_shapes = output_leaves(instr.shape)
    in_shapes = [leaf for op in instr.operands for leaf in op.shape.leaves()]
    fty = ir.FunctionType(T.VOID, [T.PTR] * (len(out_shapes) + len(in_shapes)) + [T.I64, T.I64])
    fn = ir.Function(module, fty, name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    for a in fn.args[:-2]:
        a.add_attribute("noalias")
    outs = fn.args[:len(out_shapes)]
    ins = list(fn.args[len(out_shapes):-2])
    start, end = fn.args[-2], fn.args[-1]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    em = ElementalEmitter(b, module)

    it = iter(enumerate(ins))

    flat = flat_ok(instr)
    n_flat = output_leaves(instr.shape)[0].size

    def gen_for(shape: Shape):
        if shape.is_tuple:
            return TupleGen([gen_for(s) for s in shape.tuple_shapes], shape)
        if flat and shape.rank:
            shape = Shape.array(shape.element_type, (n_flat,))
        k, arg = next(it)
        return ArrayInput(em, outs[0] if k in shared_inputs else arg, shape)

    operand_gens = [gen_for(op.shape) for op in instr.operands]
    comp = instr.fused_computation if instr.opcode == "fusion" else \
        _alone(instr) if flat else None
    if comp is not None:
        gens = em.generators(comp, operand_gens)
        root_gen = gens[id(comp.root)]
    else:
        root_gen = em.make_gen(instr, operand_gens)

    loop_shape = out_shapes[0]
    if any(s.dims != loop_shape.dims for s in out_shapes):
        raise lowering_error(instr, "a multi-output kernel needs outputs of equal dimensions")

    def store_outputs(index):
        with em.scope():
            value = root_gen(index)
            values = list(_flatten(value)) if instr.shape.is_tuple else [value]
            for out_ptr, shape, v in zip(outs, out_shapes, values):
                offset = index[0] if flat else linear_of(b, shape, index)
                addr = b.gep(out_ptr, [offset], inbounds=True,
                             source_etype=T.storage_type(shape.element_type))
                T.store(b, v, addr, shape.element_type)

    rows = None if flat or instr.opcode != "fusion" else \
        RowPlan.make(instr.fused_computation, loop_shape)
    if flat:
        vector_store = vector_outputs(em, comp, outs, out_shapes, 0, flat=True)
        lanes_then_rest(b, start, end, LANES, vector_store and (lambda i: vector_store([i])),
                        lambda i: store_outputs([i]), "flat")
    elif rows is not None:
        rows.emit(b, em, gens, start, end, store_outputs,
                  lambda: vector_outputs(em, comp, outs, out_shapes, rows.minor))
    else:
        with loop_nest(b, loop_shape, start, end) as index:
            store_outputs(index)
    b.ret_void()
    outer, cost = kernel_cost(instr)
    wrapper = (parallel_wrapper(module, fn, len(out_shapes) + len(in_shapes), outer)
               if parallel else None)
    return Kernel(fn, wrapper, len(out_shapes), len(in_shapes), outer, cost)


def _alone(instr: Instruction) -> Computation:
    """A computation of `instr` alone on parameters (as a fusion of one instruction), so that
    a kernel of one elementwise instruction takes the vector path of a fused one."""
    comp = Computation(f"{instr.name}.alone")
    params = [comp.add_instruction(Instruction("parameter", op.shape, parameter_number=k,
                                               name=f"p{k}"))
              for k, op in enumerate(instr.operands)]
    comp.root = comp.add_instruction(Instruction(instr.opcode, instr.shape, params, instr.attrs,
                                                 instr.name, instr.metadata))
    return comp


def vector_outputs(em, comp: Computation, outs, out_shapes, dim: int, flat: bool = False):
    """store(index) writing LANES consecutive outputs along `dim` from vector code
    (elemental_vector) for the kernel's computation, or None when a root value has no
    vector form."""
    leaves = comp.root_elements()
    if len(leaves) != len(out_shapes) or any(
            s.element_type.name not in ("f32", "f64")
            or (not flat and s.minor_to_major[0] != dim) for s in out_shapes):
        return None
    vgs = [vector_gen(em, leaf, dim, LANES) for leaf in leaves]
    if any(v is None for v in vgs):
        return None
    b = em.b

    def store(index):
        with em.scope():
            for out_ptr, shape, vg in zip(outs, out_shapes, vgs):
                t = shape.element_type
                offset = index[0] if flat else linear_of(b, shape, index)
                addr = b.gep(out_ptr, [offset], inbounds=True, source_etype=T.value_type(t))
                b.store(vg(index), addr, align=t.bits // 8)
    return store


def _flatten(v):
    if isinstance(v, tuple):
        for x in v:
            yield from _flatten(x)
    else:
        yield v


def set_vector_width(fn: ir.Function) -> None:
    """Ask LLVM for the host's best vector width in this kernel (see jit.py)."""
    from xlapy.backends.cpu.jit import preferred_vector_width
    width = preferred_vector_width()
    if width:
        add_string_attribute(fn, f'"prefer-vector-width"="{width}"')


def add_string_attribute(fn: ir.Function, attr: str) -> None:
    """A function attribute such as '"prefer-vector-width"="512"'. llvmlite has no API for
    string attributes: its printer emits the known set verbatim."""
    fn.attributes._known = fn.attributes._known | {attr}
    fn.attributes.add(attr)


def pool_function(module: ir.Module) -> ir.Function:
    """The thread pool's entry point (threadpool.py), declared in `module`."""
    fn = module.globals.get("xlapy_parallel_for")
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(T.VOID, [T.PTR, T.PTR, T.I64, T.I64]),
                         "xlapy_parallel_for")
    return fn


def parallel_wrapper(module: ir.Module, kernel: ir.Function, n_ptrs: int, outer: int = 0):
    """void kernel.par(ptr ctx, i64 start, i64 end): ctx = [ptr x n_ptrs], the kernel's
    pointer arguments; runs the kernel on [start, end) of its outer loop."""
    w = ir.Function(module, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.I64]), kernel.name + ".par")
    w.linkage = "internal"
    w.attributes.add("nounwind")  # as the kernel: no unwind tables (-O3 inferred it)
    set_vector_width(w)  # the kernel is inlined here: the wrapper needs the width too
    b = ir.IRBuilder(w.append_basic_block("entry"))
    ctx, start, end = w.args
    ptrs = [b.load(b.gep(ctx, [c64(k)], source_etype=T.PTR), typ=T.PTR) for k in range(n_ptrs)]
    b.call(kernel, ptrs + [start, end])
    b.ret_void()
    return w
