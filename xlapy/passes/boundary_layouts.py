"""Computation boundaries agree on layouts.

A module as JAX prints it is laid out only in parts: an instruction may carry a layout its
neighbours do not share (a transpose's {0,1}, a LAPACK custom-call's column-major result),
and XLA's layout assignment then makes every boundary consistent. A backend that passes
buffers between computations as they are needs the same: the root of a called computation
in the layout its caller's result declares, each parameter in the layout of the value
passed to it. This pass inserts the layout-changing copies where they differ:

  conditional   each branch's root -> the conditional's shape; each branch's parameter ->
                the layout of its operand
  call          the callee's root -> the call's shape; its parameters -> the operands'
  while         the operand -> the while's shape; the body's root and the body's and the
                condition's parameters -> the while's shape
  tuple         each operand -> its element of the tuple's shape
  get-tuple-element   takes its tuple operand's element layout, copied to its own

A parameter is given the caller's layout and a copy to its old layout feeds its users, so
the computation's own instructions see what they saw before. Array leaves of tuples are
copied through get-tuple-element / tuple. Unspecified layouts count as row-major.
"""

from __future__ import annotations

from xlapy.hlo.ir import Computation, Instruction
from xlapy.passes.rewrite import InstructionPass, insert_before


def _converted(comp: Computation, x: Instruction, shape, anchor: Instruction | None):
    """x in the layouts of `shape` (x itself when they agree); new instructions go before
    `anchor` (or at the end when None)."""
    if x.shape.equal_with_layout(shape):
        return x

    def add(instr):
        return comp.add_instruction(instr) if anchor is None else \
            insert_before(comp, instr, anchor)

    if shape.is_tuple:
        parts = [_converted(comp, add(Instruction("get-tuple-element", s_old, [x],
                                                   {"index": k})), s, anchor)
                 for k, (s_old, s) in enumerate(zip(x.shape.tuple_shapes, shape.tuple_shapes))]
        return add(Instruction("tuple", shape, parts))
    return add(Instruction("copy", shape, [x]))


def _fix_root(callee: Computation, shape) -> bool:
    root = callee.root
    if root is None or root.shape.equal_with_layout(shape):
        return False
    callee.root = _converted(callee, root, shape, None)
    return True


def _fix_parameter(callee: Computation, number: int, shape) -> bool:
    if number >= len(callee.parameters) or callee.parameters[number] is None:
        return False
    param = callee.parameters[number]
    if param.shape.equal_with_layout(shape) or param.shape.is_tuple != shape.is_tuple:
        return False
    anchor = next((i for i in callee.instructions if i is not param and i.opcode != "parameter"),
                  None)
    return _relayout(callee, param, shape, anchor)


def _fix_operand(comp: Computation, instr: Instruction, index: int, shape) -> bool:
    x = instr.operands[index]
    if x.shape.equal_with_layout(shape):
        return False
    instr.set_operand(index, _converted(comp, x, shape, instr))
    return True


def _fix_gte(comp: Computation, gte: Instruction) -> bool:
    element = gte.operands[0].shape.tuple_shapes[gte.attrs["index"]]
    if gte.shape.equal_with_layout(element):
        return False
    anchor = comp.instructions[comp.instructions.index(gte) + 1] \
        if comp.instructions[-1] is not gte else None
    return _relayout(comp, gte, element, anchor)


def _relayout(comp: Computation, x: Instruction, shape, anchor: Instruction | None) -> bool:
    """Give x the layouts of `shape`; its users (and the root) take x converted back to the
    layouts it had (new instructions before `anchor`)."""
    old, users, was_root = x.shape, list(x.users), x.is_root
    x.shape = shape
    copy = _converted(comp, x, old, anchor)
    for u in users:
        u.replace_operand_with(x, copy)
    if was_root:
        comp.root = copy
    return True


class BoundaryLayouts(InstructionPass):
    name = "boundary-layouts"

    def rewrite(self, comp, instr) -> bool:
        changed = False
        op = instr.opcode
        if op == "conditional":
            branches = list(instr.attrs.get("branch_computations") or
                            [instr.attrs["true_computation"], instr.attrs["false_computation"]])
            for k, br in enumerate(branches):
                changed |= _fix_root(br, instr.shape)
                changed |= _fix_parameter(br, 0, instr.operands[k + 1].shape)
        elif op == "call":
            callee = instr.attrs["to_apply"]
            changed |= _fix_root(callee, instr.shape)
            for k, x in enumerate(instr.operands):
                changed |= _fix_parameter(callee, k, x.shape)
        elif op == "tuple":
            for k, s in enumerate(instr.shape.tuple_shapes):
                changed |= _fix_operand(comp, instr, k, s)
        elif op == "get-tuple-element":
            changed |= _fix_gte(comp, instr)
        elif op == "while":
            changed |= _fix_operand(comp, instr, 0, instr.shape)
            changed |= _fix_root(instr.attrs["body"], instr.shape)
            for key in ("body", "condition"):
                changed |= _fix_parameter(instr.attrs[key], 0, instr.shape)
        return changed
