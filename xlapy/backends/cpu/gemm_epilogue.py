"""Gemm epilogue fusion: the elementwise computation on a dot's result runs inside the gemm.

    h = relu(x . W + b)      ->   fusion(x, W, b), kind=kOutput, calls={dot, add, relu}

A dense layer's bias and activation, or a backward pass's activation mask, read the dot's
result once, element by element. As separate kernels they read it back from memory after
the gemm has evicted it (a 256x1024 relu took 103-145 us right after its gemm against 18-21
us with its data in cache: benchmarks/mlp_breakdown.py). Fused, xlapy's own gemm
(gemm_kernel.py) calls the elementwise code on each tile of the result right after the
tile's final values are stored, on the same thread, while they are in that core's cache
(gemm_kernel.EPILOGUE_TYPE). Like cuBLASLt's epilogues, but for any elementwise
computation, compiled with the program.

The pass (cpu pipeline, before loop fusion) grows, from each dot the own gemm will compute
(gemm.own_gemm_for: f32/f64, no batch dimensions, row-major result, at least MIN_ELEMENTS
of them), the region of
elementwise instructions of the dot's dimensions that depend on it and whose other operands
do not (so the fusion cannot create a cycle and every operand is ready before the gemm
starts). Broadcasts, iotas and scalar constants among those other operands are cloned into
the fusion (a bias stays a vector); anything else is an operand. The fusion's results are
the region's values used outside it (and the dot itself when it is), as a tuple when there
are several. The gemm accumulates the raw products in the buffer of a result of the dot's
type and dimensions (the dot's own, or the first such result), and each element's epilogue
reads the raw value before it stores anything at that element.

The reference interpreter evaluates the fusion as any other (its computation holds the dot),
so optimized modules stay checkable; with XLAPY_GEMM=blas the pass does nothing.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.gemm import emit_gemm, own_gemm_for, plan_for, swapped_for
from xlapy.backends.cpu.program import custom_emitter
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ArrayInput, ElementalEmitter, lowering_error
from xlapy.backends.llvm.loops import c64, for_range
from xlapy.hlo.ir import Computation, Instruction, Module, user_closure
from xlapy.hlo.opcodes import ELEMENTWISE
from xlapy.hlo.shapes import Shape
from xlapy.passes.pipeline import non_fusion_computations

KIND = "kOutput"
_CLONED = ("broadcast", "iota")   # other operands copied into the fusion


MIN_ELEMENTS = 1 << 16   # smaller results: a separate (or consumer-fused) kernel costs
                         # next to nothing at run time, and an epilogue costs compile time


def _gemm_plan(d: Instruction):
    if d.opcode != "dot" or d.shape.rank != 2 or d.shape.size < MIN_ELEMENTS:
        return None
    plan = plan_for(d.attrs, d.operands[0].shape, d.operands[1].shape, d.shape)
    if plan is None or plan["batch"] != 1 or not plan["out_rm"] or not own_gemm_for(plan):
        return None
    return plan


def _region(comp: Computation, d: Instruction) -> list:
    """The elementwise instructions fused behind d, in definition order."""
    below = {id(i) for i in user_closure(d)}
    inside = {id(d)}
    region = []
    for u in comp.post_order():
        if id(u) not in below or id(u) in inside:
            continue
        if (u.opcode not in ELEMENTWISE or u.opcode == "map" or u.shape.is_tuple
                or u.shape.dims != d.shape.dims):
            continue
        if all(id(o) in inside or id(o) not in below for o in u.operands):
            region.append(u)
            inside.add(id(u))
    return region


def _is_small_constant(o: Instruction) -> bool:
    return o.opcode == "constant" and o.shape.rank == 0


class GemmEpilogueFusion:
    """See the module docstring. `run(module) -> changed`."""
    name = "gemm-epilogue-fusion"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in non_fusion_computations(module):
            for d in [i for i in comp.post_order() if i.opcode == "dot"]:
                if d.parent is comp and _gemm_plan(d) is not None:
                    changed |= self._fuse(module, comp, d)
        return changed

    def _fuse(self, module: Module, comp: Computation, d: Instruction) -> bool:
        region = _region(comp, d)
        if not region:
            return False
        inside = {id(d)} | {id(u) for u in region}
        outputs = [x for x in [d, *region]
                   if x.is_root or any(id(u) not in inside for u in x.users)]
        # a widening convert used outside (an activation's mask as f32) is stored narrow
        # (the predicate) and converted again by its users, which absorb the convert
        widened = {}
        for k, x in enumerate(outputs):
            y = x.operands[0] if x.opcode == "convert" else None
            if (y is not None and id(y) in inside and not x.is_root
                    and y.shape.element_type.bits < x.shape.element_type.bits):
                widened[id(y)] = x
                outputs[k] = y
        outputs = list(dict.fromkeys(outputs))
        if d not in outputs and not any(o.shape.equal_with_layout(d.shape) for o in outputs):
            outputs.insert(0, d)  # no result can hold the raw products: keep the dot's own

        fc = Computation(f"fused_{d.name.replace('.', '_')}_epilogue")
        operands: list[Instruction] = []
        mapping: dict[int, Instruction] = {}

        def param(value: Instruction) -> Instruction:
            for k, o in enumerate(operands):
                if o is value:
                    return fc.parameters[k]
            p = Instruction("parameter", value.shape, name=f"param_{len(operands)}",
                            parameter_number=len(operands))
            fc.add_instruction(p)
            operands.append(value)
            return p

        def clone(x: Instruction, ops: list) -> Instruction:
            new = Instruction(x.opcode, x.shape, ops, dict(x.attrs), x.name, dict(x.metadata),
                              x.literal)
            fc.add_instruction(new)
            return new

        def value(o: Instruction) -> Instruction:
            if id(o) in mapping:
                return mapping[id(o)]
            if o.opcode in _CLONED or _is_small_constant(o) or o.opcode == "convert":
                new = clone(o, [value(x) for x in o.operands])
            else:
                new = param(o)
            mapping[id(o)] = new
            return new

        mapping[id(d)] = clone(d, [param(d.operands[0]), param(d.operands[1])])
        for u in region:
            mapping[id(u)] = clone(u, [value(o) for o in u.operands])
        roots = [mapping[id(x)] for x in outputs]
        if len(roots) == 1:
            fc.root = roots[0]
        else:
            fc.root = Instruction("tuple", Shape.tuple([r.shape for r in roots]), roots,
                                  name="tuple")
            fc.add_instruction(fc.root)
        module.add_computation(fc, before=comp)
        fusion = Instruction("fusion", fc.root.shape, operands, {"kind": KIND, "calls": fc},
                             f"{d.name.split('.')[0]}_epilogue_fusion", dict(d.metadata))
        comp.add_instruction(fusion)
        for k, x in enumerate(outputs):
            new = fusion
            if len(outputs) > 1:
                new = Instruction("get-tuple-element", x.shape, [fusion], {"index": k},
                                  "get-tuple-element")
                comp.add_instruction(new)
            wide = widened.get(id(x))
            if wide is not None:
                again = Instruction("convert", wide.shape, [new], {}, wide.name,
                                    dict(wide.metadata))
                comp.add_instruction(again)
                outside = [u for u in wide.users if id(u) not in inside]
                for u in outside:
                    u.replace_operand_with(wide, again)
                if x.is_root or any(id(u) not in inside for u in x.users):
                    x.replace_all_uses_with(new)
                continue
            x.replace_all_uses_with(new)
        for x in reversed([d, *region]):
            comp.remove_instruction(x)
        comp.instructions = comp.post_order()
        return True


def _dot_of(comp: Computation) -> Instruction:
    return next(i for i in comp.instructions if i.opcode == "dot")


@custom_emitter("fusion")
def emit_gemm_epilogue(pe, instr, dest, operands) -> bool:
    if instr.attrs.get("kind") != KIND:
        return False
    comp = instr.fused_computation
    d = _dot_of(comp)
    plan = plan_for(d.attrs, d.operands[0].shape, d.operands[1].shape, d.shape)
    if plan is None or not own_gemm_for(plan):
        raise lowering_error(instr, "a gemm epilogue fusion needs xlapy's own gemm for its dot "
                                    "(XLAPY_GEMM changed after the module was optimized?)")
    roots = comp.root_elements()
    raw = next(k for k, r in enumerate(roots)
               if r is d or (r.shape.equal_with_layout(d.shape) and d not in roots))
    leaf = [o[0] if isinstance(o, tuple) else o for o in operands]
    lhs, rhs = (leaf[p.parameter_number] for p in d.operands)
    fn = _epilogue_function(pe.llmod, instr, d, raw, swapped_for(plan),
                            pe.me.unique(f"epi.{instr.name}"))
    ctx = pe.table(list(dest) + leaf)
    emit_gemm(pe, plan, dest[raw], lhs, rhs, epilogue=(fn, ctx))
    return True


def _epilogue_function(module: ir.Module, instr: Instruction, d: Instruction, raw: int,
                       swap: bool, name: str) -> ir.Function:
    """epi(ctx, row, col, rows, cols): the fused computation's results on one tile of the
    dot's result (kernel coordinates, transposed when the gemm computes C^T), the dot's
    values read from result `raw`'s buffer, where the gemm left them."""
    from xlapy.backends.cpu.gemm_kernel import EPILOGUE_TYPE
    from xlapy.backends.cpu.kernels import set_vector_width
    from xlapy.backends.llvm.loops import linear_of
    comp = instr.fused_computation
    roots = comp.root_elements()
    n_ptrs = len(roots) + len(instr.operands)
    # the work is in `body`, whose pointer arguments are noalias (a result's buffer is never
    # an operand's; the raw products are read and written through the same pointer), so LLVM
    # vectorizes its loop without run-time overlap checks; `fn` unpacks the context into it
    body = ir.Function(module, ir.FunctionType(T.VOID, [T.PTR] * n_ptrs + [T.I64] * 4),
                       name + ".body")
    body.linkage = "internal"
    body.attributes.add("nounwind")
    body.attributes.add("alwaysinline")
    set_vector_width(body)
    for a in body.args[:n_ptrs]:
        a.add_attribute("noalias")
    fn = ir.Function(module, EPILOGUE_TYPE, name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctx = fn.args[0]
    b.call(body, [b.load(b.gep(ctx, [c64(k)], source_etype=T.PTR), typ=T.PTR)
                  for k in range(n_ptrs)] + list(fn.args[1:]))
    b.ret_void()

    b = ir.IRBuilder(body.append_basic_block("entry"))
    em = ElementalEmitter(b, module)
    ptrs, (r0, c0, nr, nc) = body.args[:n_ptrs], body.args[n_ptrs:]
    outs, ins = ptrs[:len(roots)], ptrs[len(roots):]
    gens = em.generators(comp, [ArrayInput(em, p, o.shape) for p, o in zip(ins, instr.operands)],
                         {id(d): ArrayInput(em, outs[raw], d.shape)})
    if swap:
        r0, c0, nr, nc = c0, r0, nc, nr
    with for_range(b, r0, b.add(r0, nr), name="er") as i:
        # a tile row is a few vectors long: no interleaving (it would need 64 columns)
        with for_range(b, c0, b.add(c0, nc), name="ec",
                       hints={"llvm.loop.interleave.count": 1}) as j:
            with em.scope():
                values = [gens[id(r)]([i, j]) for r in roots]  # every load before any store
                for p, r, v in zip(outs, roots, values):
                    addr = b.gep(p, [linear_of(b, r.shape, [i, j])], inbounds=True,
                                 source_etype=T.storage_type(r.shape.element_type))
                    T.store(b, v, addr, r.shape.element_type)
    b.ret_void()
    return fn
