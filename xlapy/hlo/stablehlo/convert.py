"""Phase 2 of the StableHLO reader: the syntax tree (syntax.py) -> an HLO Module.

Functions become computations (`main`, else the only public function, is the entry);
func.call becomes `call`. Each op is lowered by its row of the op table (ops.py), which
returns one HLO value per MLIR result. Results an HLO op produces as one tuple (multi-result
reduce, while, case, call, custom_call, sort, ...) are unpacked by get-tuple-element when,
and where, they are first used.

Regions become computations:
  - bodies of reduce, reduce_window, scatter, select_and_scatter, sort and map take their
    block arguments as parameters and return a scalar (or a tuple of scalars);
  - while's cond and body take the loop state, a tuple when it has several values;
  - case/if branches take no arguments in StableHLO.
StableHLO regions of while/case/if may use values defined outside them (implicit capture);
HLO computations cannot, so captured values are passed in: appended to the loop state of a
while (the body passes them through), or as the operand of each branch of a conditional.

Every error is a ParseError at the offending op, argument or use (shape errors from HLO
shape inference included, with the op's position).
"""

from __future__ import annotations

import re

from xlapy.errors import ParseError, XlapyError
from xlapy.hlo.aliasing import Alias, check_aliases, set_module_aliases
from xlapy.hlo.ir import Computation, Module
from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.lowering import (DECLARATIONS, RETURN_OPS, Emitter, OpContext, Scope,
                                          _Lazy)
from xlapy.hlo.stablehlo.ops import OPS
from xlapy.hlo.stablehlo.reader import mlir_unescape
from xlapy.hlo.stablehlo.tree import Block, Op
from xlapy.hlo.stablehlo.types import FunctionType, type_to_mlir
from xlapy.hlo.verifier import verify


class Converter:
    def __init__(self, module_op: Op, aliases: dict, parser):
        self.p = parser
        self.module_op = module_op
        self.aliases = aliases
        self.names = Module("names")  # its unique_name names every instruction
        self._comp_names: set[str] = set()
        self.funcs: dict[str, Op] = {}
        for op in module_op.regions[0][0].ops:
            if op.name in DECLARATIONS:
                continue
            if op.name != "func.func":
                raise parser.error(f"expected func.func at the top level of the module, found "
                                   f"{op.name}", op.pos)
            name = _sym_name(op, parser)
            if name in self.funcs:
                raise parser.error(f"function @{name} is defined twice", op.pos)
            self.funcs[name] = op
        self.built: dict[str, Computation] = {}
        self.building: set[str] = set()
        self._loc_cache: dict[str, dict] = {}

    def computation_name(self, name: str) -> str:
        base = re.sub(r"[^\w.\-]", "_", name) or "computation"
        cand, n = base, 0
        while cand in self._comp_names:
            n += 1
            cand = f"{base}.{n}"
        self._comp_names.add(cand)
        return cand

    # ---- the module --------------------------------------------------------------------------
    def run(self) -> Module:
        if not self.funcs:
            raise self.p.error("the module defines no function", self.module_op.pos)
        if "main" in self.funcs:
            entry_name = "main"
        else:
            public = [n for n, f in self.funcs.items()
                      if f.attrs.get("sym_visibility", "public") == "public"]
            if len(public) != 1:
                raise self.p.error("cannot tell the entry function: name it @main",
                                   self.module_op.pos)
            entry_name = public[0]
        entry = self.function(entry_name, self.funcs[entry_name].pos, entry=True)
        name = self.module_op.attrs.get("sym_name", "module")
        mod = Module(name if isinstance(name, str) else "module")
        order, seen = [], set()

        def visit(c):
            if id(c) in seen:
                return
            seen.add(id(c))
            for callee in c.called_computations():
                visit(callee)
            order.append(c)
        visit(entry)
        for c in order:
            mod.add_computation(c, entry=c is entry)
        self._aliases(mod, self.funcs[entry_name])
        counts = {key: str(getattr(v, "value", v)) for mlir_key, key in
                  (("mhlo.num_replicas", "replica_count"),
                   ("mhlo.num_partitions", "num_partitions"))
                  if (v := self.module_op.attrs.get(mlir_key)) is not None}
        if any(v != "1" for v in counts.values()):  # the collectives' device counts
            mod.attrs.update(counts)
        verify(mod)
        return mod

    def _aliases(self, mod: Module, f: Op) -> None:
        """Donated arguments (`tf.aliasing_output = k` on an argument of the entry) become
        the module's input_output_alias: result leaf k may reuse that argument's buffer."""
        aliases = []
        n_results = len(f.attrs["function_type"].results)
        for k, attrs in enumerate(f.attrs.get("arg_attrs") or []):
            out = attrs.get("tf.aliasing_output") if isinstance(attrs, dict) else None
            if out is None:
                continue
            out = getattr(out, "value", out)
            if not isinstance(out, int) or not 0 <= out < n_results:
                raise self.p.error(f"argument {k} of @main aliases output {out}, which does not "
                                   "exist", f.pos)
            aliases.append(Alias((out,) if n_results > 1 else (), k, ()))
        if aliases:
            set_module_aliases(mod, aliases)
            try:
                check_aliases(mod)
            except XlapyError as e:
                raise self.p.error(str(e), f.pos) from None

    def function(self, name: str, ref_pos: int, entry: bool = False) -> Computation:
        if name in self.built:
            return self.built[name]
        f = self.funcs.get(name)
        if f is None:
            raise self.p.error(f"call to undefined function @{name}", ref_pos)
        if name in self.building:
            raise self.p.error(f"function @{name} calls itself (recursion cannot be expressed "
                               "in HLO)", ref_pos)
        if not f.regions:
            raise self.p.error(f"function @{name} is only declared, it has no body", f.pos)
        self.building.add(name)
        ftype = f.attrs.get("function_type")
        if not isinstance(ftype, FunctionType):
            raise self.p.error(f"function @{name} has no function_type", f.pos)
        block = f.regions[0][0]
        if len(block.args) != len(ftype.inputs):
            raise self.p.error(f"function @{name} has {len(block.args)} arguments but its type "
                               f"lists {len(ftype.inputs)}", f.pos)

        def bind(em, scope):
            for k, ((arg, t, pos), declared) in enumerate(zip(block.args, ftype.inputs)):
                if t != declared:
                    raise self.p.error(f"argument %{arg} is {type_to_mlir(t)} but the function "
                                       f"type says {type_to_mlir(declared)}", pos)
                scope.define(arg, [em.parameter(t, f"Arg_{k}")], pos, self.p)
        em, values = self.block(block, "main" if entry else name, bind, {})
        ret = block.ops[-1]
        if len(values) != len(ftype.results):
            raise self.p.error(f"function @{name} returns {len(values)} value(s) but its type "
                               f"lists {len(ftype.results)}", ret.pos)
        for v, t, u in zip(values, ftype.results, ret.operands):
            if not v.shape.compatible(t):
                raise self.p.error(f"%{u.name} is {type_to_mlir(_mlir(v.shape))}, the function "
                                   f"returns {type_to_mlir(t)}", u.pos)
        comp = em.finish(em.tuple_of(values) if values else em.emit("tuple", []))
        self.building.discard(name)
        self.built[name] = comp
        return comp

    # ---- blocks and ops ----------------------------------------------------------------------
    def block(self, block: Block, name: str, bind, metadata: dict):
        """Convert a block into a new computation; `bind(em, scope)` makes its parameters.
        Returns the emitter and the values the block's terminator returns."""
        em = Emitter(self, name)
        em.metadata = dict(metadata)
        scope = Scope(em)
        bind(em, scope)
        if not block.ops or block.ops[-1].name not in RETURN_OPS:
            raise self.p.error("a region or function body must end with a return",
                               block.ops[-1].pos if block.ops else block.pos)
        for op in block.ops[:-1]:
            if op.name in RETURN_OPS:
                raise self.p.error(f"{op.name} must be the last operation of its block", op.pos)
            self.operation(op, em, scope)
        ret = block.ops[-1]
        em.metadata = self.metadata(ret, metadata)
        values = [scope.get(u, self.p) for u in ret.operands]
        if ret.operand_types is not None:
            for v, t, u in zip(values, ret.operand_types, ret.operands):
                if not v.shape.compatible(t):
                    raise self.p.error(f"%{u.name} is {type_to_mlir(_mlir(v.shape))}, "
                                       f"not {type_to_mlir(t)}", u.pos)
        return em, values

    def row(self, name: str):
        """The op table's row of an MLIR op name (None if unknown)."""
        return OPS.get(name)

    def operation(self, op: Op, em: Emitter, scope: Scope) -> None:
        row = OPS[op.name]
        if row.lower is None:
            raise self.p.error(f"{op.name} cannot appear here", op.pos)
        saved, saved_loc = em.metadata, em.loc
        em.metadata = self.metadata(op, saved)
        em.loc = self.p.line_col(op.pos)
        cx = OpContext(self, op, em, scope)
        if op.operand_types is not None:
            for u, t in zip(op.operands, op.operand_types):
                v = scope.get(u, self.p)
                if isinstance(t, Shape) and not v.shape.compatible(t):
                    raise self.p.error(f"{op.name}: %{u.name} is "
                                       f"{type_to_mlir(_mlir(v.shape))}, but the op's type "
                                       f"says {type_to_mlir(t)}", u.pos)
        try:
            results = row.lower(cx)
        except ParseError:
            raise
        except XlapyError as e:
            raise self.p.error(f"{op.name}: {e}", op.pos) from None
        finally:
            em.metadata, em.loc = saved, saved_loc
        if len(results) != op.num_results:
            raise self.p.error(f"{op.name} produces {len(results)} value(s) but defines "
                               f"{op.num_results}", op.pos)
        for k, (v, t) in enumerate(zip(results, op.result_types)):
            shape = (v.tuple.shape.tuple_shapes[v.index] if isinstance(v, _Lazy) else v.shape)
            if isinstance(t, Shape) and not shape.compatible(t):
                raise self.p.error(f"{op.name}: result #{k} is {type_to_mlir(t)} in the text, "
                                   f"but the operation gives {type_to_mlir(_mlir(shape))}",
                                   op.pos)
        it = iter(results)
        for name, n in op.results:
            scope.define(name, [next(it) for _ in range(n)], op.pos, self.p)

    # ---- locations -> metadata ---------------------------------------------------------------
    def metadata(self, op: Op, inherited: dict) -> dict:
        if op.loc is None:
            return inherited
        text = self.resolve_loc(op.loc.text, op.pos)
        md = self._loc_cache.get(text)
        if md is None:
            md = {}
            m = re.search(r'"((?:[^"\\]|\\.)*)"\s*(?:\(|\)|$)', text)
            if m and not text[m.end(1) + 1:].lstrip().startswith(":"):
                md["op_name"] = mlir_unescape(m.group(1))
            f = re.search(r'"((?:[^"\\]|\\.)*)"\s*:\s*(\d+)', text)
            if f:
                md["source_file"] = mlir_unescape(f.group(1))
                md["source_line"] = int(f.group(2))
            self._loc_cache[text] = md
        return dict(md) if md else inherited

    def resolve_loc(self, text: str, pos: int, depth: int = 0) -> str:
        if depth > 50:
            raise self.p.error("location aliases refer to each other in a cycle", pos)

        def sub(m):
            v = self.aliases.get(m.group(0))
            if v is None:
                raise self.p.error(f"undefined location alias {m.group(0)}", pos)
            return self.resolve_loc(str(v), pos, depth + 1)
        return re.sub(r"#[\w$.\-]+", sub, text) if "#" in text else text


def _sym_name(op: Op, p) -> str:
    name = op.attrs.get("sym_name")
    if isinstance(name, str):
        return name
    raise p.error("func.func without a sym_name", op.pos)


def _mlir(shape: Shape) -> Shape:
    return shape.without_layout()

