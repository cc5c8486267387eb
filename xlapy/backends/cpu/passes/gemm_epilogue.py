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

Convolutions computed by one gemm (conv_plan.py: one group, the output's row dims
collapsing into the gemm's rows) take their epilogue the same way: a bias, a folded batch
norm, relu or relu6 and a residual add run on each finished tile of the output.

The reference interpreter evaluates the fusion as any other (its computation holds the dot),
so optimized modules stay checkable; with XLAPY_GEMM=blas the pass does nothing.
"""

from __future__ import annotations

from xlapy.backends.cpu.passes.dot_plan import own_gemm_for, plan_for
from xlapy.hlo.ir import Computation, Instruction, Module, user_closure
from xlapy.hlo.opcodes import ELEMENTWISE
from xlapy.hlo.shapes import Shape
from xlapy.passes.rewrite import non_fusion_computations

KIND = "kOutput"
_CLONED = ("broadcast", "iota")   # other operands copied into the fusion


MIN_ELEMENTS = 1 << 16   # smaller results: a separate (or consumer-fused) kernel costs
                         # next to nothing at run time, and an epilogue costs compile time


def _gemm_plan(d: Instruction):
    if d.opcode == "convolution" and d.shape.size >= MIN_ELEMENTS:
        # a convolution computed by one gemm whose tiles are the result's (conv_plan.py);
        # not bf16 / f16 ones (as dots): their tiles are f32 sums, rounded after the gemm,
        # and an epilogue on them computed wrong results (TF's mixed-precision MobileNet)
        if d.shape.element_type.name not in ("f32", "f64"):
            return None
        # (conv_plan: imported by a module's first convolution, not with every compiler)
        from xlapy.backends.cpu.passes.conv_plan import (conv_plan, depthwise_plan,
                                                         filter_grad_plan, one_output_plan)
        plan = conv_plan(d)
        if plan is None or not plan.epilogue_ok or depthwise_plan(d) or filter_grad_plan(d) \
                or one_output_plan(d):
            return None
        return plan
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
            for d in [i for i in comp.post_order() if i.opcode in ("dot", "convolution")]:
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
