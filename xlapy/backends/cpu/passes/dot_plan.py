"""Which dots the cpu backend computes with a gemm, and how (the plan the emitters follow
and the passes that fuse around gemms ask about).

  plan_for(dot_attrs, lhs, rhs, out)  -> dict(t, m, n, k, lhs_rm, rhs_rm, out_rm, batch)
                                         or None (the elemental dot then computes it)
  own_gemm_for(plan)                  whether xlapy's own gemm (emitters/gemm_kernel.py)
                                      runs it, rather than BLAS
  narrow_form(plan)                   "a" / "b": a narrow kernel (emitters/gemm_narrow.py)
                                      runs it rather than BLAS; None: not
  row_plan(dot_attrs, lhs, rhs, out)  -> (plan, row dims) for a dot whose lhs has several
                                      free dims that collapse into the gemm's rows (x . W
                                      with a 3-D x), or None: what gemm epilogues take

Self-contained code (ahead-of-time objects, target.self_contained()) has no BLAS: every
planned dot runs on xlapy's own gemm, and an empty contraction (K = 0, which only BLAS
handles) is left to the elemental dot.

Handled: f32 and f64 dots with at most one free dimension per operand and exactly one
contracting dimension, any number of batch dimensions provided they are the most-major
dimensions of each operand and of the output (in the same order). Each matrix may be
row- or column-major.
"""

from __future__ import annotations

from xlapy.backends.cpu.options import gemm_choice
from xlapy.backends.cpu.target import self_contained, threads_available, vector_bits
from xlapy.hlo.shapes import Shape

GEMM_TYPES = ("f32", "f64", "c64", "c128")  # complex: BLAS cgemm/zgemm only
OWN_GEMM_MIN_FLOPS = 1 << 22   # XLAPY_GEMM=auto: smaller products stay with BLAS


def _matrix(shape, batch, rows, cols):
    """(n_rows, n_cols, row_major) of the 2-D matrix inside `shape` after `batch` dims, or
    None when its layout is not a plain contiguous matrix after the batch dims."""
    m2m = list(reversed(shape.minor_to_major))  # major -> minor
    if m2m[:len(batch)] != list(batch):
        return None
    inner = [d for d in m2m[len(batch):] if shape.dims[d] != 1]
    nr = shape.dims[rows] if rows is not None else 1
    nc = shape.dims[cols] if cols is not None else 1
    if len(inner) <= 1:
        return nr, nc, True if not inner or inner[0] == cols else False
    # two non-trivial inner dims: the more minor decides
    if set(inner) != {d for d in (rows, cols) if d is not None}:
        return None
    return nr, nc, inner[-1] == cols


def gemm_plan(instr):
    return plan_for(instr.attrs, instr.operands[0].shape, instr.operands[1].shape, instr.shape)


def plan_for(a: dict, lhs, rhs, out):
    """The gemm call computing a dot with attributes `a` on these shapes, or None."""
    t = out.element_type.name
    if t not in GEMM_TYPES or lhs.element_type.name != t or rhs.element_type.name != t:
        return None
    if t in ("c64", "c128") and self_contained():  # no BLAS: the elemental dot
        return None
    lc, rc = list(a.get("lhs_contracting_dims", ())), list(a.get("rhs_contracting_dims", ()))
    lb, rb = list(a.get("lhs_batch_dims", ())), list(a.get("rhs_batch_dims", ()))
    if len(lc) != 1 or len(rc) != 1:
        return None
    lfree = [d for d in range(lhs.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.rank) if d not in rb and d not in rc]
    if len(lfree) > 1 or len(rfree) > 1:
        return None
    nb = len(lb)
    lm = _matrix(lhs, lb, lfree[0] if lfree else None, lc[0])
    rm = _matrix(rhs, rb, rc[0], rfree[0] if rfree else None)
    om = _matrix(out, list(range(nb)), nb if lfree else None,
                 nb + len(lfree) if rfree else None)
    if lm is None or rm is None or om is None:
        return None
    m, k, lhs_rm = lm
    _, n, rhs_rm = rm
    if k == 0 and self_contained():
        return None
    batch = 1
    for d in lb:
        batch *= lhs.dims[d]
    return dict(t=t, m=m, n=n, k=k, lhs_rm=lhs_rm, rhs_rm=rhs_rm, out_rm=om[2], batch=batch)


def row_plan(a: dict, lhs, rhs, out):
    """(plan, row_dims) for a dot without batch dimensions whose lhs free dims (two or more)
    collapse into one index of the gemm's rows, in the lhs and in the result alike, and
    whose rhs has one free dim (a dense layer on [batch, sequence, width] activations):
    the plan of the 2-D gemm on the same memory (plan_for), and the result's dims that make
    up a row index (the result's leading dims; its last is the column). Else None."""
    lc, rc = list(a.get("lhs_contracting_dims", ())), list(a.get("rhs_contracting_dims", ()))
    if a.get("lhs_batch_dims") or a.get("rhs_batch_dims") or len(lc) != 1 or len(rc) != 1:
        return None
    # (conv_plan's helpers, imported when a dot asks: not with every compiler's import)
    from xlapy.backends.cpu.passes.conv_plan import collapse, strides_of
    lfree = [d for d in range(lhs.rank) if d != lc[0]]
    rfree = [d for d in range(rhs.rank) if d != rc[0]]
    if len(lfree) < 2 or len(rfree) != 1 or out.rank != len(lfree) + 1:
        return None
    for s in (lhs, rhs, out):
        if s.layout is not None and getattr(s.layout, "extra", ""):
            return None
    ls, os_ = strides_of(lhs), strides_of(out)
    ml = collapse([(lhs.dims[d], ls[d]) for d in lfree])
    mo = collapse([(out.dims[j], os_[j]) for j in range(len(lfree))])
    if ml is None or mo is None:
        return None
    m, k = ml[0], lhs.dims[lc[0]]
    n = out.dims[-1]
    if m <= 1 or k <= 1 or n <= 1:
        return None   # (a unit dimension leaves the layout ambiguous: the 2-D plan decides)

    def matrix(rows, cols, row_stride, col_stride):
        if (row_stride, col_stride) == (cols, 1):
            return Shape.array(lhs.element_type, (rows, cols), (1, 0))
        if (row_stride, col_stride) == (1, rows):
            return Shape.array(lhs.element_type, (rows, cols), (0, 1))
        return None
    lhs2 = matrix(m, k, ml[1], ls[lc[0]])
    out2 = matrix(m, n, mo[1], os_[-1])
    if lhs2 is None or out2 is None:
        return None
    out2 = Shape.array(out.element_type, out2.dims, out2.minor_to_major)
    plan = plan_for({"lhs_contracting_dims": (1,), "rhs_contracting_dims": tuple(rc)},
                    lhs2, rhs, out2)
    return None if plan is None else (plan, tuple(range(len(lfree))))


def use_own_gemm(flops: int, shallow: bool = False) -> bool:
    """Whether a gemm of `flops` (2 m n k) runs on xlapy's own kernel (options.gemm_choice);
    `shallow`: a product the kernel runs unpacked at any size (own_gemm_for)."""
    choice = gemm_choice()
    if choice == "xlapy" or self_contained():
        return True
    if choice == "blas":
        return False
    return (flops >= OWN_GEMM_MIN_FLOPS or shallow) and threads_available()


# at most this deep, with the right operand's and the result's rows contiguous, a product
# runs on the own gemm's direct phase whatever its size (gemm_params.DIRECT_DEPTH): a
# recurrent cell's weight-gradient update W += x^T . dz over a batch of 8 (60x8 . 8x240 into
# W) took 3.8 us in OpenBLAS, about 2.2 unpacked
SHALLOW_DEPTH = 16


# at most this deep and short_rows() high, with A's, B's and C's rows contiguous, a product
# runs on the own gemm's direct phase (no packing) whatever its size: the block of B's
# columns that its row groups share (K deep) stays in cache while they run one after the
# other. A recurrent cell's 32 x 128 . 128 x 384 product ran at about 100 GFLOP/s there,
# 82 on OpenBLAS (JAX 83-94: docs/benchmarks.md, "Recurrent cells")
SHORT_DEPTH = 256


def short_rows(vector_bits: int) -> int:
    """The most rows of such a product: 8 of the direct phase's row groups
    (gemm_params.direct_rows: 4 rows with 512-bit vectors, 2 with narrower ones)."""
    return 8 * (4 if vector_bits >= 512 else 2)


def own_gemm_for(plan: dict) -> bool:
    """Whether the gemm of `plan` runs on xlapy's own kernel (use_own_gemm)."""
    shallow = (plan["k"] <= SHALLOW_DEPTH and plan["rhs_rm"] and plan["out_rm"]
               and plan["n"] > 1)
    short = (plan["k"] <= SHORT_DEPTH and plan["m"] <= short_rows(vector_bits())
             and plan["lhs_rm"] and plan["rhs_rm"] and plan["out_rm"] and plan["n"] > 1)
    return (plan["t"] in ("f32", "f64") and plan["k"] > 0
            and use_own_gemm(2 * plan["m"] * plan["n"] * plan["k"], shallow or short))


def narrow_form(plan: dict) -> str | None:
    """The narrow kernel (emitters/gemm_narrow.py) that computes the product of `plan` in
    place of BLAS: "a" (A's rows contiguous: lanes along K) or "b" (A's columns contiguous:
    lanes along M), or None (BLAS, or the own gemm where own_gemm_for says so).

    Only where it beat OpenBLAS single-threaded, on AVX-512 (the 2-core Zen 4 machine,
    `OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/narrow_gemm.py`): OpenBLAS's kernels
    run N = 1, 2, 4, 8, 16 at full lanes but the other widths partly empty (N = 10: 8 + 2),
    so f32 with N 5-11 (form b also 12 from 32 rows; form a not 8, whose gains were within
    a few percent, nor 11); form a from 8 rows and K 100-1024 (its reductions cost too much
    at K = 16, and the packed B^T outgrows L1 beyond), form b from 8 rows (N accumulators
    in one chain each below that). The MNIST tutorial's x . W (100 x 784 x 10): 1.5x, its
    W - 0.5 x^T . g (784 x 100 x 10): 1.2-1.3x; the table in the benchmark's docstring."""
    t, m, n, k = plan["t"], plan["m"], plan["n"], plan["k"]
    if t != "f32" or n > 16 or m < 8 or own_gemm_for(plan) or gemm_choice() != "auto" \
            or self_contained() or vector_bits() < 512:
        return None
    if plan["lhs_rm"]:
        return "a" if 5 <= n <= 10 and n != 8 and 100 <= k <= 1024 else None
    return "b" if 5 <= n <= 11 or (n == 12 and m >= 32) else None
