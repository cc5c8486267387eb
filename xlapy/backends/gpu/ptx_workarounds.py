"""Rewrites of the PTX that LLVM emits, around code generation bugs below it.

Integer min/max as compare and select. ptxas for sm_90 (CUDA 13.0, and the JIT of NVIDIA's
580 driver) fuses chains of `min.s32` / `max.s32` over negated values into three-input
VIMNMX3 instructions and drops some of the negations: the minimum of the negations of
s32 [3, -12, 3, -12, -11, -9] was -12, min(-x0, x1, -x2, ...), on an H100 (hlo 25300813,
jax 25201251: a reduce of negate to an s16 maximum, jnp.median of -x). The PTX is right
(ptxas -O0 keeps every negation; nvdisasm shows them gone at -O1 and above). Written as
`setp` + `selp`, the same values are computed and ptxas keeps the negations (checked with
nvdisasm): each integer min/max becomes

    setp.lt.s32  %xlapy_mm, a, b;      (gt for max)
    selp.b32     d, a, b, %xlapy_mm;

with one predicate register declared per function. Float min/max are left alone (FMNMX,
not affected)."""

from __future__ import annotations

import re

_MINMAX = re.compile(r"^(\s*)(min|max)\.([su](?:16|32|64))\s+([^,]+),\s*([^,]+),\s*([^;]+);",
                     re.M)
_PRED = "%xlapy_mm"


def integer_minmax_as_select(ptx: str) -> str:
    """ptx with every integer min/max instruction written as setp + selp (module doc)."""
    if _MINMAX.search(ptx) is None:
        return ptx

    def one(m) -> str:
        ind, op, t, d, a, b = m.groups()
        bits = t[1:]
        cmp = "lt" if op == "min" else "gt"
        return (f"{ind}setp.{cmp}.{t} \t{_PRED}, {a.strip()}, {b.strip()};\n"
                f"{ind}selp.b{bits} \t{d.strip()}, {a.strip()}, {b.strip()}, {_PRED};")

    out = _MINMAX.sub(one, ptx)
    # the predicate, declared at the top of every function body that uses it
    declare = f"\t.reg .pred \t{_PRED};\n"
    return re.sub(r"(\.entry|\.func)([^{]*)\{\n", lambda m: m.group(0) + declare, out)
