"""Phase 2 of the HLO text parser (parser.py): records -> IR objects.

Resolves operand and computation names (so forward references work and an unknown name is
reported at its own position), rejects duplicate names, cycles, recursion, gaps in parameter
numbers and several ROOTs, orders computations callees-first, and checks declared signatures
and the entry_computation_layout against what was built. Every error is the parser's
ParseError with line:column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlapy.errors import ParseError
from xlapy.hlo.ir import Computation, Instruction, Module

if TYPE_CHECKING:
    from xlapy.hlo.parser import _CompRecord, _InstrRecord, _Parser


class Builder:
    """Phase 2: turn records into objects, resolving names."""

    def __init__(self, parser: _Parser, mod: Module, records: list[_CompRecord]):
        self.p = parser
        self.mod = mod
        self.records = {}
        for r in records:
            if r.name in self.records:
                raise parser.error(f"computation {r.name} is defined twice", r.pos)
            self.records[r.name] = r
        self.order = records
        self.built: dict[str, Computation] = {}
        self.building: set[str] = set()

    def build(self) -> None:
        entries = [r for r in self.order if r.is_entry]
        if len(entries) > 1:
            raise self.p.error("more than one ENTRY computation", entries[1].pos)
        entry = entries[0] if entries else self.order[-1]
        for r in self.order:  # names are scoped per computation, as in XLA's parser
            names: dict[str, int] = {}
            for ir in r.instrs:
                if ir.name in names:
                    first = self.p.line_col(names[ir.name])[0]
                    raise self.p.error(f"instruction name {ir.name} is used twice in computation "
                                       f"{r.name} (first at line {first})", ir.pos)
                names[ir.name] = ir.pos
        for r in self.order:
            self.computation(r.name, r.pos)
        # Callees before callers, in the text's order where it allows.
        self.mod.computations = []
        placed = set()

        def place(c):
            if id(c) in placed:
                return
            placed.add(id(c))
            for callee in c.called_computations():
                place(callee)
            self.mod.computations.append(c)

        for r in self.order:
            place(self.built[r.name])
        self.mod.entry = self.built[entry.name]
        for c in self.mod.computations:
            c.module = self.mod
            for i in c.instructions:
                self.mod._names.add(i.name)
        if self.mod.has_entry_layout:
            self._check_entry_layout()

    def _check_entry_layout(self) -> None:
        text, pos = self.mod._entry_layout_text
        del self.mod._entry_layout_text
        sub = type(self.p)(text, self.p.filename)  # a parser for the attribute's text
        try:
            sub.expect("{")
            sub.expect("(")
            params = sub.items(sub.shape, ")")
            sub.expect("->")
            result = sub.shape()
        except ParseError as e:
            raise self.p.error(f"malformed entry_computation_layout: {e.message}", pos) from None
        entry = self.mod.entry
        if len(params) != entry.num_parameters:
            raise self.p.error(f"entry_computation_layout has {len(params)} parameters, the entry "
                               f"computation {entry.name} has {entry.num_parameters}", pos)
        for i, (s, p) in enumerate(zip(params, entry.parameters)):
            if not s.compatible(p.shape):
                raise self.p.error(f"entry_computation_layout parameter {i} is {s}, but "
                                   f"{p.name} is {p.shape}", pos)
        if not result.compatible(entry.root.shape):
            raise self.p.error(f"entry_computation_layout result is {result}, but the root "
                               f"{entry.root.name} is {entry.root.shape}", pos)

    def computation(self, name: str, ref_pos: int) -> Computation:
        if name in self.built:
            return self.built[name]
        rec = self.records.get(name)
        if rec is None:
            raise self.p.error(f"unknown computation '{name}'", ref_pos)
        if name in self.building:
            raise self.p.error(f"computation {name} calls itself (recursion is not allowed)",
                               ref_pos)
        self.building.add(name)
        comp = Computation(name)
        comp.attrs = dict(rec.attrs)
        by_name = {ir.name: ir for ir in rec.instrs}
        made: dict[str, Instruction] = {}
        visiting: set[str] = set()

        def make(ir: _InstrRecord) -> Instruction:
            if ir.name in made:
                return made[ir.name]
            if ir.name in visiting:
                raise self.p.error(f"instruction {ir.name} depends on itself (a cycle)", ir.pos)
            visiting.add(ir.name)
            ops = []
            for opname, opos in ir.operands:
                dep = by_name.get(opname)
                if dep is None:
                    raise self.p.error(f"unknown operand '{opname}' (not defined in computation "
                                       f"{name})", opos)
                ops.append(make(dep))
            attrs = {k: self._resolve(v) for k, v in ir.attrs.items()}
            if ir.opcode == "compare" and "order" in attrs:
                attrs = self._compare_order(ir, attrs, ops)
            instr = Instruction(ir.opcode, ir.shape, ops, attrs, ir.name, ir.metadata,
                                ir.literal, ir.parameter_number)
            instr.loc = self.p.line_col(ir.pos)
            made[ir.name] = instr
            visiting.discard(ir.name)
            return instr

        # Build in post order, then keep the text's order of definition.
        for ir in rec.instrs:
            make(ir)
        params = {}
        for ir in rec.instrs:
            instr = made[ir.name]
            instr.parent = comp
            comp.instructions.append(instr)
            if ir.opcode == "parameter":
                if ir.parameter_number in params:
                    raise self.p.error(f"parameter({ir.parameter_number}) appears twice in "
                                       f"computation {name}", ir.pos)
                params[ir.parameter_number] = instr
        if sorted(params) != list(range(len(params))):
            missing = next(i for i in range(len(params) + 1) if i not in params)
            raise self.p.error(f"computation {name} lacks parameter({missing}); parameter "
                               "numbers must be 0..n-1", rec.pos)
        comp.parameters = [params[i] for i in range(len(params))]
        roots = [ir for ir in rec.instrs if ir.is_root]
        if len(roots) > 1:
            raise self.p.error(f"computation {name} has more than one ROOT", roots[1].pos)
        comp.root = made[(roots[0] if roots else rec.instrs[-1]).name]
        if rec.signature is not None:
            sig_params, sig_result = rec.signature
            if len(sig_params) != len(comp.parameters):
                raise self.p.error(f"computation {name} declares {len(sig_params)} parameters "
                                   f"but has {len(comp.parameters)} parameter instructions",
                                   rec.pos)
            for i, (s, p) in enumerate(zip(sig_params, comp.parameters)):
                if not s.compatible(p.shape):
                    raise self.p.error(f"computation {name} declares parameter {i} as {s} but "
                                       f"{p.name} is {p.shape}", rec.pos)
            if not sig_result.compatible(comp.root.shape):
                raise self.p.error(f"computation {name} declares result {sig_result} but its "
                                   f"root {comp.root.name} is {comp.root.shape}", rec.pos)
        self.building.discard(name)
        self.built[name] = comp
        return comp

    def _compare_order(self, ir, attrs: dict, ops: list) -> dict:
        """compare's order=TOTAL|PARTIAL (newer XLA prints a comparison's order so; JAX
        0.11's sort comparators carry it) as the classic attribute: TOTAL on a float or
        complex operand is type=TOTALORDER, PARTIAL its default (FLOAT); on integers both
        are the one order there is."""
        attrs = dict(attrs)
        order = attrs.pop("order")
        pos = ir.attr_pos.get("order", ir.pos)
        if order not in ("TOTAL", "PARTIAL"):
            raise self.p.error(f"compare: order={order} is not one of TOTAL, PARTIAL", pos)
        t = ops[0].shape.element_type if ops and ops[0].shape.is_array else None
        if t is None or not (t.is_float or t.is_complex):
            return attrs
        implied = "TOTALORDER" if order == "TOTAL" else "FLOAT"
        given = attrs.setdefault("type", implied)
        if given != implied:
            raise self.p.error(f"compare: order={order} contradicts type={given}", pos)
        return attrs

    def _resolve(self, v):
        if isinstance(v, tuple) and v and v[0] == "comp":
            return self.computation(v[1], v[2])
        if isinstance(v, tuple) and v and v[0] == "comps":
            return [self.computation(n, p) for _, n, p in v[1]]
        return v
