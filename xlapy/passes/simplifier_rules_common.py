"""Matchers and constructors shared by the algebraic simplifier's rule tables.

A rule is `rule(instr) -> Instruction | None`: the instruction that should take instr's
place (one of the existing instructions, or a new unattached one built with `make`, whose
operands may again be new), or None when the rule does not apply. Rules never edit the
graph; the driver (algebraic_simplifier.py) validates and applies the replacement.
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.ir import ELIDED, Instruction
from xlapy.hlo.opcodes import VALUE_PRESERVING
from xlapy.hlo.shapes import Layout, PrimitiveType, Shape



def uniform_value(instr: Instruction):
    """The value every element of `instr` has when that is known statically (a constant
    whose elements are all equal, possibly seen through broadcast/reshape/transpose/...),
    as a NumPy scalar; None otherwise (and for empty arrays)."""
    depth = 0
    while instr.opcode in VALUE_PRESERVING and depth < 16:  # a uniform operand: uniform result
        instr, depth = instr.operands[0], depth + 1
    if instr.opcode != "constant" or instr.literal is ELIDED or isinstance(instr.literal, tuple):
        return None
    if instr.literal is None or not instr.shape.is_array:
        return None
    arr = np.asarray(instr.literal)
    if arr.size == 0:
        return None
    flat = arr.reshape(-1)
    first = flat[0]
    with np.errstate(invalid="ignore"):
        if flat.size > 1 and not bool(np.all(flat == first)):
            return None
    return first


def has_value(instr: Instruction, test) -> bool:
    """Is `instr` uniform with a value satisfying `test(value)`?"""
    v = uniform_value(instr)
    if v is None:
        return False
    with np.errstate(invalid="ignore"):
        return bool(test(v))


def is_zero(instr: Instruction) -> bool:   # +0 or -0 (or false)
    return has_value(instr, lambda v: v == 0)


def is_one(instr: Instruction) -> bool:
    return has_value(instr, lambda v: v == 1)


def is_all_ones(instr: Instruction) -> bool:
    """true for pred, every bit set for integers (the identity of `and`)."""
    t = element_type(instr)
    if t is None or not (t.is_pred or t.is_integer):
        return False
    if t.is_pred:
        return has_value(instr, lambda v: bool(v))
    ones = np.array(-1).astype(t.np_dtype) if t.is_signed else np.iinfo(t.np_dtype).max
    return has_value(instr, lambda v: v == ones)


def is_lowest(instr: Instruction) -> bool:
    """-inf for floats, the minimum for integers (the identity of `maximum`)."""
    t = element_type(instr)
    if t is None or t.is_pred:
        return False
    low = -np.inf if t.is_float else np.iinfo(t.np_dtype).min
    return has_value(instr, lambda v: v == low)


def is_highest(instr: Instruction) -> bool:
    """+inf for floats, the maximum for integers (the identity of `minimum`)."""
    t = element_type(instr)
    if t is None or t.is_pred:
        return False
    high = np.inf if t.is_float else np.iinfo(t.np_dtype).max
    return has_value(instr, lambda v: v == high)


def element_type(instr: Instruction) -> PrimitiveType | None:
    s = instr.shape
    return s.element_type if s.is_array else None


def is_int(instr: Instruction) -> bool:
    t = element_type(instr)
    return t is not None and (t.is_integer or t.is_pred)


def is_float(instr: Instruction) -> bool:
    t = element_type(instr)
    return t is not None and t.is_float


def same_shape(a: Instruction | Shape, b: Instruction | Shape) -> bool:
    """Equal shapes, layouts included (an unspecified layout counts as row-major)."""
    sa = a.shape if isinstance(a, Instruction) else a
    sb = b.shape if isinstance(b, Instruction) else b
    return sa.equal_with_layout(sb)


def shape_like(ref: Shape, element_type, dims) -> Shape:
    """A shape for an intermediate instruction: row-major, with an explicit layout when
    `ref` has one (so a module that spells out layouts keeps doing so)."""
    dims = tuple(dims)
    layout = Layout.default(len(dims)) if ref.layout is not None and dims else None
    return Shape.array(element_type, dims, layout)


def make(opcode: str, shape: Shape, operands=(), attrs: dict | None = None,
         literal=None) -> Instruction:
    """A new instruction, not yet in any computation (the driver inserts it)."""
    return Instruction(opcode, shape, list(operands), attrs, literal=literal)


def splat(value, shape: Shape) -> Instruction:
    """broadcast(constant(value)) of `shape` (just the constant for a scalar shape)."""
    t = shape.element_type
    const = make("constant", Shape.array(t, ()), literal=np.array(value, dtype=t.np_dtype))
    if shape.rank == 0:
        return const
    return make("broadcast", shape, [const], {"dimensions": ()})


def x_if(cond: bool, x: Instruction) -> Instruction | None:
    """x when cond holds, else None. Both arguments are evaluated: when `x` is only
    well-defined under `cond` (x.operands[0] of an op that may have none), use an `if`."""
    return x if cond else None
