"""Phase 1 of the StableHLO reader: MLIR text -> a syntax tree of operations.

The tree is MLIR's own structure, nothing StableHLO-specific: an Op has a name, result
groups (`%0:2 =` or `%a, %b =`), operand uses (`%0#1`), attributes, regions of blocks with
typed arguments, and types. Both spellings of an op land in the same Op: the generic form
(`"stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>`, properties `<{...}>`
and discardable attributes `{...}` merged) and the short form, which each op's row in the op
table (ops.py) reads with its `syntax` reader (pretty.py), filling in the attribute names the
generic form would use. `loc(...)` may follow any op, argument or function; `#loc` aliases
may be defined before or after their uses (they are resolved when the tree is converted).

Phase 2 (convert.py) turns the tree into an HLO module.
"""

from __future__ import annotations

import re

from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.attrs import Opaque, parse_attr, parse_dict_body
from xlapy.hlo.stablehlo.ops import OPS
from xlapy.hlo.stablehlo.reader import Reader
from xlapy.hlo.stablehlo.tree import Block, Op, Use
from xlapy.hlo.stablehlo.types import FunctionType, parse_results, parse_type, type_to_mlir

_OP_NAME = re.compile(r"[A-Za-z_][\w$]*(?:\.[\w$]+)*")
_RESULT = re.compile(r"%([A-Za-z_$.\-][\w$.\-]*|\d+)(?::(\d+))?")
_USE = re.compile(r"%([A-Za-z_$.\-][\w$.\-]*|\d+)(?:#(\d+))?")
_ALIAS_DEF = re.compile(r"([#!][\w$.\-]+)\s*=")
_SHORT_NAMES = {"return": "func.return", "call": "func.call", "module": "builtin.module",
                "func": "func.func"}


class MlirParser(Reader):
    def __init__(self, text: str, filename: str):
        super().__init__(text, filename)
        self.aliases: dict = {}  # '#name' -> attribute, '!name' -> type
        self.ops_table = OPS

    # ---- the file ----------------------------------------------------------------------------
    def parse_file(self) -> Op:
        tops = []
        while not self.at_end():
            text, pos = self.text, self.pos
            if text.startswith("{-#", pos):
                end = text.find("#-}", pos)
                if end < 0:
                    raise self.error("'{-#' without a closing '#-}'")
                self.pos = end + 3
                continue
            m = _ALIAS_DEF.match(text, pos)
            if m:
                self.pos = m.end()
                name = m.group(1)
                if name in self.aliases:
                    raise self.error(f"alias {name} is defined twice", pos)
                self.aliases[name] = (parse_type(self, self.aliases) if name.startswith("!")
                                      else parse_attr(self, self.aliases))
                continue
            tops.append(self.operation())
        if len(tops) == 1 and tops[0].name == "builtin.module":
            module = tops[0]
        else:
            for op in tops:
                if op.name == "builtin.module":
                    raise self.error("a module must be the only top-level operation", op.pos)
            module = Op("builtin.module", 0, regions=[[Block([], tops, 0)]])
        if not module.regions or not module.regions[0]:
            raise self.error("the module has no body", module.pos)
        return module

    # ---- operations --------------------------------------------------------------------------
    def operation(self) -> Op:
        self.skip_ws()
        pos = self.pos
        results = []
        if self.text.startswith("%", pos):
            def group():
                m = self.match(_RESULT, "a result name such as %0 or %0:2")
                n = int(m.group(2)) if m.group(2) else 1
                if n < 1:
                    raise self.error("a result group needs at least one result", m.start())
                return m.group(1), n
            results.append(group())
            while self.accept(","):
                results.append(group())
            self.expect("=", "after the result names")
        self.skip_ws()
        name_pos = self.pos
        if self.text.startswith('"', self.pos):
            name = self.string()
            op = Op(name, name_pos, results)
            self._check_known(op)
            self.generic_body(op)
        else:
            name = self.match(_OP_NAME, "an operation name such as stablehlo.add").group(0)
            name = _SHORT_NAMES.get(name, name)
            op = Op(name, name_pos, results)
            row = self._check_known(op)
            if row.syntax is None:
                raise self.error(f"{name} has no short form here: write it in the generic form "
                                 f'"{name}"(...)', name_pos)
            row.syntax(self, op)
        if self.keyword("loc"):
            op.loc = self.loc_body()
        self._check_result_count(op)
        return op

    def _check_known(self, op: Op):
        row = self.ops_table.get(op.name)
        if row is None:
            raise self.error(f"unknown operation '{op.name}'", op.pos)
        if row.unsupported:
            raise self.error(f"{op.name} is not supported: {row.unsupported}", op.pos)
        return row

    def _check_result_count(self, op: Op) -> None:
        if op.result_types is None:
            return
        n = op.num_results
        if n != len(op.result_types):
            raise self.error(f"{op.name} defines {n} result(s) but its type has "
                             f"{len(op.result_types)}", op.pos)

    def generic_body(self, op: Op) -> None:
        self.expect("(", f"after \"{op.name}\" (its operand list)")
        op.operands = self.items(self.use, ")", "the operand list")
        if self.accept("["):
            raise self.error("successor blocks (branches between blocks) are not supported")
        if self.accept("<"):
            self.expect("{", "to open the properties <{...}>")
            op.attrs.update(parse_dict_body(self, self.aliases))
            self.expect(">", "to close the properties <{...}>")
        if self.accept("("):
            op.regions = self.items(self.region, ")", "the region list")
        if self.accept("{"):
            for k, v in parse_dict_body(self, self.aliases).items():
                if k in op.attrs:
                    raise self.error(f"attribute '{k}' given twice", op.pos)
                op.attrs[k] = v
        self.expect(":", f"and the type of {op.name}")
        self.skip_ws()
        tpos = self.pos
        t = parse_type(self, self.aliases)
        if not isinstance(t, FunctionType):
            raise self.error(f"expected a function type such as (tensor<f32>) -> tensor<f32>, "
                             f"found {type_to_mlir(t)}", tpos)
        op.operand_types = list(t.inputs)
        op.result_types = list(t.results)
        if len(op.operand_types) != len(op.operands):
            raise self.error(f"{op.name} has {len(op.operands)} operand(s) but its type lists "
                             f"{len(op.operand_types)}", tpos)

    def use(self) -> Use:
        self.skip_ws()
        pos = self.pos
        m = self.match(_USE, "an SSA value such as %0")
        return Use(m.group(1), int(m.group(2) or 0), pos, m.group(2) is not None)

    def uses(self) -> list:
        """`%a, %b#1, ...` (possibly none)."""
        out = []
        self.skip_ws()
        if not self.text.startswith("%", self.pos):
            return out
        out.append(self.use())
        while True:
            save = self.pos
            if self.accept(","):
                self.skip_ws()
                if self.text.startswith("%", self.pos):
                    out.append(self.use())
                    continue
            self.pos = save
            return out

    # ---- regions and blocks ------------------------------------------------------------------
    def region(self) -> list:
        self.expect("{", "to open a region")
        return [self.block("}")]

    def block(self, closer: str = "}") -> Block:
        self.skip_ws()
        pos = self.pos
        args = []
        if self.text.startswith("^", self.pos):
            self.match(re.compile(r"\^[\w$.\-]+"), "a block label")
            if self.accept("("):
                args = self.items(self.block_arg, ")", "the block arguments")
            self.expect(":", "after the block label")
        ops = []
        while not self.accept(closer):
            self.skip_ws()
            if self.pos >= len(self.text):
                raise self.error(f"expected '{closer}' to close the region, found the end of "
                                 "the input", pos)
            if self.text.startswith("^", self.pos):
                raise self.error("regions with several blocks are not supported (StableHLO "
                                 "regions have one block)")
            ops.append(self.operation())
        return Block(args, ops, pos)

    def block_arg(self):
        self.skip_ws()
        pos = self.pos
        name = self.ssa_name("a block argument such as %arg0")
        self.expect(":", f"after block argument %{name}")
        t = self.value_type()
        if self.keyword("loc"):
            self.loc_body()
        return name, t, pos

    def value_type(self) -> Shape:
        self.skip_ws()
        pos = self.pos
        t = parse_type(self, self.aliases)
        if not isinstance(t, Shape):
            raise self.error(f"expected a tensor, tuple or token type, found {type_to_mlir(t)}",
                             pos)
        return t

    # ---- pieces the short forms share --------------------------------------------------------
    def loc_body(self) -> Opaque:
        self.expect("(", "after loc")
        return Opaque("loc(" + self.balanced("(", ")") + ")")

    def opt_attr_dict(self, op: Op) -> None:
        self.skip_ws()
        if self.text.startswith("{", self.pos):
            self.pos += 1
            for k, v in parse_dict_body(self, self.aliases).items():
                if k in op.attrs:
                    raise self.error(f"attribute '{k}' given twice", op.pos)
                op.attrs[k] = v

    def type_signature(self, op: Op, policy: str = "same") -> None:
        """`: T`, `: T1, T2`, `: (T1, T2) -> R` or `: T1, T2 -> R` (chlo); a plain list
        means, by `policy`: 'same' (the result has the one type), 'last' (select: the
        result has the last type), 'results' (the results have the listed types),
        'operands' (the operands have them; no results)."""
        self.expect(":", f"and the type of {op.name}")
        self.skip_ws()
        pos = self.pos
        t = parse_type(self, self.aliases)
        if isinstance(t, FunctionType):
            op.operand_types, op.result_types = list(t.inputs), list(t.results)
            self._check_operand_types(op, pos)
            return
        types = [t]
        while True:
            save = self.pos
            if not self.accept(","):
                break
            self.skip_ws()
            if self.text.startswith(("}", "%"), self.pos):  # not a type: leave the comma
                self.pos = save
                break
            types.append(parse_type(self, self.aliases))
        for ty in types:
            if not isinstance(ty, Shape):
                raise self.error(f"expected a tensor, tuple or token type, found "
                                 f"{type_to_mlir(ty)}", pos)
        if self.accept("->"):
            op.operand_types, op.result_types = types, parse_results(self, self.aliases)
            self._check_operand_types(op, pos)
        elif policy == "same":
            if len(types) != 1:
                raise self.error(f"expected one type for {op.name} or a function type such as "
                                 "(tensor<f32>) -> tensor<f32>", pos)
            op.result_types = types
        elif policy == "last":
            op.result_types = types[-1:]
        elif policy == "results":
            op.result_types = types
            op.operand_types = list(types)
            self._check_operand_types(op, pos)
        elif policy == "operands":
            op.operand_types = types
            op.result_types = []
            self._check_operand_types(op, pos)
        for ty in op.result_types:
            if not isinstance(ty, Shape):
                raise self.error(f"expected a tensor, tuple or token result type, found "
                                 f"{type_to_mlir(ty)}", pos)

    def _check_operand_types(self, op: Op, pos: int) -> None:
        if op.operand_types is not None and len(op.operand_types) != len(op.operands):
            raise self.error(f"{op.name} has {len(op.operands)} operand(s) but its type lists "
                             f"{len(op.operand_types)}", pos)
