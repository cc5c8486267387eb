"""HLO Module -> StableHLO text (MLIR), which JAX/jaxlib and xlapy's own reader parse.

    module @name {
      func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) { ... }
      func.func private @callee(...) -> ... { ... }
    }

The entry computation is @main; computations that `call`/`fusion`/custom-call name become
private functions; the computations of reduce, sort, while, conditional, ... are printed
inline as their ops' regions. Tuples are not values in StableHLO the way they are in HLO:
an HLO tuple is kept as the list of its elements (a get-tuple-element of it is just the
element), ops with tuple results print as several results (`%0:2 = ...`, used as `%0#1`),
a while loop carries the elements of its tuple as separate loop values, a function returns
its root tuple's elements, and `stablehlo.tuple` is printed only where a tuple is needed
whole. `copy` is the identity and prints nothing; `bitcast` prints as a reshape (when the
layouts make it one). Instruction metadata (op_name, source_file:source_line) becomes
`loc(...)`.

Each opcode's text comes from its rule in print_rules.py (named by the op table, ops.py).
An instruction StableHLO cannot express raises XlapyError naming it.
"""

from __future__ import annotations

import re

from xlapy.errors import XlapyError
from xlapy.hlo.aliasing import module_aliases
from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.attrs import symbol_text
from xlapy.hlo.stablehlo.ops import PRINTERS
from xlapy.hlo.stablehlo.reader import mlir_quote
from xlapy.hlo.stablehlo.types import type_to_mlir


class _Names:
    def __init__(self):
        self.values = 0
        self.args = 0

    def value(self) -> str:
        self.values += 1
        return f"%{self.values - 1}"

    def arg(self) -> str:
        self.args += 1
        return f"%arg{self.args - 1}"


class Body:
    """Prints one computation's instructions as the body of a function or region."""

    def __init__(self, printer: "ModulePrinter", names: _Names, indent: int):
        self.printer = printer
        self.names = names
        self.indent = indent
        self.lines: list[str] = []
        self.values: dict[int, object] = {}  # id(instr) -> '%x' or [element refs]
        self._tuples: dict[int, str] = {}

    @staticmethod
    def row(opcode: str):
        """The op table's row that prints `opcode` (None if none does)."""
        return PRINTERS.get(opcode)

    # ---- helpers for the rules ---------------------------------------------------------------
    def t(self, shape: Shape) -> str:
        return type_to_mlir(shape.without_layout() if not shape.is_tuple else shape)

    def results_type(self, instr: Instruction) -> str:
        s = instr.shape
        if s.is_tuple:
            return "(" + ", ".join(self.t(x) for x in s.tuple_shapes) + ")"
        return self.t(s)

    @staticmethod
    def flat_shapes(shape: Shape) -> list[Shape]:
        return list(shape.tuple_shapes) if shape.is_tuple else [shape]

    def bind(self, instr: Instruction, ref) -> None:
        self.values[id(instr)] = ref

    def ref(self, instr: Instruction) -> str:
        v = self.values.get(id(instr))
        if v is None:
            raise XlapyError(f"internal: {instr.name} is used before it is printed")
        return self.materialize(v, instr.shape)

    def materialize(self, v, shape: Shape) -> str:
        if isinstance(v, str):
            return v
        done = self._tuples.get(id(v))
        if done is None:
            parts = [self.materialize(e, s) for e, s in zip(v, shape.tuple_shapes)]
            done = self.line_value(f"stablehlo.tuple {', '.join(parts)} : {self.t(shape)}")
            self._tuples[id(v)] = done
        return done

    def flat_operand(self, instr: Instruction) -> list[str]:
        """The values of a tuple operand's elements (one level), or [the value]."""
        if not instr.shape.is_tuple:
            return [self.ref(instr)]
        v = self.values[id(instr)]
        if isinstance(v, str):
            v = [self.line_value(f"stablehlo.get_tuple_element {v}[{k}] : "
                                 f"({self.t(instr.shape)}) -> {self.t(s)}")
                 for k, s in enumerate(instr.shape.tuple_shapes)]
        return [self.materialize(e, s) for e, s in zip(v, instr.shape.tuple_shapes)]

    def line(self, text: str) -> None:
        self.lines.append(" " * self.indent + text)

    def line_value(self, text: str) -> str:
        name = self.names.value()
        self.line(f"{name} = {text}")
        return name

    def define(self, instr: Instruction, text: str, single: bool = False) -> None:
        """`%name = text` for instr, with its loc, or `%name:n = text` when the op returns
        the n elements of instr's tuple shape as results (not when `single`: a value of
        tuple type); binds its value(s)."""
        loc = self.printer.loc(instr)
        if instr.shape.is_tuple and not single:
            n = len(instr.shape.tuple_shapes)
            if n == 0:
                self.line(text + loc)
                self.bind(instr, [])
                return
            name = self.names.value()
            self.line(f"{name}{':' + str(n) if n > 1 else ''} = {text}{loc}")
            self.bind(instr, [f"{name}#{k}" if n > 1 else name for k in range(n)])
            return
        name = self.names.value()
        self.line(f"{name} = {text}{loc}")
        self.bind(instr, name)

    def bitcast(self, instr: Instruction) -> None:
        """A bitcast reinterprets the buffer: in logical terms, a transpose into the operand's
        physical (major-to-minor) order, a reshape, and a transpose out of the result's."""
        (x,) = instr.operands
        a, b = x.shape, instr.shape
        if not (a.is_array and b.is_array) or a.size != b.size \
                or a.element_type.bits != b.element_type.bits:
            raise XlapyError(f"bitcast {instr.name} ({a} -> {b}) changes the number of "
                             "elements or their width: StableHLO has no such bitcast")
        if a.element_type != b.element_type:  # reinterpret the bits after moving them
            b = b.with_element_type(a.element_type).with_layout(b.layout)
        ref = self.ref(x)
        pa = tuple(reversed(a.minor_to_major))
        pb = tuple(reversed(b.minor_to_major))
        if pa != tuple(range(a.rank)):
            phys = Shape(a.element_type, tuple(a.dims[d] for d in pa))
            ref = self.line_value(f"stablehlo.transpose {ref}, dims = {list(pa)} : "
                                  f"({self.t(a)}) -> {self.t(phys)}")
            a = phys
        target = Shape(b.element_type, tuple(b.dims[d] for d in pb))
        steps = []
        if a.dims != target.dims or (pb == tuple(range(b.rank)) and b == instr.shape):
            steps.append(f"stablehlo.reshape {{}} : ({self.t(a)}) -> {self.t(target)}")
        if pb != tuple(range(b.rank)):
            inverse = [pb.index(d) for d in range(b.rank)]
            steps.append(f"stablehlo.transpose {{}}, dims = {inverse} : ({self.t(target)}) -> "
                         f"{self.t(b)}")
        if b.element_type != instr.shape.element_type:
            steps.append(f"stablehlo.bitcast_convert {{}} : ({self.t(b)}) -> "
                         f"{self.t(instr.shape)}")
        for step in steps[:-1]:
            ref = self.line_value(step.format(ref))
        self.define(instr, steps[-1].format(ref))

    def function(self, comp: Computation) -> str:
        return self.printer.function_symbol(comp)

    def region(self, comp: Computation, flat_param: Shape | None = None,
               bind: list | None = None) -> str:
        """The region text `{ ^bb0(...): ... stablehlo.return ... }` of comp. Parameters
        become block arguments; with flat_param, the one (tuple) parameter's elements do;
        with bind, parameter i is the outer value bind[i] (captured)."""
        sub = Body(self.printer, self.names, self.indent + 2)
        header = ""
        if bind is not None:
            for p, outer in zip(comp.parameters, bind):
                sub.values[id(p)] = self.values[id(outer)]
        else:
            args = []
            if flat_param is not None:
                (param,) = comp.parameters
                elems = []
                for s in self.flat_shapes(flat_param):
                    a = self.names.arg()
                    args.append(f"{a}: {self.t(s)}")
                    elems.append(a)
                sub.values[id(param)] = elems if flat_param.is_tuple else elems[0]
            else:
                for p in comp.parameters:
                    a = self.names.arg()
                    args.append(f"{a}: {self.t(p.shape)}")
                    sub.values[id(p)] = a
            if args:
                header = " " * self.indent + f"^bb0({', '.join(args)}):\n"
        sub.body(comp, "stablehlo.return")
        return "{\n" + header + "\n".join(sub.lines) + "\n" + " " * self.indent + "}"

    # ---- a computation's instructions --------------------------------------------------------
    def body(self, comp: Computation, ret: str) -> None:
        live = _live(comp)
        for instr in comp.post_order():
            if id(instr) not in live or id(instr) in self.values:
                continue
            op = instr.opcode
            if op == "tuple":
                self.bind(instr, [self.values[id(o)] for o in instr.operands])
            elif op == "get-tuple-element":
                v = self.values[id(instr.operands[0])]
                k = instr.attrs["index"]
                if isinstance(v, list):
                    self.bind(instr, v[k])
                else:
                    self.define(instr, f"stablehlo.get_tuple_element {v}[{k}] : "
                                       f"({self.t(instr.operands[0].shape)}) -> "
                                       f"{self.t(instr.shape)}", single=True)
            elif op == "copy":
                self.bind(instr, self.values[id(instr.operands[0])])
            elif op == "bitcast":
                self.bitcast(instr)
            elif op == "parameter":
                raise XlapyError(f"internal: parameter {instr.name} is not bound")
            else:
                row = PRINTERS.get(op)
                if row is None:
                    raise XlapyError(f"{instr.where()}cannot print {op} ({instr.name}) as "
                                     "StableHLO: xlapy has no StableHLO form for it")
                row.to_text(self, instr)
        root = comp.root
        if root.shape.is_tuple:
            vals = self.flat_operand(root)
            types = ", ".join(self.t(s) for s in root.shape.tuple_shapes)
        else:
            vals, types = [self.ref(root)], self.t(root.shape)
        self.line(f"{ret} {', '.join(vals)} : {types}" if vals else ret)


def _live(comp: Computation) -> set:
    """ids of the instructions the root depends on (side-effecting custom-calls too)."""
    stack = [comp.root] + [i for i in comp.instructions if i.opcode == "custom-call"
                           and i.attrs.get("custom_call_has_side_effect")]
    seen = set()
    while stack:
        i = stack.pop()
        if id(i) in seen:
            continue
        seen.add(id(i))
        stack.extend(i.operands)
    return seen


class ModulePrinter:
    def __init__(self, module: Module, print_locations: bool):
        self.module = module
        self.print_locations = print_locations
        self.symbols: dict[int, str] = {}
        self.queue: list[Computation] = []
        self.taken = {"main"}

    def function_symbol(self, comp: Computation) -> str:
        sym = self.symbols.get(id(comp))
        if sym is None:
            base = re.sub(r"[^\w$.]", "_", comp.name) or "f"
            sym, n = base, 0
            while sym in self.taken:
                n += 1
                sym = f"{base}_{n}"
            self.taken.add(sym)
            self.symbols[id(comp)] = sym
            self.queue.append(comp)
        return sym

    def loc(self, instr: Instruction) -> str:
        if not self.print_locations:
            return ""
        md = instr.metadata
        name, src, line = md.get("op_name"), md.get("source_file"), md.get("source_line")
        file_loc = f"{mlir_quote(str(src))}:{int(line)}:0" if src and isinstance(line, int) \
            else None
        if name and file_loc:
            return f" loc({mlir_quote(str(name))}({file_loc}))"
        if name:
            return f" loc({mlir_quote(str(name))})"
        if file_loc:
            return f" loc({file_loc})"
        return ""

    def func(self, comp: Computation, sym: str, public: bool) -> list[str]:
        names = _Names()
        body = Body(self, names, 4)
        args = []
        aliases = {}
        if public:
            for a in module_aliases(self.module):
                if not a.parameter_index:
                    aliases[a.parameter_number] = a.output_index
        for k, p in enumerate(comp.parameters):
            a = names.arg()
            attr = ""
            if k in aliases and len(aliases[k]) <= 1 and (comp.root.shape.is_tuple
                                                          or not aliases[k]):
                out = aliases[k][0] if aliases[k] else 0
                attr = f" {{tf.aliasing_output = {out} : i32}}"
            args.append(f"{a}: {body.t(p.shape)}{attr}")
            body.values[id(p)] = a
        body.body(comp, "return")
        root = comp.root.shape
        results = [body.t(s) for s in body.flat_shapes(root)]
        ret = "" if not results else (" -> " + results[0] if len(results) == 1 and not
                                      root.is_tuple else " -> (" + ", ".join(results) + ")")
        head = (f"  func.func {'public' if public else 'private'} @{symbol_text(sym)}"
                f"({', '.join(args)}){ret} {{")
        return [head] + body.lines + ["  }"]

    def run(self) -> str:
        m = self.module
        if m.entry is None:
            raise XlapyError(f"module {m.name} has no entry computation")
        lines = [f"module @{symbol_text(m.name)} {{"]
        lines += self.func(m.entry, "main", public=True)
        done = 0
        while done < len(self.queue):
            comp = self.queue[done]
            done += 1
            lines += self.func(comp, self.symbols[id(comp)], public=False)
        lines.append("}")
        return "\n".join(lines) + "\n"


def to_stablehlo(module: Module, print_locations: bool = True) -> str:
    """The module as StableHLO text (see the module docstring). Raises XlapyError for an
    instruction StableHLO cannot express (an elided constant, a layout-changing bitcast,
    topk with largest=false, ...)."""
    if not isinstance(module, Module):
        raise TypeError(f"to_stablehlo() takes an xlapy.hlo.Module, not {type(module).__name__}")
    return ModulePrinter(module, print_locations).run()
