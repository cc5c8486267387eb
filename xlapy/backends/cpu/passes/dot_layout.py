"""dot-output-layout: a dot whose only user transposes its result writes it transposed.

    o = dot(a, v)            f32[b,h,s,d]  (attention's per-head products)
    t = transpose(o), dimensions={0,2,1,3}           (or a loop fusion of it and reshapes)
 ->
    o = dot(a, v)            f32[b,h,s,d]{3,1,2,0}   (memory order b, s, h, d)
    t = bitcast(o)

xlapy's strided gemms (dot_general.py) write C through any strides, so the dot can lay out
its result in the order its user reads it, and the transpose (a copy kernel over the whole
result, and a pool barrier) becomes a bitcast, as XLA's layout assignment makes it. Taken:
a dot (in a computation the program emits, not a fused one) with one user, that user a
transpose of it, or a loop fusion computing only a transpose of its one parameter followed
by row-major reshapes; both the dot and the user in the default layout, and a strided
gemm plan for the dot in the new layout (dot_general_plan.strided_plan). Runs after
fusion, before reshape-to-bitcast.
"""

from __future__ import annotations

from xlapy.backends.cpu.passes.reshape_bitcast import fused_computations
from xlapy.backends.cpu.passes.dot_general_plan import strided_plan
from xlapy.hlo.ir import Instruction, Module
from xlapy.hlo.shapes import Shape


def transpose_of(x: Instruction):
    """The permutation x applies to its only operand when x is a transpose, or a loop
    fusion of one transpose of its parameter followed by row-major reshapes / bitcasts
    (so x's row-major result is the transpose's row-major result), else None."""
    if x.opcode == "transpose":
        return tuple(x.attrs["dimensions"])
    if x.opcode != "fusion" or x.attrs.get("kind") != "kLoop" or len(x.operands) != 1:
        return None
    comp = x.fused_computation
    node, chain = comp.root, []
    while node.opcode in ("reshape", "bitcast"):
        chain.append(node)
        node = node.operands[0]
    if node.opcode != "transpose" or node.operands[0].opcode != "parameter":
        return None
    if len(comp.instructions) != len(chain) + 2:
        return None
    if not all(i.shape.has_default_layout for i in (node, *chain)):
        return None
    if any(r.shape.element_type != node.shape.element_type for r in chain):
        return None
    return tuple(node.attrs["dimensions"])


class DotOutputLayout:
    """See the module docstring. `run(module) -> changed`."""
    name = "dot-output-layout"

    def run(self, module: Module) -> bool:
        fused = fused_computations(module)
        changed = False
        for comp in module.computations:
            if id(comp) in fused:
                continue
            done = False
            for x in list(comp.instructions):
                if x.parent is not comp or len(x.operands) != 1:
                    continue
                d = x.operands[0]
                if d.opcode != "dot" or len(d.users) != 1 or d.users[0] is not x or d.is_root:
                    continue
                if not (d.shape.has_default_layout and x.shape.has_default_layout):
                    continue
                perm = transpose_of(x)
                if perm is None or sorted(perm) == list(perm):
                    continue
                laid = Shape.array(d.shape.element_type, d.shape.dims, tuple(reversed(perm)))
                if strided_plan(d.attrs, d.operands[0].shape, d.operands[1].shape,
                                laid) is None:
                    continue
                d.shape = laid
                cast = Instruction("bitcast", x.shape, [d], {}, x.name, dict(x.metadata))
                comp.add_instruction(cast)
                comp.replace_instruction(x, cast)
                done = True
            if done:
                comp.instructions = comp.post_order()
                changed = True
        return changed
