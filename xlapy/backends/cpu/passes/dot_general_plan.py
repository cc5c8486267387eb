"""Dots that dot_plan.py does not plan (several free dimensions, batch dimensions anywhere,
operands that are transposed or reshaped views) as strided gemms on xlapy's own gemm.

  strided_plan(dot_attrs, lhs, rhs, out) -> dict or None

xlapy's gemm reads each of A, B and C through a row and a column stride, so any dot whose
contracting dims collapse into one index (one stride in each operand) is a loop of gemms:

  K   the contracting dims, collapsed (in the lhs's memory order; the rhs must agree)
  M   the longest run of the lhs's free dims (in the output's order) that collapses in
      both the lhs and the output; N likewise for the rhs's free dims
  loops  every other dim: the batch dims and the free dims that did not collapse, each
      (size, lhs stride, rhs stride, out stride), a gemm per index

So attention's per-head products on [batch, seq, heads, dh] views, x . W with a 3-D x, and
the transposed operands of their gradients read their operands where they are, with no
transpose copy and no elemental loop. Returns None for other element types, zero-size
dims, and contracting dims that do not collapse (the elemental dot computes those).
bf16 and f16 dots (a bf16 or f16 result, or f32) run on the gemm kind of their type
(gemm_kernel.py: operands widened to f32 as they are packed, sums in f32); a bf16 / f16
result is rounded once from the f32 sums, as XLA does.
"""

from __future__ import annotations


TYPES = ("f32", "f64")
HALF_TYPES = ("bf16", "f16")   # widened to f32 as the gemm packs them, accumulated in f32


def _longest_suffix(dims: list):
    """(collapsed (size, stride in a, stride in b), the dims left over) for the longest
    suffix of `dims` that collapses in both a and b."""
    from xlapy.backends.cpu.passes.conv_plan import collapse  # (see strided_plan)
    for start in range(len(dims) + 1):
        tail = dims[start:]
        ca = collapse([(n, sa) for n, sa, _ in tail])
        cb = collapse([(n, sb) for n, _, sb in tail])
        if ca is not None and cb is not None:
            return (ca[0], ca[1], cb[1]), dims[:start]
    return (1, 1, 1), dims


def strided_plan(a: dict, lhs, rhs, out):
    # (conv_plan's helpers, imported when a dot asks: not with every compiler's import)
    from xlapy.backends.cpu.passes.conv_plan import collapse, strides_of
    t, out_t = lhs.element_type.name, out.element_type.name
    if rhs.element_type.name != t:
        return None
    if t in TYPES:
        if out_t != t:
            return None
    elif t not in HALF_TYPES or out_t not in (t, "f32"):
        return None
    if lhs.size == 0 or rhs.size == 0 or out.size == 0:
        return None
    for s in (lhs, rhs, out):
        if s.layout is not None and getattr(s.layout, "extra", ""):
            return None
    lc, rc = list(a.get("lhs_contracting_dims", ())), list(a.get("rhs_contracting_dims", ()))
    lb, rb = list(a.get("lhs_batch_dims", ())), list(a.get("rhs_batch_dims", ()))
    lfree = [d for d in range(lhs.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.rank) if d not in rb and d not in rc]
    ls, rs, os_ = strides_of(lhs), strides_of(rhs), strides_of(out)
    # K: contracting pairs in the lhs's memory order; the rhs must collapse in that order
    pairs = sorted(zip(lc, rc), key=lambda p: -ls[p[0]])
    kl = collapse([(lhs.dims[x], ls[x]) for x, _ in pairs])
    kr = collapse([(rhs.dims[y], rs[y]) for _, y in pairs])
    if kl is None or kr is None:
        return None
    k = kl[0]
    nb = len(lb)
    mdims = [(lhs.dims[d], ls[d], os_[nb + j]) for j, d in enumerate(lfree)]
    ndims = [(rhs.dims[d], rs[d], os_[nb + len(lfree) + j]) for j, d in enumerate(rfree)]
    (m, rsa, rsc), m_rest = _longest_suffix(mdims)
    (n, csb, csc), n_rest = _longest_suffix(ndims)
    loops = [(lhs.dims[x], ls[x], rs[y], os_[j]) for j, (x, y) in enumerate(zip(lb, rb))]
    loops += [(size, sl, 0, so) for size, sl, so in m_rest]
    loops += [(size, 0, sr, so) for size, sr, so in n_rest]
    loops = [x for x in loops if x[0] != 1]
    batch = 1
    for x in loops:
        batch *= x[0]
    return dict(t=t, out_t=out_t, m=m, n=n, k=k, sa=(rsa, kl[1]), sb=(kr[1], csb),
                sc=(rsc, csc), loops=tuple(loops), batch=batch, strided=True)
