"""Loop kernels: one function per elemental instruction (or loop fusion), for any target.

The kernel computes the output elements whose most-major (physical) index lies in the
range [start, end) the target's kernel ABI gives it (kernel_target.py), by composing the
elemental generators of the instruction (or of its fused computation) inside one loop nest:

  flat   purely elementwise with every operand laid out like the output: ONE loop over the
         linear index (vector code LANES at a time, elemental_vector.py), a long
         vectorizable trip count even when the minor dimension is short (under LANES
         elements: a scalar loop, not offered to LLVM's vectorizer)
  rows   a fusion with per-row statistics (row_kernel.py): row by row, the statistics
         hoisted, the row's outputs as vector code
  nest   otherwise: a loop nest over the output's dimensions (over at most
         SMALL_KERNEL_ELEMENTS with a short innermost loop: not offered to the vectorizer;
         the target may add loop metadata to the innermost loop: inner_loop_hints)
"""

from __future__ import annotations

import contextlib

from llvmlite import ir

# Importing the rule modules registers the elemental rules.
from xlapy.backends.llvm import elemental_complex, elemental_data, elemental_ops  # noqa: F401
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ArrayInput, ElementalEmitter, TupleGen, lowering_error
from xlapy.backends.llvm.elemental_reduce import LANES
from xlapy.backends.llvm.elemental_vector import vector_gen
from xlapy.backends.llvm.kernel_target import (KernelTarget, inner_loop_hints, linear_index,
                                               target_math)
from xlapy.backends.llvm.loops import (NOT_VECTORIZED, c64, for_range, index_of, lanes_then_rest,
                                       linear_of, loop_nest)
from xlapy.backends.llvm.row_kernel import RowPlan
from xlapy.hlo.ir import Computation, Instruction
from xlapy.hlo.opcodes import ELEMENTWISE, opcode_set
from xlapy.hlo.shapes import Shape


def output_leaves(shape: Shape) -> list[Shape]:
    return shape.leaves()


def outer_trip_count(shape: Shape) -> int:
    if shape.rank == 0:
        return 1
    return shape.dims[shape.minor_to_major[-1]]


def inner_work(instr: Instruction) -> int:
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


def emit_loop_kernel(target: KernelTarget, module: ir.Module, instr: Instruction, name: str,
                     shared_inputs: frozenset = frozenset()) -> ir.Function:
    """The loop kernel of an elemental instruction or loop fusion, in the target's kernel
    ABI (kernel_target.py). shared_inputs: input leaf indices that occupy the output's
    buffer (in-place); the kernel reads them through its output pointer, so no two noalias
    pointers ever point into the same buffer."""
    out_shapes = output_leaves(instr.shape)
    in_shapes = [leaf for op in instr.operands for leaf in op.shape.leaves()]
    fn, ptrs, b, start, end = target.kernel_function(module, name,
                                                     len(out_shapes) + len(in_shapes))
    outs = ptrs[:len(out_shapes)]
    ins = ptrs[len(out_shapes):]
    em = ElementalEmitter(b, module, math=target_math(target))
    linear = linear_index(target)

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

    rows = None if flat or linear or instr.opcode != "fusion" else \
        RowPlan.make(instr.fused_computation, loop_shape)
    if linear:  # one element per index of the physical linear range (the gpu's threads)
        with for_range(b, start, end, name="e") as i:
            store_outputs([i] if flat else index_of(b, loop_shape, i))
    elif flat and n_flat < LANES:
        # fewer elements than one vector: nothing for vector code or LLVM's vectorizer to
        # gain, and vectorizing a large fused body (a random sampler's) only multiplies the
        # code LLVM optimizes and translates
        with for_range(b, start, end, name="flat", hints=NOT_VECTORIZED) as i:
            store_outputs([i])
    elif flat:
        vector_store = vector_outputs(em, comp, outs, out_shapes, 0, flat=True)
        lanes_then_rest(b, start, end, LANES, vector_store and (lambda i: vector_store([i])),
                        lambda i: store_outputs([i]), "flat")
    elif rows is not None:
        rows.emit(b, em, gens, start, end, store_outputs,
                  lambda count: vector_outputs(em, comp, outs, out_shapes, rows.minor,
                                               count=count))
    else:
        vector_store = _branchy_vector_store(em, comp, outs, out_shapes, loop_shape)
        if vector_store is not None:
            _vector_nest(b, loop_shape, start, end, vector_store, store_outputs)
        else:
            hints = NOT_VECTORIZED if _short_inner_loop(loop_shape) else None
            inner = None if hints else inner_loop_hints(target, loop_shape)
            with loop_nest(b, loop_shape, start, end, hints=hints, inner_hints=inner) as index:
                store_outputs(index)
    b.ret_void()
    return fn


# opcodes whose scalar code branches or clamps per element, which LLVM's loop vectorizer
# does not turn into vector code: a nest holding one gets its vector code from
# elemental_vector when every root value has a vector form there (a concatenate of four
# 128-wide LSTM gate gradients ran 34 us as scalar code, about 3 as vector code)
_BRANCHY = frozenset({"concatenate"})


def _branchy_vector_store(em, comp, outs, out_shapes, loop_shape: Shape):
    """vector_outputs along the minor dimension for a multi-dimensional nest whose fused
    computation holds a _BRANCHY instruction, or None."""
    if comp is None or loop_shape.rank < 2 or not any(
            i.opcode in _BRANCHY for i in comp.instructions):
        return None
    minor = loop_shape.minor_to_major[0]
    if loop_shape.dims[minor] < LANES or minor == loop_shape.minor_to_major[-1]:
        return None
    return vector_outputs(em, comp, outs, out_shapes, minor)


def _vector_nest(b, shape: Shape, start, end, vector_store, scalar_store) -> None:
    """The nest over `shape` with its minor dimension in vectors of LANES (then scalars);
    the most-major dimension over [start, end) (the kernel's share)."""
    order = list(reversed(shape.minor_to_major))  # major -> minor
    minor = order[-1]
    index = [c64(0)] * shape.rank
    with contextlib.ExitStack() as stack:
        for k, d in enumerate(order[:-1]):
            lo, hi = (start, end) if k == 0 else (0, shape.dims[d])
            if k and shape.dims[d] == 1:
                continue
            index[d] = stack.enter_context(for_range(b, lo, hi, name=f"d{d}"))

        def at(i):
            full = list(index)
            full[minor] = i
            return full
        lanes_then_rest(b, 0, shape.dims[minor], LANES, lambda i: vector_store(at(i)),
                        lambda i: scalar_store(at(i)), f"d{minor}")


# A kernel over at most this many elements runs in well under a microsecond whatever LLVM
# makes of it: its loops are not offered to the loop vectorizer when they are short.
SMALL_KERNEL_ELEMENTS = 256


def _short_inner_loop(shape: Shape) -> bool:
    """Whether the nest over `shape` is small and its innermost loop runs fewer than LANES
    times: LLVM's loop vectorizer has nothing to gain there, and vectorizing a large fused
    body (a random sampler's) only multiplies the code LLVM optimizes and translates (the
    part then takes the short "direct" pipeline, loop_analysis.py)."""
    inner = [shape.dims[d] for d in shape.minor_to_major if shape.dims[d] != 1]
    return shape.size <= SMALL_KERNEL_ELEMENTS and (not inner or inner[0] < LANES)


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


def vector_outputs(em, comp: Computation, outs, out_shapes, dim: int, flat: bool = False,
                   count: int | None = None):
    """store(index) writing LANES consecutive outputs along `dim` from vector code
    (elemental_vector) for the kernel's computation, or None when a root value has no
    vector form. With `count`: the first `count` of them (masked loads and stores)."""
    leaves = comp.root_elements()
    if len(leaves) != len(out_shapes) or any(
            s.element_type.name not in ("f32", "f64")
            or (not flat and s.minor_to_major[0] != dim) for s in out_shapes):
        return None
    vgs = [vector_gen(em, leaf, dim, LANES, count) for leaf in leaves]
    if any(v is None for v in vgs):
        return None
    b = em.b

    def store(index):
        with em.scope():
            for out_ptr, shape, vg in zip(outs, out_shapes, vgs):
                t = shape.element_type
                offset = index[0] if flat else linear_of(b, shape, index)
                addr = b.gep(out_ptr, [offset], inbounds=True, source_etype=T.value_type(t))
                if count is not None and count < LANES:
                    T.masked_store(b, em.module, vg(index), addr, count, t.bits // 8)
                else:
                    b.store(vg(index), addr, align=t.bits // 8)
    return store


def _flatten(v):
    if isinstance(v, tuple):
        for x in v:
            yield from _flatten(x)
    else:
        yield v


