"""Shape inference: the result shape of every HLO opcode from its operands and attributes.

    infer_shape(opcode, operand_shapes, attrs, declared=None, literal=None) -> Shape
    infer_instruction_shape(instr) -> Shape      (the same, for an Instruction)

The rules follow XLA's ShapeInference (xla/service/shape_inference.cc) together with the
HloVerifier's extra checks, so a module XLA accepts is accepted here and the error cases
XLA reports are reported here as ShapeError, with a message that names the opcode, the
offending operand shapes or attribute, and what was expected. Highlights:

  - No implicit broadcasting in HLO: elementwise operands have identical shapes (scalars
    are not broadcast either); clamp's min/max and select's predicate may be scalars.
  - Element types are never mixed implicitly (no mixed-precision elementwise ops).
  - Some results are declared rather than derived: parameter, constant, custom-call, and
    the output size of broadcast/reshape/iota/bitcast and the element type of
    convert/bitcast-convert/dot/convolution. For those the caller passes `declared=` (the
    instruction's own shape); the rule checks everything that can be checked against it
    (a constant's literal, element counts, byte sizes, broadcast dimension sizes, dot's
    preferred element type) and returns it or the shape derived from it.
  - Computation-valued attributes (to_apply, body, ...) are Computation objects; rules
    check their signature (parameter shapes and root shape) against the call site.

Results carry no layout (layout assignment is a separate concern); compare them with
`Shape.compatible`.

Each opcode's rule is registered with @shape_rule(...) (shape_context.py) where it is
defined, in the topic modules shape_rules_elementwise.py, shape_rules_data.py,
shape_rules_indexing.py, shape_rules_linalg.py, shape_rules_reduction.py and
shape_rules_control.py, which this module imports. A rule is `rule(op: OpContext) -> Shape`;
OpContext gives typed access to the operands and attributes and builds the error messages.
"""

from __future__ import annotations

from typing import Sequence

# The rule modules register their rules into SHAPE_RULES when imported.
from xlapy.hlo import (shape_rules_collective, shape_rules_control,  # noqa: F401
                       shape_rules_data, shape_rules_elementwise, shape_rules_indexing,
                       shape_rules_linalg, shape_rules_reduction)
from xlapy.errors import ShapeError
from xlapy.hlo.opcodes import NEEDS_DECLARED, OPCODES  # (the declared_shape column)
from xlapy.hlo.shape_context import SHAPE_RULES, OpContext, fmt, shape_rule
from xlapy.hlo.shapes import Shape, size_problem

# ---- entry points -----------------------------------------------------------------------

def infer_shape(opcode: str, operand_shapes: Sequence[Shape], attrs: dict | None = None,
                declared: Shape | None = None, literal=None) -> Shape:
    """The result shape of `opcode` applied to operands of `operand_shapes` with `attrs`.

    `declared` is the instruction's own shape, needed for the opcodes in NEEDS_DECLARED and
    for the element type of dot/convolution (else the operand type is used); `literal` is a
    constant's value. Raises ShapeError when the operation is invalid."""
    info = OPCODES.get(opcode)
    if info is None:
        raise ShapeError(f"unknown opcode '{opcode}'")
    rule = SHAPE_RULES.get(opcode)
    if rule is None:
        raise ShapeError(f"{opcode}: no shape rule")
    shapes = list(operand_shapes)
    for i, s in enumerate(shapes):
        if not isinstance(s, Shape):
            raise ShapeError(f"{opcode}: operand {i} has no shape ({s!r})")
    if declared is not None and not isinstance(declared, Shape):
        raise ShapeError(f"{opcode}: declared shape is not a Shape ({declared!r})")
    if info.arity is not None and len(shapes) != info.arity:
        raise ShapeError(f"{opcode}: expects {info.arity} operand(s), got {len(shapes)}: "
                         f"{fmt(shapes)}")
    result = rule(OpContext(opcode, shapes, attrs, declared, literal))
    problem = size_problem(result)
    if problem:
        raise ShapeError(f"{opcode}: {problem}")
    return result


def infer_instruction_shape(instr) -> Shape:
    """infer_shape for an Instruction, with its own shape as the declared shape."""
    return infer_shape(instr.opcode, [o.shape for o in instr.operands], instr.attrs,
                       declared=instr.shape, literal=instr.literal)


__all__ = ["SHAPE_RULES", "NEEDS_DECLARED", "OpContext", "infer_shape",
           "infer_instruction_shape", "shape_rule"]
