"""Column fusion: an elementwise kernel and a column reduction over the same data become one
multi-output kernel.

Pattern, after FusionPass (the backward pass of every dense layer has it):

    E = fusion(a, b, ...), kind=kLoop            g = dy * (h > 0)          [R, C]
    S = fusion(a, b, ...)  or  fusion(E, ...)    b' = b - lr * sum(g, 0)   [C]
        S's fused computation holds one reduce, keeping only the minor (contiguous)
        dimension of an input with E's dimensions and layout, optionally followed by an
        elementwise epilogue of the reduce's shape.

Rewrite: E's fused body is cloned into S, whose root becomes tuple(E's root, S's root);
E's users read get-tuple-element 0, S's users element 1; identical instructions of the two
bodies are merged (the product the reduce sums and E's output are usually one).

Why it pays: before, E streams its inputs from memory and writes g, and S streams the same
inputs again (FusionPass duplicates cheap producers into every consumer) or reads g back.
After, one kernel reads the inputs once, writes g, and accumulates the column sums while
the values are in registers (backends/cpu/emitters/column_kernel.py). In the 784-1024-1024-10
MLP step that is two passes of 2 MB each less.

Conditions: E and S share an operand of the reduction input's size (or more, in bytes), or
S reads E; among several such E, the one sharing the most bytes; no other path connects them (no
cycle can appear); E holds no reduction, dot or other inner loop; the reduce keeps at
least MIN_COLUMNS columns, so the merged kernel still splits across threads (its parallel
dimension is blocks of columns, while E alone splits over rows).
"""

from __future__ import annotations

import logging

from xlapy.hlo.ir import Instruction, Module
from xlapy.passes.fusion import (LOOP_FUSIBLE, MAX_FUSED_DEPTH, FusionPass, _reaches_any,
                                 fused_depth)
from xlapy.passes.rewrite import non_fusion_computations

log = logging.getLogger("xlapy.passes.fusion")

MIN_COLUMNS = 512   # the cpu column kernel then has at least two blocks of columns


def column_reduce(s: Instruction) -> Instruction | None:
    """The reduce of a single-output column-reduction fusion, or None."""
    if s.opcode != "fusion" or s.shape.is_tuple:
        return None
    comp = s.fused_computation
    reduces = [i for i in comp.instructions if i.opcode == "reduce"]
    if len(reduces) != 1 or len(reduces[0].operands) != 2:
        return None
    red = reduces[0]
    x = red.operands[0].shape
    kept = [d for d in range(x.rank) if d not in set(red.attrs["dimensions"])]
    if len(kept) != 1 or kept[0] != x.minor_to_major[0] or red.shape.dims != s.shape.dims:
        return None
    columns = x.dims[kept[0]]
    if columns < MIN_COLUMNS:
        return None
    if x.size // columns < 2:
        return None
    return red


def _elementwise_kernel(e: Instruction, x_shape) -> bool:
    if e.opcode != "fusion" or e.attrs.get("kind", "kLoop") != "kLoop" or e.shape.is_tuple:
        return False
    if e.shape.dims != x_shape.dims or e.shape.minor_to_major != x_shape.minor_to_major:
        return False
    return all(i.opcode in LOOP_FUSIBLE or i.opcode in ("parameter", "tuple",
                                                         "get-tuple-element")
               for i in e.fused_computation.instructions)


class ColumnFusion:
    """`column_kernel(S)`: the backend's test that it emits S as a column-reduction kernel
    (the cpu backend's column_plan); pairs whose S it would not take are left alone, since
    the merged kernel has outputs of two shapes and only such a kernel can emit it."""
    name = "column-fusion"

    def __init__(self, column_kernel=None):
        self.column_kernel = column_kernel

    def run(self, module: Module) -> bool:
        changed = False
        for comp in non_fusion_computations(module):
            progress = True
            while progress:
                progress = False
                for s in reversed(comp.post_order()):
                    if s.parent is not comp:
                        continue
                    e = self._partner(s)
                    if e is not None and self.column_kernel is not None \
                            and self.column_kernel(s) is None:
                        e = None
                    if e is not None:
                        log.debug("column fusion: %s into %s", e.name, s.name)
                        FusionPass()._fuse_multi_output(comp, s, e)
                        changed = progress = True
                        break
        return changed

    @staticmethod
    def _partner(s: Instruction) -> Instruction | None:
        red = column_reduce(s)
        if red is None:
            return None
        x_shape = red.operands[0].shape
        candidates = []
        for o in dict.fromkeys(s.operands):
            if _elementwise_kernel(o, x_shape):
                candidates.append(o)       # S reads E
            for u in o.users:
                if u is not s and u not in candidates and _elementwise_kernel(u, x_shape):
                    candidates.append(u)   # E and S read the same array
        best, best_bytes = None, x_shape.byte_size - 1   # share at least one full array
        for e in candidates:
            if e.parent is not s.parent or _reaches_any(s, e):
                continue
            if fused_depth(s) + fused_depth(e) > MAX_FUSED_DEPTH:  # (fusion.py)
                continue
            others = [o for o in s.operands if o is not e]
            if any(_reaches_any(e, o) for o in others):
                continue
            # bytes the merged kernel reads once instead of twice
            shared = sum(o.shape.byte_size for o in dict.fromkeys(s.operands)
                         if o is e or o in e.operands)
            if shared > best_bytes:
                best, best_bytes = e, shared
        return best
