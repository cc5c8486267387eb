"""Row fusion: a row reduction and its elementwise consumer become one kernel that works
row by row while the row is in cache.

Pattern, after FusionPass:

    R = fusion(x, ...)                   outputs: reductions (optionally with an elementwise
                                          epilogue) of shape C.dims without the minor dim
    C = fusion(x, R or gte(R), ...), kind=kLoop, rank >= 2, row-major
        where C's fused computation reads R's outputs only through row broadcasts:
        broadcast(v) to C's shape with dimensions = every dimension but the minor one

Rewrite: R's fused body is cloned into C (C reads R's inputs instead of its outputs) and
R disappears. A row softmax, a layernorm (+gelu), log-softmax: one kernel each.

Why it pays: before, kernel 1 streams x from memory to compute the row statistics and
kernel 2 streams x again to write y: three passes over memory. After, the backend computes
each row's statistics once (the row is then in L1/L2) and writes that row of y: two
passes. The backend must compute a row-broadcast value once per row, not per element: the
cpu kernel emitter hoists every row-broadcast operand out of the inner loop
(backends/llvm/row_kernel.py, `row_values`); the interpreter evaluates fusions as whole
computations anyway.

Conditions: every user of R is C (else R's outputs are needed in memory anyway); the row
is at most ROW_BYTES, so the repeated passes over it hit the cache. Invariants: no cycle
can appear (R only feeds C); the result is a kLoop fusion computing the same values.
"""

from __future__ import annotations

import logging

from xlapy.hlo.ir import Computation, Instruction, Module, Worklist
from xlapy.passes.fusion import (MAX_FUSED_DEPTH, FusionPass, _dedupe, _is_reduction_kernel,
                                 fused_depth)
from xlapy.passes.rewrite import non_fusion_computations

log = logging.getLogger("xlapy.passes.fusion")

ROW_BYTES = 64 * 1024


def row_broadcast_dims(shape) -> tuple:
    """The `dimensions` of a broadcast that repeats a per-row value along the minor dim."""
    minor = shape.minor_to_major[0]
    return tuple(d for d in range(shape.rank) if d != minor)


class RowFusion:
    name = "row-fusion"

    def __init__(self, row_bytes: int = ROW_BYTES):
        self.row_bytes = row_bytes

    def run(self, module: Module) -> bool:
        changed = False
        for comp in non_fusion_computations(module):
            for c in reversed(comp.post_order()):
                if c.parent is not comp:
                    continue
                r = self._match(c)
                if r is not None:
                    log.debug("row fusion: %s into %s", r.name, c.name)
                    self._merge(comp, c, r)
                    changed = True
        return changed

    def _match(self, c: Instruction) -> Instruction | None:
        if c.opcode != "fusion" or c.attrs.get("kind", "kLoop") != "kLoop" or c.shape.is_tuple:
            return None
        s = c.shape
        if s.rank < 2 or not s.has_default_layout:
            return None
        if s.dims[-1] * s.element_type.itemsize > self.row_bytes:
            return None
        rows = s.dims[:-1]
        for r in dict.fromkeys(o.operands[0] if o.opcode == "get-tuple-element" else o
                               for o in c.operands):
            if r.opcode != "fusion" or not _is_reduction_kernel(r):
                continue
            if any(leaf.dims != rows for leaf in r.shape.leaves()):
                continue
            if not _only_feeds(r, c):
                continue
            if not _used_as_rows(c, r):
                continue
            if fused_depth(c) + fused_depth(r) > MAX_FUSED_DEPTH:  # (fusion.py)
                continue
            return r
        return None

    @staticmethod
    def _merge(comp: Computation, c: Instruction, r: Instruction) -> None:
        fp = FusionPass()
        for o in list(dict.fromkeys(c.operands)):
            if o.opcode == "get-tuple-element" and o.operands[0] is r:
                fp._fuse(comp, c, o)
        fp._fuse(comp, c, r)
        fc = c.fused_computation
        for i in list(fc.instructions):  # get-tuple-element(tuple(a, b), k) -> a or b
            if i.opcode == "get-tuple-element" and i.operands[0].opcode == "tuple":
                i.replace_all_uses_with(i.operands[0].operands[i.attrs["index"]])
        live, stack = set(), [fc.root]
        while stack:
            i = stack.pop()
            if id(i) not in live:
                live.add(id(i))
                stack.extend(i.operands)
        for i in reversed(list(fc.instructions)):
            if id(i) not in live and i.opcode != "parameter":
                fc.remove_instruction(i)
        fc.instructions = fc.post_order()
        _dedupe(fc)  # R's copy of exp(x - max) and C's are one computation now
        comp.instructions = comp.post_order()


def _only_feeds(r: Instruction, c: Instruction) -> bool:
    for u in r.users:
        if u is c:
            continue
        if u.opcode == "get-tuple-element" and all(x is c for x in u.users) and u.users:
            continue
        return False
    return True


def _used_as_rows(c: Instruction, r: Instruction) -> bool:
    """Every parameter of C fed by R reaches C's full-shape values only through row
    broadcasts (per-row arithmetic and reshapes before them are fine: mean = sum / n)."""
    fc = c.fused_computation
    want = row_broadcast_dims(c.shape)
    n_rows = 1
    for d in c.shape.dims[:-1]:
        n_rows *= d
    for k, o in enumerate(c.operands):
        if not (o is r or (o.opcode == "get-tuple-element" and o.operands[0] is r)):
            continue
        for v in (todo := Worklist([fc.parameters[k]])):
            for u in v.users:
                if u.opcode == "broadcast" and u.shape.dims == c.shape.dims:
                    if tuple(u.attrs["dimensions"]) != want or u.operands[0].shape.dims != \
                            c.shape.dims[:-1]:
                        return False
                elif not u.shape.is_tuple and u.shape.size == n_rows \
                        and u.shape.dims != c.shape.dims and u.opcode not in ("reduce", "dot"):
                    todo.push(u)  # still one value per row
                else:
                    return False
    return True
