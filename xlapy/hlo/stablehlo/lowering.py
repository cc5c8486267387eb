"""What the lowering rules work with (rules_data.py, rules_control.py, chlo.py): an
Emitter that builds one HLO computation, the Scope of SSA values, and the OpContext a rule
gets for one op (its operands, attributes, result types and regions). convert.py's
Converter drives them.

Results an HLO op produces as one tuple (multi-result reduce, while, case, call,
custom_call, sort, ...) are unpacked by get-tuple-element when, and where, they are first
used (_Lazy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xlapy.errors import ParseError
from xlapy.hlo.ir import Computation, Instruction
from xlapy.hlo.shape_inference import infer_shape
from xlapy.hlo.shapes import Shape, primitive_type
from xlapy.hlo.stablehlo.tree import Block, Op, Use

if TYPE_CHECKING:
    from xlapy.hlo.stablehlo.convert import Converter

RETURN_OPS = ("func.return", "stablehlo.return", "mhlo.return")
DECLARATIONS = ("sdy.mesh",)  # module-level ops that do not change what the program computes


class Emitter:
    """Builds one computation: instructions named module-wide, with the current metadata."""

    def __init__(self, conv: "Converter", name: str):
        self.conv = conv
        self.comp = Computation(conv.computation_name(name))
        self.metadata: dict = {}
        self.loc: tuple[int, int] | None = None  # (line, column) of the op being lowered

    def emit(self, opcode: str, operands=(), attrs=None, declared: Shape | None = None,
             literal=None, parameter_number=None, name: str | None = None) -> Instruction:
        operands = list(operands)
        shape = infer_shape(opcode, [o.shape for o in operands], attrs, declared, literal)
        if declared is not None and declared.layout is not None and shape.compatible(declared):
            shape = declared
        elif opcode == "get-tuple-element":  # keep the element's layout (a custom call's)
            shape = operands[0].shape.tuple_shapes[attrs["index"]]
        instr = Instruction(opcode, shape, operands, attrs,
                            self.conv.names.unique_name(name or opcode), self.metadata,
                            literal, parameter_number)
        instr.loc = self.loc
        return self.comp.add_instruction(instr)

    def parameter(self, shape: Shape, name: str) -> Instruction:
        return self.emit("parameter", declared=shape, parameter_number=len(self.comp.parameters),
                         name=name)

    def constant(self, value, dtype) -> Instruction:
        arr = np.asarray(value, dtype=dtype)
        return self.emit("constant", declared=Shape.array(primitive_type(arr.dtype), arr.shape),
                         literal=arr)

    def tuple_of(self, values: list) -> Instruction:
        return values[0] if len(values) == 1 else self.emit("tuple", values)

    def finish(self, root: Instruction) -> Computation:
        self.comp.root = root
        return self.comp


class _Lazy:
    """Element `index` of a tuple-shaped value, unpacked at its first use."""

    __slots__ = ("tuple", "index", "value")

    def __init__(self, tup: Instruction, index: int):
        self.tuple, self.index, self.value = tup, index, None


class Scope:
    """SSA names -> HLO values within one computation (nested regions get their own)."""

    def __init__(self, em: Emitter):
        self.em = em
        self.values: dict[tuple[str, int], object] = {}

    def define(self, name: str, values: list, pos: int, p) -> None:
        for i, v in enumerate(values):
            if (name, i) in self.values:
                raise p.error(f"%{name} is defined twice", pos)
            self.values[(name, i)] = v

    def get(self, use: Use, p) -> Instruction:
        v = self.values.get((use.name, use.index))
        if v is None:
            if (use.name, 0) in self.values and use.index:
                raise p.error(f"%{use.name} has no result #{use.index}", use.pos)
            raise p.error(f"use of undefined value %{use.name}", use.pos)
        if not use.explicit_index and (use.name, 1) in self.values:
            raise p.error(f"%{use.name} has several results: name one as %{use.name}#N",
                          use.pos)
        if isinstance(v, _Lazy):
            if v.value is None:
                v.value = self.em.emit("get-tuple-element", [v.tuple], {"index": v.index})
            return v.value
        return v


class OpContext:
    """What a lowering rule (rules_data.py, rules_control.py, chlo.py) sees: the op, its
    operands and helpers."""

    def __init__(self, conv: "Converter", op: Op, em: Emitter, scope: Scope):
        self.conv, self.op, self.em, self.scope = conv, op, em, scope
        self.p = conv.p

    # ---- operands, results, errors -----------------------------------------------------------
    def error(self, message: str, pos: int | None = None) -> ParseError:
        return self.p.error(f"{self.op.name}: {message}", self.op.pos if pos is None else pos)

    def operands(self) -> list[Instruction]:
        return [self.scope.get(u, self.p) for u in self.op.operands]

    def operand(self, i: int) -> Instruction:
        return self.scope.get(self.op.operands[i], self.p)

    def result_type(self, i: int = 0) -> Shape:
        types = self.op.result_types
        if i >= len(types):
            raise self.error(f"has no result type #{i}")
        return types[i]

    def emit(self, *args, **kwargs) -> Instruction:
        return self.em.emit(*args, **kwargs)

    def unpack(self, tup: Instruction, n: int) -> list:
        """The n results an HLO op carries in one tuple-shaped value, each unpacked where it
        is first used (n == 1: the value itself is the one result)."""
        if n == 1:
            return [tup]
        return [_Lazy(tup, i) for i in range(n)]

    # ---- attributes --------------------------------------------------------------------------
    def attr(self, name: str, default=None, required: bool = False):
        if name in self.op.attrs:
            return self.op.attrs[name]
        if required:
            raise self.error(f"missing attribute '{name}'")
        return default

    # ---- regions -----------------------------------------------------------------------------
    def region(self, i: int, what: str) -> Block:
        if i >= len(self.op.regions):
            raise self.error(f"missing its {what} region")
        blocks = self.op.regions[i]
        if len(blocks) != 1:
            raise self.error(f"its {what} region must have exactly one block")
        return blocks[0]

    def scalar_computation(self, i: int, what: str):
        """Region i as a computation whose parameters are its block arguments (reducers,
        comparators, scatter updates); HLO's shape rules check their signatures."""
        block = self.region(i, what)
        captured = captured_uses(block)
        if captured:
            u = captured[0]
            raise self.p.error(f"the {what} region of {self.op.name} uses %{u.name} defined "
                               "outside it; xlapy passes outside values only into while, case "
                               "and if regions", u.pos)

        def bind(em, scope):
            for k, (name, t, pos) in enumerate(block.args):
                scope.define(name, [em.parameter(t, f"Arg_{k}")], pos, self.p)
        em, values = self.conv.block(block, f"{self.short_name}_{what}", bind, self.em.metadata)
        return em.finish(em.tuple_of(values) if values else em.emit("tuple", []))

    @property
    def short_name(self) -> str:
        return self.op.name.split(".")[-1]


def captured_uses(block: Block) -> list[Use]:
    """Uses inside `block` (and its nested regions) of values defined outside it, in order
    of first use, one per value."""
    out, seen = [], set()

    def walk(b: Block, defined: set):
        d = set(defined)
        d.update((name, 0) for name, _, _ in b.args)
        for op in b.ops:
            for u in op.operands:
                key = (u.name, u.index)
                if key not in d and key not in seen:
                    seen.add(key)
                    out.append(u)
            for region in op.regions:
                for nested in region:
                    walk(nested, d)
            for name, n in op.results:
                d.update((name, i) for i in range(n))
    walk(block, set())
    return out
